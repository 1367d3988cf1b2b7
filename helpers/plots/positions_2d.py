"""Figures for notebook 09 (positions in two dimensions): numbers in, matplotlib Figure out.

The figures under sliders (`plot_table_2d`, `plot_query_attention`, `plot_mrope_ids`,
`plot_grid_change`) take a `figure` argument: given the figure they returned on the previous
move, they redraw it in place (see `helpers.plots.in_place`). They keep text short, ticks fixed
and most colour scales named in titles instead of colour bars, which keeps a redraw well under
100 ms.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.figure import Figure

from ..positions_2d import (apply_rope_2d, interpolate_table_2d, mrope_position_ids, patch_grid,
                            patchify, scaled_patch_grid, sinusoidal_table_2d)
from ..rope import apply_rope
from .canvas import remember_each_range, remember_unchanging
from .heatmap import average_blocks
from .in_place import clear_plotted, show_image

__all__ = ["plot_patches", "plot_flattening", "plot_table_2d", "query_attention",
           "plot_query_attention", "plot_mrope_ids", "plot_grid_change", "QUERY_GRID", "QUERY_DIM", "QUERY_BASE"]

# The attention figure's setting: an 8 x 8 grid, heads of 32, base 100 for every scheme
# (RoPE-ViT's base for axial RoPE; MAE's own table uses 10,000, whose slow waves barely change
# across 8 patches).
QUERY_GRID, QUERY_DIM, QUERY_BASE = 8, 32, 100.0
SCHEMES = ("1-D RoPE, raster order", "2-D sin-cos table (MAE)", "axial 2-D RoPE")


def _few_ticks(count: int, most: int = 5) -> list[int]:
    """Up to `most` evenly spaced integer ticks from 0 to count - 1."""
    step = max(1, math.ceil((count - 1) / (most - 1))) if count > 1 else 1
    return list(range(0, count, step))


def _fixed_ticks(ax, x_ticks: list[int], y_ticks: list[int]) -> None:
    """Ticks at fixed places with fixed labels: formatting them anew is a share of a redraw."""
    ax.set_xticks(x_ticks, [str(tick) for tick in x_ticks])
    ax.set_yticks(y_ticks, [str(tick) for tick in y_ticks])


def _grid_axes(ax, height: int, width: int) -> None:
    """Ticks, labels and limits of a panel drawn cell by cell over a height x width grid.

    The limits are set, not left to autoscaling: a reused panel still counts the previous
    image's extent among its data, and a marker drawn on it would stretch the view back to it."""
    ax.set_xlim(-0.5, width - 0.5)
    ax.set_ylim(height - 0.5, -0.5)
    _fixed_ticks(ax, _few_ticks(width), _few_ticks(height))
    ax.set_xlabel("column")
    ax.set_ylabel("row")


# --- Patches as tokens ------------------------------------------------------------------------


