"""Figures that sliders redraw in place (helpers.plots.in_place): a reused figure must render
exactly what a new figure with the same settings renders, whatever settings it showed before."""

from functools import partial

import matplotlib
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

matplotlib.use("Agg")

from helpers.plots import absolute, context, dataloader, relative, rope  # noqa: E402
from helpers.plots.heatmap import average_blocks  # noqa: E402
from helpers.plots.in_place import boxes, clear_plotted, show_image, write_in_cells  # noqa: E402
from helpers.widgets import figure_png  # noqa: E402

torch.manual_seed(0)
BEFORE = 0.02 * torch.randn(16, 8)
AFTER = BEFORE + torch.randn(16, 8) * torch.arange(16).lt(8)[:, None]

# plot function: (the first setting, the moves after it). Each move covers an edge of a slider's
# range or a change of shape (rows, heads, pairs), where stale limits or artists would show, and
# the settings the notebooks' text talks about (e.g. 04's table at 512 x 512, 06's causal T5).
SLIDER_FIGURES = {
    "02 windows": (dataloader.plot_sliding_windows, dict(max_length=4, stride=4), [
        dict(max_length=16, stride=1), dict(max_length=40, stride=1),  # no window at all
        dict(max_length=3, stride=2), dict(max_length=6, stride=2)]),
    "03 learned rows": (absolute.plot_learned_rows,
                        dict(table=BEFORE, trained_positions=8, limit=2.0), [
        dict(table=AFTER, trained_positions=8, title="after", initial=BEFORE),
        dict(table=AFTER, trained_positions=12)]),
    "04 table": (absolute.plot_sinusoidal_table, dict(dim=128, length=128, base=1e4), [
        dict(dim=512, length=300, base=10.0), dict(dim=2, length=1, base=1e6),
        dict(dim=64, length=512, base=1e4), dict(dim=512, length=512, base=1e4)]),
    "04 spectrum": (absolute.plot_wavelength_spectrum, dict(dim=512, length=512, bases=1e4), [
        dict(dim=8, length=4096, bases=1e6), dict(dim=2, length=1, bases=10.0)]),
    "04 dot products": (absolute.plot_dot_product_matrix, dict(dim=128, length=128), [
        dict(dim=512, length=512, base=10.0), dict(dim=2, length=2)]),
    "04 shift rotation": (partial(absolute.plot_shift_rotation, dim=16), dict(offset=3), [
        dict(offset=-12), dict(offset=12)]),
    "05 rotation": (rope.plot_rotation, {}, [
        dict(query_position=0, key_position=15, frequency=0.05),
        dict(query_position=15, key_position=0, frequency=1.5),
        dict(query_position=9, key_position=2, frequency=0.4)]),
    "05 cos tables": (rope.plot_cos_tables, {}, [
        dict(length=1024, dim=256, base=1e7), dict(length=8, dim=4, base=10.0),
        dict(length=1000, dim=30), dict(length=256, dim=32, base=1e4)]),
    "05 decay": (rope.plot_long_term_decay, {}, [
        dict(dim=8, base=100.0), dict(dim=512, base=1e7), dict(dim=128, base=1e4),
        dict(dim=64, base=1e4)]),
    "05 wavelengths": (rope.plot_wavelengths, {}, [
        dict(length=128, dim=8, base=100.0), dict(length=131072, dim=512, base=1e7),
        dict(length=32768, dim=128, base=1e4)]),
    "06 Shaw": (relative.plot_shaw_index, dict(seq_len=8, max_distance=3), [
        dict(seq_len=64, max_distance=16), dict(seq_len=2, max_distance=0),
        dict(seq_len=8, max_distance=3)]),
    "06 T5": (relative.plot_t5_buckets, {}, [
        dict(num_buckets=4, max_distance=40, bidirectional=False, seq_len=8),
        dict(num_buckets=64, max_distance=512, bidirectional=True, seq_len=512),
        dict(num_buckets=32, max_distance=128, bidirectional=False, seq_len=256)]),
    "06 ALiBi": (relative.plot_alibi, {}, [
        dict(num_heads=1, seq_len=16), dict(num_heads=64, seq_len=2048),
        dict(num_heads=12, seq_len=2048), dict(num_heads=12, seq_len=512)]),
    "08 scaled frequencies": (context.plot_scaled_frequencies, {}, [
        dict(dim=8, factor=1), dict(dim=256, factor=64), dict(dim=128, factor=16)]),
}


