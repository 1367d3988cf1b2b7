"""Rotary position embeddings (RoPE): turn pairs of query and key coordinates by position.

A query or key of even size d is read as d/2 pairs of coordinates. At position m, pair i is
rotated by the angle m·θᵢ, with θᵢ = base^(-2i/d) (Su et al., RoFormer, 2021). Read a pair
(a, b) as the complex number a + ib and the rotation is a multiplication by e^(i·m·θᵢ).
Rotations compose, so a query turned to position m and a key turned to position n have a dot
product that depends on n - m alone: position enters attention only as an offset.

Which coordinates form a pair is a convention of the code, not of the mathematics:
    "interleaved"  (x₀, x₁), (x₂, x₃), ...   RoFormer, GPT-J, Meta's Llama code, torchtune,
                                              lucidrains' rotary-embedding-torch
    "half"         (xᵢ, x_{i+d/2})            GPT-NeoX, Hugging Face's Llama, Mistral, Qwen
Both give the same rotation up to a fixed permutation of the coordinates
(`rope_layout_permutation`): weights trained with one layout must be permuted for the other.

Some models turn only the first `rotary_dim` coordinates of each head and pass the others
through (GPT-J: 64 of 256; GPT-NeoX-20B: 24 of 96); their frequencies use rotary_dim as d.
"""

from __future__ import annotations

import math
from functools import lru_cache
from numbers import Real

import torch

__all__ = ["ROPE_LAYOUTS", "rope_frequencies", "rope_wavelengths", "apply_rope",
           "rope_layout_permutation", "rope_decay_bound"]

ROPE_LAYOUTS = ("interleaved", "half")


def rope_frequencies(dim: int, base: float = 10000.0) -> torch.Tensor:
    """θᵢ = base^(-2i/dim) for i = 0 .. dim/2 - 1, in radians per token (float32, `[dim // 2]`).

    θ₀ = 1: the first pair turns one radian per token; the last pair turns slowest.
    """
    return _frequencies(dim, base, torch.float32)


def rope_wavelengths(dim: int, base: float = 10000.0) -> torch.Tensor:
    """Tokens per full turn of each pair, 2π/θᵢ: from 2π ≈ 6.3 to 2π·base^((dim-2)/dim)."""
    return 2 * math.pi / rope_frequencies(dim, base)


def rope_layout_permutation(dim: int) -> torch.Tensor:
    """The order of coordinates that turns the interleaved layout into the half layout.

    `x[..., order]` lists x₀, x₂, x₄, ... then x₁, x₃, x₅, ..., so the interleaved pair
    (x₂ᵢ, x₂ᵢ₊₁) lands on the half-layout pair (i, i + dim/2):
    `apply_rope(x[..., order], layout="half") == apply_rope(x)[..., order]`.
    """
    _check_dim(dim)
    return torch.cat((torch.arange(0, dim, 2), torch.arange(1, dim, 2)))


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None,
               base: float = 10000.0, layout: str = "interleaved",
               inv_freq: torch.Tensor | None = None,
               rotary_dim: int | None = None) -> torch.Tensor:
    """Rotate every coordinate pair of `x` by the angle position·θᵢ (RoPE).

    x          `[..., T, dim]` queries or keys; any view works (e.g. heads after a transpose)
    positions  `[T]` integer or float positions; by default 0, 1, ..., T - 1. Positions that
               differ per row take any shape `[..., T]` that broadcasts against x's leading
               dimensions, e.g. `[B, 1, T]` for x `[B, heads, T, dim]` (a padded or packed batch)
    base       sets the frequencies θᵢ = base^(-2i/dim)
    layout     "interleaved" pairs (x₀, x₁), (x₂, x₃), ...; "half" pairs (xᵢ, x_{i+dim/2})
    inv_freq   `[dim // 2]` frequencies to use instead of `rope_frequencies(dim, base)`
    rotary_dim turn only the first `rotary_dim` coordinates (even, at most dim; frequencies and
               `inv_freq` then use rotary_dim as the size, the layout applies within them) and
               pass the rest through unchanged: partial rotary, as in GPT-J and GPT-NeoX

    Returns a tensor of x's shape and dtype. Angles, cosines and sines are computed in
    float32 (float64 for a float64 `x`) and the result is cast back to x's dtype.
    """
    length, dim = _check_input(x, layout)
    _check_base(base)
    if rotary_dim is not None and _check_rotary_dim(rotary_dim, dim) < dim:
        turned = apply_rope(x[..., :rotary_dim], positions, base, layout, inv_freq)
        return torch.cat((turned, x[..., rotary_dim:]), dim=-1)  # the rest: content only
    dtype = torch.promote_types(x.dtype, torch.float32)  # float64 stays; (b)float16 -> float32
    if positions is None and inv_freq is None:
        cos, sin = _default_cos_sin(length, dim, float(base), dtype, x.device,
                                    torch.is_inference_mode_enabled())
    else:
        positions = _check_positions(torch.arange(length) if positions is None else positions,
                                     x.shape[:-1])
        inv_freq = _check_inv_freq(_frequencies(dim, base, dtype) if inv_freq is None
                                   else inv_freq, dim)
        cos, sin = _cos_sin(positions, inv_freq, dtype, x.device)
    work = x.to(dtype)
    # The same rotation either way; each layout gets the form that is fastest for it.
    if layout == "interleaved":
        rotated = _turn_neighbours(work, cos, sin)
    else:
        rotated = _turn_halves(work, cos, sin)
    return rotated.to(x.dtype)


