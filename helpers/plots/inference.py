"""Figures for notebook 10: position ids of a padded batch, packed documents, the KV cache's
catch with dynamic NTK, and positions in half precision."""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..inference import left_pad, packed_attention_mask, packed_position_ids, position_ids_from_mask
from .in_place import clear_plotted, show_image

# Lengths of the packed documents the slider of `plot_packed_mask` takes, first to last.
PACKED_LENGTHS = (7, 4, 9, 3, 6, 5)
MAX_PROMPT = 12  # the longest prompt `plot_padded_positions` is drawn for (fixes its colour scale)
# Three kinds of (query, key) entries in a packed row's mask.
MASK_COLOURS = ListedColormap(["#f2f2f2", "tab:blue", "tab:red"])


def _numbers(ax, values: np.ndarray, shown: np.ndarray, size: float = 8) -> None:
    """Write each shown cell's value in it."""
    for (row, column), value in np.ndenumerate(values):
        if shown[row, column]:
            # viridis is dark at the low end: white numbers there, black ones above
            ax.text(column, row, str(int(value)), ha="center", va="center", fontsize=size,
                    color="white" if value < 0.45 * (MAX_PROMPT - 1) else "black")


def plot_padded_positions(first: int = 9, second: int = 3, third: int = 6,
                          figure: Figure | None = None) -> Figure:
    """Three prompts of the given lengths, left-padded into one batch: the position of every
    token, numbered 0..T-1 with the pads counted (wrong) and from the mask (right). Pads white."""
    lengths = (first, second, third)
    if any(not 1 <= n <= MAX_PROMPT for n in lengths):
        raise ValueError(f"prompt lengths must be 1..{MAX_PROMPT}, got {lengths}")
    _, mask = left_pad([torch.zeros(n) for n in lengths])
    width = mask.shape[1]
    real = mask.numpy().astype(bool)
    counted = np.broadcast_to(np.arange(width), real.shape)
    from_mask = position_ids_from_mask(mask).numpy()
    if figure is not None:
        fig = clear_plotted(figure)
        axes = fig.axes[:2]
    else:
        fig = Figure(figsize=(10, 2.9))
        axes = fig.subplots(1, 2)
        fig.subplots_adjust(left=0.11, right=0.9, top=0.8, bottom=0.2, wspace=0.08)
    panels = [("counting the pads: 0 .. T−1 (wrong)", counted),
              ("from the mask: cumsum − 1 (right)", from_mask)]
    for ax, (title, values) in zip(axes, panels):
        shown = np.ma.masked_array(values, mask=~real)
        image = show_image(ax, shown, vmin=0, vmax=MAX_PROMPT - 1, cmap="viridis",
                           interpolation="nearest", aspect="auto")
        _numbers(ax, values, real)
        ax.set_title(title, fontsize=10)
        ax.set_xticks(range(width))
        ax.set_xlim(-0.5, width - 0.5)
        ax.set_xlabel("column of the padded batch")
        ax.set_yticks(range(3), [f"prompt of {n}" for n in lengths])
    axes[1].set_yticks(range(3), [])
    fig.suptitle(f"a left-padded batch, T = {width} columns: the position id of each token "
                 "(white: a pad)", fontsize=11)
    if len(fig.axes) == 2:  # the colour bar, made once
        bar = fig.colorbar(image, ax=list(axes), fraction=0.04, pad=0.02)
        bar.set_label("position id")
    return fig


def packed_lengths(documents: int) -> list[int]:
    """The lengths of the first `documents` packed documents."""
    if not 1 <= documents <= len(PACKED_LENGTHS):
        raise ValueError(f"documents must be 1..{len(PACKED_LENGTHS)}, got {documents}")
    return list(PACKED_LENGTHS[:documents])


