"""Figures for notebook 03: a learned position table before, during and after training."""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from ..in_place import clear_plotted
from .common import (_few_ticks, _heatmap, _numpy, cosine_similarity_matrix,
                     mean_similarity_by_offset)

__all__ = ["plot_learned_before_after", "plot_learned_rows", "plot_similarity_by_offset"]


def plot_learned_before_after(before: torch.Tensor, after: torch.Tensor,
                              trained_positions: int | None = None,
                              after_title: str = "after training") -> Figure:
    """The learned table and its row-to-row cosine similarity, before and after training.

    `trained_positions`, if given, draws a line under the last position the training data
    reached: rows below it never received a gradient.
    """
    before, after = _numpy(before), _numpy(after)
    limit = float(max(np.abs(before).max(), np.abs(after).max()))
    fig = Figure(figsize=(8.6, 6.4))
    axes = fig.subplots(2, 2)
    for column, (table, name) in enumerate([(before, "at initialisation"), (after, after_title)]):
        _heatmap(fig, axes[0, column], table, f"learned table {name}", vmin=-limit, vmax=limit,
                 colorbar_label="entry")
        _heatmap(fig, axes[1, column], _numpy(cosine_similarity_matrix(torch.from_numpy(table))),
                 f"cosine similarity of rows, {name}", xlabel="position",
                 colorbar_label="cosine similarity")
        if trained_positions is not None:
            for ax in (axes[0, column], axes[1, column]):
                ax.axhline(trained_positions - 0.5, color="black", linestyle="--", linewidth=1)
            axes[1, column].axvline(trained_positions - 0.5, color="black", linestyle="--",
                                    linewidth=1)
    if trained_positions is not None:
        last = trained_positions - 1
        axes[0, 0].text(0.02, 0.02, f"dashed: last position seen in training ({last})",
                        transform=axes[0, 0].transAxes, fontsize=8,
                        bbox=dict(facecolor="white", alpha=0.8, linewidth=0))
    fig.subplots_adjust(hspace=0.35, wspace=0.55, left=0.08, right=0.9, top=0.95, bottom=0.07)
    return fig


def plot_learned_rows(table: torch.Tensor, trained_positions: int,
                      title: str = "learned table", limit: float | None = None,
                      initial: torch.Tensor | None = None,
                      figure: Figure | None = None) -> Figure:
    """One learned table, and how alike its trained rows are by distance (the training slider).

    Left, the table (`limit` fixes the colour scale, so that frames of a run compare; the scale is
    stated in the title instead of a colour bar, which would double the redraw time); right, the
    mean cosine similarity of trained rows k apart, with the `initial` table's curve for reference.
    `figure`, if given, is a figure this function returned before; it is updated in place (what a
    slider does, see `helpers.widgets`).
    """
    values = _numpy(table)
    limit = float(np.abs(values).max()) if limit is None else limit
    if figure is not None:
        fig = clear_plotted(figure)
    else:
        fig = Figure(figsize=(9, 3.5))
        fig.subplots(1, 2)
        fig.subplots_adjust(left=0.07, right=0.97, top=0.86, bottom=0.14, wspace=0.3)
    left, right = fig.axes
    _heatmap(fig, left, values, f"{title}\n(blue -{limit:.2g} .. white 0 .. red +{limit:.2g})",
             vmin=-limit, vmax=limit, colorbar=False)
    left.axhline(trained_positions - 0.5, color="black", linestyle="--", linewidth=1)
    offsets = np.arange(1, trained_positions)
    if initial is not None:
        right.plot(offsets, _numpy(mean_similarity_by_offset(initial[:trained_positions])),
                   color="grey", linestyle="--")
        right.text(offsets[-1], -0.33, "dashed: at initialisation", color="grey", ha="right",
                   fontsize=8)
    right.plot(offsets, _numpy(mean_similarity_by_offset(table[:trained_positions])),
               color="tab:red", linewidth=2)
    right.axhline(0, color="grey", linewidth=0.8)
    right.set_ylim(-0.4, 1.0)
    right.set_yticks([-0.4, 0, 0.5, 1])
    right.set_xticks(_few_ticks(trained_positions))
    right.set_xlabel("offset k")
    right.set_ylabel("mean cos(row p, row p + k)")
    right.set_title(f"trained rows 0-{trained_positions - 1}: alike by distance?", y=1.0)
    return fig


def plot_similarity_by_offset(tables: dict[str, torch.Tensor]) -> Figure:
    """Mean cosine similarity of two rows against how far apart they are, one line per table."""
    fig = Figure(figsize=(7, 3.6))
    ax = fig.add_subplot()
    for name, table in tables.items():
        curve = _numpy(mean_similarity_by_offset(table))
        ax.plot(np.arange(1, len(curve) + 1), curve, marker="o", markersize=3, label=name)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("offset k between the two positions")
    ax.set_ylabel("mean cos(row p, row p + k)")
    ax.set_title("How alike are rows k positions apart?")
    ax.legend()
    fig.tight_layout()
    return fig
