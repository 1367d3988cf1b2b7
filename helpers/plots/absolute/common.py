"""Pieces shared by the figures of notebooks 03 and 04: heatmaps, tick choices, similarities."""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from matplotlib.figure import Figure

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


def _short_number(value: float) -> str:
    """1 -> "1", 1000 -> "1k", 2500000 -> "2.5M": compact tick labels."""
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:g}{suffix}"
    return f"{value:g}"


def _heatmap(fig: Figure, ax, data: np.ndarray, title: str, *, xlabel="dimension",
             ylabel="position", vmin=-1.0, vmax=1.0, cmap=DIVERGING, colorbar_label="value",
             colorbar=True):
    rows, columns = data.shape
    # Small tables are drawn as crisp cells; large ones are smoothed when shrunk to the screen,
    # so that fast stripes do not turn into false patterns (aliasing).
    smooth = max(rows, columns) > 256
    image = ax.imshow(data, aspect="auto", cmap=cmap, vmin=vmin, vmax=vmax,
                      interpolation="antialiased" if smooth else "nearest")
    ax.set_xticks(_few_ticks(columns))
    ax.set_yticks(_few_ticks(rows))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if not colorbar:
        return image
    # The colour bar goes in an inset beside the axes: cheaper than letting it reshape the grid.
    bar_axes = ax.inset_axes([1.03, 0.0, 0.045, 1.0])
    bar = fig.colorbar(image, cax=bar_axes, ticks=[vmin, (vmin + vmax) / 2, vmax], format="%.3g")
    bar.set_label(colorbar_label, labelpad=-2)
    return image


def cosine_similarity_matrix(table: torch.Tensor) -> torch.Tensor:
    """cos(row p, row q) for every pair of rows: `[P, P]`, 1 on the diagonal."""
    unit = F.normalize(table.detach().float(), dim=-1)
    return unit @ unit.T


def mean_similarity_by_offset(table: torch.Tensor) -> torch.Tensor:
    """Average cosine similarity of rows k apart, for k = 1 .. P - 1 (index 0 is k = 1)."""
    similarity = cosine_similarity_matrix(table)
    return torch.stack([similarity.diagonal(k).mean() for k in range(1, len(table))])
