"""Figures for notebook 06 (relative position bias): numbers in, matplotlib Figure out."""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib import colormaps, ticker
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from helpers.relative import (alibi_bias, alibi_effective_span, alibi_slopes,
                              relative_position_index, relative_positions,
                              t5_relative_position_bucket)

from .canvas import remember_each_range
from .in_place import boxes, clear_plotted, show_colours, show_image, write_in_cells

__all__ = [
    "plot_matrices",
    "plot_shaw_index",
    "plot_t5_buckets",
    "plot_alibi",
    "plot_alibi_weights",
    "plot_alibi_heads",
    "plot_alibi_two_forms",
]

_ANNOTATE_UP_TO = 8  # write the numbers into heatmap cells only while they stay legible (and fast)


def _figure(width: float, height: float, **spacing) -> Figure:
    """A Figure with fixed margins: a layout engine would double the redraw time of a slider."""
    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(**{"left": 0.07, "right": 0.97, "bottom": 0.14, "top": 0.88,
                           "wspace": 0.35, **spacing})
    return fig


def _fixed_ticks(axis, values, fontsize: float | None = None) -> None:
    """Ticks at given places with plain labels: automatic locators and formatters are a large
    share of a redraw's time."""
    values = sorted({int(v) if float(v).is_integer() else float(v) for v in values})
    axis.set_major_locator(ticker.FixedLocator(values))
    labels = [str(v) if isinstance(v, int) else f"{v:.3g}" for v in values]
    axis.set_major_formatter(ticker.FixedFormatter(labels))
    axis.set_minor_locator(ticker.NullLocator())
    if fontsize:
        axis.set_tick_params(labelsize=fontsize)


def _index_ticks(length: int) -> list[int]:
    """Up to about five round positions in 0..length-1 for the sides of a heatmap."""
    step = 1
    while length > 5 * step:
        step = next(s * 10 ** (len(str(step)) - 1) for s in (2, 5, 10)
                    if s * 10 ** (len(str(step)) - 1) > step)
    return list(range(0, length, step))


def _numpy(matrix) -> np.ndarray:
    return matrix.detach().cpu().numpy() if isinstance(matrix, torch.Tensor) else np.asarray(matrix)


def _heatmap(fig: Figure, ax, matrix, title: str, cmap: str = "RdBu_r", symmetric: bool = True,
             colorbar_label: str = "", annotate: bool = False, fmt: str = "{:.2g}"):
    """A T×T heatmap with query on the rows and key on the columns; -inf cells drawn grey."""
    values = _numpy(matrix).astype(float)
    hidden = ~np.isfinite(values)
    shown = np.ma.masked_array(values, mask=hidden)
    colours = colormaps[cmap].with_extremes(bad="0.85")  # masked (-inf) cells in light grey
    if symmetric:  # a colour scale centred on zero
        limit = (float(np.abs(shown).max()) if shown.count() else 0.0) or 1.0
        vmin, vmax = -limit, limit
    else:  # the colour scale spans the data
        vmin = vmax = None
    image = show_image(ax, shown, cmap=colours, vmin=vmin, vmax=vmax, interpolation="nearest")
    ax.set_title(title, fontsize=10, y=1.0)
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
    _fixed_ticks(ax.xaxis, _index_ticks(values.shape[1]))
    _fixed_ticks(ax.yaxis, _index_ticks(values.shape[0]))
    cells = []  # (column, row, number, colour) of each cell with its number written in it
    if annotate and values.shape[0] <= _ANNOTATE_UP_TO and values.shape[1] <= _ANNOTATE_UP_TO:
        cell_colours = image.cmap(image.norm(values))  # every cell's colour at once
        brightness = cell_colours[..., :3] @ [0.299, 0.587, 0.114]
        cells = [(j, i, fmt.format(value + 0.0),
                  "white" if brightness[i, j] < 0.5 else "black")  # white on dark cells
                 for (i, j), value in np.ndenumerate(values) if np.isfinite(value)]
    write_in_cells(ax, cells)  # Shaw's 8 x 8 table: 64 numbers, rewritten in place
    bar = image.colorbar or fig.colorbar(image, ax=ax, shrink=0.8)  # made once per axes
    bar.set_label(colorbar_label)
    low, high = image.norm.vmin, image.norm.vmax
    _fixed_ticks(bar.ax.yaxis, [low, (low + high) / 2, high] if low < high else [low])
    return image


