"""Test table for notebook 01's checks: right answers in several forms pass, each typical
mistake gets its own hint, shortcuts are refused, and nothing raises."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import helpers
from helpers.exercises.tokens import (check_is_reordering, check_one_hot_lookup,
                                      check_permutation_test)

TOKENIZER = helpers.gpt2_tokenizer()
embedding_alias = F.embedding  # bound before the check runs, as a learner's import would be


def verdict(check, answer, capsys):
    result = check(answer)
    return result, capsys.readouterr().out


# --- exercise 3 (Going deeper): is_reordering ------------------------------------------------

def reorder_sorted(a, b):
    return sorted(TOKENIZER.encode(a)) == sorted(TOKENIZER.encode(b))


def reorder_counter(a, b):
    from collections import Counter
    return Counter(TOKENIZER.encode(a)) == Counter(TOKENIZER.encode(b))


def reorder_tensor(a, b):
    return torch.tensor(reorder_sorted(a, b))


def reorder_numpy(a, b):
    return np.bool_(reorder_sorted(a, b))


@pytest.mark.parametrize("answer", [reorder_sorted, reorder_counter, reorder_tensor,
                                    reorder_numpy])
def test_is_reordering_accepts_every_right_form(answer, capsys):
    result, out = verdict(check_is_reordering, answer, capsys)
    assert result is True and out.startswith("Correct:")


@pytest.mark.parametrize("answer, words", [
    (lambda a, b: sorted(a.split()) == sorted(b.split()), "'Paris' and ' Paris' are different"),
    (lambda a, b: set(TOKENIZER.encode(a)) == set(TOKENIZER.encode(b)), "not sets"),
    (lambda a, b: sorted(a) == sorted(b), "'Paris' and ' Paris' are different"),
    (lambda a, b: sorted(a) == sorted(b) and a[0] == " ", "not characters"),
    (lambda a, b: TOKENIZER.encode(a) == TOKENIZER.encode(b), "ids without their order"),
    (lambda a, b: 1 / 0, "raised ZeroDivisionError"),
    (lambda a, b: "yes", "return True or False, got str"),
    (lambda a, b: 1, "return True or False, got int"),
    (12, "should be a function, got int"),
])
def test_is_reordering_names_each_mistake(answer, words, capsys):
    result, out = verdict(check_is_reordering, answer, capsys)
    assert result is False and out.startswith("Not yet:") and words in out


def test_is_reordering_unanswered(capsys):
    for answer in (None, lambda a, b: None):
        result, out = verdict(check_is_reordering, answer, capsys)
        assert result is False and out.startswith("Not done yet:")


# --- exercise 1: the one-hot lookup ----------------------------------------------------------

@pytest.mark.parametrize("answer", [
    lambda ids, w: F.one_hot(ids, w.shape[0]).to(w.dtype) @ w,
    lambda ids, w: torch.matmul(F.one_hot(ids, num_classes=len(w)).type_as(w), w),
    lambda ids, w: torch.einsum("...v,vd->...d", F.one_hot(ids, w.shape[0]).to(w.dtype), w),
    lambda ids, w: (torch.arange(w.shape[0]) == ids[..., None]).to(w.dtype) @ w,  # own one-hot
])
def test_one_hot_lookup_accepts_every_right_form(answer, capsys):
    result, out = verdict(check_one_hot_lookup, answer, capsys)
    assert result is True and out.startswith("Correct:")


@pytest.mark.parametrize("answer, words", [
    (lambda ids, w: w[ids], "indexed the table (__getitem__)"),
    (lambda ids, w: torch.stack([w[i] for i in ids.flatten()]).reshape(*ids.shape, -1),
     "indexed the table"),
    (lambda ids, w: w.index_select(0, ids.flatten()).reshape(*ids.shape, -1), "uses index_select"),
    (lambda ids, w: F.embedding(ids, w), "uses embedding"),
    (lambda ids, w: nn.Embedding.from_pretrained(w)(ids), "uses Embedding"),
    (lambda ids, w: embedding_alias(ids, w), "uses embedding_alias"),
    (lambda ids, w: F.one_hot(ids, w.shape[0]) @ w, "F.one_hot returns integers"),
    (lambda ids, w: F.one_hot(ids, w.shape[0]).float() @ w, "not to float32 with .float()"),
    (lambda ids, w: F.one_hot(ids).to(w.dtype) @ w, "pass num_classes=weight.shape[0]"),
    (lambda ids, w: torch.mm(F.one_hot(ids, w.shape[0]).to(w.dtype), w), "batch axes"),
    (lambda ids, w: w.T @ F.one_hot(ids, w.shape[0]).to(w.dtype).T, "the transpose of"),
    (lambda ids, w: F.one_hot(ids, w.shape[0]).to(w.dtype) @ w + 1, "the rows differ"),
    (lambda ids, w: (F.one_hot(ids, w.shape[0]).to(w.dtype) @ w).unsqueeze(0), "expected shape"),
    (lambda ids, w: [1, 2], "should return a tensor, got list"),
    (lambda ids, w: 1 / 0, "raised ZeroDivisionError"),
    ("lookup", "should be a function, got str"),
])
def test_one_hot_lookup_names_each_mistake_and_refuses_indexing(answer, words, capsys):
    result, out = verdict(check_one_hot_lookup, answer, capsys)
    assert result is False and out.startswith("Not yet:") and words in out, out


def test_one_hot_lookup_unanswered(capsys):
    for answer in (None, lambda ids, w: None):
        result, out = verdict(check_one_hot_lookup, answer, capsys)
        assert result is False and out.startswith("Not done yet:")


# --- exercise 2: a permutation test ----------------------------------------------------------

def make_tester(permutation=lambda t: torch.randperm(t), compare="allclose", tokens=8, trials=3):
    def is_permutation_equivariant(layer, dim):
        for _ in range(trials):
            x = torch.randn(tokens, dim)
            perm = permutation(tokens)
            moved, reference = layer(x[perm]), layer(x)
            if compare == "allclose":
                same = torch.allclose(moved, reference[perm], atol=1e-5)
            elif compare == "equal":
                same = torch.equal(moved, reference[perm])
            else:  # "invariant": the outputs compared without moving them
                same = torch.allclose(moved, reference, atol=1e-5)
            if not same:
                return False
        return True
    return is_permutation_equivariant


@pytest.mark.parametrize("answer", [
    make_tester(), make_tester(trials=1, tokens=5), make_tester(tokens=40),
    lambda layer, dim: torch.tensor(make_tester()(layer, dim)),  # a bool tensor is a fine answer
    lambda layer, dim: np.bool_(make_tester()(layer, dim)),
])
def test_permutation_test_accepts_every_right_form(answer, capsys):
    result, out = verdict(check_permutation_test, answer, capsys)
    assert result is True and out.startswith("Correct:")


@pytest.mark.parametrize("answer, words", [
    (make_tester(compare="equal"), "not torch.equal"),
    (make_tester(compare="invariant"), "says False for every layer"),
    (make_tester(permutation=lambda t: torch.arange(t)), "says True for every layer"),
    (make_tester(permutation=lambda t: torch.arange(t).flip(0)), "'the tokens in reverse order'"),
    (make_tester(permutation=lambda t: torch.arange(t).roll(1)), "left neighbour (cyclic)"),
    (lambda layer, dim: 1 / 0, "raised ZeroDivisionError"),
    (lambda layer, dim: "yes", "return True or False, got str"),
    (lambda layer, dim: torch.ones(3, dtype=torch.bool), "return True or False, got Tensor"),
    (3.5, "should be a function, got float"),
])
def test_permutation_test_names_each_mistake(answer, words, capsys):
    result, out = verdict(check_permutation_test, answer, capsys)
    assert result is False and out.startswith("Not yet:") and words in out, out


def test_permutation_test_unanswered_and_leaves_the_global_seed_alone(capsys):
    state = torch.get_rng_state()
    for answer in (None, lambda layer, dim: None):
        result, out = verdict(check_permutation_test, answer, capsys)
        assert result is False and out.startswith("Not done yet:")
    check_permutation_test(make_tester())
    assert torch.equal(torch.get_rng_state(), state)
