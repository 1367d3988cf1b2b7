"""Figures for notebook 07: training curves and loss against evaluation length, per scheme."""

from __future__ import annotations

from matplotlib.figure import Figure

# One colour per scheme, the same in every figure of the notebook.
SCHEME_COLOURS = {"none": "tab:gray", "learned": "tab:brown", "sinusoidal": "tab:blue",
                  "rope": "tab:green", "alibi": "tab:red", "t5": "tab:purple"}


def plot_training_curves(histories: dict[str, dict[str, list]]) -> Figure:
    """Training and validation loss against step, one line per scheme."""
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    train_ax, val_ax = fig.subplots(1, 2, sharex=True)
    for scheme, history in histories.items():
        colour = SCHEME_COLOURS.get(scheme)
        train_ax.plot(history["step"], history["train"], label=scheme, color=colour)
        if history["val"]:
            val_ax.plot(history["step"], history["val"], label=scheme, color=colour)
    train_ax.set_title("training loss (on the batches seen)")
    val_ax.set_title("validation loss (the last 10% of the story)")
    for ax in (train_ax, val_ax):
        ax.set_xlabel("training step")
        ax.set_ylabel("cross-entropy (nats per token)")
        ax.grid(alpha=0.3)
    train_ax.legend(title="position scheme")
    return fig


def plot_loss_vs_length(losses: dict[str, dict[str, dict[int, float]]], context_length: int,
                        colours: dict[str, str] | None = None, title: str = "on the {}",
                        legend_title: str = "position scheme", share_y: bool = False) -> Figure:
    """Loss against evaluation length, laid out like Figure 1 of the ALiBi paper.

    `losses[panel][line][length]`, e.g. panel in {"training text", "validation text"} and line a
    position scheme; `title` formats each panel's name. A line with no value at a length (a
    learned table past its rows) stops there.
    """
    colours = SCHEME_COLOURS if colours is None else colours
    fig = Figure(figsize=(10, 3.8), layout="constrained")
    axes = fig.subplots(1, len(losses), squeeze=False, sharey=share_y)[0]
    for ax, (panel, by_line) in zip(axes, losses.items()):
        for line, by_length in by_line.items():
            lengths = sorted(by_length)
            ax.plot(lengths, [by_length[n] for n in lengths], marker="o", label=line,
                    color=colours.get(line))
        ax.axvline(context_length, color="black", linestyle=":", linewidth=1)
        ax.text(context_length, ax.get_ylim()[0], " trained length", va="bottom", fontsize=8)
        ax.set_xscale("log", base=2)
        all_lengths = sorted({n for by_length in by_line.values() for n in by_length})
        ax.set_xticks(all_lengths, [str(n) for n in all_lengths])
        ax.set_xlabel("evaluation length (tokens)")
        ax.set_ylabel("cross-entropy (nats per token)")
        ax.set_title(title.format(panel))
        ax.grid(alpha=0.3)
    axes[0].legend(title=legend_title, fontsize=8)
    return fig
