"""Checks for the exercises of notebook 06 (relative position bias).

Each check prints its verdict and the reason (see `feedback`) and returns True or False; it never
raises on a wrong or unfinished answer.
"""

from __future__ import annotations

import math

import torch

from helpers.relative import alibi_slopes, relative_position_index, t5_relative_position_bucket

from .feedback import correct, not_done, not_yet, unanswered

__all__ = [
    "check_relative_position_index",
    "T5_EXERCISE_POSITIONS",
    "check_t5_buckets",
    "check_alibi_slopes",
    "check_shaw_logits",
]


_STUB = "returns None; write its body, then run this cell again."


def _call(function, *args):
    """(result, None), or (None, what went wrong) if the learner's function raised or is a stub."""
    try:
        result = function(*args)
    except Exception as error:  # a learner's bug is a wrong answer, not a crash of the check
        return None, f"raised {type(error).__name__}: {error}"
    return (None, _STUB) if result is None else (result, None)


def _report(call: str, error: str) -> bool:
    """A stub (still returning None) is not done yet; any other failure is a wrong answer."""
    return (not_done if error == _STUB else not_yet)(f"{call} {error}")


def _as_tensor(value):
    try:
        return torch.as_tensor(value)
    except Exception:
        return None


def check_relative_position_index(index_fn) -> bool:
    """`index_fn(seq_len, max_distance)` must give clip(j - i, -k, k) + k for every (i, j)."""
    if unanswered(index_fn):
        return False
    if not callable(index_fn):
        not_yet("pass a function index_fn(seq_len, max_distance), not its result.")
        return False
    for seq_len, k in [(5, 2), (4, 0), (3, 5), (9, 3)]:
        expected = relative_position_index(seq_len, k)
        got, error = _call(index_fn, seq_len, k)
        if error:
            return _report(f"index_fn({seq_len}, {k})", error)
        got = _as_tensor(got)
        if got is None or tuple(got.shape) != tuple(expected.shape):
            shape = None if got is None else tuple(got.shape)
            not_yet(f"index_fn({seq_len}, {k}) should be a {seq_len}×{seq_len} tensor, "
                    f"got shape {shape}.")
            return False
        differs = (got.long() != expected).nonzero()
        if len(differs):
            i, j = differs[0].tolist()
            not_yet(f"for T={seq_len}, k={k}, entry (i={i}, j={j}) is {got[i, j].item()}, "
                    f"expected clip({j} - {i}, -{k}, {k}) + {k} = {expected[i, j].item()}. "
                    "Rows are queries i, columns keys j.")
            return False
    correct("every distance j - i is clipped to [-k, k] and shifted by k to a row 0..2k.")
    return True


# The exercise: causal T5 with 32 buckets and max_distance 128 (a decoder's self-attention).
T5_EXERCISE_POSITIONS = (0, -3, -15, -16, -20, -100, -500, 4)


def check_t5_buckets(buckets) -> bool:
    """`buckets` maps each relative position in T5_EXERCISE_POSITIONS to its causal bucket."""
    if unanswered(buckets):
        return False
    if not isinstance(buckets, dict):
        not_yet("give a dict {relative position: bucket}.")
        return False
    missing = [p for p in T5_EXERCISE_POSITIONS if buckets.get(p) is None]
    if missing:
        not_done(f"fill in the bucket for relative positions {missing}.")
        return False
    expected = t5_relative_position_bucket(torch.tensor(T5_EXERCISE_POSITIONS),
                                           bidirectional=False).tolist()
    right = True
    for position, bucket in zip(T5_EXERCISE_POSITIONS, expected):
        if buckets[position] == bucket:
            continue
        right = False
        distance = max(-position, 0)
        if position > 0:
            why = "a future key: causal bucketing counts it as distance 0"
        elif distance < 16:
            why = f"distance {distance} < 16 = max_exact gets its own bucket"
        else:
            raw = 16 + math.log(distance / 16) / math.log(128 / 16) * 16
            why = (f"distance {distance} >= 16: 16 + floor(ln({distance}/16) / ln(128/16) × 16) "
                   f"= 16 + floor({raw - 16:.2f}), capped at 31")
        not_yet(f"relative position {position} goes to bucket {bucket}, not "
                f"{buckets[position]} ({why}).")
    if right:
        correct("exact buckets below distance 16, logarithmic ones up to 128, "
                "and everything farther shares bucket 31.")
    return right


