"""Notebook 10's figures: labelled axes, colour bars, what they show, and in-place redraws."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from helpers.plots.inference import (PACKED_LENGTHS, plot_cache_gap,  # noqa: E402
                                     plot_half_precision_angles, plot_packed_mask,
                                     plot_padded_positions)


def labelled(ax):
    return ax.get_xlabel() and ax.get_title()


def test_padded_positions_label_axes_and_colour_bar_and_write_each_position():
    fig = plot_padded_positions(4, 2, 3)
    wrong, right, bar = fig.axes
    assert labelled(wrong) and labelled(right) and bar.get_ylabel() == "position id"
    assert "wrong" in wrong.get_title() and "right" in right.get_title()
    # right: each prompt numbered from 0; wrong: the last column is T - 1 in every row
    assert [t.get_text() for t in right.texts] == ["0", "1", "2", "3", "0", "1", "0", "1", "2"]
    assert [t.get_text() for t in wrong.texts][-3:] == ["1", "2", "3"]  # pads get no number
    assert len(wrong.texts) == 4 + 2 + 3
    assert [label.get_text() for label in wrong.get_yticklabels()] == [
        "prompt of 4", "prompt of 2", "prompt of 3"]


def test_padded_positions_redraw_in_place_and_refuse_bad_lengths():
    fig = plot_padded_positions(9, 3, 6)
    axes = list(fig.axes)
    assert plot_padded_positions(1, 12, 5, figure=fig) is fig and fig.axes == axes
    assert "T = 12" in fig._suptitle.get_text()
    with pytest.raises(ValueError, match="1..12"):
        plot_padded_positions(0, 3, 3)


@pytest.mark.parametrize("documents", [1, 3, len(PACKED_LENGTHS)])
def test_packed_mask_counts_the_leaks_and_labels_everything(documents):
    fig = plot_packed_mask(documents)
    top_left, top_right, plain, blocked, bar = fig.axes
    lengths = PACKED_LENGTHS[:documents]
    total = sum(lengths)
    leaks = total * (total + 1) // 2 - sum(n * (n + 1) // 2 for n in lengths)
    assert plain.get_title().endswith(f": {leaks}") and blocked.get_title().endswith(": 0")
    assert all(ax.get_xlabel() for ax in (plain, blocked)) and plain.get_ylabel()
    assert top_left.get_ylabel() == "position id" and bar.get_ylabel() == "what the query sees"
    # the step curves: positions run on, and restart in every document
    assert list(top_left.lines[0].get_ydata()) == list(range(total))
    restart = np.concatenate([np.arange(n) for n in lengths])
    assert list(top_right.lines[0].get_ydata()) == list(restart)


def test_packed_mask_redraws_in_place():
    fig = plot_packed_mask(2)
    axes = list(fig.axes)
    assert plot_packed_mask(6, figure=fig) is fig and fig.axes == axes
    with pytest.raises(ValueError, match="1..6"):
        plot_packed_mask(7)


def test_static_figures_are_labelled():
    fig = plot_cache_gap([30, 31, 32, 33], [0.0, 0.0, 0.01, 0.02], trained_length=32)
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    fig = plot_half_precision_angles(np.arange(10), {"float16": np.ones(10),
                                                     "float32": np.zeros(10)})
    ax = fig.axes[0]
    assert "radians" in ax.get_ylabel() and ax.get_xlabel() == "position m"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["float16", "float32"]


def test_packed_mask_moves_give_the_same_curves_lines_and_images_new_data():
    """A move changes the numbers of the artists made with the figure; it makes none anew."""
    fig = plot_packed_mask(3)
    artists = [[*ax.lines, *ax.collections, *ax.images] for ax in fig.axes[:4]]
    plot_packed_mask(6, figure=fig)
    assert [[*ax.lines, *ax.collections, *ax.images] for ax in fig.axes[:4]] == artists
    assert list(fig.axes[0].lines[0].get_ydata()) == list(range(sum(PACKED_LENGTHS)))
    assert len(fig.axes[2].collections[0].get_segments()) == len(PACKED_LENGTHS) - 1


def test_padded_positions_reuse_their_number_texts_and_hide_those_not_needed():
    fig = plot_padded_positions(12, 12, 12)
    texts = [list(ax.texts) for ax in fig.axes[:2]]
    assert [len(kept) for kept in texts] == [36, 36]
    plot_padded_positions(1, 2, 1, figure=fig)
    assert [list(ax.texts) for ax in fig.axes[:2]] == texts  # the same 36 texts, most hidden
    shown = [[t.get_text() for t in ax.texts if t.get_visible()] for ax in fig.axes[:2]]
    assert shown == [["1", "0", "1", "1"], ["0", "0", "1", "0"]]


@pytest.mark.parametrize("plot, setting", [(plot_padded_positions, dict(first=12)),
                                           (plot_packed_mask, dict(documents=6))])
def test_titles_are_placed_once_not_measured_at_every_draw(plot, setting, axis_calls):
    """The titles' place is fixed (y=1.0, where matplotlib puts them here anyway): left
    automatic, each draw would measure every y axis's tick labels to check for room."""
    from helpers.widgets import figure_png

    fig = plot()
    figure_png(fig)
    measured = axis_calls("get_tightbbox")  # from here on
    figure_png(plot(**setting, figure=fig))
    assert measured == []
