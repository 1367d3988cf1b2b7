"""Pieces shared by the figures of notebooks 03 and 04: heatmaps, tick choices, similarities."""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from matplotlib.figure import Figure

from ..heatmap import average_blocks
from ..in_place import show_image

DIVERGING = "RdBu_r"  # red positive, blue negative, white zero


def _numpy(table) -> np.ndarray:
    if isinstance(table, torch.Tensor):
        return table.detach().cpu().float().numpy()
    return np.asarray(table, dtype=np.float32)


def _few_ticks(count: int, how_many: int = 5) -> list[int]:
    """At most `how_many` round-ish integer ticks from 0 to count - 1 (fixed ticks draw fast)."""
    if count <= 1:
        return [0]
    step = max(1, math.ceil((count - 1) / (how_many - 1)))
    return list(range(0, count, step))


def _heatmap(fig: Figure, ax, data: np.ndarray, title: str, *, xlabel="dimension",
             ylabel="position", vmin=-1.0, vmax=1.0, cmap=DIVERGING, colorbar_label="value",
             colorbar=True):
    """Draw `data` (rows top to bottom) as a heatmap on `ax`, with a colour bar.

    If `ax` already holds a heatmap (a slider's figure being reused), its numbers, colour scale,
    ticks and labels are replaced in place: much cheaper than building new axes.
    """
    rows, columns = data.shape
    image = show_image(ax, average_blocks(data), vmin=vmin, vmax=vmax, cmap=cmap,
                       extent=(-0.5, columns - 0.5, rows - 0.5, -0.5),  # ticks count table rows
                       aspect="auto", interpolation="nearest")
    ax.set_xticks(_few_ticks(columns))
    ax.set_yticks(_few_ticks(rows))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    # An explicit height spares matplotlib searching for a place above the axes at every draw.
    ax.set_title(title, y=1.0)
    if not colorbar:
        return image
    if image.colorbar is None:
        # The colour bar goes in an inset beside the axes: cheaper than reshaping the grid.
        bar_axes = ax.inset_axes([1.03, 0.0, 0.045, 1.0])
        fig.colorbar(image, cax=bar_axes, format="%.3g")
    image.colorbar.set_ticks([vmin, (vmin + vmax) / 2, vmax])
    image.colorbar.set_label(colorbar_label, labelpad=-2)
    return image


def cosine_similarity_matrix(table: torch.Tensor) -> torch.Tensor:
    """cos(row p, row q) for every pair of rows: `[P, P]`, 1 on the diagonal."""
    unit = F.normalize(table.detach().float(), dim=-1)
    return unit @ unit.T


def mean_similarity_by_offset(table: torch.Tensor) -> torch.Tensor:
    """Average cosine similarity of rows k apart, for k = 1 .. P - 1 (index 0 is k = 1)."""
    similarity = cosine_similarity_matrix(table)
    return torch.stack([similarity.diagonal(k).mean() for k in range(1, len(table))])