def plot_matrices(matrices: dict, suptitle: str = "", colorbar_label: str = "",
                  annotate: bool = True, symmetric: bool | list[bool] = True,
                  fmt: str = "{:.2g}") -> Figure:
    """Heatmaps side by side, one per (title: T×T matrix) entry; -inf entries shown grey.

    `symmetric`, one flag or one per panel: True gives a blue-red scale centred on 0 (logits,
    biases); False a white-to-red scale spanning the data (attention weights, never negative)."""
    if not matrices:
        raise ValueError("matrices must hold at least one (title: matrix) entry")
    flags = [symmetric] * len(matrices) if isinstance(symmetric, bool) else list(symmetric)
    if len(flags) != len(matrices):
        raise ValueError(f"symmetric needs one flag per matrix ({len(matrices)}), got {len(flags)}")
    fig = _figure(4.4 * len(matrices), 3.9, left=0.25 / len(matrices), right=0.97, wspace=0.5)
    axes = fig.subplots(1, len(matrices), squeeze=False)[0]
    for ax, (title, matrix), centred in zip(axes, matrices.items(), flags):
        _heatmap(fig, ax, matrix, title, cmap="RdBu_r" if centred else "Reds", symmetric=centred,
                 colorbar_label=colorbar_label, annotate=annotate, fmt=fmt)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def plot_shaw_index(seq_len: int = 10, max_distance: int = 3,
                    figure: Figure | None = None) -> Figure:
    """Shaw's table row clip(j - i, -k, k) + k for every (i, j), and the clip as a function
    (green: the distances that get a row of their own).

    `figure`, if given, is a figure this function returned before: it is redrawn in place,
    which is what a slider does (see `helpers.plots.in_place`). Likewise in the next two.
    """
    index = relative_position_index(seq_len, max_distance)
    if figure is not None:  # the numbers in the heatmap's cells are rewritten: `write_in_cells`
        fig = clear_plotted(figure, keep_texts_in=figure.axes[:1])
    else:
        fig = _figure(10, 4, left=0.06, right=0.98, top=0.85)
        fig.subplots(1, 2, width_ratios=[1.1, 1])[1].grid(alpha=0.3)  # kept from move to move
    left, right = fig.axes[:2]  # a colour bar, if any, comes after them
    image = _heatmap(fig, left, index, f"T = {seq_len}, k = {max_distance}",
                     cmap="viridis", symmetric=False, colorbar_label="table row",
                     annotate=True, fmt="{:.0f}")
    if figure is None:  # T and k set the range and ticks of every axis, the colour bar's too
        remember_each_range(left.xaxis, left.yaxis, right.xaxis, right.yaxis,
                            image.colorbar.ax.yaxis)
    distance = np.arange(-(seq_len - 1), seq_len)
    row = np.clip(distance, -max_distance, max_distance) + max_distance
    right.step(distance, row, where="mid", color="C0")
    right.axvspan(-max_distance - 0.5, max_distance + 0.5, color="C2", alpha=0.12)
    right.set_xlabel("j − i")
    right.set_ylabel("table row")
    right.set_title(f"{2 * max_distance + 1} rows for any length", fontsize=10, y=1.0)
    _fixed_ticks(right.xaxis, [-(seq_len - 1), -max_distance, 0, max_distance, seq_len - 1])
    _fixed_ticks(right.yaxis, [0, max_distance, 2 * max_distance])
    return fig


