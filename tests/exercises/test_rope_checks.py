"""The checks of notebook 05's exercises: right answers in several forms pass; each typical
mistake, the forbidden shortcut and a bad type get their own sentence; nothing raises."""

import math

import numpy as np
import pytest
import torch

import helpers
from helpers.exercises import rope as checks

# Bound at import, as a learner's `from helpers import ...` cell binds them in the notebook.
from helpers import apply_rope  # noqa: E402
from helpers import layout_permutation as sinusoidal_order  # noqa: E402
from helpers import rope_frequencies, rope_layout_permutation  # noqa: E402
from helpers import scaled_dot_product_attention  # noqa: E402

torch.set_num_threads(1)


def verdict(capsys, check, answer):
    """(returned verdict, printed output); the check must never raise."""
    result = check(answer)
    return result, capsys.readouterr().out


def rejected(capsys, check, answer, *words):
    ok, out = verdict(capsys, check, answer)
    assert not ok and out.startswith("Not yet: "), out
    for word in words:
        assert word in out, out


# Written independently of helpers/rope.py, as a learner would.

def thetas(d, base=10000.0, exponent=2.0):
    return base ** (-exponent * torch.arange(d // 2, dtype=torch.float64) / d)


def complex_rope(x, positions, base=10000.0, sign=1.0, unit=1.0, exponent=2.0):
    d = x.shape[-1]
    angles = sign * positions.double()[:, None] * thetas(d, base, exponent) * unit
    pairs = torch.view_as_complex(x.double().unflatten(-1, (d // 2, 2)).contiguous())
    return torch.view_as_real(pairs * torch.exp(1j * angles)).flatten(-2)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def half_rope(x, positions, base=10000.0, sign=1.0, unit=1.0, exponent=2.0):
    angles = positions.double()[:, None] * thetas(x.shape[-1], base, exponent) * unit
    cos, sin = angles.cos().repeat(1, 2), angles.sin().repeat(1, 2)
    return x * cos + sign * rotate_half(x) * sin


# --------------------------------------------------------------------------------------------
# Exercises 3 and 1: RoPE with complex numbers, and in the half layout
# --------------------------------------------------------------------------------------------

def complex_float32(x, positions):
    d = x.shape[-1]
    angles = positions.float()[:, None] * thetas(d).float()
    pairs = torch.view_as_complex(x.float().unflatten(-1, (d // 2, 2)).contiguous())
    return torch.view_as_real(pairs * torch.polar(torch.ones_like(angles), angles)).flatten(-2)


def complex_real_formula(x, positions):
    angles = positions.double()[:, None] * thetas(x.shape[-1])
    a, b = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = a * angles.cos() - b * angles.sin()
    out[..., 1::2] = a * angles.sin() + b * angles.cos()
    return out.numpy()


@pytest.mark.parametrize("answer", [complex_rope, complex_float32, complex_real_formula])
def test_complex_right_answers(capsys, answer):
    ok, out = verdict(capsys, checks.check_complex_rope, answer)
    assert ok and out.startswith("Correct: "), out


@pytest.mark.parametrize("answer, words", [
    (lambda x, p: complex_rope(x, p, sign=-1.0), "e^(+i·m·θᵢ)"),
    (lambda x, p: half_rope(x, p), "half layout"),
    (lambda x, p: complex_rope(x, p, exponent=1.0), "not base^(−i/d)"),
    (lambda x, p: complex_rope(x, p, unit=math.pi / 180), "degrees"),
    (lambda x, p: x, "nothing turned"),
    (lambda x, p: complex_rope(x, p + 1), "entry"),
    (lambda x, p: complex_rope(x, torch.arange(x.shape[-2])), "positions passed in were ignored"),
    (lambda x, p: x[..., :4], "expected shape"),
    (lambda x, p: None, None),
    (lambda x, p: x.numpy().tolist()[0][0] + "a", "TypeError"),
])
def test_complex_typical_mistakes(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_complex_rope, answer)
    assert not ok
    if words is None:
        assert out.startswith("Not done yet: ")
    else:
        assert out.startswith("Not yet: ") and words in out, out


def test_complex_shortcut_refused(capsys):
    rejected(capsys, checks.check_complex_rope, lambda x, p: apply_rope(x, p),
             "course's own implementation")
    rejected(capsys, checks.check_complex_rope, lambda x, p: helpers.rope.apply_rope(x, p),
             "course's own implementation")


def half_with_course_frequencies(x, positions, base):
    angles = positions[:, None] * rope_frequencies(x.shape[-1], base).double()
    cos, sin = torch.cat([angles.cos(), angles.cos()], -1), torch.cat([angles.sin()] * 2, -1)
    return x * cos + rotate_half(x) * sin


def half_by_pairs(x, positions, base):
    d = x.shape[-1]
    a, b = x[..., : d // 2], x[..., d // 2:]
    angles = positions.double()[:, None] * thetas(d, base)
    return torch.cat([a * angles.cos() - b * angles.sin(), b * angles.cos() + a * angles.sin()],
                     dim=-1)


@pytest.mark.parametrize("answer", [half_rope, half_with_course_frequencies, half_by_pairs,
                                    lambda x, p, b: half_rope(x.float(), p, b)])
def test_half_right_answers(capsys, answer):
    ok, out = verdict(capsys, checks.check_rope_half, answer)
    assert ok and out.startswith("Correct: "), out


def half_repeated_pair_by_pair(x, positions, base):  # GPT-J's repetition with rotate_half
    angles = positions.double()[:, None] * thetas(x.shape[-1], base)
    cos = angles.cos().repeat_interleave(2, -1)
    sin = angles.sin().repeat_interleave(2, -1)
    return x * cos + rotate_half(x) * sin


def half_cos_not_repeated(x, positions, base):
    angles = positions.double()[:, None] * thetas(x.shape[-1], base)
    return x * angles.cos() + rotate_half(x) * angles.sin()


@pytest.mark.parametrize("answer, words", [
    (lambda x, p, b: complex_rope(x, p, b), "interleaved layout"),
    (lambda x, p, b: half_rope(x, p, b, sign=-1.0), "rotate_half(x) is cat(−x₂, x₁)"),
    (lambda x, p, b: half_rope(x, p, b, exponent=1.0), "not base^(−i/d)"),
    (lambda x, p, b: half_rope(x, p, b, unit=math.pi / 180), "degrees"),
    (lambda x, p, b: half_rope(x, p, 10000.0), "ignore `base`"),
    (half_cos_not_repeated, "cat([cos, cos], -1)"),
    (half_repeated_pair_by_pair, "repeat_interleave"),
    (lambda x, p, b: half_rope(x, torch.arange(x.shape[-2]), b), "positions passed in"),
    (lambda x, p, b: x.transpose(-1, -2), "expected shape"),
    (lambda x, p, b: "rotated", "expected a tensor"),
])
def test_half_typical_mistakes(capsys, answer, words):
    rejected(capsys, checks.check_rope_half, answer, words)


def test_half_shortcut_refused(capsys):
    rejected(capsys, checks.check_rope_half, lambda x, p, b: apply_rope(x, p, b, layout="half"),
             "course's own implementation")

    def sneaky(x, p, b):  # reaches the course's function through the package at call time
        return getattr(helpers, "apply_" + "rope")(x, p, b, layout="half")
    rejected(capsys, checks.check_rope_half, sneaky, "course's own implementation")


def half_first_dimension_slices(x, positions, base):
    """A learner's answer written for x of shape [T, d]: x[:, :d//2] slices dimension 1."""
    d = x.shape[-1]
    angles = positions.double()[:, None] * thetas(d, base)
    cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
    return x * cos + torch.cat([-x[:, d // 2:], x[:, :d // 2]], dim=-1) * sin


def half_d_from_dimension_1(x, positions, base):
    """Right for [T, d], but takes d from x.shape[1]: a crash (or wrong values) with a batch."""
    d = x.shape[1]
    angles = positions.double()[:, None] * thetas(d, base)
    cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
    return x * cos + torch.cat([-x[..., d // 2:], x[..., :d // 2]], dim=-1) * sin


def complex_first_dimension_slices(x, positions):
    angles = positions.double()[:, None] * thetas(x.shape[-1])
    a, b = x[:, 0::2], x[:, 1::2]
    out = torch.empty_like(x)
    out[:, 0::2] = a * angles.cos() - b * angles.sin()
    out[:, 1::2] = a * angles.sin() + b * angles.cos()
    return out


def half_leading_dimensions_swapped(x, positions, base):  # right shape, wrong values
    return half_rope(x.flip(0), positions, base) if x.dim() > 2 else half_rope(x, positions, base)


@pytest.mark.parametrize("check, answer", [
    (checks.check_rope_half, half_first_dimension_slices),
    (checks.check_rope_half, half_d_from_dimension_1),
    (checks.check_rope_half, half_leading_dimensions_swapped),
    (checks.check_complex_rope, complex_first_dimension_slices),
])
def test_answers_right_only_on_one_matrix_are_told_about_leading_dimensions(capsys, check, answer):
    """Exercise 1 says x is [..., T, d]; a slice written for [T, d] fails on a batch, and the
    message names the leading dimensions and the slice that works."""
    rejected(capsys, check, answer, "leading dimensions [", "x[..., :d // 2]")


def test_leading_dimensions_are_not_blamed_for_other_slips(capsys):
    rejected(capsys, checks.check_rope_half, lambda x, p, b: half_rope(x, p, 10000.0),
             "ignore `base`")
    ok, out = verdict(capsys, checks.check_rope_half, lambda x, p, b: half_rope(x, p, 10000.0))
    assert "leading dimensions" not in out, out


def test_rope_cases_are_fresh_and_varied():
    one, two = checks._rope_cases(1, None), checks._rope_cases(2, None)
    assert any(a[0].shape != b[0].shape for a, b in zip(one, two))
    assert any(not p.dtype.is_floating_point for _, p, _ in one)
    assert any(p.dtype.is_floating_point for _, p, _ in one)
    assert {x.dim() for x, _, _ in one} >= {2, 3, 4}


# --------------------------------------------------------------------------------------------
# Exercise 4: the layout permutation
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    lambda d: list(range(0, d, 2)) + list(range(1, d, 2)),
    lambda d: torch.arange(d).view(-1, 2).T.flatten(),
    lambda d: np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)]),
    lambda d: [*range(0, d, 2), *range(1, d, 2)],
    lambda d: torch.arange(d).reshape(d // 2, 2).T.reshape(-1).float(),
])
def test_order_right_answers_in_any_form(capsys, answer):
    ok, out = verdict(capsys, checks.check_layout_order, answer)
    assert ok and out.startswith("Correct: "), out


@pytest.mark.parametrize("answer, words", [
    (lambda d: [i // 2 + (d // 2) * (i % 2) for i in range(d)], "inverse order"),
    (lambda d: list(range(1, d, 2)) + list(range(0, d, 2)), "odd coordinates come first"),
    (lambda d: list(range(1, d + 1, 2)) + list(range(2, d + 1, 2)), "does not exist"),
    (lambda d: list(range(0, d + 1, 2)) + list(range(1, d, 2)), "index 8 does not exist"),
    (lambda d: list(range(0, d - 1, 2)) + list(range(1, d - 1, 2)), "expected 8 indices"),
    (lambda d: list(range(0, d, 2)) * 2, "coordinate 1 is missing"),
    (lambda d: list(range(d)), "leaves every coordinate"),
    (lambda d: [0, 2, 1, 3, 4, 6, 5, 7][:d] if d == 8 else list(range(d)), "new place i"),
    (lambda d: "0246", "whole numbers"),
    (lambda d: [0.5] * d, "whole numbers"),
])
def test_order_typical_mistakes(capsys, answer, words):
    rejected(capsys, checks.check_layout_order, answer, words)


def test_order_shortcuts_refused(capsys):
    rejected(capsys, checks.check_layout_order, lambda d: rope_layout_permutation(d),
             "course's own implementation")
    rejected(capsys, checks.check_layout_order, lambda d: sinusoidal_order(d),
             "course's own implementation")
    rejected(capsys, checks.check_layout_order, lambda d: helpers.rope_layout_permutation(d),
             "course's own implementation")


# --------------------------------------------------------------------------------------------
# Exercise 2: RoPE inside an attention head
# --------------------------------------------------------------------------------------------

def head_by_hand(x, W_q, W_k, W_v):
    q, k, v = x @ W_q.T, x @ W_k.T, x @ W_v.T
    positions = torch.arange(len(x))
    q, k = complex_rope(q, positions), complex_rope(k, positions)
    scores = q @ k.T / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), -math.inf)
    return scores.softmax(-1) @ v


def head_with_helpers(x, W_q, W_k, W_v):
    return scaled_dot_product_attention(apply_rope(x @ W_q.T), apply_rope(x @ W_k.T),
                                        x @ W_v.T, causal=True)  # (outputs, weights)


def head_shifted(x, W_q, W_k, W_v):  # positions 100.. give the same scores: RoPE is relative
    positions = torch.arange(len(x)) + 100
    return scaled_dot_product_attention(apply_rope(x @ W_q.T, positions),
                                        apply_rope(x @ W_k.T, positions), x @ W_v.T,
                                        causal=True)[0].float()


@pytest.mark.parametrize("answer", [head_by_hand, head_with_helpers, head_shifted])
def test_head_right_answers(capsys, answer):
    ok, out = verdict(capsys, checks.check_rotary_head, answer)
    assert ok and out.startswith("Correct: "), out


def slipped_head(**change):
    return lambda x, W_q, W_k, W_v: checks._head(x, W_q, W_k, W_v, **change)


@pytest.mark.parametrize("answer, words", [
    (slipped_head(rotate="qkv"), "values were turned too"),
    (slipped_head(scale=False), "√d"),
    (slipped_head(causal=False), "causal mask"),
    (slipped_head(before=True), "before the projections"),
    (slipped_head(rotate="q"), "only the queries"),
    (slipped_head(rotate=""), "no positions"),
    (slipped_head(layout="half"), "half layout"),
    (lambda x, W_q, W_k, W_v: x @ W_q, "x @ W_q.T"),
    (lambda x, W_q, W_k, W_v: head_by_hand(x, W_q, W_k, W_v).T, "expected shape"),
    (lambda x, W_q, W_k, W_v: head_by_hand(x, W_q, W_k, W_v) * 2, "entry"),
    (lambda x, W_q, W_k, W_v: {"out": 1}, "expected a tensor"),
])
def test_head_typical_mistakes(capsys, answer, words):
    rejected(capsys, checks.check_rotary_head, answer, words)


# --------------------------------------------------------------------------------------------
# Exercise 5: GPT-NeoX's partial rotary
# --------------------------------------------------------------------------------------------

def neox_rope(x, positions, rotary_pct, *, freq_dim=None, last=False, interleaved=False,
              sign=1.0):
    """Written independently: turn the first r = int(d·pct) coordinates, half layout."""
    d = x.shape[-1]
    r = int(d * rotary_pct)
    start = d - r if last else 0
    part = x[..., start:start + r]
    angles = sign * positions.double()[:, None] * thetas(freq_dim or r)[: r // 2]
    if interleaved:
        pairs = torch.view_as_complex(part.double().unflatten(-1, (r // 2, 2)).contiguous())
        turned = torch.view_as_real(pairs * torch.exp(1j * angles)).flatten(-2)
    else:
        cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
        turned = part * cos + rotate_half(part) * sin
    return torch.cat((x[..., :start], turned, x[..., start + r:]), dim=-1)


def neox_by_pairs_float32(x, positions, rotary_pct):
    r = int(x.shape[-1] * rotary_pct)
    angles = positions.float()[:, None] * thetas(r).float()
    a, b = x[..., : r // 2].float(), x[..., r // 2: r].float()
    return torch.cat([a * angles.cos() - b * angles.sin(), b * angles.cos() + a * angles.sin(),
                      x[..., r:].float()], dim=-1)


def neox_with_course_frequencies(x, positions, rotary_pct):  # allowed: only apply_rope is not
    r = int(x.shape[-1] * rotary_pct)
    angles = positions.double()[:, None] * rope_frequencies(r).double()
    cos, sin = angles.cos().repeat(1, 2), angles.sin().repeat(1, 2)
    return torch.cat([x[..., :r] * cos + rotate_half(x[..., :r]) * sin, x[..., r:]], -1)


@pytest.mark.parametrize("answer", [neox_rope, neox_by_pairs_float32, neox_with_course_frequencies,
                                    lambda x, p, f: neox_rope(x, p, f).numpy()])
def test_partial_right_answers(capsys, answer):
    ok, out = verdict(capsys, checks.check_partial_rotary, answer)
    assert ok and out.startswith("Correct: "), out


@pytest.mark.parametrize("answer, words", [
    (lambda x, p, f: neox_rope(x, p, f, freq_dim=x.shape[-1]), "from the head size d = 96"),
    (lambda x, p, f: neox_rope(x, p, f, last=True), "the last r coordinates were turned"),
    (lambda x, p, f: neox_rope(x, p, f, interleaved=True), "interleaved layout (GPT-J's)"),
    (lambda x, p, f: neox_rope(x, p, f, interleaved=True, freq_dim=x.shape[-1]),
     "interleaved layout with frequencies from the head size"),
    (lambda x, p, f: neox_rope(x, p, f, sign=-1.0), "wrong way"),
    (lambda x, p, f: neox_rope(x, p, 1.0), "the whole head turned"),
    (lambda x, p, f: x.clone(), "nothing turned"),
    (lambda x, p, f: neox_rope(x, p, f)[..., : int(x.shape[-1] * f)], "pass through unchanged"),
    (lambda x, p, f: torch.cat([neox_rope(x, p, f)[..., :24], 2 * x[..., 24:]], -1),
     "last 72 coordinates changed"),
    (lambda x, p, f: neox_rope(x, p + 1, f), "entry"),
    (lambda x, p, f: "turned", "expected a tensor"),
])
def test_partial_typical_mistakes(capsys, answer, words):
    rejected(capsys, checks.check_partial_rotary, answer, words)


def test_partial_shortcut_refused(capsys):
    rejected(capsys, checks.check_partial_rotary,
             lambda x, p, f: apply_rope(x, p, layout="half", rotary_dim=int(x.shape[-1] * f)),
             "course's own implementation")

    def sneaky(x, p, f):
        return getattr(helpers, "apply_" + "rope")(x, p, layout="half",
                                                   rotary_dim=int(x.shape[-1] * f))
    rejected(capsys, checks.check_partial_rotary, sneaky, "course's own implementation")


def test_partial_cases_are_fresh_and_varied():
    one, two = checks._partial_cases(1), checks._partial_cases(2)
    assert any(a[0].shape != b[0].shape for a, b in zip(one, two))
    assert any(p.dtype.is_floating_point for _, p, _ in one)
    assert any(f < 1 for _, _, f in one[1:]) and one[-1][2] == 1.0
    assert all(int(x.shape[-1] * f) % 2 == 0 for x, _, f in one)


# --------------------------------------------------------------------------------------------
# Every check: None, a stub, a non-function, a crash
# --------------------------------------------------------------------------------------------

ALL_CHECKS = [checks.check_complex_rope, checks.check_rope_half, checks.check_layout_order,
              checks.check_rotary_head, checks.check_partial_rotary]


@pytest.mark.parametrize("check", ALL_CHECKS)
def test_unanswered_and_stubs_are_not_done(capsys, check):
    ok, out = verdict(capsys, check, None)
    assert not ok and out.startswith("Not done yet: ")
    ok, out = verdict(capsys, check, lambda *args: None)
    assert not ok and out.startswith("Not done yet: ") and "returns None" in out


@pytest.mark.parametrize("check", ALL_CHECKS)
@pytest.mark.parametrize("answer", [42, "apply_rope", [1, 2, 3]])
def test_non_functions_get_a_sentence(capsys, check, answer):
    rejected(capsys, check, answer, "expected a function")


@pytest.mark.parametrize("check", ALL_CHECKS)
def test_crashes_are_reported(capsys, check):
    def crash(*args):
        raise KeyError("oops")
    rejected(capsys, check, crash, "KeyError")


@pytest.mark.parametrize("check", ALL_CHECKS)
def test_the_course_functions_are_back_after_a_check(capsys, check):
    check(lambda *args: None)
    assert helpers.apply_rope is apply_rope and helpers.rope.apply_rope is apply_rope
    assert helpers.rope_layout_permutation is rope_layout_permutation
