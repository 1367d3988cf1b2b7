"""Checks for the exercises of notebook 05 (RoPE). Each prints right or wrong, and why."""

from __future__ import annotations

import torch

from ..rope import apply_rope, rope_layout_permutation, rope_frequencies, rope_wavelengths
from .feedback import correct, not_done, not_yet, unanswered

__all__ = ["check_rope_frequencies", "check_complex_rope", "check_layout_order",
           "check_full_turns"]

STUB = "your function returns None; write its body, then run this cell again."


def _call(fn, *args):
    """(result, None) or (None, message) when the learner's function raises."""
    try:
        return fn(*args), None
    except Exception as error:  # any mistake in the learner's code is reported, never raised
        return None, f"Your function raised {type(error).__name__}: {error}"


def _as_float64(value, shape) -> tuple[torch.Tensor | None, str | None]:
    try:
        tensor = torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        return None, f"Expected a tensor of shape {list(shape)}, got {type(value).__name__}."
    if tuple(tensor.shape) != tuple(shape):
        return None, f"Expected shape {list(shape)}, got {list(tensor.shape)}."
    return tensor, None


def check_rope_frequencies(frequencies) -> bool:
    """`frequencies(dim, base)` must return θᵢ = base^(-2i/dim) for i = 0 .. dim/2 - 1."""
    if unanswered(frequencies):
        return False
    for dim, base in ((8, 10000.0), (64, 10000.0), (128, 500000.0)):
        result, problem = _call(frequencies, dim, base)
        if result is None:
            return not_yet(problem) if problem else not_done(STUB)
        got, problem = _as_float64(result, (dim // 2,))
        if problem:
            not_yet(f"frequencies({dim}, {base:g}): {problem} There is one frequency per pair.")
            return False
        expected = rope_frequencies(dim, base).double()
        wrong = (~((got - expected).abs() <= 1e-5 * expected)).nonzero()  # NaN counts as wrong
        if len(wrong):
            i = int(wrong[0])
            not_yet(f"frequencies({dim}, {base:g}): θ_{i} should be {expected[i]:.6g}, got "
                    f"{got[i]:.6g}. Rule: θᵢ = base^(-2i/dim), so θ₀ = 1 and the exponent "
                    f"steps by 2/dim from pair to pair.")
            return False
    correct("θᵢ = base^(-2i/dim). Pair 0 turns 1 radian per token, the last pair "
            "turns slowest.")
    return True


def check_complex_rope(rope_complex) -> bool:
    """`rope_complex(x, positions)` must equal `apply_rope(x, positions)` (interleaved layout)."""
    if unanswered(rope_complex):
        return False
    generator = torch.Generator().manual_seed(5)
    x = torch.randn(2, 6, 8, dtype=torch.float64, generator=generator)
    for positions in (torch.arange(6), torch.tensor([0.5, 3.0, 7.25, 10.0, 11.5, 40.0])):
        result, problem = _call(rope_complex, x.clone(), positions)
        if result is None:
            return not_yet(problem) if problem else not_done(STUB)
        got, problem = _as_float64(result, x.shape)
        if problem:
            not_yet(f"{problem} RoPE keeps the shape of x.")
            return False
        expected = apply_rope(x, positions)
        if torch.allclose(got, expected, atol=1e-5):
            continue
        if torch.allclose(got, apply_rope(x, -positions), atol=1e-5):
            not_yet("Each pair turned the wrong way: multiply by e^(+i·m·θ), not e^(-i·m·θ).")
        elif torch.allclose(got, apply_rope(x, positions, layout="half"), atol=1e-5):
            not_yet("You paired xᵢ with x_{i+d/2} (the half layout). Here the pairs are "
                    "neighbours: x₂ᵢ + i·x₂ᵢ₊₁.")
        else:
            where = int((got - expected).abs().argmax())
            not_yet(f"Wrong values (first large difference at flat index {where}, positions "
                    f"{positions.tolist()}). Read (x₂ᵢ, x₂ᵢ₊₁) as x₂ᵢ + i·x₂ᵢ₊₁, multiply by "
                    f"e^(i·m·θᵢ) with θᵢ = 10000^(-2i/d), and read the real and imaginary parts "
                    f"back in the same places.")
        return False
    correct("multiplying each pair, read as a complex number, by e^(i·m·θᵢ) is RoPE "
            "(interleaved layout), for integer and fractional positions alike.")
    return True


def check_layout_order(order, dim: int = 8) -> bool:
    """`order` must reorder interleaved coordinates into the half layout: `x[..., order]`."""
    if unanswered(order):
        return False
    try:
        order = torch.as_tensor(order, dtype=torch.long).flatten()
    except (TypeError, ValueError, RuntimeError):
        not_yet(f"Expected a list of {dim} integers, got {type(order).__name__}.")
        return False
    if sorted(order.tolist()) != list(range(dim)):
        not_yet(f"Not a permutation of 0..{dim - 1}: got {order.tolist()}. Every coordinate must "
                f"appear exactly once.")
        return False
    x = torch.randn(3, 5, dim, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    if torch.allclose(apply_rope(x[..., order], layout="half"), apply_rope(x)[..., order]):
        correct(f"{order.tolist()} puts each interleaved pair (x₂ᵢ, x₂ᵢ₊₁) at places "
                f"(i, i + {dim // 2}), where the half layout rotates it. Permuting the rows of "
                f"W_q and W_k this way converts a checkpoint from one layout to the other.")
        return True
    if torch.equal(order.argsort(), rope_layout_permutation(dim)):
        not_yet("That is the inverse order: it turns the half layout into the interleaved one. "
                "Ask which old coordinate goes to each new place.")
    else:
        not_yet(f"Not the right order. New place i (< {dim // 2}) must hold old coordinate 2i, "
                f"and new place i + {dim // 2} old coordinate 2i + 1.")
    return False


def check_full_turns(count, dim: int = 128, base: float = 10000.0, length: int = 4096) -> bool:
    """`count` = how many pairs have a wavelength 2π/θᵢ of at most `length` tokens."""
    if unanswered(count):
        return False
    try:
        count = float(count)  # accepts 46, 46.0 or a one-element tensor
    except (TypeError, ValueError, RuntimeError):
        not_yet(f"Expected a whole number of pairs, got {type(count).__name__}.")
        return False
    wavelengths = rope_wavelengths(dim, base)
    expected = int((wavelengths <= length).sum())
    if count == expected:
        correct(f"{expected} of {dim // 2} pairs turn at least once within {length:,} "
                f"tokens; the other {dim // 2 - expected} turn less than once, so their angle "
                f"never repeats inside the context.")
        return True
    hint = ""
    if count == dim // 2 - expected:
        hint = " You counted the slow pairs, those that turn less than once."
    elif count == 2 * expected:
        hint = " Count pairs (dim/2 of them), not coordinates."
    not_yet(f"Not {count:g}.{hint} Pair i has wavelength 2π·base^(2i/dim) tokens; count the "
            f"pairs for which it is at most {length:,}.")
    return False
