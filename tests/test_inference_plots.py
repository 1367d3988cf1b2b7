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
