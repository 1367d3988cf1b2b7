"""Figures for notebook 08: RoPE's angles against the trained range, and how each scaling
method changes the frequencies."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from ..rope import rope_frequencies
from .canvas import remember_each_range, remember_unchanging
from .compare import plot_loss_vs_length, plot_passkey_accuracy
from .ticks import plain_log_ticks
from ..grid import accuracy_interval, seed_interval
from ..rope_scaling import rope_inv_freq

METHOD_COLOURS = {"no scaling": "black", "linear (PI)": "tab:blue", "NTK-aware": "tab:orange",
                  "dynamic NTK": "tab:brown", "YaRN": "tab:green", "Llama 3": "tab:purple",
                  "YaRN, no temperature": "tab:olive"}


def scaling_settings(factor: float, original_length: int) -> dict[str, dict | None]:
    """The `rope_scaling` dict of each method, for one factor and original context."""
    return {
        "no scaling": None,
        "linear (PI)": {"rope_type": "linear", "factor": factor},
        "NTK-aware": {"rope_type": "ntk", "factor": factor},
        "YaRN": {"rope_type": "yarn", "factor": factor,
                 "original_max_position_embeddings": original_length},
        "Llama 3": {"rope_type": "llama3", "factor": factor, "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0, "original_max_position_embeddings": original_length},
    }


def plot_rotation_angles(dim: int = 16, trained_length: int = 32, eval_length: int = 256,
                         base: float = 10000.0) -> Figure:
    """Per pair: the largest relative angle (m - n)·θᵢ training showed, and the one at a longer
    distance. Attention scores depend on m - n alone, so these are what the model reads."""
    theta = rope_frequencies(dim, base).double().numpy()
    pairs = np.arange(len(theta))
    trained, longer = trained_length - 1, eval_length - 1
    fig = Figure(figsize=(9, 3.6), layout="constrained")
    ax = fig.add_subplot()
    ax.bar(pairs - 0.2, theta * trained, width=0.4, color="tab:blue",
           label=f"largest in training (distance {trained})")
    ax.bar(pairs + 0.2, theta * longer, width=0.4, color="tab:red", alpha=0.7,
           label=f"at distance {longer}")
    ax.axhline(2 * math.pi, color="black", linestyle="--", linewidth=1)
    ax.text(len(theta) - 0.5, 2 * math.pi, "one full turn (2π)", ha="right", va="bottom",
            fontsize=8)
    ax.set_yscale("log")
    ax.set_xlabel(f"pair i (head dimension {dim}; θᵢ = {base:g}^(-2i/{dim}))")
    ax.set_ylabel("relative angle (m - n)·θᵢ (radians)")
    ax.set_title(f"Past distance {trained}, the slow pairs reach relative angles training "
                 "never showed")
    ax.legend(fontsize=8, loc="lower left")
    return fig


def plot_scaled_frequencies(dim: int = 16, factor: float = 8.0, original_length: int = 32,
                            base: float = 10000.0, figure: Figure | None = None) -> Figure:
    """Each method's per-pair frequency, and its ratio to the unscaled frequency.

    `figure`, if given, is a figure this function returned before: it is redrawn in place,
    which is what a slider does (see `helpers.plots.in_place`). Its lines, marks and legend are
    kept and given the new numbers: making them again was a fifth of a slider move.
    """
    default = rope_frequencies(dim, base).double().numpy()
    pairs = np.arange(dim // 2)
    settings = scaling_settings(factor, original_length)
    fig = figure if figure is not None else _scaled_frequencies_figure(list(settings))
    wave_ax, ratio_ax = fig.axes
    longest = 2 * math.pi / default[-1] * factor  # no method stretches a wavelength further
    marker = "." if dim <= 64 else "None"  # beyond 32 pairs the dots merge anyway
    for (method, scaling), wave, ratio in zip(settings.items(), wave_ax.lines, ratio_ax.lines):
        inv_freq, _ = rope_inv_freq(dim, base, scaling)
        inv_freq = inv_freq.double().numpy()
        wave.set(data=(pairs, 2 * math.pi / inv_freq), marker=marker)
        ratio.set(data=(pairs, inv_freq / default), marker=marker)
    # The last line and the text of each panel mark the original context and 1/s.
    wave_ax.lines[-1].set_ydata([original_length] * 2)
    wave_ax.texts[0].set(y=original_length, text=f" original context ({original_length})")
    ratio_ax.lines[-1].set_ydata([1 / factor] * 2)
    ratio_ax.texts[0].set(y=1 / factor, text=f" 1/s = 1/{factor:g}")
    for ax in (wave_ax, ratio_ax):
        ax.relim()  # the limits of the data are those of the new numbers...
        ax.autoscale_view()  # ...and the axes are fitted to them again
        ax.set_xlabel(f"pair i (fast → slow), head dimension {dim}")
    # Plain labels at the powers of ten, no minor ticks: automatic log ticks are slow to draw.
    plain_log_ticks(wave_ax.yaxis, 2 * math.pi, longest)
    ratio_ax.set_ylim(1 / factor / 1.6, 1.6)
    plain_log_ticks(ratio_ax.yaxis, 1 / factor / 1.6, 1.6)
    # The legend stays the same from move to move but for the marks, and laying it out is a
    # tenth of a redraw: the slider's canvas replays it (`remember_unchanging`), with one
    # drawing kept for the marks shown and one for none.
    legend = ratio_ax.get_legend()
    if legend is None:
        legend = ratio_ax.legend(fontsize=8, loc="center right")  # copies the lines' styles
        remember_unchanging(legend, variant=lambda: legend.get_lines()[0].get_marker())
    for line in legend.get_lines():  # the legend's copies of the lines
        line.set_marker(marker)
    return fig


def _scaled_frequencies_figure(methods: list[str]) -> Figure:
    """`plot_scaled_frequencies`' figure with its lines and texts, which each call then sets."""
    # A fixed layout, not "constrained": this figure redraws under a slider, and the layout
    # engine alone would take most of the redraw time.
    fig = Figure(figsize=(10, 3.8))
    fig.subplots_adjust(left=0.07, right=0.99, top=0.92, bottom=0.14, wspace=0.22)
    wave_ax, ratio_ax = fig.subplots(1, 2)
    for ax in (wave_ax, ratio_ax):
        for method in methods:  # one line per method, its numbers set by each call
            ax.plot([], [], color=METHOD_COLOURS[method], label=method,
                    linestyle="--" if method == "no scaling" else "-")
    wave_ax.axhline(1, color="gray", linewidth=1)
    wave_ax.text(0, 1, "", va="bottom", fontsize=8)
    ratio_ax.axhline(1, color="gray", linewidth=1, linestyle=":")
    ratio_ax.text(0, 1, "", va="bottom", fontsize=8)
    wave_ax.set_yscale("log")
    wave_ax.set_ylabel("wavelength (tokens per turn)")
    wave_ax.set_title("wavelength of each pair", y=1.0)
    ratio_ax.set_yscale("log")
    ratio_ax.set_ylabel("scaled θᵢ / original θᵢ")
    ratio_ax.set_title("1 = extrapolate (unchanged), 1/s = interpolate", y=1.0)
    for ax in (wave_ax, ratio_ax):
        ax.grid(alpha=0.3)
    # The head size sets both x ranges, the factor (and head size) the y ranges: each axis keeps
    # a drawing per range it has shown, replayed when the sliders come back to it.
    remember_each_range(wave_ax.xaxis, wave_ax.yaxis, ratio_ax.xaxis, ratio_ax.yaxis)
    return fig


