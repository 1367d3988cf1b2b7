"""Checks for the exercises of notebook 06 (relative position bias).

Each check runs the learner's function on fresh inputs with the course's own implementation out
of reach, prints its verdict and the reason (see `feedback`) and returns True or False. None of
them raises: a stub, a wrong type or a crash inside the learner's code each get one sentence, and
the typical mistakes (the other sign, a missing shift, slopes in the wrong order, ...) are named.
"""

from __future__ import annotations

import math
import random

import torch

from helpers.relative import (_slopes, alibi_slopes, relative_position_index,
                              relative_positions, t5_relative_position_bucket)

from .answers import as_tensor, refers_to, report, run_hidden
from .feedback import correct, not_yet, unanswered

__all__ = [
    "check_relative_position_index",
    "check_t5_bucket",
    "check_alibi_slopes",
    "check_shaw_logits",
]


def _refuse_shortcut(function, *forbidden) -> bool:
    """True, after saying so, if the learner's function reaches a course function by name."""
    name = refers_to(function, *forbidden)
    if name is not None:
        not_yet(f"your function calls `{name}`, the course's own answer; "
                "write it with torch operations instead.")
        return True
    return False


# --------------------------------------------------------------------------------------------
# 1. Shaw's clipped index
# --------------------------------------------------------------------------------------------

_INDEX_HIDDEN = ("helpers.relative.relative_position_index", "helpers.relative.relative_positions")


def _index_mistake(got: torch.Tensor, seq_len: int, k: int) -> str:
    """The name of a typical mistake that produces `got`, or a generic pointer."""
    j_minus_i = torch.arange(seq_len)[None, :] - torch.arange(seq_len)[:, None]
    variants = {
        "rows and columns swapped (you computed i - j; the distance is key minus query, j - i, "
        "so a key in the past has a row below k)": (-j_minus_i).clamp(-k, k) + k,
        "the shift is missing: clip(j - i, -k, k) runs from -k to k, add k to get a row "
        "0..2k": j_minus_i.clamp(-k, k),
        "not clipped: every distance beyond k must share the edge row (0 or 2k)": j_minus_i + k,
    }
    for why, variant in variants.items():
        if torch.equal(got, variant):
            return why
    return ""


def check_relative_position_index(index_fn) -> bool:
    """`index_fn(seq_len, max_distance)` must give clip(j - i, -k, k) + k for every (i, j)."""
    if unanswered(index_fn):
        return False
    if not callable(index_fn):
        return not_yet("pass a function index_fn(seq_len, k), not its result.")
    if _refuse_shortcut(index_fn, relative_position_index, relative_positions):
        return False
    rng = random.Random()
    cases = [(5, 2), (4, 0), (3, 5), (9, 3), (rng.randint(10, 40), rng.randint(1, 12))]
    for seq_len, k in cases:
        expected = relative_position_index(seq_len, k)
        got, error = run_hidden(index_fn, _INDEX_HIDDEN, seq_len, k)
        if error:
            return report(f"index_fn({seq_len}, {k})", error)
        got, problem = as_tensor(got, shape=(seq_len, seq_len))
        if problem:
            return not_yet(f"index_fn({seq_len}, {k}): {problem} Rows are queries, columns keys.")
        if got.ne(got.round()).any():
            return not_yet(f"index_fn({seq_len}, {k}) holds fractions; table rows are whole "
                           "numbers.")
        got = got.long()
        if torch.equal(got, expected):
            continue
        why = _index_mistake(got, seq_len, k)
        i, j = (got != expected).nonzero()[0].tolist()
        return not_yet(f"for T={seq_len}, k={k}, entry (i={i}, j={j}) is {got[i, j].item()}, "
                       f"expected clip({j} - {i}, -{k}, {k}) + {k} = {expected[i, j].item()}"
                       + (f": {why}." if why else ". Rows are queries i, columns keys j."))
    return correct("every distance j - i is clipped to [-k, k] and shifted by k to a row 0..2k, "
                   f"checked on {len(cases)} sizes including k = 0 and k > T.")


# --------------------------------------------------------------------------------------------
# 2. T5's bucket function
# --------------------------------------------------------------------------------------------

