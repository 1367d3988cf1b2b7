"""A passkey hidden in the story: does a model still *use* a token far back, or only keep a low loss?

Passkey retrieval (Mohtashami and Jaggi, "Landmark Attention", 2023) hides a number in a long
filler text and asks for it at the end; Chen et al. (position interpolation, 2023) and Peng et
al. (YaRN, 2023) judge their context extensions by it. A language model can keep a flat loss
past its trained length by reading only the last few tokens; a passkey far back cannot be
answered that way.

The miniature here adds 2 + `num_passkeys` tokens to the story's vocabulary:

    ... story ... <key> <passkey> ... story ... <query>      → the answer is <passkey>

`<key>` announces the passkey, one of `num_passkeys` tokens of its own; `<query>`, the window's
last token, asks for it. The *distance* is the query's position minus the passkey's. During
training a share `fraction` of the windows carry a passkey at a random distance, so the same
model learns the story and the game; `passkey_accuracy` then asks for passkeys at chosen
distances in windows of any length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

from .model import TinyGPT

__all__ = ["PasskeyTask", "passkey_accuracy", "passkey_windows", "PLACEMENTS", "passkey_placements", "passkey_grid"]

IGNORE = -100  # the target value F.cross_entropy skips (its default ignore_index)


@dataclass(frozen=True)
class PasskeyTask:
    """The game's settings. Token ids 0..text_vocab_size-1 are the story's; the game's follow.

    text_vocab_size  the story's vocabulary (1,416 tokens after `compact_vocabulary`)
    num_passkeys     how many different passkeys there are: chance is 1 / num_passkeys
    fraction         the share of training windows that carry a passkey
    weight           how much the game's loss counts beside the story's in training
    """

    text_vocab_size: int
    num_passkeys: int = 10
    fraction: float = 0.5
    weight: float = 0.2

    def __post_init__(self):
        for name in ("text_vocab_size", "num_passkeys"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {name}={value!r}")
        if isinstance(self.fraction, bool) or not isinstance(self.fraction, (int, float)) or \
                not 0 <= self.fraction <= 1:
            raise ValueError(f"fraction must be a share of the windows, from 0 to 1, got "
                             f"fraction={self.fraction!r}")
        if isinstance(self.weight, bool) or not isinstance(self.weight, (int, float)) or \
                not self.weight >= 0:
            raise ValueError(f"weight must be a number of at least 0, got weight={self.weight!r}")

    @property
    def key_id(self) -> int:
        return self.text_vocab_size

    @property
    def query_id(self) -> int:
        return self.text_vocab_size + 1

    @property
    def passkey_ids(self) -> torch.Tensor:
        first = self.text_vocab_size + 2
        return torch.arange(first, first + self.num_passkeys)

    @property
    def vocab_size(self) -> int:
        """The model's vocabulary: the story's tokens, <key>, <query> and the passkeys."""
        return self.text_vocab_size + 2 + self.num_passkeys

    def hide(self, inputs: torch.Tensor, targets: torch.Tensor, distances: torch.Tensor,
             generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Write a passkey into each window of (inputs, targets) `[B, T]` at `distances` `[B]`.

        The window's last token becomes <query>; the passkey sits `distance` tokens before it,
        right after <key>. Returns new (inputs, targets, answers): targets are IGNORE where the
        next input is a game token (no story predicts it) and at the query; answers `[B]` are
        the passkeys.
        """
        batch, length = inputs.shape
        distances = torch.as_tensor(distances).long()
        if distances.shape != (batch,):
            raise ValueError(f"distances must hold one distance per window, shape ({batch},), "
                             f"got {tuple(distances.shape)}")
        if length < 3 or distances.min() < 1 or distances.max() > length - 2:
            raise ValueError(f"a passkey at distance d needs <key> before it and <query> after: "
                             f"d must be from 1 to length - 2 = {length - 2}, got distances "
                             f"from {int(distances.min())} to {int(distances.max())}")
        answers = self.passkey_ids[torch.randint(self.num_passkeys, (batch,),
                                                 generator=generator)].to(inputs.device)
        rows = torch.arange(batch, device=inputs.device)
        at = (length - 1 - distances).to(inputs.device)  # where the passkey goes
        inputs, targets = inputs.clone(), targets.clone()
        inputs[rows, at - 1] = self.key_id
        inputs[rows, at] = answers
        inputs[:, -1] = self.query_id
        # Before <key>, before the passkey, before <query>: the next input is not the story's.
        for before in (at - 2, at - 1):
            keep = before >= 0
            targets[rows[keep], before[keep]] = IGNORE
        targets[:, -2:] = IGNORE
        return inputs, targets, answers

    def training_batch(self, ids: torch.Tensor, length: int, batch_size: int,
                       generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor,
                                                            torch.Tensor]:
        """Random story windows, the first `fraction` of them with a passkey at a random distance.

        Returns (inputs, targets, answers); answers are IGNORE for the windows without a passkey.
        """
        inputs, targets = _story_windows(ids, length, batch_size, generator)
        answers = torch.full((batch_size,), IGNORE, dtype=torch.long, device=inputs.device)
        carrying = round(self.fraction * batch_size)
        if carrying:
            distances = torch.randint(1, length - 1, (carrying,), generator=generator)
            inputs[:carrying], targets[:carrying], answers[:carrying] = self.hide(
                inputs[:carrying], targets[:carrying], distances, generator)
        return inputs, targets, answers

    def render(self, window: torch.Tensor, decode: Callable[[list[int]], str]) -> str:
        """A window as text: story tokens through `decode`, game tokens as <key>, <query>, <p3>."""
        pieces, story = [], []
        first_passkey = self.text_vocab_size + 2
        for token in window.tolist():
            if token < self.text_vocab_size:
                story.append(token)
                continue
            if story:
                pieces.append(decode(story))
                story = []
            name = {self.key_id: "key", self.query_id: "query"}.get(token)
            pieces.append(f" <{name or f'p{token - first_passkey}'}>")
        if story:
            pieces.append(decode(story))
        return "".join(pieces)


