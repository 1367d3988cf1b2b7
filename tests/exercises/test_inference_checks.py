"""The checks of notebook 10's exercises: right answers in several forms pass; each typical
mistake, the forbidden shortcut and a bad type get their own sentence; nothing raises."""

import math

import numpy as np
import pytest
import torch

from helpers import apply_rope
from helpers.exercises import inference as checks
from helpers.inference import position_ids_from_mask  # noqa: E402 - bound as a learner would

torch.set_num_threads(1)


def verdict(capsys, check, answer):
    result = check(answer)
    return result, capsys.readouterr().out


def accepted(capsys, check, answer):
    ok, out = verdict(capsys, check, answer)
    assert ok is True and out.startswith("Correct: "), out


def rejected(capsys, check, answer, *words):
    ok, out = verdict(capsys, check, answer)
    assert ok is False and out.startswith("Not yet: "), out
    for word in words:
        assert word in out, out


# --------------------------------------------------------------------------------------------
# Exercise 1: position ids from an attention mask
# --------------------------------------------------------------------------------------------

def cumsum_ids(mask):
    return (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)


def clamp_ids(mask):  # a right pad gets the last real position: valid, and never read
    return (mask.cumsum(-1) - 1).clamp(min=0)


def pads_one_ids(mask):  # transformers 4.x's convention: 1 on the pads
    return (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)


def list_ids(mask):
    out = []
    for row in mask.tolist():
        count, numbered = 0, []
        for real in row:
            numbered.append(count if real else 0)
            count += real
        out.append(numbered)
    return out


def numpy_ids(mask):
    m = mask.numpy()
    return ((m.cumsum(-1) - 1) * m).astype(np.float32)


@pytest.mark.parametrize("answer", [cumsum_ids, list_ids, numpy_ids, clamp_ids, pads_one_ids])
def test_position_ids_right_answers(capsys, answer):
    accepted(capsys, checks.check_position_ids, answer)


@pytest.mark.parametrize("answer, words", [
    (lambda mask: torch.arange(mask.shape[1]).expand_as(mask).clone(), ["pads counted"]),
    (lambda mask: mask.cumsum(-1) * mask, ["off by one"]),
    (lambda mask: mask.cumsum(-1) - 1, ["−1", "no row −1"]),
    (lambda mask: (mask.cumsum(0) - 1) * mask, ["down the batch"]),
    (lambda mask: (mask.flip(-1).cumsum(-1).flip(-1) - 1) * mask, ["from the right"]),
    (lambda mask: (mask.cumsum(-1) - 1).masked_fill(mask == 0, mask.shape[1]), ["outside 0..T−1"]),
])
def test_position_ids_typical_mistakes(capsys, answer, words):
    rejected(capsys, checks.check_position_ids, answer, *words)


@pytest.mark.parametrize("answer, words", [
    (lambda mask: None, []),
    (lambda mask: "0 1 2", ["expected"]),
    (lambda mask: torch.zeros(2, 2), ["shape"]),
    (lambda mask: torch.full(mask.shape, math.nan), ["NaN"]),
    (lambda mask: cumsum_ids(mask) + 0.5, ["fractions"]),
    (lambda mask: 1 / 0, ["ZeroDivisionError"]),
    (lambda mask: position_ids_from_mask(mask), ["course's own answer"]),
])
def test_position_ids_bad_answers_get_a_sentence(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_position_ids, answer)
    assert ok is False and out.startswith(("Not yet: ", "Not done yet: ")), out
    for word in words:
        assert word in out, out


def test_position_ids_not_a_function_and_none(capsys):
    ok, out = verdict(capsys, checks.check_position_ids, None)
    assert not ok and out.startswith("Not done yet")
    rejected(capsys, checks.check_position_ids, torch.zeros(3), "not its result")


def test_the_course_function_is_refused_even_through_another_name(capsys):
    import helpers.inference as inference

    def sneaky(mask):
        return inference.position_ids_from_mask(mask)

    ok, out = verdict(capsys, checks.check_position_ids, sneaky)
    assert not ok and "course's" in out, out


# --------------------------------------------------------------------------------------------
# Exercise 2: one cached decoding step with RoPE
# --------------------------------------------------------------------------------------------

def turn(x, position, layout="interleaved"):
    return apply_rope(x[None], torch.tensor([position]), layout=layout)[0]


def step(query, key, value, cache_keys, cache_values):
    position = cache_keys.shape[0]
    keys = torch.cat([cache_keys, turn(key, position)[None]])
    values = torch.cat([cache_values, value[None]])
    weights = torch.softmax(keys @ turn(query, position) / math.sqrt(len(query)), dim=-1)
    return weights @ values, keys, values


def step_float32(query, key, value, cache_keys, cache_values):
    out, keys, values = step(query.float(), key.float(), value.float(), cache_keys.float(),
                             cache_values.float())
    return [out, keys.numpy(), values]


def step_by_hand(query, key, value, cache_keys, cache_values):
    """The rotation written out, no apply_rope."""
    position, d = cache_keys.shape[0], query.shape[0]
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = position * theta

    def rotate(x):
        a, b = x[0::2], x[1::2]
        out = torch.empty_like(x)
        out[0::2] = a * angle.cos() - b * angle.sin()
        out[1::2] = a * angle.sin() + b * angle.cos()
        return out

    keys = torch.cat([cache_keys, rotate(key)[None]])
    values = torch.cat([cache_values, value[None]])
    scores = keys @ rotate(query) / d ** 0.5
    return torch.softmax(scores, -1) @ values, keys, values


