"""Figures of notebook 09 (helpers/plots/positions_2d.py): each renders with labelled panels, the
slider figures redrawn in place show exactly what a new figure shows, and the numbers the
attention figure prints follow from the schemes (what the notebook's prose relies on)."""

import matplotlib
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

matplotlib.use("Agg")

from helpers import apply_rope_2d, patch_grid  # noqa: E402
from helpers.plots import positions_2d as plots  # noqa: E402
from helpers.widgets import figure_png  # noqa: E402

IMAGE = (np.arange(96 * 64 * 3) % 251).astype(np.uint8).reshape(96, 64, 3)


def labelled(fig):
    assert isinstance(fig, Figure)
    for ax in fig.axes:
        if ax.get_xticks().size or ax.get_yticks().size:  # the picture panels have no axes
            assert ax.get_xlabel() or ax.get_ylabel(), "an unlabelled panel"
        assert ax.get_title() or fig.get_suptitle(), "a panel without a title"
    assert figure_png(fig).startswith(b"\x89PNG")
    return True


@pytest.mark.parametrize("make", [
    lambda: plots.plot_patches(IMAGE, 16),
    lambda: plots.plot_patches(IMAGE[..., 0], 32, shown=100),  # grey, fewer patches than shown
    lambda: plots.plot_flattening(),
    lambda: plots.plot_flattening(3, 5, 2, 4),
    lambda: plots.plot_table_2d(),
    lambda: plots.plot_table_2d(1, 1, 4),
    lambda: plots.plot_query_attention(),
    lambda: plots.plot_query_attention(7, 0),
    lambda: plots.plot_mrope_ids(),
    lambda: plots.plot_mrope_ids(1, 8, 1, 1),
])
def test_figures_render_with_labels(make):
    assert labelled(make())


SLIDER_FIGURES = {
    "table": (plots.plot_table_2d, dict(rows=8, columns=8, dim=64), [
        dict(rows=16, columns=16, dim=256), dict(rows=1, columns=1, dim=4),
        dict(rows=16, columns=1, dim=128), dict(rows=2, columns=16, dim=8),
        dict(rows=8, columns=8, dim=64, base=100.0)]),
    "query": (plots.plot_query_attention, dict(row=2, column=3), [
        dict(row=0, column=0), dict(row=7, column=7), dict(row=0, column=7),
        dict(row=2, column=3)]),
    "M-RoPE": (plots.plot_mrope_ids, dict(rows=3, columns=4), [
        dict(rows=8, columns=8), dict(rows=1, columns=1), dict(rows=1, columns=8),
        dict(rows=5, columns=2, text_before=1, text_after=6)]),
    "grid change": (plots.plot_grid_change, dict(side=12), [
        dict(side=16), dict(side=4), dict(side=16, trained=5),  # another trained grid: a new
        dict(side=3, trained=5), dict(side=8), dict(side=8, dim=8)]),  # legend, then the old
}


@pytest.mark.parametrize("name", SLIDER_FIGURES)
def test_a_reused_figure_shows_what_a_new_one_shows(name):
    plot, first, moves = SLIDER_FIGURES[name]
    figure = plot(**first)
    figure_png(figure)
    for settings in moves:
        assert plot(**settings, figure=figure) is figure
        assert figure_png(figure) == figure_png(plot(**settings)), settings


def test_query_attention_weights_are_distributions_over_the_grid():
    weights = plots.query_attention(2, 3)
    assert list(weights) == list(plots.SCHEMES)
    for values in weights.values():
        assert values.shape == (8, 8) and abs(float(values.sum()) - 1) < 1e-12


def test_raster_rope_favours_the_row_and_axial_rope_both_neighbours():
    """What the figure's titles show: flattened, the patch below is 8 tokens away."""
    weights = plots.query_attention(2, 3)
    raster, axial = weights[plots.SCHEMES[0]], weights[plots.SCHEMES[2]]
    assert raster[2, 4] > 10 * raster[3, 3]
    first = plots.query_attention(2, 0)[plots.SCHEMES[0]]
    assert first[1, 7] == pytest.approx(first[2, 1])  # the end of the row above: 1 token away
    assert axial[2, 4] == pytest.approx(axial[3, 3]) == pytest.approx(axial[1, 3])


def test_axial_pattern_moves_with_the_query_and_the_table_pattern_does_not():
    """Scores (before the softmax) of axial RoPE depend on the offset only; MAE's table plus
    content does not: the same offsets from another query score differently."""
    content = torch.ones(64, plots.QUERY_DIM, dtype=torch.float64)
    rotated = apply_rope_2d(content, patch_grid(8, 8), plots.QUERY_BASE)
    scores = (rotated @ rotated.T).reshape(8, 8, 8, 8)  # [query r, c, key r, c]
    assert torch.allclose(scores[1, 1, :5, :5], scores[3, 3, 2:7, 2:7])
    table = plots.query_attention(1, 1)[plots.SCHEMES[1]]
    moved = plots.query_attention(3, 3)[plots.SCHEMES[1]]
    assert not torch.allclose(table[:5, :5] / table[:5, :5].sum(),
                              moved[2:7, 2:7] / moved[2:7, 2:7].sum(), atol=1e-3)


@pytest.mark.parametrize("side, trained", [(12, 8), (4, 8), (8, 8), (16, 5)])
def test_grid_change_figure_has_labels_and_colour_bars(side, trained):
    fig = plots.plot_grid_change(side, trained)
    assert labelled(fig)
    colour_bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(colour_bars) == 2 and all(ax.get_ylabel() for ax in colour_bars)
    positions = fig.axes[2]
    eva, qwen = positions.lines[1].get_ydata(), positions.lines[0].get_ydata()
    assert np.allclose(eva, np.arange(side) / side * trained) and max(eva) < trained
    assert np.array_equal(qwen, np.arange(side))


def test_grid_change_moves_give_the_same_images_marks_and_legend_new_data():
    """A move of the side slider changes the numbers of the artists made with the figure: no
    axes, image, mark, band or legend is made anew (the legend, laid out once, is replayed)."""
    fig = plots.plot_grid_change(side=12)
    made = [[*ax.images, *ax.lines, *ax.patches] for ax in fig.axes]
    axes, legend = list(fig.axes), fig.axes[2].get_legend()
    plots.plot_grid_change(side=16, figure=fig)
    assert list(fig.axes) == axes and fig.axes[2].get_legend() is legend
    assert [[*ax.images, *ax.lines, *ax.patches] for ax in fig.axes] == made
    assert fig.axes[1].images[0].get_array().shape[:2] == (16, 16)
    assert list(fig.axes[2].lines[0].get_ydata()) == list(range(16))


def test_grid_change_titles_are_placed_once_not_measured_at_every_draw(axis_calls):
    """The titles' place is fixed (y=1.0, where matplotlib puts them here anyway): left
    automatic, each draw would measure the panels' tick labels to check for room."""
    fig = plots.plot_grid_change(side=12)
    figure_png(fig)
    measured = axis_calls("get_tightbbox")
    figure_png(plots.plot_grid_change(side=16, figure=fig))
    assert measured == []
