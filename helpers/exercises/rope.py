"""Checks for the exercises of notebook 05 (RoPE).

Each check prints one line through `feedback` (Correct / Not yet / Not done yet) and returns True
or False; none raises. The build exercises run the learner's function on fresh shapes, positions
and bases, with the course's own function out of reach, and name the usual slips: the other
layout, turning the wrong way (`rotate_half` with the wrong sign), the exponent i/d instead of
2i/d, degrees instead of radians, the base or the positions ignored, cos and sin repeated pair by
pair in the half layout, a slice like x[:, :d//2] that is right only without leading dimensions,
the inverse permutation, values rotated too, a forgotten √d or causal mask, and for partial
rotary: frequencies from the head size, the last coordinates turned.
"""

from __future__ import annotations

import math
import random

import torch

from .. import absolute, attention, rope
from ..attention import scaled_dot_product_attention
from ..rope import apply_rope, rope_layout_permutation
from .answers import as_int_list, as_tensor, call_learner, course_functions_hidden, refers_to
from .feedback import correct, not_done, not_yet, unanswered

__all__ = ["check_complex_rope", "check_rope_half", "check_layout_order", "check_rotary_head",
           "check_partial_rotary"]

STUB = "your function returns None; write its body, then run this cell again."

# The course functions each build exercise must not call, by their dotted names.
_ROPE_FUNCTIONS = ("helpers.rope.apply_rope",)
_ORDER_FUNCTIONS = ("helpers.rope.rope_layout_permutation",
                    "helpers.absolute.layout_permutation")
_MODULES = {"rope": rope, "absolute": absolute, "attention": attention}


def _forbidden(dotted_names) -> list:
    return [getattr(_MODULES[name.split(".")[1]], name.rpartition(".")[2])
            for name in dotted_names]


def _run(function, dotted_names, *args):
    """(result, None) or (None, a sentence): the learner's function, course functions hidden."""
    name = refers_to(function, *_forbidden(dotted_names))
    if name is not None:
        return None, (f"your function calls `{name}`, the course's own implementation; this "
                      "exercise asks you to write it yourself.")
    with course_functions_hidden(*dotted_names):
        result, crash = call_learner(function, *args)
    if crash is not None and "CourseFunctionUsed" in crash:
        return None, ("your function called the course's own implementation; this exercise "
                      "asks you to write it yourself.")
    return result, crash


def _not_callable(function, what: str) -> bool:
    if callable(function):
        return False
    not_yet(f"expected a function {what}, got {type(function).__name__}.")
    return True


