"""run_grid runs every (row, seed) pair once, in order, under one progress bar; seed_spread
summarises over seeds."""

import numpy as np
import pytest
import torch

import helpers.grid
from helpers.grid import run_grid, seed_spread


def test_every_row_and_seed_runs_once_in_order():
    calls = []
    results = run_grid(lambda row, seed: calls.append((row, seed)) or f"{row}{seed}",
                       ["a", "b"], [0, 1, 2], progress=False)
    assert calls == [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1), ("b", 2)]
    assert results == {"a": ["a0", "a1", "a2"], "b": ["b0", "b1", "b2"]}


def test_one_progress_bar_counts_all_runs(monkeypatch):
    bars = []

    class FakeBar:
        def __init__(self, total, **settings):
            self.total, self.done = total, 0
            bars.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def set_postfix_str(self, text):
            pass

        def update(self):
            self.done += 1

    monkeypatch.setattr(helpers.grid, "tqdm", FakeBar)
    run_grid(lambda row, seed: None, ["x", "y", "z"], [3, 4])
    assert [(bar.total, bar.done) for bar in bars] == [(6, 6)]


@pytest.mark.parametrize("rows,seeds,message", [
    ([], [0], r"at least one row and one seed"),
    (["a"], [], r"at least one row and one seed"),
    (["a"], [1, 1], r"seeds must differ from each other, got \[1, 1\]"),
])
def test_bad_grids(rows, seeds, message):
    with pytest.raises(ValueError, match=message):
        run_grid(lambda row, seed: None, rows, seeds, progress=False)


def test_seed_spread_of_numbers_and_tensors():
    mean, low, high = seed_spread([1.0, 4.0, 1.0])
    assert (mean, low, high) == (2.0, 1.0, 4.0)
    mean, low, high = seed_spread([torch.tensor([1.0, 5.0]), torch.tensor([3.0, 1.0])])
    assert np.allclose(mean, [2, 3]) and np.allclose(low, [1, 1]) and np.allclose(high, [3, 5])
    with pytest.raises(ValueError, match="at least one seed"):
        seed_spread([])


def test_seed_interval_is_the_t_interval():
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    mean, low, high = helpers.grid.seed_interval(values)
    half = 2.776 * np.std(values, ddof=1) / np.sqrt(5)
    assert mean == 3.0 and np.isclose(low, 3 - half) and np.isclose(high, 3 + half)
    mean, low, high = helpers.grid.seed_interval([np.array([1.0, 2.0]), np.array([3.0, 2.0])])
    assert np.allclose(mean, [2, 2]) and np.isclose(low[1], 2) and high[0] > 3
    with pytest.raises(ValueError, match="2 to 11 seeds, got 1"):
        helpers.grid.seed_interval([1.0])


def test_accuracy_interval_is_never_narrower_than_pooled_wilson():
    # Five seeds at 100/100: the t-interval is a point; Wilson for 500/500 reaches below 99.3%.
    mean, low, high = helpers.grid.accuracy_interval([100] * 5, 100)
    assert mean == 1.0 and high == 1.0 and 0.99 < low < 0.9925
    # Seeds that disagree: the t-interval over seeds is wider than the pooled Wilson one.
    mean, low, high = helpers.grid.accuracy_interval([20, 90, 50, 60, 80], 100)
    t_mean, t_low, t_high = helpers.grid.seed_interval([0.2, 0.9, 0.5, 0.6, 0.8])
    assert np.isclose(mean, 0.6) and np.isclose(low, t_low) and np.isclose(high, t_high)
    with pytest.raises(ValueError, match="counts from 0 to trials=10"):
        helpers.grid.accuracy_interval([11, 3], 10)
    with pytest.raises(ValueError, match="trials must be a positive integer"):
        helpers.grid.accuracy_interval([1, 3], 0)


def test_separated_needs_intervals_apart():
    assert helpers.grid.separated((0.9, 0.85, 0.95), (0.5, 0.4, 0.6))
    assert not helpers.grid.separated((0.9, 0.55, 0.95), (0.5, 0.4, 0.6))
    assert helpers.grid.separated((0.5, 0.4, 0.6), (0.9, 0.85, 0.95))