def plot_extension_losses(losses: dict, trained_length: int) -> Figure:
    """Loss on the training text against evaluation length, one line per scaling method and
    one panel per setting (e.g. before and after fine-tuning). `losses[panel][method]` is one
    `{length: loss}` per seed, or a single one."""
    return plot_loss_vs_length(losses, trained_length, colours=METHOD_COLOURS, title="{}",
                               legend_title="scaling method", share_y=True)


def plot_extension_passkeys(accuracy: dict, trained_length: int, chance: float) -> Figure:
    """Passkey accuracy against window length, one line per scaling method and one panel per
    setting. `accuracy[panel][method]` is one `{length: accuracy}` per seed."""
    fig = plot_passkey_accuracy(accuracy, trained_length, chance, colours=METHOD_COLOURS,
                                legend_title="scaling method")
    for ax, panel in zip(fig.axes, accuracy):
        ax.set_title(panel)
    return fig


def plot_extension_results(losses: dict, found: dict, trained_length: int,
                           fine_tune_length: int | None, trials: int,
                           chance: float | None = None) -> Figure:
    """Loss (top row) and far passkeys named (bottom row) against the evaluation length, one
    column per setting (e.g. before and after a fine-tune), one line per method: the mean over
    seeds and its 95% interval as bars.

    `losses[panel][method]` is a list with one `{length: loss}` per seed; the bars are the
    t-interval over the seeds (`helpers.grid.seed_interval`). `found[panel][method]` holds one
    `{length: passkeys named out of trials}` per seed; the bars are
    `helpers.grid.accuracy_interval`: the t-interval over the seeds, never narrower than the
    Wilson interval of all trials pooled. Dotted lines mark the trained length and, if given,
    the fine-tune length (in the panels after the first); `chance` is drawn dashed.
    """
    fig = Figure(figsize=(10, 8), layout="constrained")
    axes = fig.subplots(2, len(losses), squeeze=False, sharey="row", sharex=True)
    seeds = len(next(iter(next(iter(losses.values())).values())))
    _interval_row(axes[0], losses, trained_length, fine_tune_length, None, None)
    _interval_row(axes[1], found, trained_length, fine_tune_length, trials, chance)
    axes[0][0].set_ylabel("loss on the story (nats per token)")
    axes[1][0].set_ylabel("far passkeys named correctly")
    axes[1][0].set_ylim(-0.05, 1.05)
    for ax in axes[1]:
        ax.set_xlabel("evaluation length (tokens)")
    for ax, panel in zip(axes[0], losses):
        ax.set_title(panel)
    # A method without YaRN's temperature gets hollow squares, apart from YaRN's dots at a glance
    # (the legend, made below, copies them).
    for ax in axes.flat:
        for container in ax.containers:
            if "no temperature" in container.get_label():
                container.lines[0].set(marker="s", markersize=4.5, markerfacecolor="white")
    fig.suptitle(f"Mean of {seeds} seeds; bars: 95% intervals, as in notebook 07 (passkeys: "
                 f"{seeds * trials} trials, {trials} per seed)", fontsize=9)
    # One legend for all panels, from the panel with the most methods.
    fullest = max(axes[0], key=lambda ax: len(ax.get_legend_handles_labels()[1]))
    fig.legend(*fullest.get_legend_handles_labels(), title="scaling method", fontsize=8,
               title_fontsize=8, loc="outside lower center", ncols=4)
    return fig