def _pair_frequencies(dim: int, base: float, exponent: str = "2i/d") -> torch.Tensor:
    """θᵢ in float64, the right way ("2i/d") or a typical wrong way."""
    pairs = torch.arange(dim // 2, dtype=torch.float64)
    if exponent == "2i/d":
        return base ** (-2 * pairs / dim)
    if exponent == "i/d":
        return base ** (-pairs / dim)
    return base ** (2 * pairs / dim)  # "+2i/d": the minus sign forgotten


def _turned(x, positions, base=10000.0, layout="interleaved", *, exponent="2i/d", unit=1.0,
            sign=1.0) -> torch.Tensor:
    """RoPE in float64 with one deliberate change: what a typical slip produces."""
    inv_freq = _pair_frequencies(x.shape[-1], base, exponent) * unit
    return apply_rope(x.double(), sign * positions.double(), inv_freq=inv_freq, layout=layout)


def _rope_slip(answer, x, positions, base, layout, tolerance) -> str | None:
    """Which typical slip a rotated tensor matches, in words; None if none does."""
    other = "half" if layout == "interleaved" else "interleaved"
    pairing = ("neighbours (x₂ᵢ, x₂ᵢ₊₁)" if layout == "interleaved"
               else "xᵢ with x_{i+d/2}")
    slips = [
        (dict(layout=other), f"that is the {other} layout; here pair i is {pairing}."),
        (dict(sign=-1.0), "every pair turned the wrong way (by −m·θᵢ): "
         + ("multiply by e^(+i·m·θᵢ), not e^(−i·m·θᵢ)." if layout == "interleaved" else
            "rotate_half(x) is cat(−x₂, x₁), the second half negated and moved to the front; "
            "cat(x₂, −x₁) has the wrong sign.")),
        (dict(exponent="i/d"), "the frequencies fall too slowly: θᵢ = base^(−2i/d) with i "
         "counting pairs, not base^(−i/d)."),
        (dict(exponent="+2i/d"), "the frequencies grow instead of falling: θᵢ = base^(−2i/d), "
         "with a minus sign in the exponent."),
        (dict(unit=math.pi / 180), "the angles were treated as degrees: cos and sin take "
         "radians, and m·θᵢ already is in radians."),
        (dict(sign=0.0), "nothing turned: every pair must turn by its angle m·θᵢ."),
    ]
    for change, words in slips:
        arguments = {"layout": layout, **change}
        if torch.allclose(answer, _turned(x, positions, base, **arguments), atol=tolerance):
            return words
    if base != 10000.0 and torch.allclose(answer, _turned(x, positions, 10000.0, layout),
                                          atol=tolerance):
        return f"the frequencies ignore `base`: it was {base:g}, not 10,000."
    counting = torch.arange(x.shape[-2])
    if (not torch.equal(positions.double(), counting.double())
            and torch.allclose(answer, _turned(x, counting, base, layout), atol=tolerance)):
        return ("the positions passed in were ignored: turn row t by positions[t]·θᵢ, not by "
                "t·θᵢ.")
    if layout == "half" and torch.allclose(answer, _half_repeated_pairwise(x, positions, base),
                                           atol=tolerance):
        return ("cos and sin were repeated pair by pair (`repeat_interleave`), the interleaved "
                "layout's pattern; with `rotate_half`, pair i is (xᵢ, x_{i+d/2}), so repeat "
                "the whole row: cat([cos, cos], -1).")
    return None


def _half_repeated_pairwise(x, positions, base) -> torch.Tensor:
    """x·cos + rotate_half(x)·sin with cos and sin repeated element by element: a common slip."""
    angles = positions.double()[:, None] * _pair_frequencies(x.shape[-1], base)
    cos, sin = angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)
    first, second = x.double().chunk(2, dim=-1)
    return x.double() * cos + torch.cat((-second, first), dim=-1) * sin


def _first_gap(answer, expected) -> str:
    gap = (answer - expected).abs().nan_to_num(math.inf).flatten()
    where = int(gap.argmax())
    return (f"entry {where} (flattened) is {answer.flatten()[where]:.4f}, expected "
            f"{expected.flatten()[where]:.4f}")


# --- Exercises 1 and 3: RoPE itself, half layout and complex form ------------------------------


def _rope_cases(seed, fixed_base: float | None):
    """(x, positions, base): fresh shapes, integer and fractional positions, several bases."""
    generator = torch.Generator().manual_seed(random.Random(seed).randrange(2 ** 31))

    def draw(lead, length, dim, positions, base):
        x = torch.randn(*lead, length, dim, dtype=torch.float64, generator=generator)
        return x, positions, base

    # Every base once, in a random order: a function that ignores `base` cannot pass by luck.
    bases = [[10.0, 10000.0, 500000.0][i] for i in torch.randperm(3, generator=generator)]

    def pick_base():
        return fixed_base if fixed_base is not None else bases.pop()

    cases = [draw((), 4, 8, torch.arange(4), fixed_base or 10000.0)]
    for lead in [(2,), (3, 2), ()]:
        length = int(torch.randint(2, 24, (1,), generator=generator))
        dim = 2 * int(torch.randint(2, 33, (1,), generator=generator))
        if len(lead) == 2:  # fractional positions, any order
            positions = torch.rand(length, dtype=torch.float64, generator=generator) * 500
        else:  # integers that do not start at 0
            positions = torch.randint(0, 500, (length,), generator=generator)
        cases.append(draw(lead, length, dim, positions, pick_base()))
    return cases


