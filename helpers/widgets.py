"""Sliders wired to the plotting functions in `helpers.plots`.

Pattern: a plot function takes numbers and returns a matplotlib `Figure`; `interactive_plot`
puts sliders above an output area and redraws the figure whenever a slider is released.

Speed: a redraw should take well under 100 ms. Building a figure (axes, ticks, fonts measured
for the first time) costs more than drawing it, so a plot function may take a `figure` argument:
the figure it returned on the previous move, which it then updates in place (new numbers, same
axes) instead of building a new one. `interactive_plot` passes it whenever the function has
that parameter. `benchmarks/redraw.py` times every slider of the course this way.

Most moves go one step (an arrow key), so after each move the kernel also draws the settings one
step away while the learner looks (`helpers.slider_frames`): the next step's picture is ready.

Where no kernel runs (GitHub, nbconvert's HTML, the course website, JupyterLab before the
notebook is run), a widget cannot draw itself: the notebook shows whatever else its stored output
holds. `interactive_plot` therefore returns a `FigureWithSliders`, whose output carries the figure
as a PNG beside the widget: a live front end shows the sliders, a static one the picture.
"""

from __future__ import annotations

import base64
import inspect
import struct
import zlib
from typing import Callable

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import clear_output, display
from matplotlib.figure import Figure

from .plots.canvas import SliderCanvas
from .slider_frames import SliderFrames, event_loop_scheduler

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


def png_bytes(pixels: np.ndarray) -> bytes:
    """An RGB picture (height x width x 3, uint8) as the bytes of a PNG file.

    Written here rather than by Pillow, which tries several filters on every row to shrink the
    file: for figures, mostly flat colour, that costs more time than it saves bytes (for notebook
    04's 512 x 336 heatmap figure, Pillow's file is bigger and takes twice as long). A PNG is a
    signature and chunks (length, type, data, checksum): a header with the size and pixel format,
    the compressed rows (each after a 0 byte, "no filter"), and an end marker.
    """
    height, width, _ = pixels.shape
    rows = np.zeros((height, 1 + 3 * width), dtype=np.uint8)
    rows[:, 1:] = pixels.reshape(height, 3 * width)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 2)) + chunk(b"IEND", b""))


def figure_png(fig: Figure, dpi: int = SLIDER_DPI) -> bytes:
    """Render a figure to PNG bytes, fast.

    The figure is drawn on its own canvas, which it keeps: drawing it again later reuses what
    this draw measured and drew (`helpers.plots.canvas`: text bitmaps, unchanged axes). No tight
    bounding box (that would be a second layout pass) and no alpha channel (the background is
    opaque).
    """
    if fig.dpi != dpi:
        fig.set_dpi(dpi)
    canvas = fig.canvas if isinstance(fig.canvas, SliderCanvas) else SliderCanvas(fig)
    canvas.draw()
    plt.close(fig)  # a figure made through pyplot would otherwise stay in memory (else no-op)
    return png_bytes(np.asarray(canvas.buffer_rgba())[..., :3])


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


class FigureWithSliders(widgets.VBox):
    """Sliders above their figure (a VBox, as the front end draws it), displayed with a picture.

    Its output holds three versions of itself; each front end shows the richest one it can:
    - the widget view: the live sliders, in JupyterLab, Colab or VS Code with a running kernel;
    - `image/png`: the figure as last drawn (when the cell runs, its starting figure), for
      front ends that cannot run a widget, and in the stored notebook;
    - `text/plain`: a line naming the sliders, for a terminal (instead of the `VBox(...)` repr).
    """

    def __init__(self, sliders: list[widgets.ValueWidget], output: widgets.Output,
                 picture: widgets.Image, drawn: dict[str, bytes], frames: SliderFrames):
        super().__init__([widgets.HBox(sliders, layout=widgets.Layout(flex_flow="row wrap")),
                          output])
        self.picture = picture  # the image widget that the output shows, updated at each move
        self._drawn = drawn  # {"png": bytes of the figure last drawn}, kept by the redraws
        self.frames = frames  # the pictures drawn so far and ahead, by setting

    @property
    def png(self) -> bytes | None:
        """The figure as the sliders show it now (None if drawing it failed)."""
        return self._drawn.get("png")

    def _repr_mimebundle_(self, **kwargs) -> dict:
        bundle = super()._repr_mimebundle_(**kwargs)
        sliders = self.children[0].children
        settings = ", ".join(f"{control.description} = {control.value}" for control in sliders)
        bundle["text/plain"] = f"A figure with sliders ({settings}); run the cell to move them."
        if self.png is not None:
            bundle["image/png"] = base64.b64encode(self.png).decode("ascii")
        return bundle


def interactive_plot(plot: Callable[..., Figure], height: str = "520px",
                     **controls: widgets.ValueWidget) -> FigureWithSliders:
    """Sliders (keyword = the plot function's parameter) above the figure they control.

    The figure is an `ipywidgets.Image` inside an output area: a move sends the new PNG to the
    image already on the page, one message, and the browser swaps the picture in place. Showing
    a new output each move instead, as `ipywidgets.interactive_output` does, takes four messages
    and a new page element: about 5 ms more from key to paint in `benchmarks/browser_redraw.py`.
    The output area shows a failed draw's traceback instead of the picture."""
    frames = SliderFrames(slider_renderer(plot), controls)
    drawn: dict[str, bytes] = {}
    picture = widgets.Image(format="png")
    output = widgets.Output(layout=widgets.Layout(height=height))  # fixed: the page stays put

    def redraw(change=None):
        values = {name: control.value for name, control in controls.items()}
        # The output shows the picture if the last draw succeeded, else that draw's traceback.
        # If this draw fails, no stale picture stands in for it.
        picture_shown = drawn.pop("png", None) is not None
        try:
            drawn["png"] = frames.picture(values)
        except Exception:
            with output:  # in IPython the output area shows the traceback; elsewhere it is raised
                clear_output()
                raise
            return
        picture.value = drawn["png"]
        if not picture_shown:  # the first picture, or the first after an error
            with output:
                clear_output()
                display(picture)
        # While the learner looks, draw the settings one step away (in a kernel only).
        frames.draw_ahead(values, event_loop_scheduler())

    for control in controls.values():
        control.observe(redraw, "value")
    redraw()  # the starting figure
    return FigureWithSliders(list(controls.values()), output, picture, drawn, frames)
