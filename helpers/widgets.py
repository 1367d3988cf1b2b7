"""Sliders wired to the pure plotting functions in `helpers.plots`.

Pattern: a plot function takes numbers and returns a matplotlib `Figure`; `interactive_plot`
puts sliders above an output area and redraws the figure whenever a slider is released.
"""

from __future__ import annotations

import io
from typing import Callable

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import Image, display
from matplotlib.figure import Figure


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


def figure_png(fig: Figure, dpi: int = 80) -> bytes:
    """Render a figure to PNG bytes, fast: no tight bounding box (a second layout pass) and
    light compression (a slider's picture is shown once, not stored)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, pil_kwargs={"compress_level": 1})
    plt.close(fig)  # figures made through pyplot would otherwise pile up in memory
    return buffer.getvalue()


def interactive_plot(plot: Callable[..., Figure], height: str = "520px",
                     **controls: widgets.ValueWidget) -> widgets.VBox:
    """Sliders (keyword = the plot function's parameter) above the figure they control."""

    def redraw(**values):
        display(Image(figure_png(plot(**values))))

    output = widgets.interactive_output(redraw, controls)
    output.layout.height = height  # a fixed height stops the page jumping while it redraws
    return widgets.VBox([widgets.HBox(list(controls.values()),
                                      layout=widgets.Layout(flex_flow="row wrap")), output])
