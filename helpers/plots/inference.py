"""Figures for notebook 10: position ids of a padded batch, packed documents, the KV cache's
catch with dynamic NTK, and positions in half precision."""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.ticker import FixedFormatter, FixedLocator, MaxNLocator

from ..inference import left_pad, packed_attention_mask, packed_position_ids, position_ids_from_mask
from .canvas import remember_each_range
from .in_place import show_image, write_in_cells

# Lengths of the packed documents the slider of `plot_packed_mask` takes, first to last.
PACKED_LENGTHS = (7, 4, 9, 3, 6, 5)
MAX_PROMPT = 12  # the longest prompt `plot_padded_positions` is drawn for (fixes its colour scale)
# Three kinds of (query, key) entries in a packed row's mask.
MASK_COLOURS = ListedColormap(["#f2f2f2", "tab:blue", "tab:red"])


def _write_numbers(ax, values: np.ndarray, shown: np.ndarray, size: float = 8) -> None:
    """Write each shown cell's value in it, and nothing else.

    Texts are rewritten in place (`write_in_cells`): a 3 x 12 batch has 36 per panel."""
    cells = [(column, row, str(int(value)),
              # viridis is dark at the low end: white numbers there, black ones above
              "white" if value < 0.45 * (MAX_PROMPT - 1) else "black")
             for (row, column), value in np.ndenumerate(values) if shown[row, column]]
    write_in_cells(ax, cells, fontsize=size)


def plot_padded_positions(first: int = 9, second: int = 3, third: int = 6,
                          figure: Figure | None = None) -> Figure:
    """Three prompts of the given lengths, left-padded into one batch: the position of every
    token, numbered 0..T-1 with the pads counted (wrong) and from the mask (right). Pads white.

    `figure`, if given, is a figure this function returned before: it is redrawn in place,
    which is what a slider does (see `helpers.plots.in_place`). Its axes, images and number
    texts are kept and given the new batch."""
    lengths = (first, second, third)
    if any(not 1 <= n <= MAX_PROMPT for n in lengths):
        raise ValueError(f"prompt lengths must be 1..{MAX_PROMPT}, got {lengths}")
    _, mask = left_pad([torch.zeros(n) for n in lengths])
    width = mask.shape[1]
    real = mask.numpy().astype(bool)
    counted = np.broadcast_to(np.arange(width), real.shape)
    from_mask = position_ids_from_mask(mask).numpy()
    fig = figure if figure is not None else _padded_figure()
    axes = fig.axes[:2]  # the colour bar comes after them
    for ax, values in zip(axes, (counted, from_mask)):
        image = show_image(ax, np.ma.masked_array(values, mask=~real), vmin=0,
                           vmax=MAX_PROMPT - 1, cmap="viridis", interpolation="nearest",
                           aspect="auto")
        _write_numbers(ax, values, real)
        # Labels given as text: the default formatter would work them out anew at every draw.
        ax.set_xticks(range(width), [str(column) for column in range(width)])
        ax.set_xlim(-0.5, width - 0.5)
    axes[0].set_yticks(range(3), [f"prompt of {n}" for n in lengths])
    fig.suptitle(f"a left-padded batch, T = {width} columns: the position id of each token "
                 "(white: a pad)", fontsize=11)
    if image.colorbar is None:  # the colour bar, made once
        bar = fig.colorbar(image, ax=list(axes), fraction=0.04, pad=0.02)
        bar.set_label("position id")
    return fig


def _padded_figure() -> Figure:
    """`plot_padded_positions`' figure: its two panels with what stays the same on every move."""
    fig = Figure(figsize=(10, 2.9))
    axes = fig.subplots(1, 2)
    fig.subplots_adjust(left=0.11, right=0.9, top=0.8, bottom=0.2, wspace=0.08)
    titles = ("counting the pads: 0 .. T−1 (wrong)", "from the mask: cumsum − 1 (right)")
    for ax, title in zip(axes, titles):
        # y=1.0 fixes the title where matplotlib would put it anyway (no tick labels on top);
        # left automatic, matplotlib measures the y axis's labels at every draw to check.
        ax.set_title(title, fontsize=10, y=1.0)
        ax.set_xlabel("column of the padded batch")
    axes[1].set_yticks(range(3), [])  # the rows are named once, on the left
    remember_each_range(*(ax.xaxis for ax in axes))  # T = 1 .. 12 columns
    return fig


def packed_lengths(documents: int) -> list[int]:
    """The lengths of the first `documents` packed documents."""
    if not 1 <= documents <= len(PACKED_LENGTHS):
        raise ValueError(f"documents must be 1..{len(PACKED_LENGTHS)}, got {documents}")
    return list(PACKED_LENGTHS[:documents])


def _whole_number_ticks(axis, low: float, high: float) -> None:
    """Ticks at the whole numbers matplotlib's MaxNLocator(integer=True) picks between `low` and
    `high`, fixed, with plain labels. Left automatic, the locator and the formatter run several
    times at every draw; fixed, they run once per move."""
    places = [int(place) for place in MaxNLocator(integer=True).tick_values(low, high)
              if low <= place <= high]
    axis.set_major_locator(FixedLocator(places))
    axis.set_major_formatter(FixedFormatter([str(place) for place in places]))


