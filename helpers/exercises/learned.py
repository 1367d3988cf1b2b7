"""Checks for the exercises of notebook 03 (learned position tables).

    check_learned_positions   the learner's own learned position table, an nn.Module
    check_bert_embedding      BERT's input embedding: token + position, LayerNorm, dropout 0.1
    check_peak_offset         where rows become alike when windows start every 16 tokens

Each check builds the learner's module at fresh random sizes, runs it, names the usual mistakes,
and never raises (see `helpers.exercises.answers`). There is no GPU here, so the checks move the
module to PyTorch's `meta` device (shapes, no data) and watch every operation: one that mixes a
meta tensor with a CPU tensor is one that would stop with a device error on a GPU.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from typing import Callable, Iterator

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from .answers import as_number, call_learner, course_functions_hidden, refers_to
from .feedback import correct, not_done, not_yet

__all__ = ["check_learned_positions", "check_bert_embedding", "check_peak_offset"]


# --- Shared tools ---------------------------------------------------------------------------


class _DeviceMixes(TorchDispatchMode):
    """Records every operation that mixes tensors of two devices (0-dim scalars aside).

    On a GPU such an operation fails ("Expected all tensors to be on the same device"); on the
    meta device PyTorch lets it pass, so the check has to look for it itself.
    """

    def __init__(self):
        super().__init__()
        self.mixes: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensors = [value for value in tree_flatten((args, kwargs))[0]
                   if isinstance(value, torch.Tensor) and value.dim() > 0]
        if len({tensor.device.type for tensor in tensors}) > 1:
            self.mixes.append(str(func).split(".")[1])
        return func(*args, **kwargs)


def _device_problem(module, inputs: torch.Tensor, argument: str) -> str:
    """"" if `module(inputs)`, with module and inputs on the meta device (standing in for a
    GPU), keeps every tensor on that device; else what went wrong. `argument` is the name of
    forward's input in the exercise ("x", "ids"), for the advice."""
    watch = _DeviceMixes()
    try:
        with watch:
            out = module(inputs)
    except Exception as error:  # the learner's code: report, never raise
        return (f"moved to another device (meta, standing in for a GPU) it raised "
                f"{type(error).__name__}: {error}. Make every tensor you create inside forward "
                f"on {argument}.device.")
    if watch.mixes:
        return ("the positions are made on the CPU while the model and the input are on another "
                "device (here meta, standing in for a GPU): on a GPU "
                f"`{watch.mixes[0]}` stops with a device error. Create them with "
                f"torch.arange(T, device={argument}.device).")
    if not isinstance(out, torch.Tensor) or out.device.type != "meta":
        return ("moved to another device (meta, standing in for a GPU) the output did not come "
                "back on the input's device.")
    return ""


def _methods(factory) -> list[Callable]:
    """The functions a learner's class (or factory function) runs."""
    if inspect.isclass(factory):
        return [value for klass in factory.__mro__ if klass.__module__ != "torch.nn.modules.module"
                and klass is not object for value in vars(klass).values() if callable(value)]
    return [factory]


def _uses_course(factory, course_class: type, name: str) -> str | None:
    """A sentence if the learner's class subclasses or calls the course's own class."""
    if inspect.isclass(factory) and issubclass(factory, course_class):
        return (f"your class is built on the course's {name}: write the table yourself, "
                "starting from nn.Module.")
    for method in _methods(factory):
        used = refers_to(method, course_class)
        if used:
            return (f"your code uses {used}, the course's own {name}: write it yourself "
                    "(nn.Embedding or nn.Parameter is fine).")
    return None


def _build(factory, *sizes) -> tuple[nn.Module | None, str | None]:
    """The learner's module built with `sizes`, or a sentence saying why not."""
    module, problem = call_learner(factory, *sizes)
    if problem:
        return None, f"building it with {sizes} failed: {problem.replace('your function ', 'it ')}"
    if not isinstance(module, nn.Module):
        return None, (f"calling it with {sizes} gave {type(module).__name__}; write a class "
                      "that starts `class ...(nn.Module):`.")
    return module, None