def plot_patches(image, patch_size: int, shown: int = 16) -> Figure:
    """An image cut into patches, numbered in raster order (top), and the first `shown` patches
    as the transformer reads them: one token after another (bottom)."""
    pixels = np.asarray(image)
    if pixels.ndim == 2:  # grey: three equal channels, so that it shows grey, not coloured
        pixels = np.repeat(pixels[..., None], 3, axis=-1)
    patches = patchify(pixels, patch_size).numpy()
    rows, columns = pixels.shape[0] // patch_size, pixels.shape[1] // patch_size
    fig = Figure(figsize=(8, 6.4))
    grid = fig.add_gridspec(2, 1, height_ratios=[4.6, 1], left=0.03, right=0.97, top=0.94,
                            bottom=0.03, hspace=0.22)
    top, strip = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
    top.imshow(pixels)
    for k in range(1, rows):
        top.axhline(k * patch_size - 0.5, color="white", lw=1)
    for k in range(1, columns):
        top.axvline(k * patch_size - 0.5, color="white", lw=1)
    for index, (r, c) in enumerate(patch_grid(rows, columns).tolist()):
        top.text(c * patch_size + 3, r * patch_size + 3, str(index), color="white",
                 fontsize=7, ha="left", va="top",
                 bbox=dict(facecolor="black", alpha=0.55, pad=1, linewidth=0))
    top.set(xticks=[], yticks=[])
    top.set_title(f"{pixels.shape[0]} x {pixels.shape[1]} pixels cut into {patch_size}-pixel "
                  f"patches: {rows} x {columns} = {rows * columns} tokens", fontsize=10)
    shown = min(shown, len(patches))
    gap = max(1, patch_size // 8)
    height = patch_size
    canvas = np.full((height, shown * (patch_size + gap) - gap, pixels.shape[2]), 255,
                     dtype=pixels.dtype)
    for k in range(shown):
        start = k * (patch_size + gap)
        canvas[:, start:start + patch_size] = patches[k].reshape(patch_size, patch_size, -1)
        strip.text(start + patch_size / 2, height + 2, str(k), ha="center", va="top",
                   fontsize=7)
    strip.imshow(canvas)
    strip.set(xticks=[], yticks=[])
    strip.set_ylim(height + 0.4 * patch_size, -0.5)
    strip.set_title(f"the sequence: tokens 0-{shown - 1} of {len(patches)}, each a vector of "
                    f"{patches.shape[1]:,} numbers", fontsize=10)
    for side in ("top", "right", "bottom", "left"):
        strip.spines[side].set_visible(False)
    return fig


def plot_flattening(height: int = 8, width: int = 8, row: int = 3, column: int = 3) -> Figure:
    """How far each patch is from one query patch: counted along the flattened sequence (left)
    and on the grid (right, rows plus columns apart)."""
    grid = patch_grid(height, width)
    query = row * width + column
    raster = (torch.arange(height * width) - query).abs().reshape(height, width).numpy()
    steps = (grid - grid[query]).abs().sum(-1).reshape(height, width).numpy()
    fig = Figure(figsize=(9, 4.3))
    axes = fig.subplots(1, 2, gridspec_kw=dict(left=0.06, right=0.98, top=0.86, bottom=0.12,
                                               wspace=0.2))
    top = float(max(raster.max(), steps.max()))
    for ax, values, title in ((axes[0], raster, "distance in the sequence |i − j|"),
                              (axes[1], steps, "distance on the grid |Δrow| + |Δcolumn|")):
        # Dark for near, light for far, never so dark that the black numbers vanish.
        ax.imshow(values, cmap="Blues_r", vmin=-0.8 * top, vmax=1.3 * top)
        for (r, c), value in np.ndenumerate(values):
            ax.text(c, r, str(value), ha="center", va="center", fontsize=8,
                    color="white" if (r, c) == (row, column) else "black")
        ax.scatter([column], [row], s=260, marker="s", color="tab:red")
        _grid_axes(ax, height, width)
        ax.set_title(title, fontsize=10)
    fig.suptitle(f"From patch ({row}, {column}) of a grid of {height} x {width} patches: the patch "
                 f"below is {width} tokens away in the sequence", fontsize=10)
    return fig


# --- The 2-D sinusoidal table -----------------------------------------------------------------


def plot_table_2d(rows: int = 8, columns: int = 8, dim: int = 64, base: float = 10000.0,
                  figure: Figure | None = None) -> Figure:
    """MAE's 2-D table for a grid of rows x columns patches (left: one row per patch in raster
    order, column half then row half) and how alike each patch's vector is to the middle
    patch's (right, cosine similarity)."""
    height, width = rows, columns
    table = sinusoidal_table_2d(height, width, dim, base)
    reference_row, reference_column = height // 2, width // 2
    unit = torch.nn.functional.normalize(table, dim=-1)
    similarity = (unit @ unit[reference_row * width + reference_column]).reshape(height, width)
    if figure is not None:
        fig = clear_plotted(figure)
    else:
        fig = Figure(figsize=(9.5, 4.4))
        fig.subplots(1, 2, gridspec_kw=dict(width_ratios=[1.25, 1], left=0.08, right=0.98,
                                            top=0.86, bottom=0.12, wspace=0.25))
    left, right = fig.axes
    patches = height * width
    show_image(left, average_blocks(table.numpy()), cmap="RdBu_r", vmin=-1, vmax=1,
               aspect="auto", interpolation="nearest",
               extent=(-0.5, dim - 0.5, patches - 0.5, -0.5))
    left.axvline(dim / 2 - 0.5, color="black", lw=1.5)
    left.text(dim / 4, -0.03 * patches - 0.5, "column", ha="center", va="bottom", fontsize=9)
    left.text(3 * dim / 4, -0.03 * patches - 0.5, "row", ha="center", va="bottom", fontsize=9)
    _fixed_ticks(left, [0, dim // 2, dim - 1], _few_ticks(patches))
    left.set_xlabel(f"dimension (red +1, blue −1; base {base:,.0f})")
    left.set_ylabel("patch (raster index)")
    left.set_title(f"{patches} patches x {dim} dimensions", fontsize=10, y=1.06)
    lowest = float(similarity.min())
    show_image(right, similarity.numpy(), cmap="viridis", vmin=min(lowest, 1 - 1e-6), vmax=1,
               interpolation="nearest")
    right.scatter([reference_column], [reference_row], s=80, marker="+", color="red")
    _grid_axes(right, height, width)
    right.set_title(f"cos(PE(patch), PE({reference_row}, {reference_column})): "
                    f"yellow 1, purple {lowest:.2f}", fontsize=10, y=1.06)
    return fig


# --- One query patch under each scheme --------------------------------------------------------


def query_attention(row: int, column: int, height: int = QUERY_GRID, width: int = QUERY_GRID,
                    dim: int = QUERY_DIM, base: float = QUERY_BASE) -> dict[str, torch.Tensor]:
    """Attention weights of the query patch (row, column) over every patch, per scheme.

    Every patch carries the same content, a vector of ones, so that only position can make one
    key score above another. Scores are q·k/√dim, then a softmax over the grid:
    - 1-D RoPE on the raster index (a text model's positions), half layout;
    - the 2-D sin-cos table (MAE) added to the content, no rotation;
    - axial 2-D RoPE, interleaved layout.
    Returns {scheme: [height, width] float64 weights}.
    """
    grid = patch_grid(height, width)
    patches = height * width
    query = row * width + column
    content = torch.ones(patches, dim, dtype=torch.float64)
    raster = apply_rope(content, torch.arange(patches), base, layout="half")
    added = content + sinusoidal_table_2d(height, width, dim, base).double()
    axial = apply_rope_2d(content, grid, base)
    weights = {}
    for name, vectors in zip(SCHEMES, (raster, added, axial)):
        scores = vectors @ vectors[query] / math.sqrt(dim)
        weights[name] = torch.softmax(scores, dim=0).reshape(height, width)
    return weights


def plot_query_attention(row: int = 2, column: int = 3, figure: Figure | None = None) -> Figure:
    """Where one query patch looks, under each scheme (same content everywhere: only positions
    differ). The numbers are the weights on the patch to its right and the patch below."""
    weights = query_attention(row, column)
    if figure is not None:
        fig = clear_plotted(figure)
    else:
        fig = Figure(figsize=(10.5, 3.9))
        fig.subplots(1, 3, gridspec_kw=dict(left=0.05, right=0.99, top=0.8, bottom=0.13,
                                            wspace=0.22))
    for ax, (name, values) in zip(fig.axes, weights.items()):
        # Each panel from 0 (black) to its own largest weight (white): they differ fourfold.
        show_image(ax, values.numpy(), cmap="magma", vmin=0, vmax=float(values.max()),
                   interpolation="nearest")
        ax.scatter([column], [row], s=90, marker="s", facecolors="none", edgecolors="cyan",
                   lw=1.5)
        right = f"{values[row, column + 1]:.3f}" if column + 1 < QUERY_GRID else "–"
        below = f"{values[row + 1, column]:.3f}" if row + 1 < QUERY_GRID else "–"
        ax.set_title(f"{name}\nright {right}, below {below}", fontsize=10, y=1.0)
        if figure is None:  # few, fixed ticks: text is most of a redraw's time
            ax.set(xlim=(-0.5, QUERY_GRID - 0.5), ylim=(QUERY_GRID - 0.5, -0.5),
                   xlabel="column")
            _fixed_ticks(ax, [0, QUERY_GRID - 1], [0, QUERY_GRID - 1])
    if figure is None:
        fig.axes[0].set_ylabel("row")
        for ax in fig.axes[1:]:
            ax.set_yticklabels([])
    fig.suptitle(f"attention of patch ({row}, {column}) (cyan) over an {QUERY_GRID} x "
                 f"{QUERY_GRID} grid (black 0, white: each panel's largest weight)",
                 fontsize=10, y=0.99)
    return fig


# --- M-RoPE ids -------------------------------------------------------------------------------


def plot_mrope_ids(rows: int = 3, columns: int = 4, text_before: int = 4, text_after: int = 3,
                   figure: Figure | None = None) -> Figure:
    """Qwen2-VL's three position ids (t, h, w) along a sequence: text, an image of rows x
    columns tokens (after merging patches), text. Dashed: plain 1-D positions 0, 1, 2, ..."""
    ids = mrope_position_ids([text_before, (1, rows, columns), text_after],
                             spatial_merge_size=1).numpy()
    length = ids.shape[1]
    tokens = np.arange(length)
    image = (tokens >= text_before) & (tokens < text_before + rows * columns)
    if figure is not None:
        fig = clear_plotted(figure)
    else:
        # Three separate axes with the same limits, not sharex: shared axes make every redraw
        # measure each other's tick labels, most of the drawing time here.
        fig = Figure(figsize=(9, 5.2))
        fig.subplots(3, 1, gridspec_kw=dict(left=0.08, right=0.98, top=0.9, bottom=0.1,
                                            hspace=0.12))
    top = max(length - 1, int(ids.max()))
    x_ticks = _few_ticks(length, 7)
    for ax, values, name in zip(fig.axes, ids, ("t (time)", "h (height)", "w (width)")):
        ax.axvspan(text_before - 0.5, text_before + rows * columns - 0.5, color="tab:orange",
                   alpha=0.12)
        ax.plot(tokens, tokens, color="0.6", ls="--", lw=1)
        # Markers on lines without a line: cheaper to draw than a scatter's collection.
        ax.plot(tokens[~image], values[~image], "o", ms=4, color="tab:blue")
        ax.plot(tokens[image], values[image], "o", ms=4, color="tab:orange")
        ax.set_ylabel(name)
        ax.set_xlim(-0.05 * length - 0.5, 1.05 * length - 0.5)
        ax.set_ylim(-1, top + 1)
        y_ticks = sorted({0, int(values.max()), top})
        ax.set_yticks(y_ticks, [str(tick) for tick in y_ticks])  # fixed labels: cheap to draw
        if ax is fig.axes[-1]:  # tick marks only where they are labelled: each one is drawn
            ax.set_xticks(x_ticks, [str(tick) for tick in x_ticks])
        else:
            ax.set_xticks([])
    fig.axes[-1].set_xlabel("token in the sequence (blue: text, orange: image tokens)")
    after = text_before + rows * columns
    fig.suptitle(f"{text_before} text tokens, a {rows} x {columns}-token image, {text_after} text "
                 f"tokens: the text after the image starts at {ids[0, after]}, "
                 f"not {after}", fontsize=10)
    return fig


# --- A new grid -------------------------------------------------------------------------------


def plot_grid_change(side: int = 12, trained: int = 8, dim: int = 32,
                     figure: Figure | None = None) -> Figure:
    """What three models do when an image is `side` patches a side and training saw `trained`.

    Left and middle: one dimension of MAE's 2-D table (dimension 0, sin(column · 1)) on the
    trained grid, and after MAE's bicubic interpolation to the new grid (`interpolate_table_2d`).
    Right: the RoPE position each column of the new grid gets: EVA-02 squeezes them into the
    trained range (`scaled_patch_grid`); Qwen2-VL's vision encoder counts the patches as they
    are (`patch_grid`). Given the figure of the previous slider move, it gives the same images,
    marks and legend new numbers (see `helpers.plots.in_place`).
    """
    table = sinusoidal_table_2d(trained, trained, dim)
    resized = interpolate_table_2d(table, trained, trained, side, side)
    fig = figure if figure is not None else _grid_change_figure()
    trained_ax, resized_ax, columns_ax = fig.axes[:3]  # their colour bars come after them
    for ax, values, size, name in [(trained_ax, table, trained, "trained grid"),
                                   (resized_ax, resized, side, "MAE: bicubic to the new grid")]:
        # The images are updated in place, so the colour bars made from them stay right.
        image = show_image(ax, values[:, 0].reshape(size, size).numpy(), vmin=-1.1, vmax=1.1,
                           cmap="RdBu_r", interpolation="nearest",
                           extent=(-0.5, size - 0.5, size - 0.5, -0.5))
        if image.colorbar is None:  # made once; its scale never changes
            fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="sin(column · 1)")
        _grid_axes(ax, size, size)
        ax.set_title(f"{name}: {size} x {size}", fontsize=10, y=1.0)
    _show_columns(columns_ax, side, trained)
    fig.suptitle(f"an image {side} patches a side; MAE and EVA-02 pretrained on {trained} x "
                 f"{trained} (left, middle: dimension 0 of MAE's table, red +1, blue −1)",
                 fontsize=11)
    return fig


def _grid_change_figure() -> Figure:
    """`plot_grid_change`'s figure: three empty panels, which each call fills."""
    fig = Figure(figsize=(12, 4))
    _, resized_ax, columns_ax = fig.subplots(1, 3, gridspec_kw=dict(
        width_ratios=[1, 1, 1.3], left=0.05, right=0.98, top=0.82, bottom=0.14, wspace=0.5))
    # The new grid's side sets the ranges of the middle and right panels: each axis keeps a
    # drawing per range, replayed when the slider comes back to it.
    remember_each_range(resized_ax.xaxis, resized_ax.yaxis, columns_ax.xaxis, columns_ax.yaxis)
    return fig


def _show_columns(ax, side: int, trained: int) -> None:
    """The right panel: the RoPE position of each column of the new grid, EVA-02's and
    Qwen2-VL's, over the band of positions pretraining saw.

    Its band, marks and legend are made once (again only for another trained size); a move
    gives the marks new columns. A legend costs much to lay out: the slider canvas replays this
    one (`remember_unchanging`)."""
    labels = [f"EVA-02's pretrained positions 0-{trained - 1}",
              "Qwen2-VL: actual grid (many sizes)", f"EVA-02: arange(n) / n · {trained}"]
    legend = ax.get_legend()
    if legend is None or [text.get_text() for text in legend.get_texts()] != labels:
        for artist in [*ax.lines, *ax.patches]:
            artist.remove()
        ax.axhspan(-0.5, trained - 0.5, color="0.85", label=labels[0])
        ax.plot([], [], "o", ms=5, color="tab:orange", label=labels[1])
        ax.plot([], [], "s", ms=5, color="tab:blue", label=labels[2])
        remember_unchanging(ax.legend(loc="upper left", fontsize=8, frameon=False))
        ax.set(xlabel="column of the new grid", ylabel="RoPE position of that column")
    columns = np.arange(side)
    eva = scaled_patch_grid(1, side, 1, trained)[:, 1].numpy()
    qwen = patch_grid(1, side)[:, 1].numpy()
    qwen_marks, eva_marks = ax.lines
    qwen_marks.set_data(columns, qwen)
    eva_marks.set_data(columns, eva)
    ax.set(xlim=(-0.5, max(side, trained) - 0.5), ylim=(-0.7, max(side, trained) - 0.3))
    ax.set_title(f"axial RoPE: last column at {eva[-1]:.2f} or {qwen[-1]}", fontsize=10, y=1.0)
