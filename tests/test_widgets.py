"""helpers.widgets: sliders, the PNG rendering and the in-place redraw that keeps sliders fast."""

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