def check_alibi_slopes(slopes_fn) -> bool:
    """`slopes_fn(num_heads)` must give the ALiBi slopes, for powers of two and other counts."""
    if unanswered(slopes_fn):
        return False
    if not callable(slopes_fn):
        not_yet("pass a function slopes_fn(num_heads), not its result.")
        return False
    for num_heads in [1, 2, 4, 8, 16, 3, 5, 6, 12, 20, 24]:
        expected = alibi_slopes(num_heads)
        got, error = _call(slopes_fn, num_heads)
        if error:
            return _report(f"slopes_fn({num_heads})", error)
        got = _as_tensor(got)
        if got is None or got.numel() != num_heads:
            count = None if got is None else got.numel()
            not_yet(f"slopes_fn({num_heads}) should give {num_heads} slopes, got {count}.")
            return False
        got = got.reshape(-1).double()
        close = torch.isclose(got, expected.double(), rtol=1e-5, atol=0)
        if not close.all():
            head = int((~close).nonzero()[0])
            power = num_heads & (num_heads - 1) == 0
            rule = ("a power of two: slopes 2^(-8h/n) for h = 1..n" if power else
                    "not a power of two: the slopes of the closest lower power of two m, then "
                    "every other slope of the 2m sequence (slopes_2m[0::2]) until there are n")
            not_yet(f"for {num_heads} heads, head {head + 1} has slope {got[head]:.6g}, "
                    f"expected {expected[head]:.6g} ({num_heads} is {rule}). "
                    f"Expected all: {[round(s, 5) for s in expected.tolist()]}")
            return False
    correct("powers of two get 2^(-8/n), 2^(-16/n), ...; other counts borrow every other "
            "slope of the next power of two.")
    return True


def check_shaw_logits(logits_fn) -> bool:
    """`logits_fn(q, k, relative_key, max_distance)` -> e `[T, T]` with
    e_ij = q_i · (k_j + relative_key[clip(j - i, -k, k) + k]) / √d."""
    if unanswered(logits_fn):
        return False
    if not callable(logits_fn):
        not_yet("pass a function logits_fn(q, k, relative_key, max_distance).")
        return False
    generator = torch.Generator().manual_seed(6)
    for seq_len, dim, k in [(6, 4, 2), (5, 8, 0), (3, 2, 7)]:
        q = torch.randn(seq_len, dim, generator=generator)
        keys = torch.randn(seq_len, dim, generator=generator)
        table = torch.randn(2 * k + 1, dim, generator=generator)
        index = relative_position_index(seq_len, k)
        expected = (q @ keys.T + (q[:, None, :] * table[index]).sum(-1)) / math.sqrt(dim)
        got, error = _call(logits_fn, q, keys, table, k)
        if error:
            return _report(f"logits_fn (T={seq_len}, d={dim}, k={k})", error)
        got = _as_tensor(got)
        if got is None or tuple(got.shape) != (seq_len, seq_len):
            shape = None if got is None else tuple(got.shape)
            not_yet(f"expected a {seq_len}×{seq_len} tensor of logits, got shape {shape}.")
            return False
        close = torch.isclose(got.double(), expected.double(), rtol=1e-4, atol=1e-5)
        if not close.all():
            i, j = (~close).nonzero()[0].tolist()
            no_scale = (q[i] @ (keys[j] + table[index[i, j]])).item()
            hint = (" (looks unscaled: divide by √d)" if abs(got[i, j].item() - no_scale) < 1e-4
                    else "")
            not_yet(f"e[{i}, {j}] is {got[i, j].item():.4f}, expected "
                    f"{expected[i, j].item():.4f} (T={seq_len}, d={dim}, k={k}){hint}. "
                    f"Row {index[i, j].item()} of the table belongs to pair ({i}, {j}).")
            return False
    correct("each logit adds q_i · aK_ij, with aK_ij the table row of the clipped distance.")
    return True
