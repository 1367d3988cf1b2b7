"""Checks for the exercises of notebook 10 (positions at inference).

    check_position_ids(fn)        fn(attention_mask) -> position ids `[B, T]`
    check_cached_rope_step(fn)    fn(query, key, value, cache_keys, cache_values)
                                  -> (output, cache_keys, cache_values), one decoding step
    check_packed_batch(fn)        fn(lengths) -> (position_ids `[T]`, mask `[T, T]`)

Each check runs the learner's function on fresh inputs with the course's own answer
(`helpers.inference`) out of reach, prints one line through `feedback` (Correct / Not yet /
Not done yet) and returns True or False. None raises: a stub, a wrong type or shape, NaN, or a
crash inside the learner's code each get a sentence, and the typical slips are named: pads
counted, off by one, the sum along the batch, -1 left on the pads; the new token turned at
position 0 or one off, the cached keys turned again, the new key stored unturned, the query
unturned, values turned, no √d, the new token left out; positions that run on, causal without
documents, documents without causality, the mask transposed.
"""

from __future__ import annotations

import math
import random

import torch

from ..inference import packed_attention_mask, packed_position_ids, position_ids_from_mask
from ..rope import apply_rope
from .answers import (as_plain_tensor, function_name, hidden_names, not_a_function, refers_to,
                      report, run_settled, sequence_length)
from .feedback import correct, not_yet, unanswered

__all__ = ["check_position_ids", "check_cached_rope_step", "check_packed_batch"]

_COURSE = (position_ids_from_mask, packed_position_ids, packed_attention_mask)


def _hidden() -> tuple:
    return hidden_names(*_COURSE)


def _refuse_shortcut(function) -> bool:
    name = refers_to(function, *_COURSE)
    if name is None:
        return False
    not_yet(f"your function uses `{name}`, the course's own answer; this exercise asks you to "
            "write it yourself.")
    return True


def _integers(answer, shape, call: str) -> tuple[torch.Tensor | None, str | None]:
    """(a long tensor of `shape`, None) or (None, a sentence about what is wrong)."""
    tensor, problem = as_plain_tensor(answer, shape)
    if problem:
        return None, f"{call}: {problem}"
    if not torch.isfinite(tensor).all():
        return None, f"{call} holds NaN or infinite values; positions are whole numbers."
    if not torch.equal(tensor, tensor.round()):
        return None, f"{call} holds fractions; positions are whole numbers (0, 1, 2, ...)."
    return tensor.long(), None


# --- Exercise 1: position ids from an attention mask --------------------------------------------


def _mask_cases(rng: random.Random) -> list[torch.Tensor]:
    """Left-padded batches (one fixed, one random), a batch without pads, one right-padded row."""
    cases = [torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]])]
    width = rng.randint(6, 12)
    rows = [[0] * (width - n) + [1] * n for n in [width] + [rng.randint(1, width - 1)
                                                          for _ in range(3)]]
    rng.shuffle(rows)
    cases.append(torch.tensor(rows))
    cases.append(torch.ones(1, rng.randint(3, 9), dtype=torch.long))
    cases.append(torch.tensor([[1, 1, 1, 0, 0]]))
    return cases


def check_position_ids(function) -> bool:
    """`function(attention_mask)` -> `[B, T]` positions: real tokens numbered 0, 1, ... in each
    row by the real tokens before them. A pad may hold any position from 0 to T - 1 (Hugging
    Face gives 0, its 4.x releases 1): no real token attends to it, but a learned table must
    still be able to look it up."""
    if unanswered(function) or not_a_function(function, "(attention_mask)"):
        return False
    if _refuse_shortcut(function):
        return False
    name = function_name(function)
    for mask in _mask_cases(random.Random()):
        call = f"{name}({mask.tolist()})"
        result, error = run_settled(function, _hidden(), mask.clone())
        if error:
            return report(call, error)
        got, problem = _integers(result, tuple(mask.shape), call)
        if problem:
            return not_yet(problem)
        expected = position_ids_from_mask(mask)
        pads = mask == 0
        if torch.equal(got[~pads], expected[~pads]) and bool(
                ((got[pads] >= 0) & (got[pads] < mask.shape[1])).all()):
            continue  # a pad's position is never read; any valid row serves
        return not_yet(f"{call} gave {got.tolist()}, expected {expected.tolist()}: "
                       + _position_slip(got, mask, expected))
    return correct("each real token's position counts the real tokens before it "
                   "(cumsum of the mask − 1) and every pad holds a valid position: a left-padded "
                   "row numbers its prompt exactly as the prompt alone, as Hugging Face's "
                   "generate does (it gives the pads 0).")


