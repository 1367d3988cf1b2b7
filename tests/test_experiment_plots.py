"""The figures of notebooks 07 and 08 draw what they are given: the mean over seeds as a line,
the smallest-to-largest seed as a band or bar, reference lines where asked, and labels."""

import math

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")

from helpers.grid import accuracy_interval, seed_interval  # noqa: E402
from helpers.plots import compare, context  # noqa: E402
from helpers.widgets import figure_png  # noqa: E402

TWO_SEEDS = {"rope": [{32: 0.2, 64: 1.0}, {32: 0.4, 64: 2.0}],
             "learned": [{32: 0.5}, {32: 0.7}]}


def rendered(fig):
    assert figure_png(fig).startswith(b"\x89PNG")
    return fig


def line(ax, label):
    (found,) = [l for l in ax.get_lines() if l.get_label() == label]
    return found


def test_per_position_loss_draws_the_mean_and_the_seed_band():
    curves = {"alibi": [torch.tensor([3.0, 1.0, 0.5, 0.5]), torch.tensor([1.0, 1.0, 0.5, 1.5])],
              "learned": [torch.tensor([2.0, 1.0]), torch.tensor([2.0, 1.0])]}
    fig = rendered(compare.plot_per_position_loss(curves, trained_length=2, uniform=math.log(7)))
    ax = fig.axes[0]
    assert np.allclose(line(ax, "alibi").get_ydata(), [2.0, 1.0, 0.5, 1.0])
    assert list(line(ax, "learned").get_xdata()) == [1, 2], "a learned table stops at its rows"
    # The band is the 95% t-interval over the seeds, bin by bin.
    _, low, high = seed_interval([[3.0, 1.0, 0.5, 0.5], [1.0, 1.0, 0.5, 1.5]])
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == pytest.approx(low.min()) and band.max() == pytest.approx(high.max())
    assert any(l.get_ydata()[0] == pytest.approx(math.log(7)) for l in ax.get_lines())
    assert ax.get_xscale() == "log" and ax.get_xlabel() and ax.get_ylabel()


def test_loss_against_length_shows_the_interval_over_seeds_as_bars():
    fig = rendered(compare.plot_loss_vs_length({"sliding windows": TWO_SEEDS}, 32))
    ax = fig.axes[0]
    (rope,) = [c for c in ax.containers if c.get_label() == "rope"]
    assert np.allclose(rope.lines[0].get_ydata(), [0.3, 1.5])
    runs = [[TWO_SEEDS["rope"][0][n], TWO_SEEDS["rope"][1][n]] for n in (32, 64)]
    _, low, high = seed_interval(np.array(runs).T)
    ends = np.array([segment[:, 1] for segment in rope.lines[2][0].get_segments()])
    assert np.allclose(np.sort(ends, axis=1), np.stack([low, high], axis=1))
    (learned,) = [c for c in ax.containers if c.get_label() == "learned"]
    assert list(learned.lines[0].get_xdata()) == [32]
    assert ax.get_title() == "sliding windows"


def test_single_seed_results_still_plot():
    rendered(compare.plot_loss_vs_length({"panel": {"rope": {32: 0.2, 64: 0.5}}}, 32))
    history = {"step": [50, 100], "train": [3.0, 1.0], "val": [5.0, 6.0]}
    rendered(compare.plot_training_curves({"rope": history}))


def test_training_curves_mark_the_uniform_guess_and_the_unigram_loss():
    runs = [{"step": [50, 100], "train": [3.0, 1.0], "val": [5.0, 6.0]},
            {"step": [50, 100], "train": [2.0, 1.0], "val": [5.5, 7.0]}]
    fig = rendered(compare.plot_training_curves({"t5": runs}, uniform=7.26, unigram=5.4))
    train_ax, val_ax = fig.axes
    assert np.allclose(line(val_ax, "t5").get_ydata(), [5.25, 6.5])
    levels = {round(float(l.get_ydata()[0]), 2) for l in val_ax.get_lines() if l.get_label()
              .startswith("_")}
    assert {7.26, 5.4} <= levels
    assert "held-out" in val_ax.get_title()