def _turn_neighbours(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Interleaved layout: (x₀, x₁), (x₂, x₃), ... sit side by side in memory, exactly like
    the real and imaginary parts of complex numbers. Multiplying x₂ᵢ + i·x₂ᵢ₊₁ by
    e^(iφ) = cos φ + i·sin φ turns the pair by φ."""
    if not x.is_contiguous() or x.storage_offset() % 2:  # complex views need dense pairs
        x = x.clone(memory_format=torch.contiguous_format)  # e.g. heads after a transpose
    pairs = torch.view_as_complex(x.unflatten(-1, (-1, 2)))  # [..., T, dim/2], no copy
    return torch.view_as_real(pairs * torch.complex(cos, sin)).flatten(-2)


def _turn_halves(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Half layout: pair i is (a, b) = (xᵢ, x_{i+dim/2}). Apply the rotation formula
    a' = a·cos φ - b·sin φ,  b' = b·cos φ + a·sin φ  to the two halves at once."""
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    rotated = x * torch.cat((cos, cos), dim=-1)  # a·cos φ and b·cos φ in one pass over x
    rotated[..., :half].addcmul_(b, sin, value=-1)  # a' = a·cos φ - b·sin φ
    rotated[..., half:].addcmul_(a, sin)  # b' = b·cos φ + a·sin φ
    return rotated


def rope_decay_bound(distances: torch.Tensor, dim: int, base: float = 10000.0) -> torch.Tensor:
    """RoFormer's long-term decay curve (section 3.4.3), at each relative distance r.

    The score q·k at distance r is Re Σᵢ hᵢ·e^(i·r·θᵢ), where hᵢ pairs the query's and the
    key's coordinates. Summing by parts bounds its size by max|hᵢ₊₁ - hᵢ| · Σⱼ |Sⱼ|, with
    Sⱼ = Σ_{k<j} e^(i·r·θₖ). This returns (1/(dim/2))·Σⱼ |Sⱼ|: (dim/2 + 1)/2 at r = 0,
    tending to shrink as r grows. Float64, shape of `distances`.
    """
    thetas = _frequencies(dim, base, torch.float64)
    angles = torch.as_tensor(distances, dtype=torch.float64)[..., None] * thetas
    turns = torch.polar(torch.ones_like(angles), angles)  # e^(i·r·θᵢ)
    partial_sums = turns.cumsum(dim=-1)  # S₁ .. S_{d/2}
    return partial_sums.abs().mean(dim=-1)


# ---- frequencies and cos/sin tables ---------------------------------------------------------

def _frequencies(dim: int, base: float, dtype: torch.dtype) -> torch.Tensor:
    _check_dim(dim)
    _check_base(base)
    exponents = torch.arange(0, dim, 2, dtype=torch.float64) / dim  # 2i/d
    return (base ** -exponents).to(dtype)  # the power in float64, then rounded once


def _cos_sin(positions: torch.Tensor, inv_freq: torch.Tensor, dtype: torch.dtype,
             device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of every angle m·θᵢ, `[..., T, dim/2]` for positions `[..., T]`, in `dtype`."""
    angles = positions.to(device, dtype)[..., None] * inv_freq.to(device, dtype)
    return angles.cos(), angles.sin()


@lru_cache(maxsize=16)
def _default_cos_sin(length: int, dim: int, base: float, dtype: torch.dtype,
                     device: torch.device, inference_mode: bool):
    """The tables for positions 0..T-1, kept between calls: every layer of a model needs them.

    `inference_mode` is part of the key because tensors made under `torch.inference_mode()`
    cannot be used by autograd afterwards.
    """
    return _cos_sin(torch.arange(length), _frequencies(dim, base, dtype), dtype, device)


# ---- input checks -------------------------------------------------------------------------

def _check_dim(dim) -> None:
    if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0 or dim % 2:
        raise ValueError(f"dim must be a positive even integer (coordinates rotate in pairs), "
                         f"got {dim!r}")


def _check_base(base) -> None:
    if isinstance(base, bool) or not isinstance(base, Real) or not 0 < base < math.inf:
        raise ValueError(f"base must be a positive finite number (θᵢ = base^(-2i/dim)), "
                         f"got {base!r}")


def _check_input(x, layout: str) -> tuple[int, int]:
    if layout not in ROPE_LAYOUTS:
        raise ValueError(f"layout must be one of {ROPE_LAYOUTS}, got {layout!r}")
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.dim() < 2:
        found = (f"{x.dtype} tensor of shape {list(x.shape)}" if isinstance(x, torch.Tensor)
                 else type(x).__name__)
        raise ValueError(f"x must be a real floating-point tensor of shape [..., T, dim], "
                         f"got a {found}")
    dim = x.shape[-1]
    if dim == 0 or dim % 2:
        raise ValueError(f"the last dimension of x must be even and positive (coordinates "
                         f"rotate in pairs), got {dim}")
    return x.shape[-2], dim


def _check_rotary_dim(rotary_dim, dim: int) -> int:
    if (isinstance(rotary_dim, bool) or not isinstance(rotary_dim, int) or rotary_dim <= 0
            or rotary_dim % 2 or rotary_dim > dim):
        raise ValueError(f"rotary_dim must be a positive even integer no larger than the head "
                         f"size {dim} (coordinates rotate in pairs), got {rotary_dim!r}")
    return rotary_dim


def _check_positions(positions, leading: torch.Size) -> torch.Tensor:
    """`leading` is x's shape without its last dimension: [..., T]."""
    positions = torch.as_tensor(positions)
    if positions.dtype == torch.bool or positions.is_complex():
        raise ValueError(f"positions must be integers or real numbers, got {positions.dtype}")
    length = leading[-1]
    fits = positions.dim() >= 1 and positions.shape[-1] == length
    if fits and positions.dim() > 1:
        try:  # per-row positions must line up with x's batch and head dimensions
            fits = torch.broadcast_shapes(positions.shape, leading) == leading
        except RuntimeError:
            fits = False
    if not fits:
        raise ValueError(f"positions must have shape [T] = [{length}] (one per position of "
                         f"x), or [..., T] broadcasting to x's {list(leading)}, got "
                         f"{list(positions.shape)}")
    return positions


def _check_inv_freq(inv_freq, dim: int) -> torch.Tensor:
    inv_freq = torch.as_tensor(inv_freq)
    if not inv_freq.is_floating_point() or inv_freq.shape != (dim // 2,):
        raise ValueError(f"inv_freq must be a float tensor of shape [dim // 2] = "
                         f"[{dim // 2}] (one frequency per pair), got a {inv_freq.dtype} "
                         f"tensor of shape {list(inv_freq.shape)}")
    return inv_freq