def _stub(module: nn.Module) -> bool:
    """True if the module's forward still returns None (an exercise not yet written)."""
    with torch.no_grad():
        result, problem = call_learner(module, torch.zeros(1, 1, dtype=torch.long))
    return result is None and problem is None


def _parameter(module: nn.Module, shape: tuple[int, ...]) -> nn.Parameter | None:
    for parameter in module.parameters():
        if tuple(parameter.shape) == shape:
            return parameter
    return None


@contextlib.contextmanager
def _seeded(seed: int) -> Iterator[torch.Generator]:
    """A private generator, with the global one left where the learner had it."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        yield torch.Generator().manual_seed(seed)


# --- Exercise 1: a learned position table -----------------------------------------------------


def _length_error(module: nn.Module, x: torch.Tensor, max_len: int) -> str | None:
    """None if `module(x)`, with T > max_len, raises a ValueError naming T and max_len."""
    length = x.shape[1]
    try:
        rows = module(x)
    except ValueError as error:
        message = str(error)
        if str(length) not in message or str(max_len) not in message:
            return (f"for T = {length} with max_len = {max_len} the ValueError says "
                    f"{message!r}: name the length ({length}) and the rule (at most "
                    f"{max_len} positions) so the reader knows what to fix.")
        return None
    except IndexError as error:
        return (f"for T = {length} with max_len = {max_len} it raised IndexError ({error}): "
                "that is PyTorch's lookup failing, and it says nothing about positions. Check "
                "T against max_len first and raise a ValueError that names both.")
    except Exception as error:  # the learner's code: report, never raise
        return (f"for T = {length} with max_len = {max_len} it raised "
                f"{type(error).__name__}: {error}. Raise a ValueError that names the length "
                "and max_len instead.")
    shape = tuple(rows.shape) if isinstance(rows, torch.Tensor) else None
    if shape is not None and len(shape) >= 2 and shape[-2] == max_len:
        return (f"for T = {length} with max_len = {max_len} it returned {max_len} rows without "
                "complaint: slicing past the end of a tensor quietly stops at its last row. "
                "Check T > max_len yourself and raise a ValueError.")
    return (f"for T = {length} with max_len = {max_len} it returned without an error, but the "
            f"table has no row for position {max_len}: raise a ValueError that says so.")


def check_learned_positions(LearnedPositions) -> bool:
    """`LearnedPositions(max_len, dim)` is an nn.Module; called on token ids `[B, T]` or
    embeddings `[B, T, dim]` it returns rows 0..T-1 of a trainable `[max_len, dim]` table as
    `[1, T, dim]` on the input's device, and raises ValueError naming T and max_len if T > max_len.
    """
    if LearnedPositions is None:
        return not_done("define the class LearnedPositions first.")
    if not callable(LearnedPositions):
        return not_yet("LearnedPositions should be a class (an nn.Module), got "
                       f"{type(LearnedPositions).__name__}.")
    from helpers.absolute import LearnedPositionalEmbedding
    shortcut = _uses_course(LearnedPositions, LearnedPositionalEmbedding,
                            "LearnedPositionalEmbedding")
    if shortcut:
        return not_yet(shortcut)
    with _seeded(1024) as generator, course_functions_hidden(
            "helpers.absolute.LearnedPositionalEmbedding", "helpers.absolute.InputEmbedding"):
        for trial in range(4):
            max_len = int(torch.randint(5, 40, (1,), generator=generator))
            dim = int(torch.randint(41, 64, (1,), generator=generator))  # wider than any T
            batch = int(torch.randint(2, 5, (1,), generator=generator))
            module, problem = _build(LearnedPositions, max_len, dim)
            if problem:
                return not_yet(problem)
            if _stub(module):
                return not_done("forward returns None; write its body, then run this cell "
                                "again.")
            table = _parameter(module, (max_len, dim))
            if table is None:
                if _parameter(module, (dim, max_len)) is not None:
                    return not_yet(f"the table is [dim, max_len] = [{dim}, {max_len}]; it holds "
                                   f"one row per position: [max_len, dim] = [{max_len}, {dim}].")
                return not_yet(f"with max_len={max_len}, dim={dim} I found no trainable "
                               f"parameter of shape [{max_len}, {dim}]. Use nn.Embedding(max_len, "
                               "dim) or nn.Parameter: a plain tensor attribute is never trained.")
            with torch.no_grad():  # fresh rows, so that any table of zeros or ones shows up
                table.copy_(torch.randn(max_len, dim, generator=generator))
            middle = int(torch.randint(2, max_len, (1,), generator=generator))
            for length in (1, middle, max_len):
                for kind in ("token ids", "embeddings"):
                    if kind == "token ids":
                        x = torch.randint(0, 50257, (batch, length), generator=generator)
                    else:
                        x = torch.randn(batch, length, dim, generator=generator)
                    setting = (f"{kind} of shape {list(x.shape)} (max_len={max_len}, "
                               f"dim={dim})")
                    table.grad = None
                    rows, problem = call_learner(module, x)
                    if problem and length == max_len and problem.startswith(
                            "your function raised ValueError"):
                        return not_yet(f"for {setting} it raised a ValueError, but T = max_len "
                                       f"fits: positions 0..{max_len - 1} all have rows. "
                                       "Refuse only T > max_len (an off-by-one).")
                    if problem and kind == "embeddings":
                        return not_yet(f"for {setting} {problem.replace('your function ', 'it ')}"
                                       ". T is x.shape[1], for ids [B, T] and embeddings "
                                       "[B, T, dim] alike.")
                    if problem:
                        return not_yet(f"for {setting} {problem.replace('your function ', 'it ')}")
                    if rows is None:
                        return not_done("forward returns None; write its body, then run this "
                                        "cell again.")
                    if not isinstance(rows, torch.Tensor):
                        return not_yet(f"for {setting} it returned {type(rows).__name__}, not a "
                                       "tensor.")
                    expected = table.detach()[:length]
                    shape = tuple(rows.shape)
                    if shape == (length, dim):
                        return not_yet(f"for {setting} the shape is [{length}, {dim}]: add the "
                                       f"batch axis in front, [1, {length}, {dim}], so the rows "
                                       "broadcast onto every sequence of the batch.")
                    if shape not in ((1, length, dim), (batch, length, dim)):
                        return not_yet(f"for {setting} the shape is {list(shape)}, expected "
                                       f"[1, {length}, {dim}]: one row per position 0..T-1, "
                                       "with T = x.shape[1].")
                    got = rows.detach()
                    if not torch.equal(got, expected.expand_as(got)):
                        if length < max_len and torch.equal(
                                got, table.detach()[1:length + 1].expand_as(got)):
                            return not_yet(f"for {setting} you return rows 1..{length}: "
                                           "positions count from 0, so position t gets row t.")
                        return not_yet(f"for {setting} the rows are not rows 0..{length - 1} of "
                                       "the table: position t gets row t.")
                    if not rows.requires_grad:
                        return not_yet("the rows are cut off from the table (detached or "
                                       "copied): training could never move them. Return the "
                                       "table's rows themselves.")
                    rows.sum().backward()
                    if table.grad is None or not table.grad[:length].ne(0).all(dim=1).all():
                        return not_yet("the table received no gradient through your rows: "
                                       "return the parameter's own rows, not a copy.")
            # The length rule: fine at max_len (above), refused past it with a clear error.
            for length in (max_len + 1, max_len + int(torch.randint(2, 60, (1,),
                                                                     generator=generator))):
                problem = _length_error(module, torch.zeros(batch, length, dtype=torch.long),
                                        max_len)
                if problem:
                    return not_yet(problem)
            # The device: on a GPU, positions made on the CPU meet a table on the GPU and fail.
            module = module.to("meta")
            length = int(torch.randint(1, max_len + 1, (1,), generator=generator))
            problem = _device_problem(
                module, torch.zeros(batch, length, dtype=torch.long, device="meta"), "x")
            if problem:
                return not_yet(problem)
    return correct("rows 0..T-1 of a trainable [max_len, dim] table, shaped [1, T, dim], for "
                   "ids and embeddings, on 4 random sizes; T = max_len fits, anything longer "
                   "gets a clear ValueError; and the positions follow the input's device.")


# --- Exercise 2: BERT's input embedding -------------------------------------------------------


def _embedding_parts(module: nn.Module, vocab: int, max_len: int, dim: int):
    """(token table, position table, layer norm or None), or a sentence saying what is missing."""
    tokens, positions = _parameter(module, (vocab, dim)), _parameter(module, (max_len, dim))
    if tokens is None:
        return None, (f"with vocab_size={vocab}, max_len={max_len}, dim={dim} I found no "
                      f"trainable token table of shape [{vocab}, {dim}] (nn.Embedding(vocab_size, "
                      "dim)).")
    if positions is None:
        return None, (f"with vocab_size={vocab}, max_len={max_len}, dim={dim} I found no "
                      f"trainable position table of shape [{max_len}, {dim}].")
    norms = [layer for layer in module.modules() if isinstance(layer, nn.LayerNorm)]
    return (tokens, positions, norms[0] if len(norms) == 1 else None), None


def _eval_mistake(got, tokens, positions, normalise, length: int, max_len: int) -> str:
    """What the learner's (deterministic) output is, if it is a known slip."""
    ids_rows, rows = tokens, positions[:length]

    def near(value):
        return torch.allclose(got, value.expand_as(got), atol=1e-4, rtol=1e-4)

    if near(ids_rows + rows):
        return ("the output is token + position with no LayerNorm: BERT normalises the sum "
                "(nn.LayerNorm(dim, eps=1e-12)) before dropout.")
    if near(normalise(ids_rows) + rows):
        return ("you normalise the token vectors and then add the positions: LayerNorm comes "
                "after the sum, so that the position rows are normalised too.")
    if near(normalise(ids_rows)):
        return "the positions are missing: add the rows of positions 0..T-1 before LayerNorm."
    if length < max_len and near(normalise(ids_rows + positions[1:length + 1])):
        return "you add the rows of positions 1..T: positions count from 0."
    return ("the output is not LayerNorm(token rows + position rows 0..T-1) (in eval mode, "
            "where dropout is off).")


