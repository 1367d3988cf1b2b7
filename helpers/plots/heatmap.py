"""Heatmaps of big tables: more rows or columns than the screen has pixels for them."""

from __future__ import annotations

import numpy as np

MAX_CELLS = 256  # a heatmap's rows or columns beyond this are averaged in blocks (see below)


def average_blocks(data: np.ndarray, max_cells: int = MAX_CELLS) -> np.ndarray:
    """Shrink a big table to at most `max_cells` rows and columns by averaging blocks.

    A 512-column table drawn 400 pixels wide cannot show every column. Averaging neighbours
    first keeps fast stripes from turning into false patterns (aliasing), and is much cheaper to
    draw than letting matplotlib smooth the full-size image at every redraw.
    """
    data = np.asarray(data, dtype=np.float32)
    for axis in (0, 1):
        size = data.shape[axis]
        block = -(-size // max_cells)  # ceiling division
        if block > 1:
            starts = np.arange(0, size, block)
            counts = np.diff(np.append(starts, size))  # the last block may be shorter
            shape = [1, 1]
            shape[axis] = len(starts)
            data = np.add.reduceat(data, starts, axis=axis) / counts.reshape(shape)
    return data.astype(np.float32, copy=False)
