"""Checks for notebook 01's exercises: a reordering test on GPT-2 tokens, the one-hot lookup,
and a permutation test of attention.

Every check runs the learner's function on inputs it has not seen in the lesson, names the
usual mistakes, and never raises (see `helpers.exercises.answers`).
"""

from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from ..attention import SelfAttention
from .answers import call_learner, names_used, refers_to
from .feedback import correct, not_done, not_yet

__all__ = ["check_is_reordering", "check_one_hot_lookup", "check_permutation_test"]


def _as_bool(answer) -> bool | None:
    """True or False from a bool, a NumPy bool or a one-element bool tensor; else None."""
    if isinstance(answer, torch.Tensor):
        return bool(answer.item()) if answer.numel() == 1 and answer.dtype == torch.bool else None
    if type(answer).__name__ in ("bool", "bool_"):
        return bool(answer)
    return None


# --- Exercise 3 (Going deeper): the same tokens in another order? ----------------------------

# (text_a, text_b, the answer, what to say when a function gets this pair wrong).
_ORDER_MATTERS = ("are the same tokens in another order, but your function says False: compare "
                  "the ids without their order (sorted), not the ids as they stand.")
_REORDER_CASES = [
    (" the dog bit the man", " the man bit the dog", True, _ORDER_MATTERS),
    (" red green blue", " blue red green", True, _ORDER_MATTERS),
    (" one two three", " one two three", True, "are the same text: the identity is a "
     "reordering too."),
    ("Paris is in France", "France is in Paris", False,
     "are not a reordering: at the start of a text 'Paris' has no leading space, and "
     "'Paris' and ' Paris' are different tokens. Compare token ids, not words."),
    (" a b b", " a a b", False,
     "hold the same set of tokens but not the same counts: compare sorted lists (a "
     "multiset), not sets."),
    (" listen", " silent", False,
     "have the same letters but not the same tokens: compare token ids, not characters."),
    (" cats chase mice", " mice chase dogs", False, "are different tokens."),
]


def check_is_reordering(is_reordering: Callable) -> bool:
    """`is_reordering(text_a, text_b)`: are the two texts the same GPT-2 tokens, reordered?"""
    if is_reordering is None:
        return not_done("define is_reordering(text_a, text_b) first.")
    if not callable(is_reordering):
        return not_yet(f"is_reordering should be a function, got {type(is_reordering).__name__}.")
    for text_a, text_b, expected, hint in _REORDER_CASES:
        answer, problem = call_learner(is_reordering, text_a, text_b)
        if problem:
            return not_yet(f"for {text_a!r} and {text_b!r} {problem}")
        if answer is None:
            return not_done("is_reordering returns None; write its body, then run this cell "
                            "again.")
        verdict = _as_bool(answer)
        if verdict is None:
            return not_yet(f"return True or False, got {type(answer).__name__} ({answer!r}).")
        if verdict != expected:
            return not_yet(f"{text_a!r} and {text_b!r} {hint}")
    return correct("two texts are a reordering exactly when their token ids are the same "
                   "multiset (sorted(ids_a) == sorted(ids_b)): same words or same letters are "
                   "not enough, because the leading space belongs to the token.")


# --- Exercise 1: the lookup as a one-hot product ---------------------------------------------

class IndexingRefused(Exception):
    """Raised when the learner's lookup indexes the table instead of multiplying."""


_LOOKUPS = {torch.Tensor.__getitem__, torch.Tensor.index_select, torch.index_select,
            F.embedding, torch.embedding, torch.Tensor.gather, torch.gather, torch.take,
            torch.Tensor.take, torch.take_along_dim, torch.Tensor.take_along_dim,
            torch.Tensor.numpy, torch.Tensor.tolist, torch.Tensor.unbind, torch.unbind}
_LOOKUP_NAMES = {"embedding", "Embedding", "index_select", "gather", "take", "take_along_dim"}


