"""Checks for the exercises of notebook 04 (sinusoidal position tables).

Each check prints one line through `feedback` (Correct / Not yet / Not done yet) and returns True
or False; none raises. The build exercises run the learner's function on fresh sizes, bases and
both layouts, with the course's own function out of reach, and name the usual slips: sine and
cosine swapped, the exponent i/d instead of 2i/d, tensor2tensor's spacing of the frequencies,
degrees instead of radians, positions counted from 1, the two layouts mixed up, a wavelength
without its 2π.
"""

from __future__ import annotations

import math
import numbers
import random

import torch

from .. import absolute
from ..absolute import layout_permutation, sinusoidal_table, sinusoidal_wavelengths
from .answers import (as_int_list, as_number, as_tensor, call_learner,
                      course_functions_hidden, refers_to)
from .feedback import correct, not_done, not_yet, unanswered

__all__ = ["check_pe_row", "check_sinusoidal_table", "check_slow_pairs",
           "check_shift_matrix", "check_layout_permutation"]

# The course functions a build exercise must not call, by their dotted names.
_TABLE_FUNCTIONS = ("helpers.absolute.sinusoidal_table", "helpers.absolute.sinusoidal_frequencies",
                    "helpers.absolute.sinusoidal_wavelengths")
_SHIFT_FUNCTIONS = ("helpers.absolute.sinusoidal_shift_matrix",)
_ORDER_FUNCTIONS = ("helpers.absolute.layout_permutation",)



_STUB = "your function returns None; write its body, then run this cell again."


def _run(function, hidden, where: str, refused: str, stub: str, *args) -> tuple[object, bool]:
    """(result, True), or (None, False) after printing the verdict: the learner's function run
    with the course's `hidden` functions refused. `refused` is said if it called one of them,
    `where` + the error if it crashed, `stub` (not done yet) if it returned None."""
    with course_functions_hidden(*hidden):
        result, crash = call_learner(function, *args)
    if crash is not None:
        return None, not_yet(refused if "without helpers" in crash else f"{where}{crash}")
    if result is None:
        return None, not_done(stub)
    return result, True


def _forbidden(*dotted_names: str) -> list:
    return [getattr(absolute, name.rpartition(".")[2]) for name in dotted_names]


def _shortcut(function, dotted_names) -> str | None:
    """A sentence if the learner's function reaches a course function it must not use."""
    name = refers_to(function, *_forbidden(*dotted_names))
    if name is not None:
        return (f"your function calls `{name}`, the course's own implementation; this exercise "
                "asks you to write it yourself.")
    return None


# --- Tables built the wrong way on purpose: to name a learner's slip ---------------------------