@pytest.mark.parametrize("answer", [step, step_float32, step_by_hand])
def test_cached_step_right_answers(capsys, answer):
    accepted(capsys, checks.check_cached_rope_step, answer)


def slip(**change):
    def answer(query, key, value, cache_keys, cache_values):
        return checks._step(query, key, value, cache_keys, cache_values, **change)
    return answer


def off_by_one(query, key, value, cache_keys, cache_values):
    return checks._step(query, key, value, cache_keys, cache_values,
                        position=cache_keys.shape[0] + 1)


@pytest.mark.parametrize("answer, words", [
    (slip(position=0), ["position 0", "cache_keys.shape[0]"]),
    (slip(turn_again=True), ["turned again"]),
    (slip(store_turned=False), ["unturned"]),
    (slip(turn_query=False), ["query was not turned"]),
    (slip(turn_values=True), ["value was turned"]),
    (slip(scale=False), ["√d"]),
    (slip(include_new=False), ["attend to itself"]),
    (slip(layout="half"), ["half layout"]),
    (off_by_one, ["off by one"]),
])
def test_cached_step_typical_mistakes(capsys, answer, words):
    rejected(capsys, checks.check_cached_rope_step, answer, *words)


@pytest.mark.parametrize("answer, words", [
    (lambda *args: None, []),
    (lambda q, k, v, ck, cv: q, ["three things"]),
    (lambda q, k, v, ck, cv: (q, ck, cv), ["grows by one row"]),
    (lambda q, k, v, ck, cv: (q * math.nan, *step(q, k, v, ck, cv)[1:]), ["NaN"]),
    (lambda q, k, v, ck, cv: ("a", "b", "c"), ["expected"]),
    (lambda *args: [][1], ["IndexError"]),
])
def test_cached_step_bad_answers_get_a_sentence(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_cached_rope_step, answer)
    assert ok is False and out.startswith(("Not yet: ", "Not done yet: ")), out
    for word in words:
        assert word in out, out


# --------------------------------------------------------------------------------------------
# Exercise 3: a packed batch's position ids and mask
# --------------------------------------------------------------------------------------------

def packed(lengths):
    document = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
    positions = torch.cat([torch.arange(n) for n in lengths])
    total = len(document)
    mask = torch.ones(total, total).tril().bool() & (document[:, None] == document[None, :])
    return positions, mask


def packed_lists(lengths):
    positions, mask = packed(lengths)
    return positions.tolist(), mask.int().tolist()


def packed_additive(lengths):
    positions, mask = packed(lengths)
    return positions, torch.zeros(mask.shape).masked_fill(~mask, -math.inf)


@pytest.mark.parametrize("answer", [packed, packed_lists, packed_additive])
def test_packed_right_answers(capsys, answer):
    accepted(capsys, checks.check_packed_batch, answer)


def changed(positions=None, mask=None):
    def answer(lengths):
        right_positions, right_mask = packed(lengths)
        total = len(right_positions)
        new_positions = {None: right_positions, "run on": torch.arange(total),
                         "from 1": right_positions + 1}[positions]
        causal = torch.ones(total, total).tril().bool()
        document = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
        new_mask = {None: right_mask, "causal": causal,
                    "no causality": document[:, None] == document[None, :],
                    "transposed": right_mask.T}[mask]
        return new_positions, new_mask
    return answer


@pytest.mark.parametrize("answer, words", [
    (changed(positions="run on"), ["run on across documents"]),
    (changed(positions="from 1"), ["off by one"]),
    (changed(mask="causal"), ["causal over the whole row"]),
    (changed(mask="no causality"), ["later tokens of its document"]),
    (changed(mask="transposed"), ["transposed"]),
])
def test_packed_typical_mistakes(capsys, answer, words):
    rejected(capsys, checks.check_packed_batch, answer, *words)


@pytest.mark.parametrize("answer, words", [
    (lambda lengths: None, []),
    (lambda lengths: packed(lengths)[0], ["two things"]),
    (lambda lengths: (packed(lengths)[0], torch.zeros(2, 2)), ["shape"]),
    (lambda lengths: (packed(lengths)[0], packed(lengths)[1] * 2.0), ["True/False"]),
    (lambda lengths: (packed(lengths)[0] * math.nan, packed(lengths)[1]), ["NaN"]),
    (lambda lengths: (packed(lengths)[0], packed(lengths)[1].float() * math.nan), ["NaN"]),
    (lambda lengths: {}["x"], ["KeyError"]),
])
def test_packed_bad_answers_get_a_sentence(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_packed_batch, answer)
    assert ok is False and out.startswith(("Not yet: ", "Not done yet: ")), out
    for word in words:
        assert word in out, out


def test_packed_refuses_the_course_functions(capsys):
    from helpers.inference import packed_attention_mask, packed_position_ids

    def shortcut(lengths):
        document = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
        return packed_position_ids(document), packed_attention_mask(document)

    ok, out = verdict(capsys, checks.check_packed_batch, shortcut)
    assert not ok and "course's own answer" in out, out