class _TableWithoutIndexing(torch.Tensor):
    """A weight matrix that multiplies like any tensor but refuses to be indexed."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in _LOOKUPS:
            raise IndexingRefused(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})


def _lookup_cases() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    """(description, ids, weight): several vocabulary sizes, widths, batch shapes and dtypes."""
    generator = torch.Generator().manual_seed(2024)
    cases = []
    for vocab, dim, shape, dtype in [(7, 3, (5,), torch.float32), (11, 4, (2, 6), torch.float32),
                                     (13, 5, (4,), torch.float64), (50, 8, (3, 2, 4), torch.float32)]:
        weight = torch.randn(vocab, dim, generator=generator, dtype=dtype)
        ids = torch.randint(0, vocab, shape, generator=generator)
        ids.view(-1)[0] = vocab - 1  # the last row is asked for, so no width is too small...
        cases.append((f"a [{vocab}, {dim}] {str(dtype).replace('torch.', '')} table and ids of "
                      f"shape {list(shape)}", ids, weight))
    # ...except here: the largest id is far below the table's last row.
    weight = torch.randn(20, 3, generator=generator)
    cases.append(("a [20, 3] table and ids [2, 0, 2, 1] (none near the table's end)",
                  torch.tensor([2, 0, 2, 1]), weight))
    return cases


def check_one_hot_lookup(lookup: Callable) -> bool:
    """`lookup(ids, weight)` must equal `weight[ids]`, computed as one-hot rows times the table.

    The table handed to the learner's function refuses indexing (`weight[ids]`, `F.embedding`,
    `index_select`, ...), so only a product can pass.
    """
    if lookup is None:
        return not_done("define lookup(ids, weight) first.")
    if not callable(lookup):
        return not_yet(f"lookup should be a function, got {type(lookup).__name__}.")
    shortcut = _LOOKUP_NAMES & names_used(lookup) or {
        refers_to(lookup, nn.Embedding, F.embedding, torch.embedding)} - {None}
    if shortcut:
        return not_yet(f"lookup uses {sorted(shortcut)[0]}: that is the lookup itself. Build "
                       "one-hot rows with F.one_hot and multiply them by the table.")
    for description, ids, weight in _lookup_cases():
        expected = weight[ids]
        result, problem = call_learner(lookup, ids, weight.as_subclass(_TableWithoutIndexing))
        if problem and "IndexingRefused" in problem:
            return not_yet(f"lookup indexed the table ({problem.rsplit(': ', 1)[-1]}), which "
                           "this check's table refuses: multiply one-hot rows by it instead.")
        if problem and "same dtype" in problem and "long" in problem.lower():
            return not_yet("F.one_hot returns integers (int64), and a matrix product needs "
                           "both sides in the same dtype: convert the one-hot rows with "
                           ".to(weight.dtype).")
        if problem and "same dtype" in problem:
            return not_yet(f"for {description}: {problem}. Convert the one-hot rows to "
                           "weight.dtype, not to float32 with .float(): the table may be float64.")
        if problem and "cannot be multiplied" in problem and int(ids.max()) < len(weight) - 1:
            return not_yet(f"for {description}: {problem}. Without num_classes, F.one_hot "
                           "makes only max(ids) + 1 columns; pass num_classes=weight.shape[0].")
        if problem and ids.dim() > 1:
            return not_yet(f"for {description}: {problem}. ids may carry batch axes: use @ "
                           "(torch.matmul), which works on any leading axes, not torch.mm or .T.")
        if problem:
            return not_yet(f"for {description}: {problem}")
        if result is None:
            return not_done("lookup returns None; write its body, then run this cell again.")
        if not isinstance(result, torch.Tensor):
            return not_yet(f"lookup should return a tensor, got {type(result).__name__}.")
        result = result.as_subclass(torch.Tensor).detach()
        if result.shape != expected.shape and result.shape == expected.shape[::-1]:
            return not_yet(f"for {description} the result has shape {list(result.shape)}, "
                           f"the transpose of {list(expected.shape)}: one row per id, one "
                           "column per dimension (one_hot @ weight, not weight.T @ one_hot.T).")
        if result.shape != expected.shape:
            return not_yet(f"for {description} expected shape {list(expected.shape)} "
                           f"(ids' shape, then the table's width), got {list(result.shape)}.")
        if not torch.allclose(result.to(expected.dtype), expected, atol=1e-6):
            return not_yet(f"for {description} the rows differ from the table's rows: a one-hot "
                           "row with its 1 in column i picks out row i of the table.")
    return correct("one-hot rows times the table give exactly the looked-up rows, for batches "
                   "of any shape and any float dtype. nn.Embedding does the same with a lookup, "
                   "skipping the multiplications by zero.")


# --- Exercise 2: a permutation test of attention ---------------------------------------------

def _attention_layers(dim: int) -> list[tuple[str, Callable, bool]]:
    """(name, layer mapping [T, dim] -> [T, dim'], is it permutation-equivariant?)."""
    attention = SelfAttention(dim)
    heads = nn.MultiheadAttention(dim, num_heads=3, batch_first=True)
    feed_forward = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
    frequencies = torch.rand(dim) * 2

    def with_positions(x):  # sinusoidal rows for positions 0..T-1 added before attention
        angles = torch.arange(x.shape[-2])[:, None] * frequencies
        return attention(x + torch.sin(angles))[0]

    return [
        ("unmasked self-attention", lambda x: attention(x)[0], True),
        ("self-attention with a causal mask", lambda x: attention(x, causal=True)[0], False),
        ("self-attention after adding position vectors", with_positions, False),
        ("unmasked attention with 3 heads", lambda x: heads(x, x, x, need_weights=False)[0], True),
        ("a feed-forward layer applied to each token", feed_forward, True),
        ("each token plus the mean of all tokens", lambda x: x + x.mean(-2, keepdim=True), True),
        ("the tokens in reverse order", lambda x: x.flip(-2), False),
        ("each token plus its left neighbour (cyclic)", lambda x: x + x.roll(1, -2), False),
    ]


def check_permutation_test(is_permutation_equivariant: Callable) -> bool:
    """`is_permutation_equivariant(layer, dim)` must tell equivariant layers from the others.

    The layers include unmasked and multi-head attention, a feed-forward layer and a mean
    (equivariant), and causal attention, attention with positions, a reversal and a cyclic
    neighbour sum (not), which catch a test that only tries one special reordering.
    """
    if is_permutation_equivariant is None:
        return not_done("define is_permutation_equivariant(layer, dim) first.")
    if not callable(is_permutation_equivariant):
        return not_yet("is_permutation_equivariant should be a function, got "
                       f"{type(is_permutation_equivariant).__name__}.")
    verdicts = []
    with torch.random.fork_rng(), torch.no_grad():
        torch.manual_seed(7)
        for dim in (6, 9):
            for name, layer, expected in _attention_layers(dim):
                answer, problem = call_learner(is_permutation_equivariant, layer, dim)
                if problem:
                    return not_yet(f"on {name} (dim={dim}) {problem}")
                if answer is None:
                    return not_done("is_permutation_equivariant returns None; write its body, "
                                    "then run this cell again.")
                verdict = _as_bool(answer)
                if verdict is None:
                    return not_yet(f"return True or False, got {type(answer).__name__} "
                                   f"({answer!r}).")
                verdicts.append((name, dim, expected, verdict))
    wrong = [(name, dim, expected) for name, dim, expected, verdict in verdicts
             if verdict != expected]
    if not wrong:
        return correct("your test tells the equivariant layers (unmasked attention with any "
                       "number of heads, per-token layers, a mean) from causal attention, "
                       "attention with positions and layers that move tokens around.")
    said = {verdict for *_, verdict in verdicts}
    if said == {True}:
        return not_yet("your function says True for every layer, even causal attention. Does "
                       "it really reorder the tokens? Take a random permutation "
                       "(torch.randperm(T)) of a few tokens and compare layer(x[perm]) with "
                       "layer(x)[perm].")
    if said == {False}:
        return not_yet("your function says False for every layer, even a feed-forward layer "
                       "applied to each token. Equivariant means the outputs move with the "
                       "inputs: compare layer(x[perm]) with layer(x)[perm], not with layer(x), "
                       "and use torch.allclose (reordered sums differ in the last bits).")
    names = {name for name, _, _ in wrong}
    if names <= {"the tokens in reverse order", "each token plus its left neighbour (cyclic)"}:
        return not_yet(f"your function calls '{sorted(names)[0]}' equivariant. That layer is "
                       "unchanged by some special reorderings (a reversal, a rotation), not by "
                       "all: use random permutations of several tokens, and try a few.")
    if all(expected for _, _, expected in wrong):
        return not_yet(f"'{wrong[0][0]}' (dim={wrong[0][1]}) is equivariant, but your function "
                       "says False. Attention sums the same terms in another order, so the "
                       "results differ in the last bits: compare with torch.allclose(..., "
                       "atol=1e-5), not torch.equal or ==.")
    name, dim, expected = wrong[0]
    return not_yet(f"'{name}' (dim={dim}) is {'' if expected else 'not '}equivariant, but your "
                   f"function says {not expected}. Compare layer(x[perm]) with layer(x)[perm] "
                   "for random x and random permutations.")
