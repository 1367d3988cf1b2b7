"""Checks for notebook 02's exercises (windows, targets, embedding shapes)."""

from __future__ import annotations

from ..data import GPTDatasetV1, gpt2_tokenizer, load_the_verdict
from .feedback import correct, not_done, not_yet


def check_window_count(max_length: int, stride: int, your_count) -> bool:
    """How many windows does the story give for this max_length and stride?"""
    if your_count is None:
        return not_done("set your_count to a number (work it out before you build the dataset).")
    actual = len(GPTDatasetV1(load_the_verdict(), gpt2_tokenizer(), max_length, stride))
    if your_count == actual:
        return correct(f"{actual} windows: starts 0, {stride}, ... up to the last start s with "
                       f"s + {max_length} + 1 <= 5145, i.e. ceil((5145 - {max_length}) / {stride}).")
    return not_yet(f"the dataset has {actual} windows, not {your_count}. A window starting at s "
                   f"needs tokens s .. s + max_length (the target runs one token further).")


def check_windows(make_windows) -> bool:
    """`make_windows(ids, max_length, stride)` returns a list of (inputs, targets) lists."""
    if make_windows is None:
        return not_done("define make_windows(ids, max_length, stride) first.")
    ids = list(range(100, 123))  # 23 made-up ids: easy to read in a message
    for max_length, stride in [(4, 1), (4, 4), (5, 3), (22, 1), (3, 7)]:
        expected = [(ids[s:s + max_length], ids[s + 1:s + max_length + 1])
                    for s in range(0, len(ids) - max_length, stride)]
        try:
            windows = make_windows(ids, max_length, stride)
            if windows is None:
                return not_done("make_windows returned None: return a list of (inputs, targets).")
            got = [(list(x), list(y)) for x, y in windows]
        except Exception as error:  # the learner's code: report, don't crash the notebook
            return not_yet(f"make_windows raised {type(error).__name__}: {error}")
        if got != expected:
            return not_yet(f"for max_length={max_length}, stride={stride} the windows differ "
                           f"(expected {len(expected)} windows, first {expected[:1]}; got "
                           f"{len(got)}, first {got[:1]}).")
    return correct("your windows match the course's dataset on five settings, including a "
                   "stride longer than the window (tokens skipped).")


def check_embedding_shape(batch_size: int, max_length: int, dim: int, your_shape) -> bool:
    """The shape of token + position embeddings for a batch."""
    if your_shape is None:
        return not_done("set your_shape to a tuple.")
    expected = (batch_size, max_length, dim)
    if tuple(your_shape) == expected:
        return correct(f"{expected}: one {dim}-dimensional vector per token; the position "
                       f"table [{max_length}, {dim}] is broadcast over the batch.")
    return not_yet(f"expected {expected}, got {tuple(your_shape)}. The position rows have "
                   f"shape [{max_length}, {dim}] and are added to every sequence of the batch.")
