"""Test table for notebook 03's checks: right answers in several forms pass, each typical
mistake gets its own hint, the course's own classes are refused, and nothing raises."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import helpers
from helpers import InputEmbedding, LearnedPositionalEmbedding
from helpers.exercises.learned import (check_bert_embedding, check_learned_positions,
                                       check_peak_offset)


def verdict(check, answer, capsys):
    result = check(answer)
    return result, capsys.readouterr().out


def refuse_long(length, max_len):
    if length > max_len:
        raise ValueError(f"the input has {length} positions, but the table has rows only for "
                         f"positions 0..{max_len - 1} (max_len={max_len})")


# --- exercise 1: a learned position table ----------------------------------------------------

class PositionsWithEmbedding(nn.Module):  # the lesson's solution
    def __init__(self, max_len, dim):
        super().__init__()
        self.max_len = max_len
        self.table = nn.Embedding(max_len, dim)

    def forward(self, x):
        refuse_long(x.shape[1], self.max_len)
        return self.table(torch.arange(x.shape[1], device=x.device)).unsqueeze(0)


class PositionsWithParameterSlice(nn.Module):  # slicing needs no ids at all
    def __init__(self, max_len, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(max_len, dim))

    def forward(self, x):
        refuse_long(x.size(1), len(self.weight))
        return self.weight[: x.size(1)][None]


class PositionsWithBuffer(nn.Module):  # Hugging Face's way: ids in a buffer that moves along
    def __init__(self, max_len, dim):
        super().__init__()
        self.table = nn.Embedding(max_len, dim)
        self.register_buffer("ids", torch.arange(max_len), persistent=False)

    def forward(self, x):
        refuse_long(x.shape[1], len(self.ids))
        return self.table(self.ids[: x.shape[1]]).unsqueeze(0)


class PositionsMovedToDevice(nn.Module):  # made on the CPU, then moved: works on a GPU too
    def __init__(self, max_len, dim):
        super().__init__()
        self.table = nn.Embedding(max_len, dim)

    def forward(self, x):
        refuse_long(x.shape[1], self.table.num_embeddings)
        return self.table(torch.arange(x.shape[1]).to(x.device)).unsqueeze(0)


class PositionsForEverySequence(PositionsWithEmbedding):  # [B, T, dim] also broadcasts
    def forward(self, x):
        return super().forward(x).expand(x.shape[0], -1, -1)


def positions_factory(max_len, dim):  # a function that returns the module is fine too
    return PositionsWithEmbedding(max_len, dim)


@pytest.mark.parametrize("answer", [PositionsWithEmbedding, PositionsWithParameterSlice,
                                    PositionsWithBuffer, PositionsMovedToDevice,
                                    PositionsForEverySequence, positions_factory])
def test_learned_positions_accepts_every_right_form(answer, capsys):
    result, out = verdict(check_learned_positions, answer, capsys)
    assert result is True and out.startswith("Correct:"), out


def variant(forward=None, init=None):
    """PositionsWithEmbedding with one method replaced: each typical mistake in a line."""
    methods = {}
    if forward is not None:
        methods["forward"] = forward
    if init is not None:
        methods["__init__"] = init
    return type("Variant", (PositionsWithEmbedding,), methods)


def cpu_positions(self, x):
    refuse_long(x.shape[1], self.max_len)
    return self.table(torch.arange(x.shape[1])).unsqueeze(0)


def cpu_positions_indexing(self, x):
    refuse_long(x.shape[1], self.max_len)
    return self.table.weight[torch.arange(x.shape[1])].unsqueeze(0)


def off_by_one_limit(self, x):
    if x.shape[1] >= self.max_len:
        raise ValueError(f"{x.shape[1]} positions, max_len={self.max_len}")
    return self.table(torch.arange(x.shape[1], device=x.device)).unsqueeze(0)


def no_length_check(self, x):
    return self.table(torch.arange(x.shape[1], device=x.device)).unsqueeze(0)


def slice_without_check(self, x):
    return self.table.weight[: x.shape[1]].unsqueeze(0)


def vague_error(self, x):
    if x.shape[1] > self.max_len:
        raise ValueError("sequence too long")
    return self.table(torch.arange(x.shape[1], device=x.device)).unsqueeze(0)


def no_batch_axis(self, x):
    refuse_long(x.shape[1], self.max_len)
    return self.table(torch.arange(x.shape[1], device=x.device))


def from_one(self, x):
    refuse_long(x.shape[1], self.max_len)
    return self.table(torch.arange(1, x.shape[1] + 1, device=x.device)).unsqueeze(0)


def last_axis(self, x):
    refuse_long(x.shape[-1], self.max_len)
    return self.table(torch.arange(x.shape[-1], device=x.device)).unsqueeze(0)


def detached(self, x):
    refuse_long(x.shape[1], self.max_len)
    return self.table.weight[: x.shape[1]].detach().unsqueeze(0)


def stub(self, x):
    return None


def other_layout(self, max_len, dim):
    nn.Module.__init__(self)
    self.max_len = max_len
    self.weight = nn.Parameter(torch.randn(dim, max_len))


def plain_tensor(self, max_len, dim):
    nn.Module.__init__(self)
    self.max_len = max_len
    self.weight = torch.randn(max_len, dim)


class ThroughTheCourse(nn.Module):
    def __init__(self, max_len, dim):
        super().__init__()
        self.inner = helpers.LearnedPositionalEmbedding(max_len, dim)

    def forward(self, x):
        return self.inner(x)


class ThroughAnImportedName(nn.Module):
    def __init__(self, max_len, dim):
        super().__init__()
        self.inner = LearnedPositionalEmbedding(max_len, dim)

    def forward(self, x):
        return self.inner(x)


class SubclassOfTheCourse(LearnedPositionalEmbedding):
    pass


@pytest.mark.parametrize("answer, words", [
    (variant(cpu_positions), "torch.arange(T, device=x.device)"),
    (variant(cpu_positions_indexing), "made on the CPU"),
    (variant(off_by_one_limit), "off-by-one"),
    (variant(no_length_check), "IndexError"),
    (variant(slice_without_check), "quietly stops at its last row"),
    (variant(vague_error), "name the length"),
    (variant(no_batch_axis), "add the batch axis"),
    (variant(from_one), "positions count from 0"),
    (variant(last_axis), "T is x.shape[1]"),
    (variant(detached), "cut off from the table"),
    (variant(init=other_layout), "[dim, max_len]"),
    (variant(init=plain_tensor), "a plain tensor attribute is never trained"),
    (ThroughTheCourse, "the course's own LearnedPositionalEmbedding"),
    (ThroughAnImportedName, "uses LearnedPositionalEmbedding"),
    (SubclassOfTheCourse, "built on the course's LearnedPositionalEmbedding"),
    (lambda max_len, dim: 1 / 0, "raised ZeroDivisionError"),
    (lambda max_len, dim: "a table", "write a class"),
    ("LearnedPositions", "should be a class"),
    (42, "should be a class"),
])
def test_learned_positions_names_each_mistake(answer, words, capsys):
    result, out = verdict(check_learned_positions, answer, capsys)
    assert result is False and out.startswith("Not yet:") and words in out, out


def test_learned_positions_not_done(capsys):
    for answer in (None, variant(stub)):
        result, out = verdict(check_learned_positions, answer, capsys)
        assert result is False and out.startswith("Not done yet:") and out.count("\n") == 1


def test_learned_positions_leaves_the_course_and_the_random_state_alone(capsys):
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    check_learned_positions(PositionsWithEmbedding)
    assert torch.equal(torch.rand(3), expected)
    assert helpers.LearnedPositionalEmbedding is LearnedPositionalEmbedding
    assert helpers.absolute.LearnedPositionalEmbedding is LearnedPositionalEmbedding


# --- exercise 2: BERT's input embedding ------------------------------------------------------

class Bert(nn.Module):  # the lesson's solution
    def __init__(self, vocab_size, max_len, dim):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, dim)
        self.positions = nn.Embedding(max_len, dim)
        self.norm = nn.LayerNorm(dim, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.dropout(self.norm(self.tokens(ids) + self.positions(positions)))


class BertWithCoursePositions(nn.Module):  # the course's table is allowed here
    def __init__(self, vocab_size, max_len, dim):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, dim)
        self.positions = helpers.LearnedPositionalEmbedding(max_len, dim)
        self.norm = nn.LayerNorm(dim, 1e-12)  # epsilon given by position
        self.dropout = nn.Dropout(p=0.1)

    def forward(self, ids):
        return self.dropout(self.norm(self.tokens(ids) + self.positions(ids)))


class BertFunctional(nn.Module):  # dropout as a function, switched by self.training
    def __init__(self, vocab_size, max_len, dim):
        super().__init__()
        self.tokens = nn.Parameter(torch.randn(vocab_size, dim))
        self.positions = nn.Parameter(torch.randn(max_len, dim))
        self.norm = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, ids):
        summed = self.tokens[ids] + self.positions[: ids.shape[1]]
        return F.dropout(self.norm(summed), 0.1, training=self.training)


@pytest.mark.parametrize("answer", [Bert, BertWithCoursePositions, BertFunctional])
def test_bert_embedding_accepts_every_right_form(answer, capsys):
    result, out = verdict(check_bert_embedding, answer, capsys)
    assert result is True and out.startswith("Correct:"), out


def bert_variant(forward=None, dropout=0.1, eps=1e-12):
    def init(self, vocab_size, max_len, dim):
        Bert.__init__(self, vocab_size, max_len, dim)
        self.dropout = nn.Dropout() if dropout is None else nn.Dropout(dropout)
        self.norm = nn.LayerNorm(dim) if eps is None else nn.LayerNorm(dim, eps=eps)
    methods = {"__init__": init}
    if forward is not None:
        methods["forward"] = forward
    return type("BertVariant", (Bert,), methods)


def here(ids):
    return torch.arange(ids.shape[1], device=ids.device)


def bert_cpu_positions(self, ids):
    positions = torch.arange(ids.shape[1])  # the book's Embeddings module
    return self.dropout(self.norm(self.tokens(ids) + self.positions(positions)))


def bert_no_norm(self, ids):
    return self.dropout(self.tokens(ids) + self.positions(here(ids)))


def bert_norm_tokens_only(self, ids):
    return self.dropout(self.norm(self.tokens(ids)) + self.positions(here(ids)))


def bert_no_positions(self, ids):
    return self.dropout(self.norm(self.tokens(ids)))


def bert_from_one(self, ids):
    return self.dropout(self.norm(self.tokens(ids) + self.positions(here(ids) + 1)))


def bert_dropout_first(self, ids):
    return self.norm(self.dropout(self.tokens(ids) + self.positions(here(ids))))


def bert_no_dropout(self, ids):
    return self.norm(self.tokens(ids) + self.positions(here(ids)))


def bert_dropout_always_on(self, ids):
    return F.dropout(self.norm(self.tokens(ids) + self.positions(here(ids))), 0.1)


def bert_unscaled_mask(self, ids):
    out = self.norm(self.tokens(ids) + self.positions(here(ids)))
    if self.training:
        out = out * (torch.rand_like(out) > 0.1)
    return out


def bert_functional_norm_default_eps(self, ids):  # F.layer_norm's default epsilon, 1e-5
    summed = self.tokens(ids) + self.positions(here(ids))
    return self.dropout(F.layer_norm(summed, self.norm.normalized_shape, self.norm.weight,
                                     self.norm.bias))


def bert_no_batch(self, ids):
    return self.dropout(self.norm(self.tokens(ids[0]) + self.positions(here(ids))))


class BertThroughTheCourse(nn.Module):
    def __init__(self, vocab_size, max_len, dim):
        super().__init__()
        self.inner = helpers.InputEmbedding(vocab_size, max_len, dim)

    def forward(self, ids):
        return self.inner(ids)


class BertSubclass(InputEmbedding):
    pass


@pytest.mark.parametrize("answer, words", [
    (bert_variant(bert_cpu_positions), "torch.arange(T, device=ids.device)"),
    (bert_variant(dropout=None), "nn.Dropout() with no argument (p = 0.5)"),
    (bert_variant(dropout=0.2), "BERT's dropout has p = 0.1"),
    (bert_variant(eps=None), "BERT's epsilon, 1e-12 (yours is 1e-05)"),
    (bert_variant(eps=1e-6), "(yours is 1e-06)"),
    (bert_variant(bert_functional_norm_default_eps), "nn.LayerNorm's default epsilon is 1e-5"),
    (bert_variant(bert_no_norm), "no LayerNorm"),
    (bert_variant(bert_norm_tokens_only), "LayerNorm comes after the sum"),
    (bert_variant(bert_no_positions), "the positions are missing"),
    (bert_variant(bert_from_one), "positions count from 0"),
    (bert_variant(bert_dropout_first), "dropout is not the last step"),
    (bert_variant(bert_no_dropout), "nothing is dropped"),
    (bert_variant(bert_dropout_always_on), "dropout is still on"),
    (bert_variant(bert_unscaled_mask), "divided by 0.9"),
    (bert_variant(bert_no_batch), "expected [3,"),
    (BertThroughTheCourse, "the course's own InputEmbedding"),
    (BertSubclass, "built on the course's InputEmbedding"),
    (lambda vocab_size, max_len, dim: nn.Linear(dim, dim), "no trainable token table"),
    (lambda vocab_size, max_len, dim: None, "write a class"),
    ("BertEmbedding", "should be a class"),
])
def test_bert_embedding_names_each_mistake(answer, words, capsys):
    result, out = verdict(check_bert_embedding, answer, capsys)
    assert result is False and out.startswith("Not yet:") and words in out, out


def test_bert_embedding_not_done(capsys):
    for answer in (None, bert_variant(lambda self, ids: None)):
        result, out = verdict(check_bert_embedding, answer, capsys)
        assert result is False and out.startswith("Not done yet:") and out.count("\n") == 1


def test_bert_embedding_leaves_the_course_alone(capsys):
    check_bert_embedding(BertThroughTheCourse)
    assert helpers.InputEmbedding is InputEmbedding
    assert helpers.absolute.InputEmbedding is InputEmbedding


# --- exercise 3: the peak offset at stride 16 ------------------------------------------------

@pytest.mark.parametrize("answer", [16, 16.0, torch.tensor(16), torch.tensor([16.0])])
def test_peak_offset_accepts_sixteen_in_any_form(answer, capsys):
    result, out = verdict(check_peak_offset, answer, capsys)
    assert result is True and out.startswith("Correct:")


@pytest.mark.parametrize("answer, words", [
    (1, "stride-1 run"), (32, "window length"), (15, "got 15"), (15.5, "whole number"),
    ("16", "whole number"), ([16], "whole number"), (True, "whole number"),
    (float("nan"), "got nan"), (float("inf"), "got inf"), (torch.tensor(float("nan")), "nan"),
])
def test_peak_offset_names_each_mistake(answer, words, capsys):
    result, out = verdict(check_peak_offset, answer, capsys)
    assert result is False and out.startswith("Not yet:") and words in out, out


def test_peak_offset_not_done(capsys):
    result, out = verdict(check_peak_offset, None, capsys)
    assert result is False and out.startswith("Not done yet:")


# --- the stubs of the lesson print "Not done yet" ---------------------------------------------

class LessonStub(nn.Module):
    def __init__(self, *sizes):
        super().__init__()
        # your code

    def forward(self, x):
        return None  # your code


@pytest.mark.parametrize("check", [check_learned_positions, check_bert_embedding])
def test_the_lessons_stub_is_not_done(check, capsys):
    result, out = verdict(check, LessonStub, capsys)
    assert result is False and out.startswith("Not done yet:") and out.count("\n") == 1
