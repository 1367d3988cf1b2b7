"""Sliders wired to the plotting functions in `helpers.plots`.

Pattern: a plot function takes numbers and returns a matplotlib `Figure`; `interactive_plot`
puts sliders above an output area and redraws the figure whenever a slider is released.

Speed: a redraw should take well under 100 ms. Building a figure (axes, ticks, fonts measured
for the first time) costs more than drawing it, so a plot function may take a `figure` argument:
the figure it returned on the previous move, which it then updates in place (new numbers, same
axes) instead of building a new one. `interactive_plot` passes it whenever the function has
that parameter. `benchmarks/redraw.py` times every slider of the course this way.
"""

from __future__ import annotations

import inspect
import io
from typing import Callable

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Image, display
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image as PILImage

SLIDER_DPI = 80


def slider(description: str, value: int, min: int, max: int, step: int = 1) -> widgets.IntSlider:
    """An integer slider that redraws when released, not at every pixel of a drag."""
    return widgets.IntSlider(value=value, min=min, max=max, step=step, description=description,
                             continuous_update=False,
                             style={"description_width": "initial"})


def float_slider(description: str, value: float, min: float, max: float,
                 step: float) -> widgets.FloatSlider:
    return widgets.FloatSlider(value=value, min=min, max=max, step=step, description=description,
                               continuous_update=False,
                               style={"description_width": "initial"})


def log_slider(description: str, value: float, min_exponent: float, max_exponent: float,
               step: float = 0.1) -> widgets.FloatLogSlider:
    """A slider over powers of ten (for bases such as 10,000)."""
    return widgets.FloatLogSlider(value=value, base=10, min=min_exponent, max=max_exponent,
                                  step=step, description=description, continuous_update=False,
                                  style={"description_width": "initial"})


def figure_png(fig: Figure, dpi: int = SLIDER_DPI) -> bytes:
    """Render a figure to PNG bytes, fast.

    The figure is drawn on its own canvas, which it keeps: drawing it again later reuses the
    text sizes measured this time. No tight bounding box (that would be a second layout pass),
    no alpha channel (the background is opaque) and light compression (a slider's picture is
    shown once, not stored).
    """
    if fig.dpi != dpi:
        fig.set_dpi(dpi)
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())[..., :3]
    buffer = io.BytesIO()
    PILImage.fromarray(pixels).save(buffer, format="png", compress_level=1)
    plt.close(fig)  # a figure made through pyplot would otherwise stay in memory (else no-op)
    return buffer.getvalue()


def slider_renderer(plot: Callable[..., Figure]) -> Callable[..., bytes]:
    """What one slider move runs: `plot(**values)` drawn to PNG bytes.

    If `plot` has a `figure` parameter, each call hands it the figure of the previous call to
    update in place.
    """
    updates_in_place = "figure" in inspect.signature(plot).parameters
    shown: dict[str, Figure] = {}

    def render(**values) -> bytes:
        if updates_in_place:
            shown["figure"] = plot(**values, figure=shown.get("figure"))
            return figure_png(shown["figure"])
        return figure_png(plot(**values))

    return render


def interactive_plot(plot: Callable[..., Figure], height: str = "520px",
                     **controls: widgets.ValueWidget) -> widgets.VBox:
    """Sliders (keyword = the plot function's parameter) above the figure they control."""
    render = slider_renderer(plot)

    def redraw(**values):
        display(Image(render(**values)))

    output = widgets.interactive_output(redraw, controls)
    output.layout.height = height  # a fixed height stops the page jumping while it redraws
    return widgets.VBox([widgets.HBox(list(controls.values()),
                                      layout=widgets.Layout(flex_flow="row wrap")), output])