def passkey_accuracy(model: nn.Module, task: PasskeyTask, ids: torch.Tensor, length: int,
                     distances: tuple[int, int], count: int = 32, seed: int = 0,
                     batch_size: int = 16) -> float:
    """The share of `count` windows of `length` tokens whose passkey the model names correctly.

    Each window is a stretch of the story with a passkey at a distance drawn uniformly from
    `distances = (shortest, longest)` before the final <query>. The answer is the model's most
    likely next token at the query, among all tokens. Seeded: the same windows every call.
    Runs under `torch.inference_mode()` on the model's device.
    """
    return _named_right(model, task, ids, length, distances, count, seed, batch_size) / count


# Where a passkey can sit in a window longer than the trained length T, by what training saw.
# The query is the window's last token, at position L - 1, and the passkey d tokens before it,
# at position p = L - 1 - d. Training saw distances and positions 0..T-1 only.
PLACEMENTS = ("trained window",               # L <= T: everything as in training
              "distance seen, position new",  # d < T, p >= T
              "position seen, distance new",  # p < T, d >= T
              "both seen, window longer",     # p < T, d < T (only for T < L < 2T)
              "both new")                     # p >= T, d >= T (only for L > 2T)


def passkey_placements(trained_length: int, length: int) -> dict[str, tuple[int, int]]:
    """The distance ranges (shortest, longest) of each placement that fits a window of `length`.

    A window of the trained length or shorter has one placement, "trained window". A longer one
    has up to four (see PLACEMENTS): each is the set of distances d (1 <= d <= length - 2, so that
    <key> fits before the passkey) whose passkey position p = length - 1 - d and distance fall on
    the stated sides of the trained length. The query's own position, length - 1, is new in all
    of them.
    """
    for name, value in (("trained_length", trained_length), ("length", length)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 3:
            raise ValueError(f"{name} must be an integer of at least 3, got {name}={value!r}")
    if length <= trained_length:
        return {"trained window": (1, length - 2)}
    last = length - 1  # the query's position: p = last - d
    ranges = {"distance seen, position new": (1, min(trained_length - 1, last - trained_length)),
              "position seen, distance new": (max(trained_length, last - trained_length + 1),
                                              length - 2),
              "both seen, window longer": (last - trained_length + 1, trained_length - 1),
              "both new": (trained_length, last - trained_length)}
    return {name: (low, high) for name, (low, high) in ranges.items() if low <= high}


def passkey_grid(model: nn.Module, task: PasskeyTask, ids: torch.Tensor, trained_length: int,
                 lengths: list[int], count: int = 100, seed: int = 0,
                 batch_size: int = 25) -> dict[tuple[int, str], int]:
    """How many of `count` passkeys the model names, for every window length and placement.

    Returns {(length, placement): right answers}. Each cell draws its own windows, distances
    and passkeys from `seed` and its place in the grid, so a different seed gives fresh trials.
    """
    found = {}
    for index, length in enumerate(lengths):
        for name, distances in passkey_placements(trained_length, length).items():
            cell_seed = seed * 1000 + index * 10 + PLACEMENTS.index(name)
            found[(length, name)] = _named_right(model, task, ids, length, distances, count,
                                                 cell_seed, batch_size)
    return found


def passkey_windows(task: PasskeyTask, ids: torch.Tensor, length: int,
                    distances: tuple[int, int], count: int, seed: int = 0
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`count` story windows of `length` tokens, each with a passkey before its final <query>.

    Returns (inputs `[count, length]`, answers `[count]`, distances `[count]`): each distance
    is drawn uniformly from `distances = (shortest, longest)`. Seeded: the same windows for the
    same arguments (this is what `passkey_accuracy` scores).
    """
    shortest, longest = distances
    if not 1 <= shortest <= longest <= length - 2:
        raise ValueError(f"distances must satisfy 1 <= shortest <= longest <= length - 2 = "
                         f"{length - 2}, got {distances!r}")
    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        raise ValueError(f"count must be a positive integer, got count={count!r}")
    generator = torch.Generator().manual_seed(seed)
    inputs, targets = _story_windows(ids, length, count, generator)
    drawn = torch.randint(shortest, longest + 1, (count,), generator=generator)
    inputs, _, answers = task.hide(inputs, targets, drawn, generator)
    return inputs, answers, drawn


def _named_right(model: nn.Module, task: PasskeyTask, ids: torch.Tensor, length: int,
                 distances: tuple[int, int], count: int, seed: int, batch_size: int) -> int:
    """How many of `count` seeded passkey windows the model answers right (see passkey_accuracy)."""
    inputs, answers, _ = passkey_windows(task, ids, length, distances, count, seed)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    right = 0
    with torch.inference_mode():
        for batch, expected in zip(inputs.to(device).split(batch_size),
                                   answers.to(device).split(batch_size)):
            right += int((_last_logits(model, batch).argmax(dim=-1) == expected).sum())
    model.train(was_training)
    return right


def _last_logits(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    """The logits at each window's last position; a TinyGPT computes only those."""
    if isinstance(model, TinyGPT):
        return model(batch, logits_to_keep=1)[:, -1]
    return model(batch)[:, -1]


def _story_windows(ids: torch.Tensor, length: int, count: int,
                   generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """`count` random windows of the story (inputs and next-token targets), on ids' device."""
    if isinstance(length, bool) or not isinstance(length, int) or length < 3:
        raise ValueError(f"length must be an integer of at least 3 (<key>, passkey, <query>), "
                         f"got length={length!r}")
    if len(ids) < length + 1:
        raise ValueError(f"the text has {len(ids)} tokens, but a window of {length} needs "
                         f"{length + 1} (inputs plus the shifted target)")
    starts = torch.randint(0, len(ids) - length, (count,), generator=generator)
    windows = ids[(starts[:, None] + torch.arange(length + 1)).to(ids.device)]
    # Two separate tensors, not two views of one: a passkey written into the inputs must not
    # appear in the targets.
    return windows[:, :-1].clone(), windows[:, 1:].clone()