def test_passkey_figures_run_from_zero_to_one_with_a_chance_line():
    accuracy = {"passkey near": TWO_SEEDS, "passkey far": TWO_SEEDS}
    fig = rendered(compare.plot_passkey_accuracy(accuracy, 32, chance=0.1))
    for ax in fig.axes:
        assert ax.get_ylim() == pytest.approx((-0.05, 1.05))
        assert any(l.get_ydata()[0] == pytest.approx(0.1) for l in ax.get_lines())
    methods = {"YaRN": [{32: 1.0, 256: 0.5}], "dynamic NTK": [{32: 1.0, 256: 0.9}]}
    fig = rendered(context.plot_extension_passkeys({"as is": methods}, 32, chance=0.1))
    assert fig.axes[0].get_title() == "as is"
    (dynamic,) = [c for c in fig.axes[0].containers if c.get_label() == "dynamic NTK"]
    assert dynamic.lines[0].get_color() == context.METHOD_COLOURS["dynamic NTK"]


def test_rotation_angles_speak_of_relative_angles():
    fig = rendered(context.plot_rotation_angles(16, 32, 256))
    ax = fig.axes[0]
    assert "relative" in ax.get_ylabel() and "distance 31" in ax.get_title()
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels == ["largest in training (distance 31)", "at distance 255"]


def test_position_bins_cover_every_position_once_and_widen():
    from helpers.plots.compare import _position_bins

    bins = _position_bins(512, 16)
    assert bins[0] == (0, 1) and bins[-1][1] == 512
    assert all(stop == start for (_, stop), (start, _) in zip(bins, bins[1:]))
    widths = [stop - start for start, stop in bins]
    assert widths[:16] == [1] * 16 and max(widths) <= 32
    assert 12 <= sum(1 for start, _ in bins if 256 <= start < 512) <= 17  # ~16 per doubling


def test_long_curves_are_averaged_in_bins():
    curve = torch.arange(512.0)
    fig = rendered(compare.plot_per_position_loss({"rope": [curve, curve]}, 32))
    x, y = line(fig.axes[0], "rope").get_data()
    assert len(x) < 100 and np.allclose(np.asarray(x) - 1, y)  # each point: its bin's mean


def test_equal_seeds_draw_without_a_negative_bar():
    """Three seeds of 0.7: their float mean is a hair below their minimum (0.7 - 1.1e-16)."""
    equal = {"panel": {"rope": [{32: 0.7}, {32: 0.7}, {32: 0.7}], "t5": [{32: 1 / 3}] * 3}}
    rendered(compare.plot_loss_vs_length(equal, 32))
    rendered(compare.plot_passkey_accuracy({"far": {"t5": [{32: 0.95}, {32: 0.95}, {32: 0.95}]}},
                                           32, chance=0.1))


def test_passkey_grid_has_a_panel_per_scheme_and_a_line_per_placement():
    one_seed = {(32, "trained window"): 100, (64, "distance seen, position new"): 90,
                (64, "position seen, distance new"): 20, (128, "both new"): 40}
    other = dict(one_seed) | {(64, "position seen, distance new"): 30}
    found = {"rope": [one_seed, other], "learned": [{(32, "trained window"): 95}] * 2}
    fig = rendered(compare.plot_passkey_grid(found, 32, trials=100, chance=0.1))
    rope, learned = fig.axes[:2]
    assert rope.get_title() == "rope" and learned.get_title() == "learned"
    (far,) = [c for c in rope.containers if c.get_label() == "position seen, distance new"]
    assert list(far.lines[0].get_xdata()) == [64] and np.allclose(far.lines[0].get_ydata(), 0.25)
    _, low, high = accuracy_interval([[20], [30]], 100)
    ends = far.lines[2][0].get_segments()[0][:, 1]
    assert np.allclose(sorted(ends), [low[0], high[0]])
    assert any("no rows past position 31" in t.get_text() for t in learned.texts)
    assert not any(ax.get_visible() for ax in fig.axes[2:6])
    assert "where the passkey sits" in fig.legends[0].get_title().get_text()