def plot_packed_mask(documents: int = 3, figure: Figure | None = None) -> Figure:
    """Documents packed into one row. Top: each token's position id, running on (no reset) and
    starting again in every document. Bottom: which keys each query sees, plain causal (red:
    keys of an earlier document, what leaks) and block-diagonal with document ids.

    `figure`, if given, is a figure this function returned before: it is redrawn in place,
    which is what a slider does (see `helpers.plots.in_place`). Its curves, boundary lines and
    images are kept and given the new row."""
    lengths = packed_lengths(documents)
    total = sum(lengths)
    document_ids = torch.repeat_interleave(torch.arange(documents), torch.tensor(lengths))
    causal = np.tril(np.ones((total, total), dtype=bool))
    own = packed_attention_mask(document_ids).numpy()
    kinds = [np.where(own, 1, np.where(causal, 2, 0)),  # without document ids
             np.where(own, 1, 0)]                        # with document ids
    positions = [np.arange(total), packed_position_ids(document_ids).numpy()]
    fig = figure if figure is not None else _packed_figure()
    axes = np.array(fig.axes[:4]).reshape(2, 2)  # the colour bar comes after them
    edges = np.cumsum([0] + lengths)[1:-1] - 0.5  # document boundaries
    row = (-0.5, total - 0.5)  # the packed row, from its first token to its last
    for column in range(2):
        top, bottom = axes[:, column]
        top.lines[0].set_data(np.arange(total), positions[column])
        # the boundaries: one collection of lines per axes (cheaper to redraw than many)
        top.collections[0].set_segments([[(x, -1), (x, sum(PACKED_LENGTHS))] for x in edges])
        vertical, horizontal = bottom.collections
        vertical.set_segments([[(x, row[0]), (x, row[1])] for x in edges])
        horizontal.set_segments([[(row[0], y), (row[1], y)] for y in edges])
        image = show_image(bottom, kinds[column], vmin=-0.5, vmax=2.5, cmap=MASK_COLOURS,
                           interpolation="nearest", aspect="auto")
        leaks = int((kinds[column] == 2).sum())
        bottom.title.set_text(f"query–key pairs across documents: {leaks}")
        top.set_xlim(*row)
        bottom.set_xlim(*row)
        bottom.set_ylim(row[1], row[0])  # the first query at the top
        for axis in (top.xaxis, bottom.xaxis, bottom.yaxis):
            _whole_number_ticks(axis, *row)
    fig.suptitle(f"{documents} document{'s' if documents > 1 else ''} of lengths {lengths} "
                 f"packed into one row of {total} tokens", fontsize=11)
    if image.colorbar is None:  # the colour bar, made once
        bar = fig.colorbar(image, ax=list(axes[1]), fraction=0.04, pad=0.02, ticks=[0, 1, 2])
        bar.ax.set_yticklabels(["hidden", "own\ndocument", "earlier\ndocument\n(leak)"])
        bar.set_label("what the query sees")
    return fig


def _packed_figure() -> Figure:
    """`plot_packed_mask`'s figure: its four panels with what stays the same on every move, and
    an empty curve and empty boundary lines, which each call fills."""
    fig = Figure(figsize=(10, 6.2))
    axes = fig.subplots(2, 2, height_ratios=[1, 3.2])
    fig.subplots_adjust(left=0.08, right=0.88, top=0.9, bottom=0.09, wspace=0.18, hspace=0.32)
    boundary = dict(colors="0.3", linewidth=0.8, linestyles=":")
    for column, name in enumerate(["without document ids", "with document ids"]):
        top, bottom = axes[:, column]
        top.step([], [], where="mid", color="tab:blue")
        top.vlines([], -1, sum(PACKED_LENGTHS), **boundary)
        top.set_ylim(-1, sum(PACKED_LENGTHS))  # fixed: the panels keep their scale
        top.set_ylabel("position id")
        # y=1.0 fixes each title where matplotlib would put it anyway (no tick labels on top);
        # left automatic, matplotlib measures the y axis's labels at every draw to check.
        top.set_title(name + (": positions run on" if column == 0 else
                              ": positions restart at 0"), fontsize=10, y=1.0)
        bottom.vlines([], 0, 1, **boundary)
        bottom.hlines([], 0, 1, **boundary)
        bottom.set_title("", fontsize=10, y=1.0)  # the number of leaks, set by each call
        bottom.set_xlabel("key: token index in the packed row")
    axes[1, 0].set_ylabel("query: token index in the packed row")
    # Axes without a label of their own: matplotlib would still measure every tick label at each
    # draw to place the empty label clear of them. Placed once by hand, it is not moved.
    for axis in (axes[0, 0].xaxis, axes[0, 1].xaxis, axes[1, 1].yaxis):
        axis.set_label_coords(0.5, 0.5)
    # The row's length sets the range of both x axes and of the masks' y axes: 6 lengths.
    remember_each_range(*(ax.xaxis for ax in axes.ravel()), *(ax.yaxis for ax in axes[1]))
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