def _position_slip(got: torch.Tensor, mask: torch.Tensor, expected: torch.Tensor) -> str:
    real = mask.bool()
    columns = torch.arange(mask.shape[1]).expand_as(mask)
    if torch.equal(got[real], expected[real]):
        if (got[~real] == -1).all():
            return ("the real tokens are right, but the pads got −1 (the cumsum − 1 of a leading "
                    "0). Fill the pads with 0, as Hugging Face does: a learned table has no "
                    "row −1.")
        return ("the real tokens are right, but a pad holds a position outside 0..T−1, which a "
                "learned table may not have; give the pads 0.")
    if torch.equal(got[real], columns[real]):
        return ("the columns were numbered 0..T−1, pads counted: a short row's prompt then starts "
                "at the number of pads in front of it instead of 0.")
    if torch.equal(got[real], mask.cumsum(-1)[real]):
        return "off by one: the first real token of a row is position 0, so subtract 1."
    if mask.shape[0] > 1 and torch.equal(got[real], (mask.cumsum(0) - 1)[real]):
        return ("the sum ran down the batch (dim=0); a position counts the tokens before it in "
                "its own row (dim=-1).")
    reversed_count = mask.flip(-1).cumsum(-1).flip(-1) - 1
    if torch.equal(got[real], reversed_count[real]):
        return "counted from the right: position 0 is each row's first real token, on the left."
    return "compare a row with its prompt alone, numbered 0, 1, 2, ..."


# --- Exercise 2: one cached decoding step with RoPE ---------------------------------------------


def _attend(query, keys, values, scale=True):
    scores = keys @ query / (math.sqrt(query.shape[-1]) if scale else 1.0)
    return torch.softmax(scores, dim=-1) @ values


def _turn(x, position, layout="interleaved"):
    return apply_rope(x[None], torch.tensor([position]), layout=layout)[0]


def _step(query, key, value, cache_keys, cache_values, *, position=None, turn_query=True,
          store_turned=True, turn_again=False, turn_values=False, scale=True, include_new=True,
          layout="interleaved"):
    """One decoding step, right or with one deliberate slip: (output, keys, values)."""
    past = cache_keys.shape[0]
    position = past if position is None else position
    turned_key = _turn(key, position, layout)
    new_key = turned_key if store_turned else key
    keys = torch.cat([cache_keys, new_key[None]])
    if turn_again:  # the whole cache (already turned) turned once more
        keys = apply_rope(keys, torch.arange(past + 1), layout=layout)
    new_value = _turn(value, position, layout) if turn_values else value
    values = torch.cat([cache_values, new_value[None]])
    q = _turn(query, position, layout) if turn_query else query
    attended = (keys, values) if include_new else (cache_keys, cache_values)
    return _attend(q, *attended, scale=scale), keys, values


_STEP_SLIPS = [
    (dict(position=0), "the new token was turned at position 0. Its position is the number of "
     "tokens already in the cache, cache_keys.shape[0]."),
    (dict(turn_again=True), "the cached keys were turned again. They are stored already turned "
     "by their own positions; only the new key needs turning."),
    (dict(store_turned=False), "the new key went into the cache unturned. Turn it at its "
     "position first, so that every cached key carries its position."),
    (dict(turn_query=False), "the query was not turned. The query, at the new position, must be "
     "turned too, or its scores stop depending on offsets only."),
    (dict(turn_values=True), "the value was turned too. RoPE turns queries and keys only "
     "(lesson 05): values carry content."),
    (dict(scale=False), "the scores were not divided by √d."),
    (dict(include_new=False), "the new token did not attend to itself. Append its key and value "
     "first, then attend over all of them (cache and new token)."),
    (dict(layout="half"), "that is the half layout; the course's apply_rope default, the "
     "interleaved one, is asked for here."),
]


