"""Scaled dot-product self-attention, with no notion of position at all.

Notebook 01 builds it step by step (queries, keys, values, logits, softmax, causal mask, heads)
and uses it to show the problem the course solves: permute the input tokens and the outputs are
permuted the same way, nothing else changes. Later notebooks add positions to its inputs
(absolute tables), to its queries and keys (RoPE) or to its scores (relative bias).
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["scaled_dot_product_attention", "SelfAttention", "split_heads", "merge_heads",
           "MultiHeadSelfAttention"]


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 bias: torch.Tensor | None = None, causal: bool = False):
    """softmax(q kᵀ / √d + bias) v, returning (outputs, attention weights).

    `q` is `[..., T_q, d]`, `k` and `v` are `[..., T_k, d]`; `bias`, if given, is added to the
    `[..., T_q, T_k]` scores (this is where relative position schemes enter). `causal=True` hides
    later keys. With fewer queries than keys, the queries are the *last* T_q positions (as when
    earlier keys and values are cached): query i stands at position T_k - T_q + i and sees keys
    0 .. T_k - T_q + i. (PyTorch's `is_causal` aligns its mask top-left instead.)
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias
    if causal:
        t_q, t_k = scores.shape[-2], scores.shape[-1]
        if t_q > t_k:
            raise ValueError(f"causal attention needs at least as many keys as queries, got "
                             f"{t_q} queries and {t_k} keys")
        # True where key j comes after query i's position T_k - T_q + i: the diagonal shifts
        # right by T_k - T_q (0 for the square case: above the main diagonal).
        future = torch.ones(t_q, t_k, dtype=torch.bool, device=scores.device).triu(t_k - t_q + 1)
        scores = scores.masked_fill(future, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


class SelfAttention(nn.Module):
    """One attention head: project to queries, keys and values, then attend. No positions."""

    def __init__(self, dim: int, head_dim: int | None = None):
        super().__init__()
        head_dim = head_dim or dim
        self.query = nn.Linear(dim, head_dim, bias=False)
        self.key = nn.Linear(dim, head_dim, bias=False)
        self.value = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x: torch.Tensor, bias: torch.Tensor | None = None, causal: bool = False):
        """`x` is `[..., T, dim]`; returns (outputs `[..., T, head_dim]`, weights `[..., T, T]`)."""
        return scaled_dot_product_attention(self.query(x), self.key(x), self.value(x),
                                            bias=bias, causal=causal)


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """`[..., T, d_model]` -> `[..., n_heads, T, d_h]` with head size d_h = d_model / n_heads.

    Head h gets columns h*d_h ... (h+1)*d_h - 1. Moving the head axis before T lets one batched
    matrix product attend in every head at once, each head on its own slice. Any input works,
    also a non-contiguous one such as a transposed tensor (`reshape` copies it if it must).
    """
    *batch, length, d_model = x.shape
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
    return x.reshape(*batch, length, n_heads, d_model // n_heads).transpose(-3, -2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """`[..., n_heads, T, d_h]` -> `[..., T, n_heads * d_h]`: the heads' outputs concatenated."""
    *batch, n_heads, length, head_dim = x.shape
    return x.transpose(-3, -2).reshape(*batch, length, n_heads * head_dim)


class MultiHeadSelfAttention(nn.Module):
    """`n_heads` heads of size d_model / n_heads, each attending on its own, then one output map.

    The same computation as the tiny GPT's attention (`helpers.model.CausalSelfAttention`, which
    fuses the three maps into one matrix and calls PyTorch's fused kernel). No positions.
    """

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        self.n_heads = n_heads
        # One d_model x d_model map each: its output columns hold all the heads' slices in a row.
        self.query = nn.Linear(d_model, d_model, bias=False)
        self.key = nn.Linear(d_model, d_model, bias=False)
        self.value = nn.Linear(d_model, d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)  # mixes what the heads found

    def forward(self, x: torch.Tensor, bias: torch.Tensor | None = None, causal: bool = False):
        """`x` is `[..., T, d_model]`; returns (outputs `[..., T, d_model]`,
        weights `[..., n_heads, T, T]`). A `bias` broadcasts against the weights' shape."""
        q, k, v = (split_heads(f(x), self.n_heads) for f in (self.query, self.key, self.value))
        # Each head scales by its own size: √d_h, not √d_model (q.shape[-1] is d_h here).
        mixed, weights = scaled_dot_product_attention(q, k, v, bias=bias, causal=causal)
        return self.out(merge_heads(mixed)), weights
