"""Checks for notebook 08's exercises (RoPE scaling)."""

from __future__ import annotations

import math

from .feedback import correct, not_done, not_yet


def check_ntk_base(factor: float, dim: int, your_base) -> bool:
    """The base NTK-aware scaling uses for a factor and head dimension (original base 10,000)."""
    if your_base is None:
        return not_done("set your_base to a number.")
    expected = 10000.0 * factor ** (dim / (dim - 2))
    if math.isclose(your_base, expected, rel_tol=1e-4):
        return correct(f"{expected:,.0f}: base · s^(d/(d-2)). The exponent makes the slowest pair "
                       f"exactly s times slower while the fastest pair (θ₀ = 1) is unchanged.")
    return not_yet(f"expected about {expected:,.0f}, got {your_base:,.0f}. NTK-aware scaling "
                   f"multiplies the base by s^(d/(d-2)), with d the head dimension.")


def check_interpolation_factor(trained: int, target: int, your_factor) -> bool:
    """The position-interpolation factor that maps `target` positions into `trained`."""
    if your_factor is None:
        return not_done("set your_factor to a number.")
    expected = target / trained
    if math.isclose(your_factor, expected):
        return correct(f"s = {target} / {trained} = {expected:g}: position {target - 1} is then "
                       f"read as {(target - 1) / expected:.2f}, inside the trained range.")
    return not_yet(f"not {your_factor}. Position interpolation divides positions by s so that "
                   f"the longest new position lands inside the trained range.")


def check_untouched_pairs(inv_freq, default, your_pairs) -> bool:
    """Which pairs does a scaling leave exactly unchanged?"""
    if your_pairs is None:
        return not_done("set your_pairs to a list of pair indices.")
    expected = [i for i in range(len(default)) if float(inv_freq[i]) == float(default[i])]
    if sorted(your_pairs) == expected:
        return correct(f"pairs {expected}: they turn many times within the original context, "
                       "so the model has seen every angle they produce; YaRN keeps them as they are.")
    return not_yet(f"expected {expected}, got {sorted(your_pairs)}. Compare the scaled and "
                   "original frequencies pair by pair.")