def _step_cases(rng: random.Random) -> list[tuple]:
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 31))
    cases = []
    for past, dim in [(5, 8), (rng.randint(2, 12), 2 * rng.randint(3, 16)), (1, 4)]:
        raw = torch.randn(past, dim, dtype=torch.float64, generator=generator)
        cache_keys = apply_rope(raw, torch.arange(past))  # turned at their positions
        cache_values = torch.randn(past, dim, dtype=torch.float64, generator=generator)
        query, key, value = torch.randn(3, dim, dtype=torch.float64, generator=generator)
        cases.append((query, key, value, cache_keys, cache_values))
    return cases


def check_cached_rope_step(function) -> bool:
    """`function(query, key, value, cache_keys, cache_values)` -> (output `[d]`, cache_keys
    `[T+1, d]`, cache_values `[T+1, d]`): one decoding step of a RoPE head (interleaved layout,
    base 10,000) whose cache holds T keys already turned by their positions 0..T-1."""
    if unanswered(function) or not_a_function(
            function, "(query, key, value, cache_keys, cache_values)"):
        return False
    name = function_name(function)
    tolerance = 1e-4
    for case in _step_cases(random.Random()):
        query, key, value, cache_keys, cache_values = case
        past, dim = cache_keys.shape
        call = f"{name}(...) with a cache of {past} tokens, head size {dim}"
        result, error = run_settled(function, (), *(tensor.clone() for tensor in case))
        if error:
            return report(call, error)
        if sequence_length(result) != 3:
            return not_yet(f"{call} returned {type(result).__name__}; return three things: "
                           "(output, cache_keys, cache_values).")
        shapes = [(dim,), (past + 1, dim), (past + 1, dim)]
        got = []
        for what, item, shape in zip(("output", "cache_keys", "cache_values"), result, shapes):
            tensor, problem = as_plain_tensor(item, shape)
            if problem:
                return not_yet(f"{call}: {what}: {problem}"
                               + (" The cache grows by one row: the new token's."
                                  if what != "output" else ""))
            if torch.isnan(tensor).any():
                return not_yet(f"{call}: {what} holds NaN.")
            got.append(tensor)
        expected = _step(*case)
        if all(torch.allclose(a, b, atol=tolerance) for a, b in zip(got, expected)):
            continue
        for change, words in _STEP_SLIPS + [(dict(position=past + 1), "off by one: the new "
                                             f"token's position is {past} (the cache's length), "
                                             f"not {past + 1}."),
                                            (dict(position=past - 1), "off by one: the new "
                                             f"token's position is {past} (the cache's length), "
                                             f"not {past - 1}.")]:
            slip = _step(*case, **change)
            if all(torch.allclose(a, b, atol=tolerance) for a, b in zip(got, slip)):
                return not_yet(f"{call}: {words}")
        for what, a, b in zip(("cache_keys", "cache_values", "output"), got[1:] + got[:1],
                              expected[1:] + expected[:1]):
            if not torch.allclose(a, b, atol=tolerance):
                return not_yet(f"{call}: {what} differs from the expected one by up to "
                               f"{(a - b).abs().max():.3g}.")
    return correct("the new token sits at position len(cache); its query and key are turned "
                   "there, the key joins the cache already turned, the cached keys are left as "
                   "they are, and the query attends over cache and itself: a KV-cache step of a "
                   "RoPE model.")


# --- Exercise 3: a packed batch's position ids and mask -----------------------------------------


def _pack_cases(rng: random.Random) -> list[list[int]]:
    return [[3, 2], [7, 4, 9], [1, 1, 1], [5],
            [rng.randint(1, 8) for _ in range(rng.randint(2, 5))]]