_T5_HIDDEN = ("helpers.relative.t5_relative_position_bucket",)
# (bidirectional, num_buckets, max_distance): T5's defaults both ways, then other settings.
T5_SETTINGS = [(True, 32, 128), (False, 32, 128), (True, 64, 256), (False, 16, 50),
               (True, 10, 20), (False, 8, 20), (False, 32, 1000), (True, 12, 100)]
T5_DISTANCES = 4096


def _t5_variant(relative_position: torch.Tensor, bidirectional: bool, num_buckets: int,
                max_distance: int, mistake: str) -> torch.Tensor:
    """T5's rule with one typical mistake built in (the names are those of `_T5_MISTAKES`)."""
    halve = bidirectional and mistake != "no_halving"
    per_direction = num_buckets // 2 if halve else num_buckets
    bucket = torch.zeros_like(relative_position)
    if bidirectional:
        if mistake != "no_offset":
            bucket = bucket + (relative_position > 0).long() * per_direction
        distance = relative_position.abs()
    else:
        distance = relative_position.abs() if mistake == "abs_causal" else (
            -relative_position).clamp(min=0)
    max_exact = per_direction // 2
    ratio = torch.log(distance.clamp(min=max_exact).double() / max_exact)
    scale = {"scale": per_direction, "half_scale": max_exact}.get(mistake,
                                                                 per_direction - max_exact)
    raw = ratio / math.log(max_distance / max_exact) * scale
    large = max_exact + (raw.round() if mistake == "round" else raw.floor()).long()
    if mistake != "no_cap":
        large = large.clamp(max=per_direction - 1)
    return bucket + torch.where(distance < max_exact, distance, large)


_T5_MISTAKES = {
    "sign": "you measured query minus key; T5's relative position is key minus query (j - i), "
            "so keys in the past are negative",
    "no_halving": "bidirectional T5 splits num_buckets into two halves, num_buckets // 2 per "
                  "direction, and the exact range is half of that",
    "no_offset": "keys after the query (positive j - i) need their own half: add "
                 "num_buckets // 2 to their bucket",
    "abs_causal": "a causal decoder counts only the past: future keys (positive j - i) go to "
                  "bucket 0, not to the bucket of their distance",
    "no_cap": "every distance past the logarithmic range shares the last bucket of its "
              "direction: cap the logarithmic bucket at n - 1",
    "round": "the logarithmic bucket is rounded down (floor, or .long() on a positive number), "
             "not to the nearest integer",
    "scale": "the logarithmic part spreads over the n - n // 2 buckets left after the exact "
             "ones: multiply by n - max_exact, not by n",
    "half_scale": "the logarithmic part spreads over the n - n // 2 buckets left after the exact "
                  "ones; for odd n that is one more than n // 2: multiply by n - max_exact",
}


def _t5_mistake(got: torch.Tensor, positions: torch.Tensor, setting) -> str:
    bidirectional, num_buckets, max_distance = setting
    for mistake, why in _T5_MISTAKES.items():
        if mistake == "sign":
            variant = t5_relative_position_bucket(-positions, *setting)
        elif mistake in ("no_halving", "no_offset") and not bidirectional:
            continue
        elif mistake == "abs_causal" and bidirectional:
            continue
        else:
            variant = _t5_variant(positions, *setting, mistake)
        if torch.equal(got, variant):
            return why
    return ""


