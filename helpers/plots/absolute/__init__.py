"""Figures for the absolute position tables: numbers in, matplotlib Figure out.

    learned     notebook 03: a learned table before, during and after training
    sinusoidal  notebook 04: the sinusoidal table and each of its properties
    common      heatmaps and row similarities, shared by both

Heatmaps show a table as the tensor is laid out: one row per position (top to bottom), one
column per dimension. The sliders' figures are kept cheap to redraw: few fixed ticks, colour bars
in inset axes, no tight bounding box.
"""

from .common import cosine_similarity_matrix, mean_similarity_by_offset
from .learned import *  # noqa: F401,F403
from .learned import __all__ as _learned
from .sinusoidal import *  # noqa: F401,F403
from .sinusoidal import __all__ as _sinusoidal

__all__ = ["cosine_similarity_matrix", "mean_similarity_by_offset", *_learned, *_sinusoidal]