def _leading_dimensions(function, x, positions, base, layout, call_with_base,
                        tolerance) -> str | None:
    """A sentence if x has leading dimensions and the learner's function, wrong on the whole of
    x, is right on one `[T, d]` slice of it (e.g. `x[:, :d//2]` where `x[..., :d//2]` is meant);
    else None."""
    if x.dim() <= 2:
        return None
    one = x.reshape(-1, *x.shape[-2:])[0]  # the first [T, d] matrix of the batch
    args = (one.clone(), positions.clone()) + ((base,) if call_with_base else ())
    result, problem = _run(function, _ROPE_FUNCTIONS, *args)
    if problem is not None or result is None:
        return None
    got, problem = as_tensor(result, tuple(one.shape))
    if problem is not None or not torch.allclose(got, _turned(one, positions, base, layout),
                                                 atol=tolerance):
        return None
    return (f"Your function is right on one [T, d] matrix, but this x has the leading "
            f"dimensions {list(x.shape[:-2])} (batch, heads) before [T, d]. Index from the end: "
            f"x[..., :d // 2] (x[:, :d // 2] slices dimension 1) and d = x.shape[-1]; the "
            f"[T, d/2] table of angles then broadcasts over the leading dimensions.")


def _check_rope(function, cases, layout: str, call_with_base: bool) -> str | bool:
    """True, or the Not-yet/Not-done sentence, for a learner's RoPE on every case."""
    tolerance = 1e-3  # room for angles computed in float32
    for x, positions, base in cases:
        args = (x.clone(), positions.clone()) + ((base,) if call_with_base else ())
        shape = f"x of shape {list(x.shape)}" + (f", base {base:g}" if call_with_base else "")
        result, problem = _run(function, _ROPE_FUNCTIONS, *args)
        if problem is not None:
            if "course's" in problem:
                return problem
            leading = _leading_dimensions(function, x, positions, base, layout, call_with_base,
                                          tolerance)
            if leading is not None:
                return f"for {shape}, {problem.rstrip('.')}. {leading}"
            if "must match the size" in problem:
                problem += (" (cos and sin have d/2 columns, one per pair; in the half layout "
                            "each pair's angle is needed in both halves: cat([cos, cos], -1).)")
            return f"for {shape}, {problem}"
        if result is None:
            return "stub"
        got, problem = as_tensor(result, tuple(x.shape))
        if problem is not None:
            leading = _leading_dimensions(function, x, positions, base, layout, call_with_base,
                                          tolerance)
            return f"for {shape}, {problem} " + (leading or "RoPE keeps the shape of x.")
        expected = _turned(x, positions, base, layout)
        if torch.allclose(got, expected, atol=tolerance):
            continue
        leading = _leading_dimensions(function, x, positions, base, layout, call_with_base,
                                          tolerance)
        if leading is not None:
            return f"for {shape}, {_first_gap(got, expected)}. {leading}"
        slip = _rope_slip(got, x, positions, base, layout, tolerance)
        if slip is not None:
            return f"for {shape}, {slip}"
        return f"for {shape} and positions {positions[:3].tolist()}..., {_first_gap(got, expected)}."
    return True


def check_complex_rope(function, seed: int | None = None) -> bool:
    """`function(x, positions)` must turn each interleaved pair by e^(i·m·θᵢ), base 10,000."""
    if unanswered(function) or _not_callable(function, "(x, positions) -> rotated x"):
        return False
    verdict = _check_rope(function, _rope_cases(seed, 10000.0), "interleaved", False)
    if verdict == "stub":
        return not_done(STUB)
    if verdict is not True:
        return not_yet(verdict)
    return correct("multiplying each pair, read as a complex number, by e^(i·m·θᵢ) is RoPE "
                   "(interleaved layout), for integer and fractional positions alike.")


def check_rope_half(function, seed: int | None = None) -> bool:
    """`function(x, positions, base)` must be RoPE in the half layout, pair i = (xᵢ, x_{i+d/2})."""
    if unanswered(function) or _not_callable(function, "(x, positions, base) -> rotated x"):
        return False
    verdict = _check_rope(function, _rope_cases(seed, None), "half", True)
    if verdict == "stub":
        return not_done(STUB)
    if verdict is not True:
        return not_yet(verdict)
    return correct("x·cos + rotate_half(x)·sin with cos and sin of m·θᵢ repeated over both "
                   "halves: the half layout of Hugging Face's Llama, for every shape, position "
                   "and base tried.")