def _variant(num_positions: int, dim: int, base: float = 10000.0, layout: str = "interleaved",
             *, exponent: str = "2i/d", swap: bool = False, angle_unit: float = 1.0,
             start: int = 0) -> torch.Tensor:
    """The table with one deliberate change (float64): what a typical slip produces."""
    pairs = torch.arange(dim // 2, dtype=torch.float64)
    if exponent == "2i/d":
        frequencies = base ** (-2 * pairs / dim)
    elif exponent == "i/d":
        frequencies = base ** (-pairs / dim)
    else:  # tensor2tensor's ladder
        frequencies = base ** (-pairs / max(dim // 2 - 1, 1))
    positions = torch.arange(start, start + num_positions, dtype=torch.float64)
    angles = torch.outer(positions, frequencies) * angle_unit
    first, second = (angles.cos(), angles.sin()) if swap else (angles.sin(), angles.cos())
    if layout == "interleaved":
        return torch.stack([first, second], dim=-1).reshape(num_positions, dim)
    return torch.cat([first, second], dim=-1)


def _slip(answer: torch.Tensor, num_positions: int, dim: int, base: float, layout: str,
          tolerance: float) -> str | None:
    """Which typical slip the answer matches, in words; None if none does."""
    other = "half" if layout == "interleaved" else "interleaved"
    slips = [
        (dict(layout=other), f"this is the {other} layout, but layout={layout!r} was asked: "
         + ("interleaved puts sin of pair i in column 2i and its cos in column 2i + 1."
            if layout == "interleaved" else
            "half puts all dim/2 sines first, then the cosines in the same pair order.")),
        (dict(swap=True), "sine and cosine are swapped: the paper puts sin in the even columns "
         "(the first half for layout='half') and cos in the odd ones."),
        (dict(exponent="i/d"), "the frequencies fall too slowly: pair i needs the exponent "
         "2i/d (the column index of its sine over d), not i/d."),
        (dict(exponent="t2t"), "these are tensor2tensor's frequencies, base^(-i/(d/2 - 1)); "
         "the paper's formula is base^(-2i/d), whose last pair stops a little above 1/base."),
        (dict(angle_unit=math.pi / 180), "the angles were treated as degrees: torch.sin and "
         "math.sin take radians, and pos · ω_i already is in radians."),
        (dict(angle_unit=180 / math.pi), "the angles were converted to degrees: torch.sin and "
         "math.sin take radians, so use pos · ω_i as it is."),
        (dict(start=1), "the rows are one position late: the first row is position 0 "
         "(all sines 0, all cosines 1)."),
    ]
    for change, words in slips:
        arguments = {"layout": layout, **change}
        candidate = _variant(num_positions, dim, base, **arguments)
        if torch.allclose(answer, candidate, atol=tolerance):
            return words
    if base != 10000.0 and torch.allclose(answer, _variant(num_positions, dim, 10000.0, layout),
                                          atol=tolerance):
        return f"the table ignores `base`: it was called with base={base:g}, not 10,000."
    return None


# --- Exercise 3: one row by hand -----------------------------------------------------------------


def check_pe_row(answer, position: int = 3, dim: int = 4, base: float = 10000.0) -> bool:
    """The row PE(position) of the interleaved table, computed by hand."""
    if unanswered(answer):
        return False
    values, problem = as_tensor(answer)
    if problem is not None:
        return not_yet(f"expected a list of {dim} numbers, got {type(answer).__name__}.")
    values = values.flatten()
    if len(values) != dim:
        return not_yet(f"expected {dim} numbers (one per dimension), got {len(values)}.")
    expected = _variant(position + 1, dim, base)[position]
    if torch.allclose(values, expected, atol=1e-4):
        return correct(f"PE({position}) = {[round(v, 4) for v in expected.tolist()]}.")
    slip = None
    for change, words in [
        (dict(swap=True), "sine and cosine are swapped: sin goes in the even columns (0, 2), "
         "cos in the odd ones (1, 3)."),
        (dict(layout="half"), "that is the half layout (both sines, then both cosines); the "
         "interleaved row alternates sin, cos, sin, cos."),
        (dict(exponent="i/d"), f"pair 1's angle uses the exponent 2i/d = 2/{dim}, not i/d = "
         f"1/{dim}: its angle is {position}/100, not {position}/10."),
        (dict(angle_unit=math.pi / 180), "those are sines and cosines of degrees; the angles "
         f"{position} and {position}/100 are radians."),
    ]:
        if torch.allclose(values, _variant(position + 1, dim, base, **change)[position],
                          atol=1e-4):
            slip = words
            break
    if slip is not None:
        return not_yet(slip)
    column = next(j for j in range(dim) if not abs(values[j] - expected[j]) <= 1e-4)
    function = "sin" if column % 2 == 0 else "cos"
    return not_yet(f"entry {column} is {values[column]:.4f}, expected {expected[column]:.4f} = "
                   f"{function}({position} / {base:g}^({2 * (column // 2)}/{dim})): even columns "
                   "take sin, odd columns cos, and both columns of a pair share one angle.")


# --- Exercise 1: the whole table, both layouts ---------------------------------------------------


def _table_cases(seed: int | None = None) -> list[tuple[int, int, float, str]]:
    """(num_positions, dim, base, layout): fixed small cases, then fresh random ones."""
    generator = random.Random(seed)
    # One fixed case with another base, so that an answer ignoring `base` can never pass by luck
    # (the random draws below all land on 10,000 one time in 256).
    cases = [(3, 6, 10000.0, "interleaved"), (3, 6, 10000.0, "half"), (1, 2, 10000.0, "half"),
             (5, 8, 100.0, "half")]
    for layout in ("interleaved", "half", "interleaved", "half"):
        cases.append((generator.randint(2, 300), 2 * generator.randint(2, 64),
                      generator.choice([10.0, 100.0, 10000.0, 500000.0]), layout))
    return cases


def check_sinusoidal_table(function, seed: int | None = None) -> bool:
    """`function(num_positions, dim, base, layout)` must return the sinusoidal table."""
    if unanswered(function):
        return False
    if not callable(function):
        return not_yet("expected a function (num_positions, dim, base, layout) -> a "
                       f"[num_positions, dim] table, got {type(function).__name__}.")
    shortcut = _shortcut(function, _TABLE_FUNCTIONS)
    if shortcut is not None:
        return not_yet(shortcut)
    tolerance = 1e-4
    for num_positions, dim, base, layout in _table_cases(seed):
        expected = sinusoidal_table(num_positions, dim, base, layout).double()
        call = f"({num_positions}, {dim}, {base:g}, {layout!r})"
        result, ran = _run(function, _TABLE_FUNCTIONS, f"for {call}, ",
                           "your function called the course's sinusoidal table; this exercise "
                           "asks you to write it yourself.", _STUB,
                           num_positions, dim, base, layout)
        if not ran:
            return False
        table, problem = as_tensor(result)
        if problem is not None:
            return not_yet(f"for {call}, {problem}")
        if tuple(table.shape) != (num_positions, dim):
            transposed = " (rows and columns swapped?)" if tuple(table.shape) == (
                dim, num_positions) else ""
            return not_yet(f"for {call} the table has shape {list(table.shape)}, expected "
                           f"[{num_positions}, {dim}]: one row per position{transposed}.")
        if torch.allclose(table, expected, atol=tolerance):
            continue
        slip = _slip(table, num_positions, dim, base, layout, tolerance)
        if slip is not None:
            return not_yet(f"for {call}, {slip}")
        gap = (table - expected).abs()
        row, column = divmod(int(gap.nan_to_num(math.inf).argmax()), dim)
        return not_yet(f"for {call}, entry [{row}, {column}] is {table[row, column]:.4f}, "
                       f"expected {expected[row, column]:.4f}.")
    return correct("the paper's table in both layouts, for every size and base tried: "
                   "angles pos · base^(-2i/d), sin and cos of each pair, interleaved or halves.")


# --- Exercise 4: the pairs slower than the context -----------------------------------------------


def _count_slower(dim: int, base: float, length: int, *, exponent: str = "2i/d",
                  turn: float = 2 * math.pi) -> int:
    """How many pairs have a wavelength above `length`; with one deliberate change if asked."""
    pairs = torch.arange(dim // 2, dtype=torch.float64)
    if exponent == "2i/d":
        powers = base ** (2 * pairs / dim)
    elif exponent == "i/d":
        powers = base ** (pairs / dim)
    else:  # tensor2tensor's ladder
        powers = base ** (pairs / max(dim // 2 - 1, 1))
    return int((turn * powers > length).sum())


def _slow_pair_cases(seed: int | None = None) -> list[tuple[int, float, int]]:
    """(dim, base, length): the settings of "Going deeper: why 10,000?", then fresh random ones
    away from any tie."""
    generator = random.Random(seed)
    cases = [(64, 10000.0, 512), (64, 1e6, 512), (64, 10.0, 512), (8, 10000.0, 100)]
    while len(cases) < 8:
        dim = 2 * generator.randint(2, 128)
        base = generator.choice([100.0, 10000.0, 500000.0, 1e6])
        length = generator.randint(16, 20000)
        wavelengths = sinusoidal_wavelengths(dim, base)
        if (wavelengths / length - 1).abs().min() > 1e-6:  # no wavelength within rounding of it
            cases.append((dim, base, length))
    return cases


def _slow_pair_slips(dim: int, base: float, length: int) -> list[tuple[int, str]]:
    """(the count a typical slip gives for this case, the slip in words), in a fixed order."""
    right = _count_slower(dim, base, length)
    columns = "that counts columns, two per pair; count each sin/cos pair once."
    return [
        (_count_slower(dim, base, length, turn=1.0), "the wavelength is 2π / ω_i, not 1 / ω_i: "
         "one full turn of the circle is 2π radians."),
        (_count_slower(dim, base, length, turn=360.0), "a full turn counted as 360: the angle "
         "pos · ω_i is in radians, so one turn is 2π."),
        (_count_slower(dim, base, length, exponent="i/d"), "the frequencies fall too slowly: "
         "pair i has the exponent 2i/d, not i/d."),
        (_count_slower(dim, base, length, exponent="t2t"), "that uses tensor2tensor's spacing, "
         "base^(-i/(d/2 - 1)); the paper's formula is base^(-2i/d)."),
        (dim // 2 - right, "that counts the fast pairs (wavelength up to `length`); the "
         "exercise asks for the slow ones, whose wavelength is longer than `length`."),
        (dim - right, columns),
        (2 * right, columns),
    ]


def check_slow_pairs(function, seed: int | None = None) -> bool:
    """`function(dim, base, length)` must count the pairs whose wavelength exceeds `length`."""
    if unanswered(function):
        return False
    if not callable(function):
        return not_yet("expected a function (dim, base, length) -> a whole number, got "
                       f"{type(function).__name__}.")
    shortcut = _shortcut(function, _TABLE_FUNCTIONS)
    if shortcut is not None:
        return not_yet(shortcut)
    answers = []  # (case, the learner's count)
    for dim, base, length in _slow_pair_cases(seed):
        call = f"({dim}, {base:g}, {length})"
        result, ran = _run(function, _TABLE_FUNCTIONS, f"for {call}, ",
                           "your function called the course's wavelengths or table; this "
                           "exercise asks you to compute them from the formula.", _STUB,
                           dim, base, length)
        if not ran:
            return False
        value = as_number(result)
        if value is None or not math.isfinite(value) or value != int(value):
            return not_yet(f"for {call} expected one whole number (how many pairs), got "
                           f"{result!r:.60}.")
        answers.append(((dim, base, length), int(value)))
    wrong = [(case, value) for case, value in answers if value != _count_slower(*case)]
    if not wrong:
        return correct("pair i turns once every 2π · base^(2i/d) positions, and you counted the "
                       "pairs that do not complete a turn within the context, for every size "
                       "tried.")
    (dim, base, length), value = wrong[0]
    expected = _count_slower(dim, base, length)
    said = f"for ({dim}, {base:g}, {length}) you got {value}, expected {expected}"
    # Name a slip only if it explains every answer, not just this one.
    for index, (_, words) in enumerate(_slow_pair_slips(dim, base, length)):
        if all(_slow_pair_slips(*case)[index][0] == got for case, got in answers):
            return not_yet(f"{said}: {words}")
    return not_yet(f"{said} of the {dim // 2} pairs. Pair i's wavelength is 2π / ω_i with "
                   "ω_i = base^(-2i/d); count the pairs where it is larger than `length`.")


# --- Exercise 2: the shift matrix ----------------------------------------------------------------


def check_shift_matrix(shift_matrix) -> bool:
    """`shift_matrix(k, dim)` must give M with PE(p + k) = M @ PE(p), base 10,000, interleaved."""
    if unanswered(shift_matrix):
        return False
    if not callable(shift_matrix):
        return not_yet("shift_matrix should be a function (k, dim) -> [dim, dim] tensor.")
    shortcut = _shortcut(shift_matrix, _SHIFT_FUNCTIONS)
    if shortcut is not None:
        return not_yet(shortcut)
    generator = random.Random()
    cases = [(1, 4), (5, 8), (-3, 6), (0, 2),
             (generator.randint(-40, 40), 2 * generator.randint(2, 32))]
    for k, dim in cases:
        table = sinusoidal_table(80, dim).double()
        answer, ran = _run(shift_matrix, _SHIFT_FUNCTIONS, f"shift_matrix({k}, {dim}): ",
                           "your function called the course's sinusoidal_shift_matrix; this "
                           "exercise asks you to build the matrix yourself.",
                           "shift_matrix returns None; write its body, then run this cell "
                           "again.", k, dim)
        if not ran:
            return False
        matrix, problem = as_tensor(answer)
        if problem is not None:
            return not_yet(f"shift_matrix({k}, {dim}): {problem}")
        if tuple(matrix.shape) != (dim, dim):
            return not_yet(f"shift_matrix({k}, {dim}) has shape {list(matrix.shape)}, "
                           f"expected [{dim}, {dim}].")
        start, stop = max(0, -k), 80 - max(k, 0)
        shifted = table[start:stop] @ matrix.T  # rows p, mapped
        target = table[start + k:stop + k]      # rows p + k
        gap = (shifted - target).abs().max().item()
        if gap <= 1e-4:
            continue
        if k != 0 and (table[start:stop] @ matrix - target).abs().max().item() <= 1e-4:
            return not_yet(f"for k={k}, dim={dim} your blocks turn the wrong way: you built "
                           "M_{-k}. In each block [[cos t, sin t], [-sin t, cos t]] the sin t "
                           "sits above the diagonal.")
        return not_yet(f"for k={k}, dim={dim}, M @ PE(p) misses PE(p + k) by up to {gap:.3g}. "
                       "Each pair (sin, cos) at angle a must become (sin(a + t), cos(a + t)) "
                       "with t = k · ω_i: [[cos t, sin t], [-sin t, cos t]] in the pair's "
                       "2x2 block.")
    return correct("one 2x2 rotation per pair, turning pair i by k · ω_i: the same matrix for "
                   "every starting position p.")


# --- Exercise 5: the permutation between the layouts --------------------------------------------


def _order_verdict(order, dim: int) -> str | None:
    """None if `order` is right for `dim`, else what is wrong with it."""
    values = as_int_list(order)
    if values is None:
        return (f"expected a flat list of {dim} whole numbers (column indices), got "
                f"{order!r:.60}.")
    expected = layout_permutation(dim).tolist()
    if len(values) != dim:
        return f"for dim={dim} expected {dim} indices (one per column), got {len(values)}."
    if values == expected:
        return None
    if sorted(values) != list(range(dim)):
        return (f"{values} is not a permutation of 0..{dim - 1}: every column must appear "
                "exactly once.")
    inverse = torch.argsort(torch.tensor(expected)).tolist()
    if values == inverse and dim > 2:
        return ("that is the way back (which half column each interleaved column comes from). "
                "Here half[:, j] = interleaved[:, order[j]]: sines first.")
    if values == list(range(1, dim, 2)) + list(range(0, dim, 2)):
        return "the cosines come first; the half layout starts with the sines (even columns)."
    wrong = next(j for j in range(dim) if values[j] != expected[j])
    return (f"for dim={dim}, column {wrong} of the half layout should come from interleaved "
            f"column {expected[wrong]}, not {values[wrong]}: the half layout holds sin of pair "
            "0, 1, ... and then cos of pair 0, 1, ...")


def check_layout_permutation(answer) -> bool:
    """`answer(dim)` gives the column order taking the interleaved table to the half one.

    A plain list is read as the answer for dim = 8.
    """
    if unanswered(answer):
        return False
    if isinstance(answer, numbers.Number) or getattr(answer, "ndim", None) == 0:
        return not_yet(f"expected a list of column indices (or a function of dim that returns "
                       f"one), got the single number {answer!r}.")
    if not callable(answer):
        problem = _order_verdict(answer, 8)
        if problem is not None:
            return not_yet(problem)
        return correct("[0, 2, 4, 6, 1, 3, 5, 7] for dim = 8: the sines (even columns) first, "
                       "then the cosines (odd columns).")
    shortcut = _shortcut(answer, _ORDER_FUNCTIONS)
    if shortcut is not None:
        return not_yet(shortcut)
    for dim in (8, 2, 2 * random.randint(3, 40)):
        order, ran = _run(answer, _ORDER_FUNCTIONS, f"for dim={dim}, ",
                          "your function called the course's layout_permutation; this exercise "
                          "asks you to write it yourself.", _STUB, dim)
        if not ran:
            return False
        problem = _order_verdict(order, dim)
        if problem is not None:
            return not_yet(problem)
    return correct("the even columns (sines) first, then the odd ones (cosines), for every dim "
                   "tried.")