def check_t5_bucket(bucket_fn) -> bool:
    """`bucket_fn(relative_position, bidirectional, num_buckets, max_distance)` -> T5's buckets.

    Run on every relative position from -4096 to 4096 (a LongTensor), for T5's defaults both
    ways and other settings, with the course's `t5_relative_position_bucket` out of reach.
    """
    if unanswered(bucket_fn):
        return False
    if not callable(bucket_fn):
        return not_yet("pass a function bucket_fn(relative_position, bidirectional, "
                       "num_buckets, max_distance), not its result.")
    if _refuse_shortcut(bucket_fn, t5_relative_position_bucket):
        return False
    positions = torch.arange(-T5_DISTANCES, T5_DISTANCES + 1)
    for setting in T5_SETTINGS:
        bidirectional, num_buckets, max_distance = setting
        call = (f"bucket_fn(positions, bidirectional={bidirectional}, "
                f"num_buckets={num_buckets}, max_distance={max_distance})")
        expected = t5_relative_position_bucket(positions, *setting)
        got, error = run_hidden(bucket_fn, _T5_HIDDEN, positions.clone(), *setting)
        if error:
            return report(call, error)
        got, problem = as_tensor(got, shape=tuple(positions.shape))
        if problem:
            return not_yet(f"{call}: {problem} Return one bucket per relative position.")
        if got.ne(got.round()).any():
            return not_yet(f"{call} returned fractions; buckets are whole numbers "
                           "(round the logarithmic part down).")
        got = got.long()
        if torch.equal(got, expected):
            continue
        why = _t5_mistake(got, positions, setting)
        where = int((got != expected).nonzero()[0])
        position = positions[where].item()
        return not_yet(f"{call}: relative position {position} went to bucket "
                       f"{got[where].item()}, expected {expected[where].item()}"
                       + (f". {why[0].upper()}{why[1:]}." if why else
                          " (see the bucket rule in the T5 section)."))
    return correct(f"all {len(T5_SETTINGS)} settings agree with T5's rule on every relative "
                   f"position from -{T5_DISTANCES} to {T5_DISTANCES}, bidirectional and causal.")


# --------------------------------------------------------------------------------------------
# 3. ALiBi slopes for any head count
# --------------------------------------------------------------------------------------------

_ALIBI_HIDDEN = ("helpers.relative.alibi_slopes", "helpers.relative._slopes",
                 "helpers.relative._power_of_two_slopes", "helpers.relative.alibi_bias",
                 "helpers.relative.alibi_effective_span")


def _plain(n: int, first: int = 1) -> list[float]:
    return [2.0 ** (-8.0 * h / n) for h in range(first, first + n)]


def _alibi_mistake(got: list[float], n: int) -> str:
    expected = _slopes(n)
    power = n & (n - 1) == 0

    def same(values):
        return len(values) == n and all(math.isclose(a, b, rel_tol=1e-5)
                                        for a, b in zip(got, values))

    if not power and same(_plain(n)):
        return (f"{n} is not a power of two: the plain sequence 2^(-8h/H) is what the paper's "
                "formula gives, but the reference code (and BLOOM, and every model trained with "
                "it) takes the slopes of the closest lower power of two P, then every other "
                "slope of the 2P sequence")
    if same(_plain(n, first=0)) or same(_plain(n, first=2)):
        return "off by one in h: h runs from 1 to H, so the first slope is 2^(-8/H) and the last 2^(-8)"
    if same(expected[::-1]):
        return "the right slopes in reverse order: head 1 has the steepest slope, 2^(-8/H)"
    if same(sorted(expected, reverse=True)):
        return ("the right slopes, sorted; the reference code keeps the P power-of-two slopes "
                "first and appends the interleaved ones after them")
    m = 2 ** math.floor(math.log2(n))
    if not power and same(_slopes(m) + _slopes(2 * m)[1::2][: n - m]):
        return ("the odd places of the 2P sequence repeat the slopes you already have: take "
                "every other slope starting from the first, slopes_2P[0::2]")
    if len(set(round(v, 12) for v in got)) < n:
        return "two heads share a slope; every head has its own"
    return ""