@pytest.mark.parametrize("name", SLIDER_FIGURES)
def test_a_reused_figure_shows_what_a_new_one_shows(name):
    plot, first, moves = SLIDER_FIGURES[name]
    figure = plot(**first)
    figure_png(figure)
    for settings in moves:
        assert plot(**settings, figure=figure) is figure
        assert figure_png(figure) == figure_png(plot(**settings)), settings


def test_clear_plotted_keeps_axes_and_images_and_drops_the_rest():
    fig = Figure()
    ax = fig.add_subplot()
    image = ax.imshow(np.eye(3))
    bar = fig.colorbar(image, ax=ax)
    ax.plot([0, 1], label="line")
    ax.bar([0, 1], [1, 2])
    ax.text(0, 0, "note")
    ax.legend()
    ax.set_xlabel("x")
    assert clear_plotted(fig) is fig
    assert [len(ax.lines), len(ax.patches), len(ax.texts), len(ax.containers)] == [0, 0, 0, 0]
    assert ax.legend_ is None
    assert list(ax.images) == [image] and image.colorbar is bar and ax.get_xlabel() == "x"
    assert len(fig.axes) == 2  # the colour bar's axes too


def test_show_image_updates_the_image_and_its_scale():
    fig = Figure()
    ax = fig.add_subplot()
    first = show_image(ax, np.zeros((2, 3)), vmin=-1, vmax=1)
    again = show_image(ax, np.arange(20.0).reshape(4, 5))  # bigger, and the scale from the data
    assert again is first and list(again.get_extent()) == [-0.5, 4.5, 3.5, -0.5]
    assert (again.norm.vmin, again.norm.vmax) == (0.0, 19.0)
    assert ax.get_xlim() == (-0.5, 4.5)
    masked = np.ma.masked_invalid(np.array([[1.0, -np.inf], [3.0, 2.0]]))
    assert show_image(ax, masked).norm.vmin == 1.0  # masked cells do not set the scale


def test_boxes_draws_each_rectangle_where_asked():
    fig = Figure()
    ax = fig.add_subplot()
    collection = boxes(ax, [0, 2], 1, [1, 3], [2, 0.5], color="tab:blue")
    corners = [path.vertices[:4] for path in collection.get_paths()]
    np.testing.assert_allclose(corners[0], [[0, 1], [1, 1], [1, 3], [0, 3]])
    np.testing.assert_allclose(corners[1], [[2, 1], [5, 1], [5, 1.5], [2, 1.5]])
    assert list(ax.collections) == [collection]


def test_big_heatmaps_are_averaged_in_blocks():
    data = np.arange(6 * 4, dtype=np.float32).reshape(6, 4)
    np.testing.assert_array_equal(average_blocks(data, max_cells=8), data)  # small: unchanged
    shrunk = average_blocks(data, max_cells=2)  # blocks of 3 rows x 2 columns
    np.testing.assert_allclose(shrunk, [[data[:3, :2].mean(), data[:3, 2:].mean()],
                                        [data[3:, :2].mean(), data[3:, 2:].mean()]])
    uneven = average_blocks(np.arange(5, dtype=np.float32)[:, None], max_cells=2)
    np.testing.assert_allclose(uneven[:, 0], [1.0, 3.5])  # blocks [0, 1, 2] and [3, 4]
    assert average_blocks(np.zeros((512, 3)), max_cells=256).shape == (256, 3)