def _step_corners(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The corners of a staircase through (x, y), x consecutive integers: each run of equal y is
    one flat segment from its first x - 0.5 to its last x + 0.5. Two points per run instead of
    two per x (2,049 distances fall into at most 64 buckets), so the curve redraws faster."""
    starts = np.flatnonzero(np.diff(y, prepend=y[0] - 1))  # where a new run begins
    ends = np.append(starts[1:], len(y)) - 1
    return (np.column_stack([x[starts] - 0.5, x[ends] + 0.5]).ravel(),
            np.repeat(y[starts], 2))


def plot_t5_buckets(num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = True,
                    seq_len: int = 64, figure: Figure | None = None) -> Figure:
    """T5's bucket as a function of j - i (left; green: the exact range, dashed: max_distance)
    and the bucket of every (i, j) pair of a sequence (right)."""
    reach = max(2 * max_distance, seq_len)
    distance = torch.arange(-reach, reach + 1)
    bucket = t5_relative_position_bucket(distance, bidirectional, num_buckets, max_distance)
    if figure is not None:
        fig = clear_plotted(figure)
    else:
        fig = _figure(10.5, 4, left=0.06, right=0.99, top=0.85)
        fig.subplots(1, 2, width_ratios=[1.3, 1])[0].grid(alpha=0.3)  # kept from move to move
    left, right = fig.axes[:2]
    left.plot(*_step_corners(distance.numpy(), bucket.numpy()), color="C0", lw=1.2)
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    exact = per_direction // 2
    sides = (-1, 1) if bidirectional else (-1,)
    for side in sides:
        left.axvspan(side * (exact - 0.5), 0, color="C2", alpha=0.15)
        left.axvline(side * max_distance, color="C3", ls="--", lw=1)
    left.set_xlabel("j − i (key − query)")
    left.set_ylabel("bucket")
    kind = "bidirectional" if bidirectional else "causal"
    left.set_title(f"{num_buckets} buckets, {kind}", fontsize=10, y=1.0)
    left.set_ylim(-0.5, num_buckets - 0.5)
    # On a log axis the logarithmic buckets come out evenly spaced; linear within the exact range.
    left.set_xscale("symlog", linthresh=max(exact, 1), linscale=1.5)
    left.set_xlim(-reach, reach)  # fixed: automatic margins depend on when the scale was set
    _fixed_ticks(left.xaxis, [-max_distance, -exact, 0, exact, max_distance], fontsize=8)
    _fixed_ticks(left.yaxis, [0, exact, per_direction - 1, num_buckets - 1])
    # The bucket of (i, j) depends on j - i alone: colour the curve's buckets once and read each
    # pair's colour off them (distance runs from -reach, and reach >= seq_len), instead of
    # bucketing and colouring T² pairs (262,144 at T = 512).
    colours = colormaps["viridis"](Normalize(0, num_buckets - 1)(bucket.numpy()), bytes=True)
    # (np.take picks whole rows of colours; here several times faster than colours[...])
    cells = np.take(colours, (relative_positions(seq_len) + reach).numpy(), axis=0)
    image = show_colours(right, cells, "viridis", 0, num_buckets - 1, interpolation="nearest")
    right.set_title(f"T = {seq_len}", fontsize=10, y=1.0)
    right.set_xlabel("key j")
    right.set_ylabel("query i")
    _fixed_ticks(right.xaxis, _index_ticks(seq_len))
    _fixed_ticks(right.yaxis, _index_ticks(seq_len))
    bar = image.colorbar or fig.colorbar(image, ax=right, shrink=0.8, label="bucket")
    _fixed_ticks(bar.ax.yaxis, [0, exact, per_direction - 1, num_buckets - 1])
    if figure is None:  # the four sliders set the range and ticks of every axis
        remember_each_range(left.xaxis, left.yaxis, right.xaxis, right.yaxis, bar.ax.yaxis)
    return fig


def _head_ticks(ax, heads: np.ndarray) -> None:
    _fixed_ticks(ax.xaxis, heads if len(heads) <= 16 else heads[::len(heads) // 8])


def plot_alibi(num_heads: int = 8, seq_len: int = 512, mass: float = 0.9,
               figure: Figure | None = None) -> Figure:
    """ALiBi per head: its slope (left) and its effective span (right).

    The span counts the most recent keys that hold `mass` of the attention of the last query of
    a causal sequence of `seq_len` tokens whose content scores are all equal.
    """
    slopes = alibi_slopes(num_heads).numpy()
    heads = np.arange(1, num_heads + 1)
    colours = colormaps["viridis"](np.linspace(0, 0.9, num_heads))
    if figure is not None:
        fig = clear_plotted(figure)
    else:
        fig = _figure(10, 3.6, left=0.08, right=0.98, wspace=0.3)
        fig.subplots(1, 2)
    left, right = fig.axes

    # Stems, not bars: on a log axis a bar's length depends on where the axis happens to start.
    left.vlines(heads, 2.0 ** -9, slopes, color=colours, lw=2)
    left.scatter(heads, slopes, color=colours, zorder=3)
    left.set_yscale("log", base=2)
    left.set_ylim(2.0 ** -9, 1)
    left.yaxis.set_major_locator(ticker.FixedLocator([2.0 ** -e for e in range(0, 9, 2)]))
    left.yaxis.set_major_formatter(ticker.FixedFormatter(["1", "1/4", "1/16", "1/64", "1/256"]))
    left.yaxis.set_minor_locator(ticker.NullLocator())
    left.set_xlabel("head")
    left.set_ylabel("slope m")
    left.set_title(f"{num_heads} heads", fontsize=10, y=1.0)
    left.grid(alpha=0.3, axis="y")

    span = alibi_effective_span(num_heads, seq_len, mass).numpy()
    bottom = 0.8  # the axis starts here: a bar from 0 has no place on a log axis
    boxes(right, heads - 0.4, bottom, 0.8, span - bottom, facecolor=colours)
    right.axhline(seq_len, color="C3", ls="--", lw=1)
    right.set_yscale("log")
    right.set_ylim(bottom, 2 * max(seq_len, 10))
    _fixed_ticks(right.yaxis, [10 ** e for e in range(int(math.log10(2 * max(seq_len, 10))) + 1)])
    right.set_xlabel("head")
    right.set_ylabel(f"keys with {mass:.0%} of weight")
    right.set_title(f"T = {seq_len}", fontsize=10, y=1.0)
    right.grid(alpha=0.3, axis="y")
    # Boxes are a collection, which does not rescale the axes: fix both panels to the heads.
    for ax in (left, right):
        ax.set_xlim(0.4, num_heads + 0.6)
        _head_ticks(ax, heads)
    return fig


def plot_alibi_weights(num_heads: int = 8, seq_len: int = 1024) -> Figure:
    """The weights ALiBi alone leaves on each distance: the last query, equal content scores."""
    slopes = alibi_slopes(num_heads).double()
    colours = colormaps["viridis"](np.linspace(0, 0.9, num_heads))
    # The last query's bias row is -m·distance for distance 0..T-1; softmax it per head.
    weights = (-slopes[:, None] * torch.arange(seq_len, dtype=torch.float64)).softmax(dim=-1)
    # About 200 distances spread evenly on the log axis draw the same curves as all T.
    shown = np.unique(np.geomspace(1, seq_len, 200).astype(int)) - 1
    fig = _figure(6.5, 4, left=0.12, right=0.97)
    ax = fig.subplots()
    for head in range(num_heads):
        ax.plot(shown, weights[head, shown].numpy(), color=colours[head], lw=1.2,
                label=f"head {head + 1}: m = {slopes[head]:.3g}")
    ax.set_xscale("symlog", linthresh=1)
    ax.set_yscale("log")
    ax.set_ylim(1e-6, 1)
    ax.set_xlabel("distance i − j from the query to the key")
    ax.set_ylabel("attention weight (log scale)")
    ax.set_title(f"ALiBi alone: weights of the last query, T = {seq_len}", fontsize=10)
    ax.grid(alpha=0.3)
    if num_heads <= 12:
        ax.legend(fontsize=7, loc="lower left")
    return fig


def plot_alibi_heads(num_heads: int = 8, seq_len: int = 12, causal: bool = True,
                     max_panels: int = 8) -> Figure:
    """The bias matrix -m·|i - j| of each head (the first `max_panels` heads), one heatmap each."""
    bias = alibi_bias(num_heads, seq_len)
    if causal:
        bias = bias.masked_fill(torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1),
                                float("-inf"))
    slopes = alibi_slopes(num_heads)
    shown = min(num_heads, max_panels)
    columns = min(shown, 4)
    rows = math.ceil(shown / columns)
    fig = _figure(3.1 * columns + 1, 2.8 * rows, left=0.04, right=0.88, bottom=0.08,
                  top=0.9 if rows > 1 else 0.82, wspace=0.15, hspace=0.25)
    axes = np.atleast_1d(fig.subplots(rows, columns)).ravel()
    limit = float(bias[:shown].masked_fill(~bias[:shown].isfinite(), 0).abs().max()) or 1.0
    # Every entry is <= 0: darker = stronger penalty; masked cells light grey.
    colours = colormaps["Blues_r"].with_extremes(bad="0.85")
    for head, ax in enumerate(axes):
        if head >= shown:
            ax.set_visible(False)
            continue
        values = np.ma.masked_invalid(bias[head].numpy())
        image = ax.imshow(values, cmap=colours, vmin=-limit, vmax=0, interpolation="nearest")
        ax.set_title(f"head {head + 1}: m = 1/{1 / slopes[head]:.4g}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0].set_ylabel("query i")
    axes[0].set_xlabel("key j")
    fig.colorbar(image, ax=list(axes[:shown]), shrink=0.8, label="bias added to the logit")
    more = f" (first {shown} of {num_heads} heads)" if shown < num_heads else ""
    fig.suptitle(f"ALiBi bias −m·|i − j|, T = {seq_len}{more}", fontsize=10, x=0.46)
    return fig


def plot_alibi_two_forms(slope: float = 0.25, seq_len: int = 8) -> Figure:
    """+m·j (paper's code) and -m·(i - j) under a causal mask: the biases differ, the attention
    does not.

    Uses zero content scores, so the panels show the bias alone and its softmax.
    """
    future = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1)
    key = torch.arange(seq_len, dtype=torch.float32)
    by_key = (slope * key).expand(seq_len, seq_len).masked_fill(future, float("-inf"))
    minus_distance = (-relative_positions(seq_len).abs()).float()
    by_distance = (slope * minus_distance).masked_fill(future, float("-inf"))
    difference = (by_key - by_distance).masked_fill(future, float("-inf"))
    fig = _figure(17, 3.9, left=0.04, right=0.99, wspace=0.3)
    axes = fig.subplots(1, 4)
    panels = [("+m·j (paper's code, BLOOM)", by_key, True),
              ("−m·|i − j| (distance form)", by_distance, True),
              ("difference = m·i (constant per row)", difference, True),
              ("softmax of either: identical",
               by_key.softmax(dim=-1).masked_fill(future, float("-inf")), False)]
    for ax, (title, matrix, is_bias) in zip(axes, panels):
        _heatmap(fig, ax, matrix, title, cmap="RdBu_r" if is_bias else "Blues",
                 symmetric=is_bias, annotate=True, fmt="{:.2f}",
                 colorbar_label="bias" if is_bias else "attention weight")
    fig.suptitle(f"two ALiBi forms under a causal mask, m = {slope:g} (grey: masked)")
    return fig
