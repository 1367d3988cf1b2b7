"""Absolute position tables: one vector per position, added to the token embeddings.

Two ways to fill the table:

    learned     a parameter of shape [max_len, dim], trained like the token embeddings
                (GPT-2, BERT); it has no row for a position past max_len.
    sinusoidal  a fixed function of the position (the original Transformer):
                    PE(pos, 2i)   = sin(pos * w_i)
                    PE(pos, 2i+1) = cos(pos * w_i),    w_i = base ** (-2i / dim)
                so every pair of columns is a point turning round a circle at its own speed.
                The authors' code (tensor2tensor), and fairseq, Marian and Whisper after
                it, space the w_i a little differently (`ladder="tensor2tensor"`): not
                the same table.

Everything here is plain torch: no figures, no widgets.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = [
    "LAYOUTS",
    "LADDERS",
    "sinusoidal_frequencies",
    "sinusoidal_wavelengths",
    "sinusoidal_table",
    "layout_permutation",
    "sinusoidal_shift_matrix",
    "LearnedPositionalEmbedding",
    "InputEmbedding",
]

# "interleaved": sin, cos, sin, cos, ... as in "Attention Is All You Need".
# "half": all the sines, then all the cosines, same frequencies (e.g. x-transformers;
# Hugging Face's port of Marian).
LAYOUTS = ("interleaved", "half")

# How the dim/2 frequencies are spaced between 1 and 1/base:
# "paper": w_i = base^(-2i/dim), the formula of "Attention Is All You Need" (last one above 1/base);
# "tensor2tensor": w_i = base^(-i/(dim/2 - 1)), the authors' code, fairseq, Marian (the C++
# toolkit) and Whisper (last one exactly 1/base). With the sines first, that is the table
# those libraries add.
LADDERS = ("paper", "tensor2tensor")


# --- Checks shared by the functions below -----------------------------------------------------


def _check_dim(dim: int) -> None:
    if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0 or dim % 2:
        raise ValueError(
            "dim must be a positive even integer (the columns come in sin/cos pairs), "
            f"got dim={dim!r}")


def _check_base(base: float) -> None:
    if not (isinstance(base, (int, float)) and math.isfinite(base) and base > 1):
        raise ValueError(
            f"base must be a finite number greater than 1 (the wavelengths grow as powers of it), "
            f"got base={base!r}")


def _check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got layout={layout!r}")


def _check_ladder(ladder: str) -> None:
    if ladder not in LADDERS:
        raise ValueError(f"ladder must be one of {LADDERS}, got ladder={ladder!r}")


def _check_count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {name}={value!r}")


def _check_positive(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {name}={value!r}")


# --- Sinusoidal tables ------------------------------------------------------------------------


def sinusoidal_frequencies(dim: int, base: float = 10000.0,
                           ladder: str = "paper") -> torch.Tensor:
    """The `dim / 2` angular frequencies, fastest (1) first, float64.

    `ladder="paper"`: w_i = base^(-2i/dim), as in "Attention Is All You Need"; the last pair
    stops at base^(-(dim-2)/dim), a little above 1/base. `ladder="tensor2tensor"`:
    w_i = base^(-i/(dim/2 - 1)), as in tensor2tensor's `get_timing_signal_1d`, fairseq and
    Whisper; the last pair is exactly 1/base (with one pair, dim = 2, only w_0 = 1).
    """
    _check_dim(dim)
    _check_base(base)
    _check_ladder(ladder)
    steps = torch.arange(dim // 2, dtype=torch.float64)  # i = 0 .. dim/2 - 1
    if ladder == "paper":
        exponents = 2 * steps / dim
    else:
        exponents = steps / max(dim // 2 - 1, 1)
    return float(base) ** -exponents


def sinusoidal_wavelengths(dim: int, base: float = 10000.0) -> torch.Tensor:
    """How many positions each sin/cos pair takes to come back round: 2π / w_i.

    They run from 2π (pair 0) up to 2π · base^((dim - 2) / dim) (the last pair), growing by the
    same factor base^(2/dim) from one pair to the next.
    """
    return 2 * math.pi / sinusoidal_frequencies(dim, base)


def sinusoidal_table(num_positions: int, dim: int, base: float = 10000.0,
                     layout: str = "interleaved", ladder: str = "paper") -> torch.Tensor:
    """The fixed sinusoidal position table, `[num_positions, dim]`, float32.

    Row `pos` holds sin(pos · w_i) and cos(pos · w_i) for every frequency w_i. With
    `layout="interleaved"` they alternate (sin in even columns, cos in odd ones); with
    `layout="half"` the sines fill the first half of the columns and the cosines the second.
    `ladder` picks the frequencies (see `sinusoidal_frequencies`): `layout="half",
    ladder="tensor2tensor"` is the table of tensor2tensor and Whisper (fairseq's too, whose
    positions start at padding_idx + 1 rather than 0).
    """
    _check_count("num_positions", num_positions)
    _check_dim(dim)
    _check_base(base)
    _check_layout(layout)
    _check_ladder(ladder)
    positions = torch.arange(num_positions, dtype=torch.float64)
    # Every angle at once: an outer product [positions] x [frequencies]. Computed in float64
    # because pos · w_i loses digits in float32 once pos reaches the thousands.
    angles = torch.outer(positions, sinusoidal_frequencies(dim, base, ladder))
    sines, cosines = angles.sin(), angles.cos()
    if layout == "interleaved":
        table = torch.stack([sines, cosines], dim=-1).reshape(num_positions, dim)
    else:
        table = torch.cat([sines, cosines], dim=-1)
    return table.to(torch.float32)


def layout_permutation(dim: int) -> torch.Tensor:
    """Column indices that turn the interleaved table into the half one.

    `sinusoidal_table(n, dim, layout="interleaved")[:, layout_permutation(dim)]` equals
    `sinusoidal_table(n, dim, layout="half")`: first the even columns (sines), then the odd
    ones (cosines).
    """
    _check_dim(dim)
    return torch.cat([torch.arange(0, dim, 2), torch.arange(1, dim, 2)])


def sinusoidal_shift_matrix(offset: int, dim: int, base: float = 10000.0,
                            layout: str = "interleaved") -> torch.Tensor:
    """The `[dim, dim]` matrix M with PE(pos + offset) = M @ PE(pos) for every pos (float32).

    Each sin/cos pair is a point on a circle at angle pos · w_i; moving `offset` positions on
    turns it by offset · w_i, whatever pos is. So M is block-diagonal: one 2x2 rotation per pair
    (in the half layout the same rotations, with rows and columns permuted).
    """
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise ValueError(
            f"offset must be an integer (a number of positions), got offset={offset!r}")
    _check_dim(dim)
    _check_base(base)
    _check_layout(layout)
    turn = offset * sinusoidal_frequencies(dim, base)
    cos, sin = turn.cos(), turn.sin()
    # sin(a + t) =  cos t · sin a + sin t · cos a
    # cos(a + t) = -sin t · sin a + cos t · cos a
    blocks = torch.stack([torch.stack([cos, sin], -1), torch.stack([-sin, cos], -1)], -2)
    matrix = torch.block_diag(*blocks)
    if layout == "half":
        order = layout_permutation(dim)
        matrix = matrix[order][:, order]
    return matrix.to(torch.float32)


# --- Learned tables ---------------------------------------------------------------------------


def _sequence_length(x: torch.Tensor) -> int:
    if x.dim() not in (2, 3):
        raise ValueError(
            "expected token ids [batch, T] or embeddings [batch, T, dim], "
            f"got shape {tuple(x.shape)}")
    return x.shape[1]


class LearnedPositionalEmbedding(nn.Module):
    """A trainable table with one row per position, `[max_len, dim]`, as in GPT-2 and BERT.

    Given a batch (token ids `[B, T]` or embeddings `[B, T, dim]`), returns the first T rows as
    `[1, T, dim]`, which broadcasts onto the batch, on the input's device.
    """

    def __init__(self, max_len: int, dim: int):
        super().__init__()
        _check_positive("max_len", max_len)
        _check_positive("dim", dim)
        self.max_len = max_len
        self.table = nn.Embedding(max_len, dim)  # its .weight is the [max_len, dim] parameter

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = _sequence_length(x)
        if length > self.max_len:
            raise ValueError(
                f"the sequence has {length} positions, but this learned table has rows only for "
                f"positions 0..{self.max_len - 1} (max_len={self.max_len}): there is no trained "
                f"vector for position {self.max_len} or later. Cut the input to at most "
                f"{self.max_len} tokens (e.g. slide a window over it).")
        # Built on the input's device (a bare torch.arange would be on the CPU, and a model on a
        # GPU would then fail).
        positions = torch.arange(length, device=x.device)
        return self.table(positions).unsqueeze(0)

    def at(self, positions: torch.Tensor) -> torch.Tensor:
        """The rows of the given positions, any shape -> shape + `[dim]`.

        For batches whose rows start at different positions: a left-padded batch, packed
        documents, or the new token of a generation step (its position is the number of
        tokens before it).
        """
        positions = torch.as_tensor(positions)
        if positions.is_floating_point() or positions.dtype == torch.bool:
            raise ValueError(f"positions must be integers, got {positions.dtype}")
        if positions.numel() and (positions.min() < 0 or positions.max() >= self.max_len):
            last = int(positions.max())
            raise ValueError(
                f"position {last if last >= self.max_len else int(positions.min())} is asked "
                f"for, but this learned table has rows only for positions 0..{self.max_len - 1} "
                f"(max_len={self.max_len})")
        return self.table(positions.to(self.table.weight.device))


class InputEmbedding(nn.Module):
    """Token embedding + learned position embedding, then LayerNorm and dropout (BERT's recipe).

    BERT also adds a third table, the segment ("token type") embedding, which is left out here.
    Returns `[B, T, dim]` for token ids `[B, T]`.
    """

    def __init__(self, vocab_size: int, max_len: int, dim: int, dropout: float = 0.1):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("max_len", max_len), ("dim", dim)):
            _check_positive(name, value)
        is_number = isinstance(dropout, (int, float)) and not isinstance(dropout, bool)
        if not (is_number and 0 <= dropout < 1):
            raise ValueError(f"dropout must be a probability in [0, 1), got dropout={dropout!r}")
        self.tokens = nn.Embedding(vocab_size, dim)
        self.positions = LearnedPositionalEmbedding(max_len, dim)
        self.norm = nn.LayerNorm(dim, eps=1e-12)  # BERT's epsilon
        self.dropout = nn.Dropout(dropout)

    def forward(self, token_ids: torch.Tensor) -> torch.Tensor:
        if token_ids.dim() != 2:
            raise ValueError(f"expected token ids [batch, T], got shape {tuple(token_ids.shape)}")
        # [B, T, dim] + [1, T, dim]: the same position rows for every sequence in the batch.
        summed = self.tokens(token_ids) + self.positions(token_ids)
        return self.dropout(self.norm(summed))