def _interval_row(axes, results: dict, trained_length: int, fine_tune_length: int | None,
                  trials: int | None, chance: float | None) -> None:
    from ..grid import accuracy_interval, seed_interval

    for column, (ax, (panel, by_method)) in enumerate(zip(axes, results.items())):
        methods = list(by_method)
        all_lengths: set[int] = set()
        for index, (method, runs) in enumerate(by_method.items()):
            lengths = sorted(runs[0])
            all_lengths.update(lengths)
            table = [[run[n] for n in lengths] for run in runs]
            mean, low, high = (seed_interval(table) if trials is None
                               else accuracy_interval(table, trials))
            # Each method a little to the side, so that the bars do not hide each other.
            shift = 2 ** (0.035 * (index - (len(methods) - 1) / 2))
            ax.errorbar([n * shift for n in lengths], mean,
                        yerr=[np.clip(mean - low, 0, None), np.clip(high - mean, 0, None)],
                        marker="o", markersize=3.5, capsize=2.5, linewidth=1.2, label=method,
                        color=METHOD_COLOURS.get(method),
                        linestyle=":" if "no temperature" in method else "-")
        marks = [(trained_length, " trained length")]
        if fine_tune_length is not None and column > 0:
            marks.append((fine_tune_length, " fine-tune length"))
        for length, text in marks:
            ax.axvline(length, color="black", linestyle=":", linewidth=1)
            ax.annotate(text, (length, 1), xycoords=("data", "axes fraction"), xytext=(2, -12),
                        textcoords="offset points", fontsize=8)
        if chance is not None:
            ax.axhline(chance, color="black", linestyle="--", linewidth=1)
            ax.text(min(all_lengths) / 1.2, chance, " chance", ha="left", va="top", fontsize=8)
        ax.set_xscale("log", base=2)
        ax.set_xlim(min(all_lengths) / 1.25, max(all_lengths) * 1.25)
        ax.set_xticks(sorted(all_lengths), [str(n) for n in sorted(all_lengths)])
        ax.minorticks_off()
        ax.grid(alpha=0.3)
