"""Run one experiment for every (row, seed) pair under one progress bar; summarise over seeds.

A result from one seed can rank two schemes by luck. The notebooks therefore repeat every
experiment with several seeds and summarise each number over them:

    seed_spread        mean, smallest and largest over the seeds
    seed_interval      mean and a 95% confidence interval for it (Student's t over the seeds)
    accuracy_interval  the same for a share of trials answered right, never narrower than the
                       Wilson interval of all the trials pooled (five seeds that all score
                       100/100 do not prove an accuracy of exactly 100%)

Two schemes are ranked only where their intervals do not overlap (`separated`).
"""

from __future__ import annotations

import itertools
from typing import Callable, Hashable, Sequence

import numpy as np
from tqdm.auto import tqdm

__all__ = ["run_grid", "seed_spread", "seed_interval", "accuracy_interval", "separated"]

# Student's t at 97.5% for 1..10 degrees of freedom: the half-width of a 95% interval is
# t * (standard deviation over the seeds) / sqrt(number of seeds).
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)
WILSON_Z = 1.96  # the normal quantile of a two-sided 95% interval


def run_grid(experiment: Callable[[Hashable, int], object], rows: Sequence[Hashable],
             seeds: Sequence[int], description: str = "experiments",
             progress: bool = True) -> dict[Hashable, list]:
    """`experiment(row, seed)` for every row (e.g. a position scheme) and every seed.

    Returns {row: [result of seed 0, result of seed 1, ...]} in the order given. One progress
    bar counts all runs; `progress=False` or TQDM_DISABLE=1 switches it off.
    """
    rows, seeds = list(rows), list(seeds)
    if not rows or not seeds:
        raise ValueError(f"need at least one row and one seed, got rows={rows!r}, "
                         f"seeds={seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must differ from each other, got {seeds!r}")
    results: dict[Hashable, list] = {row: [] for row in rows}
    quiet = {} if progress else {"disable": True}
    with tqdm(total=len(rows) * len(seeds), desc=description, leave=False, **quiet) as bar:
        for row, seed in itertools.product(rows, seeds):
            bar.set_postfix_str(f"{row}, seed {seed}")
            results[row].append(experiment(row, seed))
            bar.update()
    return results


def seed_spread(values: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, smallest, largest) over seeds of numbers or equally shaped arrays or tensors."""
    stacked = _stack(values)
    return stacked.mean(axis=0), stacked.min(axis=0), stacked.max(axis=0)


def seed_interval(values: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, low, high): the mean over 2 to 11 seeds and its 95% t-interval.

    The half-width is t · s / sqrt(n), with s the standard deviation over the n seeds and t
    Student's quantile for n - 1 degrees of freedom. Works on numbers or equal-shaped arrays.
    """
    stacked = _stack(values)
    count = len(stacked)
    if not 2 <= count <= len(T_975) + 1:
        raise ValueError(f"an interval over seeds needs 2 to {len(T_975) + 1} seeds, got {count}")
    mean = stacked.mean(axis=0)
    half = T_975[count - 2] * stacked.std(axis=0, ddof=1) / np.sqrt(count)
    return mean, mean - half, mean + half


def accuracy_interval(correct: Sequence, trials: int) -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray]:
    """(mean, low, high) of an accuracy from `correct` answers out of `trials` for each seed.

    Each seed draws its own fresh trials, so the spread between seeds holds both what differs
    between trained models and the luck of the draw: the t-interval over the seeds' accuracies
    covers both. It is widened, where narrower, to the Wilson interval of all trials pooled,
    and clipped to [0, 1].
    """
    if isinstance(trials, bool) or not isinstance(trials, int) or trials <= 0:
        raise ValueError(f"trials must be a positive integer, got trials={trials!r}")
    counts = _stack(correct)
    if (counts < 0).any() or (counts > trials).any():
        raise ValueError(f"correct answers must be counts from 0 to trials={trials}")
    mean, low, high = seed_interval(counts / trials)
    pooled_low, pooled_high = _wilson(counts.sum(axis=0), trials * len(counts))
    return mean, np.clip(np.minimum(low, pooled_low), 0, 1), np.clip(np.maximum(high, pooled_high),
                                                                     0, 1)


def separated(first: tuple, second: tuple) -> bool:
    """Whether two (mean, low, high) intervals do not overlap (all entries, for arrays)."""
    return bool(np.all((np.asarray(first[1]) > np.asarray(second[2])) |
                       (np.asarray(second[1]) > np.asarray(first[2]))))


def _wilson(successes, total) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval (95%) of `successes` out of `total` trials."""
    share = np.asarray(successes, dtype=float) / total
    z2 = WILSON_Z ** 2
    centre = (share + z2 / (2 * total)) / (1 + z2 / total)
    half = WILSON_Z * np.sqrt(share * (1 - share) / total + z2 / (4 * total ** 2)) / (1 + z2 / total)
    return centre - half, centre + half


def _stack(values: Sequence) -> np.ndarray:
    if len(values) == 0:
        raise ValueError("need the results of at least one seed")
    return np.stack([np.asarray(value, dtype=float) for value in values])