def _as_mask(answer, total: int, call: str) -> tuple[torch.Tensor | None, str | None]:
    """A `[T, T]` bool mask from booleans, 0/1 numbers, or an additive mask of 0 and −inf."""
    tensor, problem = as_plain_tensor(answer, (total, total))
    if problem:
        return None, f"{call}: the mask: {problem}"
    if torch.isnan(tensor).any():
        return None, f"{call}: the mask holds NaN."
    if torch.isinf(tensor).any():
        if not ((tensor == 0) | (tensor == -math.inf)).all():
            return None, (f"{call}: an additive mask holds 0 (may see) and −inf (hidden) only.")
        return tensor == 0, None
    if not ((tensor == 0) | (tensor == 1)).all():
        return None, (f"{call}: the mask holds values other than True/False (or 1/0); "
                      "give True where query i may see key j.")
    return tensor.bool(), None


def check_packed_batch(function) -> bool:
    """`function(lengths)` -> (position_ids `[T]`, mask `[T, T]`) for documents of these lengths
    packed into one row of T = sum(lengths) tokens; mask[i, j] True where query i may see key j."""
    if unanswered(function) or not_a_function(function, "(lengths)"):
        return False
    if _refuse_shortcut(function):
        return False
    name = function_name(function)
    for lengths in _pack_cases(random.Random()):
        total = sum(lengths)
        call = f"{name}({lengths})"
        result, error = run_settled(function, _hidden(), list(lengths))
        if error:
            return report(call, error)
        if sequence_length(result) != 2:
            return not_yet(f"{call} returned {type(result).__name__}; return two things: "
                           "(position_ids, mask).")
        positions, problem = _integers(result[0], (total,), f"{call}'s position ids")
        if problem:
            return not_yet(problem)
        mask, problem = _as_mask(result[1], total, call)
        if problem:
            return not_yet(problem)
        document_ids = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
        expected_positions = packed_position_ids(document_ids)
        expected_mask = packed_attention_mask(document_ids)
        if not torch.equal(positions, expected_positions):
            return not_yet(f"{call}: position ids {positions.tolist()}, expected "
                           f"{expected_positions.tolist()}: "
                           + _packed_position_slip(positions, expected_positions))
        if not torch.equal(mask, expected_mask):
            return not_yet(f"{call}: " + _mask_slip(mask, expected_mask, document_ids))
    return correct("positions start again at 0 in every document, and each query sees only "
                   "the keys at or before it in its own document (a block-diagonal mask of "
                   "causal blocks): every packed document is computed as if it were alone.")


def _packed_position_slip(got: torch.Tensor, expected: torch.Tensor) -> str:
    if torch.equal(got, torch.arange(len(got))):
        return ("the positions run on across documents; restart them at 0 where each document "
                "begins.")
    if torch.equal(got, expected + 1):
        return "off by one: each document's first token is position 0."
    return "each document numbers its own tokens 0, 1, 2, ..."


def _mask_slip(mask: torch.Tensor, expected: torch.Tensor, document_ids: torch.Tensor) -> str:
    total = len(document_ids)
    causal = torch.ones(total, total).tril().bool()
    same = document_ids[:, None] == document_ids[None, :]
    if torch.equal(mask, causal):
        return ("the mask is causal over the whole row: later documents still see earlier "
                "ones. Allow only keys of the query's own document.")
    if torch.equal(mask, same):
        return ("the mask lets a token see later tokens of its document; keep it causal "
                "(key j ≤ query i) inside each document.")
    if torch.equal(mask, expected.T):
        return ("the mask is transposed: row i is the query, column j the key, and a query "
                "may see keys j ≤ i.")
    i, j = (mask != expected).nonzero()[0].tolist()
    return (f"mask[{i}, {j}] is {bool(mask[i, j])}, expected {bool(expected[i, j])} (query "
            f"{i} in document {int(document_ids[i])}, key {j} in document "
            f"{int(document_ids[j])}).")
