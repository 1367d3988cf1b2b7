"""Scaled dot-product self-attention, with no notion of position at all.

Notebook 01 uses it to show the problem the course solves: permute the input tokens and the
outputs are permuted the same way, nothing else changes. Later notebooks add positions to
its inputs (absolute tables), to its queries and keys (RoPE) or to its scores (relative bias).
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["scaled_dot_product_attention", "SelfAttention"]


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 bias: torch.Tensor | None = None, causal: bool = False):
    """softmax(q kᵀ / √d + bias) v, returning (outputs, attention weights).

    `q`, `k`, `v` are `[..., T, d]`; `bias`, if given, is added to the `[..., T, T]` scores
    (this is where relative position schemes enter). `causal=True` hides later keys.
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias
    if causal:
        t_q, t_k = scores.shape[-2], scores.shape[-1]
        future = torch.ones(t_q, t_k, dtype=torch.bool, device=scores.device).triu(1)
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
