"""Figures for notebook 07: every position scheme trained with several seeds, then tested past
its trained length. Each line is the mean over seeds; the band (or bar) around it is a 95%
confidence interval for that mean (`helpers.grid.seed_interval`; for a share of passkeys,
`accuracy_interval`), so a gap narrower than the bands is not a finding."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..grid import accuracy_interval, seed_interval
from ..retrieval import PLACEMENTS

# One colour per scheme, the same in every figure of the notebook.
SCHEME_COLOURS = {"none": "tab:gray", "learned": "tab:brown", "sinusoidal": "tab:blue",
                  "rope": "tab:green", "alibi": "tab:red", "t5": "tab:purple"}


def plot_training_curves(histories: Mapping[str, Sequence[dict] | dict],
                         uniform: float | None = None, unigram: float | None = None) -> Figure:
    """Story loss on the training batches and on the held-out text, against the step.

    `histories[scheme]` holds one `train_tiny_gpt` history per seed (or a single history).
    `uniform`, if given, is the loss of a uniform guess, ln(vocabulary size); `unigram` the
    held-out loss of always predicting the training text's token frequencies, which uses no
    context at all.
    """
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    train_ax, val_ax = fig.subplots(1, 2, sharex=True)
    for scheme, runs in histories.items():
        runs = _as_seeds(runs)
        steps = runs[0]["step"]
        _line_and_band(train_ax, steps, [run["train"] for run in runs], scheme)
        if runs[0]["val"]:
            _line_and_band(val_ax, steps, [run["val"] for run in runs], scheme)
    for ax in (train_ax, val_ax):
        if uniform is not None:
            ax.axhline(uniform, color="black", linestyle="--", linewidth=1)
            ax.text(steps[-1], uniform, "uniform guess", ha="right", va="bottom", fontsize=8)
        ax.set_xlabel("training step")
        ax.set_ylabel("cross-entropy (nats per token)")
        ax.grid(alpha=0.3)
    if unigram is not None:
        val_ax.axhline(unigram, color="black", linestyle=":", linewidth=1)
        val_ax.text(steps[-1], unigram, "token frequencies, no context", ha="right",
                    va="top", fontsize=8)
    train_ax.set_title("the training text (story tokens only)")
    val_ax.set_title("the held-out last 10% of the story")
    train_ax.legend(title="position scheme", fontsize=8)
    return fig


def plot_per_position_loss(curves: Mapping[str, Sequence], trained_length: int,
                           uniform: float | None = None, per_doubling: int = 16) -> Figure:
    """The loss at each position of long windows, one line per scheme (mean and seed range).

    `curves[scheme]` holds one loss-per-position array per seed (`per_position_loss`). A scheme
    whose curves are shorter (a learned table) simply stops. Positions are averaged in bins that
    hold one position each at first and then widen, `per_doubling` bins for every doubling of the
    position, so that a log axis shows evenly spread, less noisy points.
    """
    fig = Figure(figsize=(10, 4.2), layout="constrained")
    ax = fig.add_subplot()
    longest = 1
    for scheme, runs in curves.items():
        bins = _position_bins(len(runs[0]), per_doubling)
        centres = [np.mean(np.arange(start, stop) + 1) for start, stop in bins]
        binned = [[float(np.mean(np.asarray(run)[start:stop])) for start, stop in bins]
                  for run in runs]
        longest = max(longest, len(runs[0]))
        _line_and_band(ax, centres, binned, scheme, linewidth=1.2)
    _mark_trained_length(ax, trained_length, "trained length")
    if uniform is not None:
        ax.axhline(uniform, color="black", linestyle="--", linewidth=1)
        ax.text(longest, uniform, "uniform guess", ha="right", va="bottom", fontsize=8)
    ax.set_xscale("log", base=2)
    ticks = [2 ** k for k in range(0, int(np.log2(longest)) + 1)]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_xlabel("tokens seen so far (position in the window + 1)")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.set_title("Loss at each position of windows of the training text")
    ax.grid(alpha=0.3)
    ax.legend(title="position scheme", fontsize=8, ncol=3, loc="upper center")
    return fig


def _position_bins(length: int, per_doubling: int) -> list[tuple[int, int]]:
    """Consecutive [start, stop) ranges covering positions 0..length-1, widening on a log scale."""
    edges = np.unique(np.round(2.0 ** (np.arange(0, per_doubling * np.log2(length) + 1)
                                       / per_doubling)).astype(int))  # in tokens seen, 1..length
    edges = [int(edge) - 1 for edge in edges if edge <= length] + [length]
    bins = [(start, stop) for start, stop in zip(edges, edges[1:]) if stop > start]
    if len(bins) > 1 and bins[-1][1] - bins[-1][0] < bins[-2][1] - bins[-2][0]:
        bins[-2:] = [(bins[-2][0], length)]  # no lone narrow bin at the end
    return bins


def plot_loss_vs_length(losses: Mapping[str, Mapping[str, Sequence[Mapping[int, float]]]],
                        trained_length: int, colours: Mapping[str, str] | None = None,
                        title: str = "{}", legend_title: str = "position scheme",
                        share_y: bool = True, ylabel: str = "cross-entropy (nats per token)",
                        chance: float | None = None) -> Figure:
    """One panel per evaluation; in each, one line per scheme against the evaluation length.

    `losses[panel][line]` is a list with one `{length: value}` per seed (a single dict counts
    as one seed). Lines show the mean, bars its 95% interval over the seeds. A line with no value at a
    length (a learned table past its rows) stops there. `chance`, if given, is drawn as a
    dashed line (e.g. the accuracy of a blind guess).
    """
    colours = SCHEME_COLOURS if colours is None else colours
    fig = Figure(figsize=(10, 3.8), layout="constrained")
    axes = fig.subplots(1, len(losses), squeeze=False, sharey=share_y)[0]
    for ax, (panel, by_line) in zip(axes, losses.items()):
        all_lengths = set()
        for line, runs in by_line.items():
            runs = _as_seeds(runs)
            lengths = sorted(runs[0])
            all_lengths.update(lengths)
            mean, low, high = _interval([[run[n] for n in lengths] for run in runs])
            # Clipped at 0: with equal seeds the mean can round a hair outside their range.
            below, above = np.clip(mean - low, 0, None), np.clip(high - mean, 0, None)
            ax.errorbar(lengths, mean, yerr=[below, above], marker="o", markersize=4,
                        capsize=3, label=line, color=colours.get(line))
        _mark_trained_length(ax, trained_length, " trained length")
        if chance is not None:
            ax.axhline(chance, color="black", linestyle="--", linewidth=1)
            ax.text(max(all_lengths), chance, "chance", ha="right", va="bottom", fontsize=8)
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(all_lengths), [str(n) for n in sorted(all_lengths)])
        ax.set_xlabel("evaluation length (tokens)")
        ax.set_ylabel(ylabel)
        ax.set_title(title.format(panel))
        ax.grid(alpha=0.3)
    axes[0].legend(title=legend_title, fontsize=8)
    return fig


def plot_passkey_accuracy(accuracy: Mapping[str, Mapping[str, Sequence[Mapping[int, float]]]],
                          trained_length: int, chance: float,
                          colours: Mapping[str, str] | None = None,
                          legend_title: str = "position scheme") -> Figure:
    """Passkey accuracy against window length, one panel per placement of the passkey.

    `accuracy[panel][line]` is a list with one `{length: accuracy}` per seed.
    """
    fig = plot_loss_vs_length(accuracy, trained_length, colours=colours,
                              legend_title=legend_title, ylabel="passkeys named correctly",
                              chance=chance)
    for ax in fig.axes:
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("window length (tokens)")
    # Low on the left: the lines start at the top, and the chance line is at the bottom.
    fig.axes[0].legend(title=legend_title, fontsize=8, loc="lower left",
                       bbox_to_anchor=(0.04, 0.14))
    return fig


# One colour per placement of the passkey (helpers.retrieval.PLACEMENTS).
PLACEMENT_COLOURS = {"trained window": "black", "distance seen, position new": "tab:blue",
                     "position seen, distance new": "tab:orange",
                     "both seen, window longer": "tab:green", "both new": "tab:red"}


def plot_passkey_grid(found: Mapping[str, Sequence[Mapping[tuple[int, str], int]]],
                      trained_length: int, trials: int, chance: float) -> Figure:
    """One panel per scheme: the share of passkeys named against the window length, one line
    per placement (what training saw of the passkey's position and distance).

    `found[scheme]` holds one `passkey_grid` result per seed, {(length, placement): right
    answers out of `trials`}. Points are the mean over seeds, bars the 95% interval of
    `accuracy_interval`.
    """
    fig = Figure(figsize=(10, 5.6), layout="constrained")
    axes = fig.subplots(2, 3, sharex=True, sharey=True).flatten()
    lengths = sorted({length for runs in found.values() for length, _ in runs[0]})
    for ax, (scheme, runs) in zip(axes, found.items()):
        for placement in PLACEMENTS:
            shown = [n for n in lengths if (n, placement) in runs[0]]
            if not shown:
                continue
            mean, low, high = accuracy_interval([[run[(n, placement)] for n in shown]
                                                 for run in runs], trials)
            alone = len(shown) == 1  # a placement that fits one length only: a larger mark on top
            ax.errorbar(shown, mean, yerr=[np.clip(mean - low, 0, None),
                                           np.clip(high - mean, 0, None)],
                        marker="D" if alone else "o", markersize=5 if alone else 3.5,
                        capsize=2.5, linewidth=1.3, zorder=3 if alone else 2,
                        color=PLACEMENT_COLOURS[placement], label=placement)
        ax.axvline(trained_length, color="black", linestyle=":", linewidth=1)
        ax.axhline(chance, color="black", linestyle="--", linewidth=0.8)
        ax.set_title(scheme, fontsize=10, color=SCHEME_COLOURS.get(scheme, "black"))
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths, [str(n) for n in lengths], fontsize=8)
        ax.set_xlim(lengths[0] / 1.2, lengths[-1] * 1.2)
        ax.set_ylim(-0.03, 1.05)
        ax.grid(alpha=0.3)
    for ax in axes[len(found):]:
        ax.set_visible(False)
    for ax in axes[3:]:
        ax.set_xlabel("window length (tokens)")
    for ax in axes[::3]:
        ax.set_ylabel("passkeys named")
    learned = list(found).index("learned") if "learned" in found else None
    if learned is not None:
        axes[learned].text(0.5, 0.45, f"no rows past position {trained_length - 1}:\n"
                           "longer windows raise an error", transform=axes[learned].transAxes,
                           ha="center", fontsize=8)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    fig.legend(handles, labels, title="where the passkey sits (what training saw)",
               loc="outside lower center", ncol=3, fontsize=8, title_fontsize=8)
    fig.suptitle(f"Passkeys named, {trials} fresh trials per point and seed (dotted: trained "
                 f"length; dashed: chance)", fontsize=10)
    return fig


def _as_seeds(runs) -> list:
    """A list of per-seed results; a single result (a dict) counts as one seed."""
    return [runs] if isinstance(runs, Mapping) else list(runs)


def _interval(runs: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and 95% interval over the seeds; a single seed has no interval (low = high = mean)."""
    if len(runs) == 1:
        mean = np.asarray(runs[0], dtype=float)
        return mean, mean, mean
    return seed_interval(runs)


def _line_and_band(ax: Axes, x, runs: Sequence, label: str, linewidth: float = 1.5,
                   colours: Mapping[str, str] = SCHEME_COLOURS) -> None:
    mean, low, high = _interval(runs)
    colour = colours.get(label)
    ax.plot(x, mean, color=colour, label=label, linewidth=linewidth)
    if len(runs) > 1:
        ax.fill_between(x, low, high, color=colour, alpha=0.2, linewidth=0)


def _mark_trained_length(ax: Axes, trained_length: int, text: str) -> None:
    ax.axvline(trained_length, color="black", linestyle=":", linewidth=1)
    ax.annotate(text, (trained_length, 0), xycoords=("data", "axes fraction"),
                xytext=(2, 4), textcoords="offset points", fontsize=8)
