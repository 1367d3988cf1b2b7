"""Tick marks that draw fast: fixed places, plain-text labels.

Automatic log-axis ticks are labelled in mathtext (10³), come with dozens of minor ticks, and
are placed anew at every draw; for a figure under a slider that is a large share of the redraw.
"""

from __future__ import annotations

import math


def short_number(value: float) -> str:
    """1 -> "1", 1000 -> "1k", 2500000 -> "2.5M", 0.01 -> "0.01": compact tick labels."""
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:g}{suffix}"
    return f"{value:g}"


def plain_log_ticks(axis, low: float, high: float) -> None:
    """Ticks at the powers of ten between `low` and `high` on a log axis, labelled 0.1, 1, 10,
    100, 1k, ... in plain text, and no minor ticks. Set the axis scale first.

    Matplotlib widens the axis to show every tick, so ticks stay inside the range asked for."""
    exponents = range(math.ceil(math.log10(low) - 1e-9), math.floor(math.log10(high) + 1e-9) + 1)
    decades = [10.0 ** exponent for exponent in exponents]
    axis.set_ticks(decades, [short_number(value) for value in decades])
    axis.set_ticks([], minor=True)
