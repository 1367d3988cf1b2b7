"""helpers.widgets: sliders, the PNG rendering and the in-place redraw that keeps sliders fast."""

import base64
import contextlib
import io

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

matplotlib.use("Agg")

from helpers import widgets  # noqa: E402


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)))


def line_plot(slope: float = 1.0) -> Figure:
    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, slope])
    ax.set_xlabel("x")
    return fig


def test_figure_png_renders_at_the_slider_dpi_without_alpha():
    picture = pixels(widgets.figure_png(line_plot()))
    assert picture.shape == (2 * widgets.SLIDER_DPI, 3 * widgets.SLIDER_DPI, 3)  # RGB, 3 x 2 in
    assert picture.min() < 100 and picture.max() == 255  # something drawn on white


def test_figure_png_closes_figures_made_through_pyplot():
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    widgets.figure_png(fig)
    assert fig.number not in plt.get_fignums()


def test_a_plot_without_a_figure_parameter_is_built_afresh_each_move():
    made = []

    def plot(slope):
        made.append(line_plot(slope))
        return made[-1]

    render = widgets.slider_renderer(plot)
    first, second = render(slope=1.0), render(slope=-1.0)
    assert len(made) == 2 and made[0] is not made[1]
    assert not np.array_equal(pixels(first), pixels(second))


def test_a_plot_with_a_figure_parameter_gets_its_previous_figure_back():
    received = []

    def plot(slope, figure=None):
        received.append(figure)
        fig = figure or line_plot(slope)
        fig.axes[0].lines[0].set_ydata([0, slope])
        return fig

    render = widgets.slider_renderer(plot)
    first = render(slope=1.0)
    second = render(slope=-1.0)
    assert received[0] is None and isinstance(received[1], Figure)
    assert render(slope=1.0) == first  # the same picture when the slider comes back
    assert not np.array_equal(pixels(first), pixels(second))


def test_interactive_plot_puts_the_sliders_above_the_output():
    control = widgets.slider("slope", 1, -2, 2)
    view = widgets.interactive_plot(lambda slope: line_plot(slope), height="200px", slope=control)
    row, output = view.children
    assert row.children == (control,) and output.layout.height == "200px"
    assert control.continuous_update is False  # redraw on release, not on every pixel


@pytest.mark.parametrize("make", [
    lambda: widgets.slider("n", 4, 1, 16),
    lambda: widgets.float_slider("f", 0.4, 0.05, 1.5, 0.05),
    lambda: widgets.log_slider("base", 1e4, 1, 6),
])
def test_sliders_redraw_on_release(make):
    assert make().continuous_update is False


def test_png_bytes_is_a_png_that_decodes_to_the_same_pixels():
    rng = np.random.default_rng(0)
    picture = rng.integers(0, 256, size=(7, 5, 3), dtype=np.uint8)
    png = widgets.png_bytes(picture)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    decoded = Image.open(io.BytesIO(png))
    decoded.verify()  # checksums and structure
    np.testing.assert_array_equal(pixels(png), picture)


# -- the picture a slider cell stores ------------------------------------------------------------

def stored_bundle(view) -> dict:
    """What IPython puts in the cell's output when the cell displays `view`."""
    from IPython.core.interactiveshell import InteractiveShell
    data, _ = InteractiveShell.instance().display_formatter.format(view)
    return data


def test_a_slider_cell_outputs_its_starting_figure_beside_the_widget():
    view = widgets.interactive_plot(line_plot, height="200px",
                                    slope=widgets.slider("slope", 2, -2, 2))
    bundle = stored_bundle(view)
    assert "application/vnd.jupyter.widget-view+json" in bundle  # a live front end: sliders
    png = base64.b64decode(bundle["image/png"])                   # a static one: the picture
    assert png == widgets.figure_png(line_plot(2))
    assert bundle["text/plain"] == ("A figure with sliders (slope = 2); "
                                    "run the cell to move them.")


def test_the_picture_follows_the_sliders():
    control = widgets.slider("slope", 2, -2, 2)
    view = widgets.interactive_plot(line_plot, slope=control)
    control.value = -1  # what a slider move does
    assert base64.b64decode(stored_bundle(view)["image/png"]) == widgets.figure_png(line_plot(-1))
    assert "slope = -1" in stored_bundle(view)["text/plain"]


def test_no_stale_picture_after_a_failed_redraw():
    def breaks_below_zero(slope):
        if slope < 0:
            raise RuntimeError("broken on purpose")
        return line_plot(slope)

    control = widgets.slider("slope", 1, -2, 2)
    view = widgets.interactive_plot(breaks_below_zero, slope=control)
    assert view.png is not None
    # In IPython the Output widget shows the traceback; outside, it lets the error through.
    with contextlib.suppress(RuntimeError):
        control.value = -1
    assert view.png is None and "image/png" not in stored_bundle(view)


def test_the_stored_notebook_keeps_the_picture_and_drops_the_widget_view():
    """tools/execute_notebooks.py strips widget views (no kernel to draw them in a stored file)."""
    import importlib.util
    from pathlib import Path

    import nbformat
    tool = Path(__file__).resolve().parents[1] / "tools" / "execute_notebooks.py"
    spec = importlib.util.spec_from_file_location("execute_notebooks", tool)
    execute_notebooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(execute_notebooks)

    view = widgets.interactive_plot(line_plot, slope=widgets.slider("slope", 1, -2, 2))
    cell = nbformat.v4.new_code_cell("display(view)", execution_count=1, outputs=[
        nbformat.v4.new_output("display_data", data=stored_bundle(view))])
    notebook = nbformat.v4.new_notebook(cells=[cell])
    execute_notebooks.tidy(notebook)
    assert set(notebook.cells[0].outputs[0].data) == {"image/png", "text/plain"}
    nbformat.validate(notebook)


# -- the picture on the page: one image widget, updated in place ---------------------------------

def test_a_move_sends_the_new_picture_to_the_image_already_shown(monkeypatch):
    shown = []
    monkeypatch.setattr(widgets, "display", shown.append)
    control = widgets.slider("slope", 1, -2, 2)
    view = widgets.interactive_plot(line_plot, slope=control)
    picture = view.picture
    assert shown == [picture] and picture.value == view.png == widgets.figure_png(line_plot(1))
    control.value = -1
    assert view.picture is picture and shown == [picture]  # no new output, the same image
    assert picture.value == widgets.figure_png(line_plot(-1))


def test_after_a_failed_draw_the_picture_is_shown_again(monkeypatch):
    def breaks_below_zero(slope):
        if slope < 0:
            raise RuntimeError("broken on purpose")
        return line_plot(slope)

    shown = []
    monkeypatch.setattr(widgets, "display", shown.append)
    control = widgets.slider("slope", 1, -2, 2)
    view = widgets.interactive_plot(breaks_below_zero, slope=control)
    with contextlib.suppress(RuntimeError):
        control.value = -1  # the output area now holds the error, not the picture
    control.value = 2
    assert shown == [view.picture, view.picture] and view.png == widgets.figure_png(line_plot(2))