# --- Exercise 4: the layout permutation --------------------------------------------------------


def check_layout_order(function, seed: int | None = None) -> bool:
    """`function(dim)` must list the interleaved coordinates in half-layout order."""
    if unanswered(function) or _not_callable(function, "(dim) -> a list of dim integers"):
        return False
    generator = random.Random(seed)
    dims = [8, 2, 6] + [2 * generator.randint(4, 64) for _ in range(3)]
    for dim in dims:
        result, problem = _run(function, _ORDER_FUNCTIONS, dim)
        if problem is not None:
            return not_yet(problem if "course's" in problem else f"my_order({dim}): {problem}")
        if result is None:
            return not_done(STUB)
        order = as_int_list(result)
        if order is None:
            return not_yet(f"my_order({dim}) should return {dim} whole numbers (a list, range "
                           f"or tensor), got {type(result).__name__}.")
        expected = rope_layout_permutation(dim).tolist()
        if order == expected:
            continue
        call = f"my_order({dim}) = {order if dim <= 16 else str(order[:8])[:-1] + ', ...]'}"
        outside = [value for value in order if not 0 <= value < dim]
        if outside:
            return not_yet(f"{call}: index {outside[0]} does not exist; coordinates are "
                           f"numbered 0 to {dim - 1} (an off-by-one in a range?).")
        if len(order) != dim:
            return not_yet(f"{call}: expected {dim} indices, one per coordinate, got "
                           f"{len(order)}.")
        if sorted(order) != list(range(dim)):
            missing = sorted(set(range(dim)) - set(order))
            return not_yet(f"{call}: not a permutation, coordinate {missing[0]} is missing; "
                           "every coordinate must appear exactly once.")
        if order == torch.tensor(expected).argsort().tolist():
            return not_yet(f"{call}: that is the inverse order, which turns the half layout "
                           "into the interleaved one. Entry j must name the old coordinate "
                           "that goes to new place j.")
        if order == expected[dim // 2:] + expected[: dim // 2]:
            return not_yet(f"{call}: the odd coordinates come first, so every pair is read "
                           "as (x₂ᵢ₊₁, x₂ᵢ) and turns the wrong way. New place i holds old "
                           "coordinate 2i.")
        if order == list(range(dim)):
            return not_yet(f"{call}: that leaves every coordinate where it is.")
        return not_yet(f"{call}: new place i (< {dim // 2}) must hold old coordinate 2i, and "
                       f"new place i + {dim // 2} old coordinate 2i + 1.")
    return correct("x[..., order] puts each interleaved pair (x₂ᵢ, x₂ᵢ₊₁) at places "
                   "(i, i + d/2), where the half layout turns it, for every size tried. "
                   "Reordering the rows of W_q and W_k this way converts a checkpoint.")


# --- Exercise 2: RoPE inside an attention head -------------------------------------------------


def _head(x, W_q, W_k, W_v, *, rotate="qk", layout="interleaved", scale=True, causal=True,
          before=False):
    """A causal RoPE head, the right way or with one typical slip."""
    def turn(v):
        return apply_rope(v, layout=layout)
    source = turn(x) if before else x
    q, k, v = source @ W_q.T, source @ W_k.T, source @ W_v.T
    if not before:
        q = turn(q) if "q" in rotate else q
        k = turn(k) if "k" in rotate else k
        v = turn(v) if "v" in rotate else v
    if not scale:
        q = q * math.sqrt(q.shape[-1])
    return scaled_dot_product_attention(q, k, v, causal=causal)[0]


def _head_cases(seed):
    generator = torch.Generator().manual_seed(random.Random(seed).randrange(2 ** 31))
    cases = []
    for length, model, head, out in [(6, 12, 8, 4), (None, None, None, None),
                                     (None, None, None, None)]:
        if length is None:
            length = int(torch.randint(3, 20, (1,), generator=generator))
            model = 2 * int(torch.randint(3, 20, (1,), generator=generator))
            head = 2 * int(torch.randint(2, 17, (1,), generator=generator))
            out = 2 * int(torch.randint(2, 9, (1,), generator=generator))
            if head == model:
                model += 2
        x = torch.randn(length, model, dtype=torch.float64, generator=generator)
        weights = [torch.randn(rows, model, dtype=torch.float64, generator=generator)
                   / math.sqrt(model) for rows in (head, head, out)]
        cases.append((x, *weights))
    return cases


def check_rotary_head(function, seed: int | None = None) -> bool:
    """`function(x, W_q, W_k, W_v)` must be one causal attention head with RoPE (interleaved,
    base 10,000, positions 0..T-1) on its queries and keys, scores divided by √d."""
    if unanswered(function) or _not_callable(function, "(x, W_q, W_k, W_v) -> [T, d_v] outputs"):
        return False
    for x, W_q, W_k, W_v in _head_cases(seed):
        shape = f"x [{x.shape[0]}, {x.shape[1]}], head size {W_q.shape[0]}"
        result, crash = call_learner(function, x.clone(), W_q.clone(), W_k.clone(), W_v.clone())
        if crash is not None:
            hint = (" Project with x @ W_q.T: each row of W_q makes one query coordinate."
                    if "shape" in crash or "size" in crash else "")
            return not_yet(f"for {shape}, {crash}{hint}")
        if result is None:
            return not_done(STUB)
        if isinstance(result, (tuple, list)) and len(result) == 2:
            result = result[0]  # (outputs, weights), as scaled_dot_product_attention returns
        expected = _head(x, W_q, W_k, W_v)
        got, problem = as_tensor(result, tuple(expected.shape))
        if problem is not None:
            return not_yet(f"for {shape}, {problem} One output row per position, one column "
                           "per value coordinate.")
        tolerance = 1e-4
        if torch.allclose(got, expected, atol=tolerance):
            continue
        for change, words in [
            (dict(rotate="qkv"), "the values were turned too. RoPE turns queries and keys only: "
             "turned values would make the output depend on where the sentence starts."),
            (dict(scale=False), "the scores were not divided by √d (d = the head size)."),
            (dict(causal=False), "no causal mask: a query must not see later keys."),
            (dict(before=True), "x was turned before the projections; turn the queries and keys "
             "after W_q and W_k, or the projections mix the pairs."),
            (dict(rotate="q"), "only the queries were turned; the keys need their positions too."),
            (dict(rotate="k"), "only the keys were turned; the queries need their positions too."),
            (dict(rotate=""), "nothing was turned: this head has no positions."),
            (dict(layout="half"), "that is the half layout; use apply_rope's default, "
             "interleaved."),
        ]:
            if torch.allclose(got, _head(x, W_q, W_k, W_v, **change), atol=tolerance):
                return not_yet(f"for {shape}, {words}")
        return not_yet(f"for {shape}, {_first_gap(got, expected)}.")
    return correct("RoPE on queries and keys after their projections, values untouched, "
                   "scores over √d, causal mask: the attention of a Llama-style head.")


# --- Exercise 5: GPT-NeoX's partial rotary ------------------------------------------------------


def _partial(x, positions, rotary: int, *, freq_dim: int | None = None, where: str = "first",
             layout: str = "half", sign: float = 1.0) -> torch.Tensor:
    """Partial rotary in float64 (base 10,000), the right way or with one typical slip."""
    dim = x.shape[-1]
    inv_freq = _pair_frequencies(freq_dim or rotary, 10000.0)[: rotary // 2]
    x = x.double()
    start = 0 if where == "first" else dim - rotary
    turned = apply_rope(x[..., start:start + rotary], sign * positions.double(),
                        inv_freq=inv_freq, layout=layout)
    return torch.cat((x[..., :start], turned, x[..., start + rotary:]), dim=-1)


def _partial_cases(seed):
    """(x, positions, rotary_pct): GPT-NeoX-20B's head first, then fresh sizes and fractions."""
    generator = torch.Generator().manual_seed(random.Random(seed).randrange(2 ** 31))

    def pick(options):
        return options[int(torch.randint(len(options), (1,), generator=generator))]

    cases = [(torch.randn(5, 96, dtype=torch.float64, generator=generator), torch.arange(5),
              0.25)]
    for lead, fraction in [((2,), pick([0.25, 0.5, 0.75])), ((2, 3), pick([0.25, 0.5, 0.75])),
                           ((), 1.0)]:
        length = int(torch.randint(2, 20, (1,), generator=generator))
        dim = 8 * int(torch.randint(1, 17, (1,), generator=generator))  # d·pct even and exact
        if len(lead) == 2:  # fractional positions
            positions = torch.rand(length, dtype=torch.float64, generator=generator) * 300
        else:
            positions = torch.randint(0, 300, (length,), generator=generator)
        x = torch.randn(*lead, length, dim, dtype=torch.float64, generator=generator)
        cases.append((x, positions, fraction))
    return cases


def check_partial_rotary(function, seed: int | None = None) -> bool:
    """`function(x, positions, rotary_pct)` must turn the first r = int(d·rotary_pct) coordinates
    of each head in the half layout, with θᵢ = 10000^(-2i/r), and pass the others through."""
    if unanswered(function) or _not_callable(function, "(x, positions, rotary_pct) -> x"):
        return False
    tolerance = 1e-3  # room for angles computed in float32
    for x, positions, fraction in _partial_cases(seed):
        dim = x.shape[-1]
        rotary = int(dim * fraction)
        shape = f"x of shape {list(x.shape)}, rotary_pct {fraction:g} (r = {rotary})"
        result, problem = _run(function, _ROPE_FUNCTIONS, x.clone(), positions.clone(), fraction)
        if problem is not None:
            return not_yet(problem if "course's" in problem else f"for {shape}, {problem}")
        if result is None:
            return not_done(STUB)
        got, problem = as_tensor(result, tuple(x.shape))
        if problem is not None:
            if isinstance(result, torch.Tensor) and result.shape[-1:] == (rotary,):
                return not_yet(f"for {shape}, only the r turned coordinates came back; return "
                               f"all {dim}: the other {dim - rotary} pass through unchanged.")
            return not_yet(f"for {shape}, {problem} Partial rotary keeps the shape of x.")
        if torch.allclose(got, _partial(x, positions, rotary), atol=tolerance):
            continue
        for change, words in [
            (dict(freq_dim=dim), f"the frequencies were computed from the head size d = {dim}; "
             f"GPT-NeoX computes them from the rotated size: θᵢ = 10000^(−2i/r), r = {rotary}, "
             "so the turning pairs still run from 1 down to about 1/10,000."),
            (dict(where="last"), "the last r coordinates were turned; GPT-NeoX turns the first "
             "r and passes the rest through."),
            (dict(layout="interleaved"), "that is the interleaved layout (GPT-J's); GPT-NeoX "
             f"pairs xᵢ with x_{{i+r/2}} inside the r = {rotary} turned coordinates."),
            (dict(layout="interleaved", freq_dim=dim), "that is the interleaved layout with "
             f"frequencies from the head size; GPT-NeoX uses the half layout and θᵢ = "
             f"10000^(−2i/r), r = {rotary}."),
            (dict(sign=-1.0), "every pair turned the wrong way: rotate_half(x) is cat(−x₂, x₁), "
             "the second half negated and moved to the front."),
            (dict(sign=0.0), "nothing turned: the first r coordinates must turn by m·θᵢ."),
        ]:
            if torch.allclose(got, _partial(x, positions, rotary, **change), atol=tolerance):
                return not_yet(f"for {shape}, {words}")
        if rotary < dim and torch.allclose(got, _partial(x, positions, dim), atol=tolerance):
            return not_yet(f"for {shape}, the whole head turned; only the first r = {rotary} "
                           f"coordinates turn, r = int(d · rotary_pct).")
        if not torch.allclose(got[..., rotary:], x[..., rotary:], atol=tolerance):
            return not_yet(f"for {shape}, the last {dim - rotary} coordinates changed; they "
                           "must pass through unchanged.")
        return not_yet(f"for {shape} and positions {positions[:3].tolist()}..., "
                       f"{_first_gap(got, _partial(x, positions, rotary))}.")
    return correct("the first r = int(d·rotary_pct) coordinates turn in the half layout with "
                   "frequencies from r, the rest pass through: GPT-NeoX's partial rotary, for "
                   "every size, fraction and position tried.")
