"""Lesson 08's figure of the experiment: means over seeds with their 95% intervals."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from matplotlib.lines import Line2D

matplotlib.use("Agg")

from helpers.grid import accuracy_interval, seed_interval  # noqa: E402
from helpers.plots.context import METHOD_COLOURS, plot_extension_results  # noqa: E402

LENGTHS = [32, 64, 128, 256]


def runs(values_by_seed):
    return [dict(zip(LENGTHS, values)) for values in values_by_seed]


@pytest.fixture
def figure():
    rng = np.random.default_rng(0)
    losses = {"no fine-tuning": {"YaRN": runs(rng.random((5, 4))),
                                 "dynamic NTK": runs(rng.random((5, 4)))},
              "after": {"YaRN": runs(rng.random((5, 4)))}}
    found = {panel: {method: runs(rng.integers(0, 101, (5, 4))) for method in methods}
             for panel, methods in losses.items()}
    fig = plot_extension_results(losses, found, 32, 128, trials=100, chance=0.1)
    fig.canvas.draw()
    return fig, losses, found


def bars(ax, label):
    (container,) = [c for c in ax.containers if c.get_label() == label]
    segments = container.lines[2][0].get_segments()
    return container, np.array([[segment[0][1], segment[1][1]] for segment in segments])


def test_loss_bars_are_the_t_interval_and_passkey_bars_the_accuracy_interval(figure):
    fig, losses, found = figure
    loss_ax, passkey_ax = fig.axes[0], fig.axes[2]
    container, loss_bars = bars(loss_ax, "YaRN")
    mean, low, high = seed_interval([[run[n] for n in LENGTHS] for run in losses["no fine-tuning"]["YaRN"]])
    assert container.lines[0].get_ydata() == pytest.approx(mean)
    assert np.sort(loss_bars, axis=1) == pytest.approx(np.stack([low, high], axis=1))
    container, passkey_bars = bars(passkey_ax, "YaRN")
    mean, low, high = accuracy_interval([[run[n] for n in LENGTHS]
                                         for run in found["no fine-tuning"]["YaRN"]], 100)
    assert container.lines[0].get_ydata() == pytest.approx(mean)
    assert np.sort(passkey_bars, axis=1) == pytest.approx(np.stack([low, high], axis=1))
    assert container.lines[0].get_color() == METHOD_COLOURS["YaRN"]


def test_the_figure_says_how_its_intervals_are_computed_and_marks_the_lengths(figure):
    fig, _, _ = figure
    title = fig.get_suptitle()
    assert "Mean of 5 seeds" in title and "95% intervals, as in notebook 07" in title
    assert "500 trials" in title
    texts = [[t.get_text() for t in ax.texts] for ax in fig.axes]
    assert " trained length" in texts[0] and " fine-tune length" not in texts[0]
    assert " fine-tune length" in texts[1]  # after the fine-tune only
    assert any(line.get_ydata()[0] == pytest.approx(0.1) for line in fig.axes[2].get_lines())
    (legend,) = fig.legends  # one legend, with every method of the fullest panel
    assert [t.get_text() for t in legend.get_texts()] == ["YaRN", "dynamic NTK"]


def test_yarn_without_temperature_has_its_own_marker():
    losses = {"no fine-tuning": {"YaRN": runs(np.ones((5, 4))),
                                 "YaRN, no temperature": runs(np.ones((5, 4)))}}
    found = {"no fine-tuning": {m: runs(np.full((5, 4), 50)) for m in losses["no fine-tuning"]}}
    fig = plot_extension_results(losses, found, 32, None, trials=100)
    for ax in fig.axes:
        markers = {c.get_label(): c.lines[0].get_marker() for c in ax.containers}
        assert markers == {"YaRN": "o", "YaRN, no temperature": "s"}
    (legend,) = fig.legends  # the legend shows the same marks
    marks = [line.get_marker() for line in legend.findobj(Line2D)]
    assert [mark for mark in marks if mark in ("o", "s")] == ["o", "s"]
