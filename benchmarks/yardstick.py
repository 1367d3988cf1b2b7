"""How fast the machine is right now, for reading a benchmark: the machines are shared and their
speed drifts, by a third within a minute on the CI machine kind."""

import timeit

FULL_SPEED_MS = 26  # sum(range(10**6)) on the CI machine kind when nothing else slows it


def yardstick_ms() -> float:
    """sum(range(10**6)), best of five, in milliseconds (about 26 at full speed)."""
    return 1e3 * min(timeit.repeat("sum(range(10**6))", number=1, repeat=5))