def plot_packed_mask(documents: int = 3, figure: Figure | None = None) -> Figure:
    """Documents packed into one row. Top: each token's position id, running on (no reset) and
    starting again in every document. Bottom: which keys each query sees, plain causal (red:
    keys of an earlier document, what leaks) and block-diagonal with document ids."""
    lengths = packed_lengths(documents)
    total = sum(lengths)
    document_ids = torch.repeat_interleave(torch.arange(documents), torch.tensor(lengths))
    causal = np.tril(np.ones((total, total), dtype=bool))
    own = packed_attention_mask(document_ids).numpy()
    kinds = {"without document ids": np.where(own, 1, np.where(causal, 2, 0)),
             "with document ids": np.where(own, 1, 0)}
    positions = {"without document ids": np.arange(total),
                 "with document ids": packed_position_ids(document_ids).numpy()}
    if figure is not None:
        fig = clear_plotted(figure)
        axes = np.array(fig.axes[:4]).reshape(2, 2)
    else:
        fig = Figure(figsize=(10, 6.2))
        axes = fig.subplots(2, 2, height_ratios=[1, 3.2])
        fig.subplots_adjust(left=0.08, right=0.88, top=0.9, bottom=0.09, wspace=0.18,
                            hspace=0.32)
    edges = np.cumsum([0] + lengths)[1:-1] - 0.5  # document boundaries
    for column, name in enumerate(kinds):
        top, bottom = axes[0, column], axes[1, column]
        top.step(np.arange(total), positions[name], where="mid", color="tab:blue")
        top.set_xlim(-0.5, total - 0.5)
        top.set_ylim(-1, sum(PACKED_LENGTHS))  # fixed: the panels keep their scale
        top.set_ylabel("position id")
        top.set_title(name + (": positions run on" if column == 0 else
                              ": positions restart at 0"), fontsize=10)
        image = show_image(bottom, kinds[name], vmin=-0.5, vmax=2.5, cmap=MASK_COLOURS,
                           interpolation="nearest", aspect="auto")
        # document boundaries: one collection of lines per axes (cheaper to redraw than many)
        boundary = dict(colors="0.3", linewidth=0.8, linestyles=":")
        top.vlines(edges, -1, sum(PACKED_LENGTHS), **boundary)
        bottom.vlines(edges, -0.5, total - 0.5, **boundary)
        bottom.hlines(edges, -0.5, total - 0.5, **boundary)
        bottom.set_xlim(-0.5, total - 0.5)  # the image's own extent, whatever the lines add
        bottom.set_ylim(total - 0.5, -0.5)
        bottom.set_xlabel("key: token index in the packed row")
        for ax in (top, bottom):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        bottom.yaxis.set_major_locator(MaxNLocator(integer=True))
        leaks = int((kinds[name] == 2).sum())
        bottom.set_title(f"query–key pairs across documents: {leaks}", fontsize=10)
    axes[1, 0].set_ylabel("query: token index in the packed row")
    fig.suptitle(f"{documents} document{'s' if documents > 1 else ''} of lengths {lengths} "
                 f"packed into one row of {total} tokens", fontsize=11)
    if len(fig.axes) == 4:  # the colour bar, made once
        bar = fig.colorbar(image, ax=list(axes[1]), fraction=0.04, pad=0.02, ticks=[0, 1, 2])
        bar.ax.set_yticklabels(["hidden", "own\ndocument", "earlier\ndocument\n(leak)"])
        bar.set_label("what the query sees")
    return fig


def plot_cache_gap(lengths, gaps, trained_length: int) -> Figure:
    """Dynamic NTK: the largest logit difference between cached and uncached generation, at
    each generated token, against the sequence length it was generated at."""
    fig = Figure(figsize=(7.5, 3.4))
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.13, right=0.97, top=0.88, bottom=0.16)
    ax.plot(lengths, gaps, marker="o", markersize=3, color="tab:red")
    ax.axvline(trained_length, color="0.4", linestyle="--", linewidth=1)
    ax.text(trained_length, max(float(np.max(gaps)), 1e-9), f" trained length {trained_length}",
            va="top", fontsize=9, color="0.3")
    ax.set_xlabel("tokens in the sequence when the new token is chosen")
    ax.set_ylabel("largest |logit difference|")
    ax.set_title("dynamic NTK: cached minus uncached logits", fontsize=11)
    ax.grid(alpha=0.3)
    return fig


def plot_half_precision_angles(positions, errors: dict, exact_limit: int = 2048) -> Figure:
    """Worst angle error (radians, over the pairs of a head) of m·θᵢ computed in each dtype,
    against the position m; `errors` maps a label to a curve."""
    fig = Figure(figsize=(7.5, 3.6))
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.13, right=0.97, top=0.88, bottom=0.16)
    for (label, error), colour in zip(errors.items(), ["tab:red", "tab:blue", "tab:green"]):
        ax.plot(positions, np.maximum(np.asarray(error), 1e-9), label=label, color=colour,
                linewidth=1)
    ax.axvline(exact_limit, color="0.4", linestyle="--", linewidth=1)
    ax.text(exact_limit, 2e-8, f" {exact_limit:,}: from here on,\n float16 skips integers",
            fontsize=8, color="0.3")
    ax.set_yscale("log")
    ax.set_ylim(1e-9, 10)
    ax.set_xlabel("position m")
    ax.set_ylabel("worst angle error (radians)")
    ax.set_title("angles m·θᵢ computed in half precision and in float32", fontsize=11)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    return fig