def check_bert_embedding(BertEmbedding) -> bool:
    """`BertEmbedding(vocab_size, max_len, dim)`: token + position rows, LayerNorm, dropout 0.1,
    in that order; dropout only in training mode; positions on the input's device."""
    if BertEmbedding is None:
        return not_done("define the class BertEmbedding first.")
    if not callable(BertEmbedding):
        return not_yet("BertEmbedding should be a class (an nn.Module), got "
                       f"{type(BertEmbedding).__name__}.")
    from helpers.absolute import InputEmbedding
    shortcut = _uses_course(BertEmbedding, InputEmbedding, "InputEmbedding")
    if shortcut:
        return not_yet(shortcut)
    with _seeded(512) as generator, course_functions_hidden("helpers.absolute.InputEmbedding"):
        for trial in range(3):
            vocab = int(torch.randint(60, 300, (1,), generator=generator))
            max_len = int(torch.randint(6, 24, (1,), generator=generator))
            dim = int(torch.randint(13, 40, (1,), generator=generator))  # never = max_len
            if dim == max_len:
                dim += 20
            module, problem = _build(BertEmbedding, vocab, max_len, dim)
            if problem:
                return not_yet(problem)
            if _stub(module):
                return not_done("forward returns None; write its body, then run this cell "
                                "again.")
            parts, problem = _embedding_parts(module, vocab, max_len, dim)
            if problem:
                return not_yet(problem)
            tokens, positions, norm = parts
            with torch.no_grad():  # fresh values, so that a skipped step cannot hide
                tokens.copy_(torch.randn(vocab, dim, generator=generator))
                positions.copy_(torch.randn(max_len, dim, generator=generator))
                if norm is not None and norm.weight is not None:
                    norm.weight.copy_(1 + 0.5 * torch.randn(dim, generator=generator))
                if norm is not None and norm.bias is not None:
                    norm.bias.copy_(0.5 * torch.randn(dim, generator=generator))

            def normalise(values, norm=norm):  # always with BERT's epsilon, 1e-12
                if norm is None:
                    return F.layer_norm(values, (values.shape[-1],), eps=1e-12)
                return F.layer_norm(values, norm.normalized_shape, norm.weight, norm.bias,
                                    eps=1e-12)

            # Eval mode: deterministic, and exactly LayerNorm(token + position).
            module.eval()
            middle = int(torch.randint(2, max_len, (1,), generator=generator))
            for length in (1, middle, max_len):
                ids = torch.randint(0, vocab, (3, length), generator=generator)
                setting = (f"ids of shape [3, {length}] (vocab_size={vocab}, max_len={max_len}, "
                           f"dim={dim})")
                with torch.no_grad():
                    got, problem = call_learner(module, ids)
                    again, _ = call_learner(module, ids)
                if problem:
                    return not_yet(f"for {setting} {problem.replace('your function ', 'it ')}")
                if got is None:
                    return not_done("forward returns None; write its body, then run this cell "
                                    "again.")
                if not isinstance(got, torch.Tensor):
                    return not_yet(f"for {setting} it returned {type(got).__name__}, not a "
                                   "tensor.")
                if tuple(got.shape) != (3, length, dim):
                    return not_yet(f"for {setting} the shape is {list(got.shape)}, expected "
                                   f"[3, {length}, {dim}]: one vector per token.")
                if not (isinstance(again, torch.Tensor) and torch.equal(got, again)):
                    return not_yet("in eval mode two calls on the same ids differ: dropout is "
                                   "still on. Keep it as a layer (self.dropout = nn.Dropout(0.1)) "
                                   "so that model.eval() turns it off; F.dropout(x, 0.1) on its "
                                   "own stays on.")
                with torch.no_grad():
                    expected = normalise(tokens[ids] + positions[:length])
                    if not torch.allclose(got, expected, atol=1e-4, rtol=1e-4):
                        return not_yet(f"for {setting} "
                                       + _eval_mistake(got, tokens[ids], positions, normalise,
                                                       length, max_len))
            # BERT's epsilon: vectors of size ~1e-3 have a variance (~1e-6) that nn.LayerNorm's
            # default epsilon, 1e-5, would swamp, while 1e-12 leaves the result exact.
            with torch.no_grad():
                tokens.mul_(1e-3)
                positions.mul_(1e-3)
                ids = torch.randint(0, vocab, (3, middle), generator=generator)
                got, problem = call_learner(module, ids)
                expected = normalise(tokens[ids] + positions[:middle])
                tokens.mul_(1e3)
                positions.mul_(1e3)
            if problem:
                return not_yet(f"for small vectors {problem.replace('your function ', 'it ')}")
            if not (isinstance(got, torch.Tensor) and got.shape == expected.shape
                    and torch.allclose(got, expected, atol=1e-3, rtol=1e-3)):
                yours = (f" (yours is {norm.eps:g})" if norm is not None and norm.eps != 1e-12
                         else "")
                return not_yet("for vectors whose values are about 1e-3 the output is not "
                               "LayerNorm with BERT's epsilon, 1e-12" + yours + ": "
                               "nn.LayerNorm's default epsilon is 1e-5, which outweighs so "
                               "small a variance. Use nn.LayerNorm(dim, eps=1e-12).")
            # Training mode: dropout last, with p = 0.1, survivors scaled by 1 / 0.9.
            module.train()
            ids = torch.randint(0, vocab, (64, max_len), generator=generator)
            with torch.no_grad():
                noisy, problem = call_learner(module, ids)
                clean = normalise(tokens[ids] + positions[:max_len])
            if problem:
                return not_yet(f"in training mode {problem.replace('your function ', 'it ')}")
            if not isinstance(noisy, torch.Tensor) or noisy.shape != clean.shape:
                return not_yet("in training mode the output is not a tensor of shape "
                               f"{list(clean.shape)}.")
            zeroed = (noisy == 0).float().mean().item()
            if zeroed == 0 and torch.allclose(noisy, clean, atol=1e-4, rtol=1e-4):
                return not_yet("in training mode nothing is dropped: BERT applies dropout "
                               "(p = 0.1) to the normalised sum.")
            if zeroed == 0:
                return not_yet("in training mode no value is exactly zero, so dropout is not "
                               "the last step: BERT applies it after LayerNorm. Dropout before "
                               "LayerNorm zeroes values that LayerNorm then shifts and rescales.")
            if abs(zeroed - 0.5) < 0.05:
                return not_yet(f"in training mode {zeroed:.0%} of the values are zeroed: that "
                               "is nn.Dropout() with no argument (p = 0.5). BERT uses p = 0.1.")
            if abs(zeroed - 0.1) > 0.03:
                return not_yet(f"in training mode {zeroed:.1%} of the values are zeroed; "
                               "BERT's dropout has p = 0.1.")
            kept = noisy != 0
            if not torch.allclose(noisy[kept], clean[kept] / 0.9, atol=1e-4, rtol=1e-4):
                return not_yet("in training mode the values that survive are not the "
                               "normalised sum divided by 0.9: dropout scales its survivors by "
                               "1 / (1 - p), which nn.Dropout(0.1) does for you.")
            # The device: position ids made on the CPU would fail on a GPU.
            module = module.eval().to("meta")
            problem = _device_problem(
                module, torch.zeros(2, middle, dtype=torch.long, device="meta"), "ids")
            if problem:
                return not_yet(problem)
    return correct("LayerNorm(token rows + position rows) with BERT's epsilon 1e-12, then "
                   "dropout with p = 0.1 only in "
                   "training mode (a tenth zeroed, the rest scaled by 1/0.9), on 3 random "
                   "sizes, with the positions on the input's device: BERT's input, without "
                   "its segment table.")


# --- Exercise 3: the peak of similarity at stride 16 ------------------------------------------


def check_peak_offset(answer) -> bool:
    """With windows starting every 16 tokens, rows 16 apart see the same text."""
    if answer is None:
        return not_done()
    value = as_number(answer)
    if value is None or not math.isfinite(value) or value != int(value):  # NaN, inf, 2.5
        return not_yet(f"expected a whole number of positions, got {answer!r}.")
    value = int(value)
    if value == 16:
        return correct("windows start every 16 tokens, so the token at position p of one "
                       "window sits at position p - 16 of the next; predicting the same next "
                       "tokens pushes rows 16 apart towards the same job.")
    if value == 1:
        return not_yet("1 is the peak of the stride-1 run of the lesson. With stride 16, where "
                       "does a given token of the story land in two consecutive windows?")
    if value == 32:
        return not_yet("32 is the window length: two positions 32 apart never share a window. "
                       "Where does a given token land in two consecutive windows?")
    return not_yet(f"got {value}. Look at the curve of mean similarity against the offset for "
                   "the table trained with stride 16, and think about where a given token of "
                   "the story lands in two consecutive windows.")