def check_alibi_slopes(slopes_fn, powers_of_two_only: bool = False) -> bool:
    """`slopes_fn(num_heads)` must give the ALiBi slopes, for powers of two and other counts.

    With `powers_of_two_only` (the lesson's core exercise) only head counts 1, 2, 4, ..., 128 are
    tried, where the slopes are the paper's 2^(-8h/H) for h = 1..H.
    """
    if unanswered(slopes_fn):
        return False
    if not callable(slopes_fn):
        return not_yet("pass a function slopes_fn(num_heads), not its result.")
    if _refuse_shortcut(slopes_fn, alibi_slopes, _slopes):
        return False
    rng = random.Random()
    counts = [1, 2, 4, 8, 16, 32, 3, 5, 6, 7, 12, 20, 24, 48, 80, rng.randint(33, 127)]
    if powers_of_two_only:
        counts = [1, 2, 4, 8, 16, 32, 64, 128]
    for num_heads in counts:
        expected = _slopes(num_heads)
        got, error = run_hidden(slopes_fn, _ALIBI_HIDDEN, num_heads)
        if error:
            return report(f"slopes_fn({num_heads})", error)
        got, problem = as_tensor(got)
        if problem:
            return not_yet(f"slopes_fn({num_heads}): {problem} Return one slope per head.")
        got = got.reshape(-1).tolist()
        if len(got) != num_heads:
            return not_yet(f"slopes_fn({num_heads}) gave {len(got)} slopes; there is one per "
                           "head.")
        close = [math.isclose(a, b, rel_tol=1e-5) for a, b in zip(got, expected)]
        if all(close):
            continue
        head = close.index(False)
        why = _alibi_mistake(got, num_heads)
        return not_yet(f"for {num_heads} heads, head {head + 1} has slope {got[head]:.6g}, "
                       f"expected {expected[head]:.6g}"
                       + (f": {why}." if why else
                          f". Expected all: {[round(s, 5) for s in expected]}"))
    if powers_of_two_only:
        return correct(f"right for all {len(counts)} powers of two tried, 1 to 128 heads: "
                       "2^(-8/H), 2^(-16/H), ..., 2^(-8), head 1 the steepest.")
    return correct(f"right for all {len(counts)} head counts tried: powers of two get 2^(-8/H), "
                   "2^(-16/H), ..., 2^(-8); other counts borrow every other slope of the next "
                   "power of two.")


# --------------------------------------------------------------------------------------------
# 4. Shaw's logits
# --------------------------------------------------------------------------------------------

def check_shaw_logits(logits_fn) -> bool:
    """`logits_fn(q, k, relative_key, max_distance)` -> e `[T, T]` with
    e_ij = q_i · (k_j + relative_key[clip(j - i, -k, k) + k]) / √d."""
    if unanswered(logits_fn):
        return False
    if not callable(logits_fn):
        return not_yet("pass a function logits_fn(q, k, relative_key, max_distance).")
    generator = torch.Generator().manual_seed(random.randrange(2 ** 31))
    for seq_len, dim, k in [(6, 4, 2), (5, 8, 0), (3, 2, 7), (11, 16, 3)]:
        q = torch.randn(seq_len, dim, generator=generator)
        keys = torch.randn(seq_len, dim, generator=generator)
        table = torch.randn(2 * k + 1, dim, generator=generator)
        index = relative_position_index(seq_len, k)
        content = q @ keys.T
        expected = (content + (q[:, None, :] * table[index]).sum(-1)) / math.sqrt(dim)
        got, error = run_hidden(logits_fn, (), q, keys, table, k)
        if error:
            return report(f"logits_fn (T={seq_len}, d={dim}, k={k})", error)
        got, problem = as_tensor(got, shape=(seq_len, seq_len))
        if problem:
            return not_yet(f"logits_fn (T={seq_len}, d={dim}, k={k}): {problem}")
        close = torch.isclose(got, expected.double(), rtol=1e-4, atol=1e-5)
        if close.all():
            continue
        flipped = (content + (q[:, None, :] * table[index.T]).sum(-1)) / math.sqrt(dim)
        variants = {
            "looks unscaled: divide by √d": expected * math.sqrt(dim),
            "the relative term is missing: add q_i · aK_ij": content / math.sqrt(dim),
            "the table row of pair (i, j) is clip(j - i, -k, k) + k; you used i - j": flipped,
        }
        why = next((w for w, v in variants.items() if torch.allclose(got, v.double(),
                                                                     rtol=1e-4, atol=1e-5)), "")
        i, j = (~close).nonzero()[0].tolist()
        return not_yet(f"e[{i}, {j}] is {got[i, j].item():.4f}, expected "
                       f"{expected[i, j].item():.4f} (T={seq_len}, d={dim}, k={k})"
                       + (f" ({why})." if why else
                          f". Row {index[i, j].item()} of the table belongs to pair ({i}, {j})."))
    return correct("each logit adds q_i · aK_ij, with aK_ij the table row of the clipped "
                   "distance, on four sizes including k = 0.")