def test_shaw_keeps_the_texts_of_its_cells_from_move_to_move():
    """Making 64 texts was a fifth of a redraw: a move rewrites them, and hides the spare ones."""
    fig = relative.plot_shaw_index(seq_len=8, max_distance=3)
    texts = list(fig.axes[0].texts)
    assert len(texts) == 64
    relative.plot_shaw_index(seq_len=64, max_distance=3, figure=fig)  # too big to write in
    assert list(fig.axes[0].texts) == texts and not any(text.get_visible() for text in texts)
    relative.plot_shaw_index(seq_len=4, max_distance=1, figure=fig)
    assert list(fig.axes[0].texts) == texts
    assert [text.get_visible() for text in texts] == [True] * 16 + [False] * 48
    assert texts[1].get_text() == "2" and texts[1].get_position() == (1, 0)  # clip(1, -1, 1) + 1


def test_scaled_frequencies_keeps_its_lines_and_legend():
    fig = context.plot_scaled_frequencies(dim=16, factor=8)
    lines = [list(ax.lines) for ax in fig.axes]
    legend = fig.axes[1].get_legend()
    context.plot_scaled_frequencies(dim=32, factor=2, figure=fig)
    assert [list(ax.lines) for ax in fig.axes] == lines
    assert fig.axes[1].get_legend() is legend
    context.plot_scaled_frequencies(dim=256, factor=2, figure=fig)  # no dots past 32 pairs
    assert fig.axes[1].get_legend() is legend
    assert legend.get_lines()[0].get_marker() == "None"


def test_scaled_frequencies_lays_its_legend_out_once_per_marker_style(monkeypatch):
    """The legend shows marks for heads up to 64 and none above: each style's drawing is kept
    (`remember_unchanging`'s variant), so moving between them does not lay the legend out."""
    from matplotlib.legend import Legend

    fig = context.plot_scaled_frequencies(dim=16, factor=8)
    figure_png(fig)
    figure_png(context.plot_scaled_frequencies(dim=256, factor=8, figure=fig))
    layouts = []
    original = Legend.draw
    monkeypatch.setattr(Legend, "draw", lambda legend, renderer: (layouts.append(legend),
                                                                  original(legend, renderer)))
    for dim in (16, 256, 32):
        figure_png(context.plot_scaled_frequencies(dim=dim, factor=8, figure=fig))
    assert layouts == []


def test_numbers_written_in_cells_before_are_replayed_not_laid_out_again(monkeypatch):
    """A table's texts are laid out once per look (words, colour, cell, axes' limits): back at
    numbers shown before (06's Shaw table, 10's batches), the slider canvas replays them. A
    changed number or a moved view is drawn anew, and every picture is plain Agg's."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    from helpers.plots.canvas import SliderCanvas

    fig = Figure(figsize=(3, 3), dpi=80)
    ax = fig.add_subplot(xlim=(-0.5, 1.5), ylim=(1.5, -0.5))  # a 2 x 2 table's cells
    canvas = SliderCanvas(fig)
    tables = [[(0, 0, "1", "white"), (1, 1, "2", "black")],
              [(0, 0, "3", "black")]]  # the second cell hidden
    for cells in tables:
        write_in_cells(ax, cells)
        canvas.draw()
    laid_out = []
    original = Text.draw
    monkeypatch.setattr(Text, "draw", lambda text, renderer: (
        laid_out.append(text.get_text()) if text in ax.texts else None, original(text, renderer)))

    def drawn_as_plain_agg() -> bool:
        pixels = bytes(canvas.buffer_rgba())
        plain = FigureCanvasAgg(fig)  # (lays the texts out: not counted after)
        plain.draw()
        laid_out.clear()
        fig.set_canvas(canvas)
        return pixels == bytes(plain.buffer_rgba())

    for cells in tables:
        write_in_cells(ax, cells)
        canvas.draw()
        assert laid_out == []
        assert drawn_as_plain_agg()
    write_in_cells(ax, [(0, 0, "4", "black"), (1, 1, "2", "white")])  # new words, a new colour
    canvas.draw()
    assert laid_out == ["4", "2"] and drawn_as_plain_agg()
    ax.set_xlim(-1, 2)  # the same numbers, moved on the canvas (the axes stay in place)
    canvas.draw()
    assert laid_out == ["4", "2"] and drawn_as_plain_agg()
