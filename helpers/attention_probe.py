"""Where a trained TinyGPT's last query looks: its attention weights, per layer and head.

`TinyGPT` computes attention with PyTorch's fused kernel, which never hands out the weights.
To read them, `last_query_attention` listens to each layer's attention input (a forward hook)
and recomputes, for the window's last query only, the same logits the layer uses: queries and
keys from the layer's own `queries_keys_values` (its projection, RoPE and attention factor),
the layer's bias (ALiBi, T5), the scale 1/sqrt(head size), then a softmax over the keys the
query may see. A test holds
that these weights, applied to the layer's values, give the layer's own output.

`attention_mass_by_distance` then sums each head's weights over bands of distance (how many
tokens back a key sits), which shows whether a head still reaches far back in a long window.
"""

from __future__ import annotations

import math

import torch
from torch import nn


__all__ = ["last_query_attention", "attention_mass_by_distance"]


def last_query_attention(model: nn.Module, inputs: torch.Tensor) -> torch.Tensor:
    """Attention weights of the last query of each window: `[layers, B, heads, T]`.

    Entry [l, b, h, j] is how much head h of layer l, at the last position of window b, attends
    to the key at position j; each row sums to 1. `inputs` are token ids `[B, T]` (one plain
    window per row: no padding, packing or cache). Runs under `torch.inference_mode()`.
    """
    if inputs.dim() != 2:
        raise ValueError(f"expected token ids [batch, T], got shape {tuple(inputs.shape)}")
    weights = []

    def record(attention, args, kwargs):
        weights.append(_last_query_weights(attention, args[0], kwargs.get("rope"),
                                           kwargs.get("bias")))

    hooks = [block.attention.register_forward_pre_hook(record, with_kwargs=True)
             for block in model.blocks]
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            model(inputs.to(next(model.parameters()).device))
    finally:
        for hook in hooks:
            hook.remove()
        model.train(was_training)
    return torch.stack(weights).cpu()


def attention_mass_by_distance(weights: torch.Tensor, edges: list[int]) -> torch.Tensor:
    """The share of each head's attention on keys `edges[i] <= distance < edges[i + 1]` back.

    `weights` is `last_query_attention`'s `[layers, B, heads, T]`; the distance of key j is
    T - 1 - j (0: the query's own token). Returns the mean over the windows,
    `[layers, heads, len(edges) - 1]`.
    """
    if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:])) or edges[0] < 0:
        raise ValueError(f"edges must be at least two increasing distances from 0 on, "
                         f"got {edges!r}")
    length = weights.shape[-1]
    distance = length - 1 - torch.arange(length)
    bands = [(distance >= low) & (distance < high) for low, high in zip(edges, edges[1:])]
    return torch.stack([weights[..., band].sum(dim=-1).mean(dim=1) for band in bands], dim=-1)


def _last_query_weights(attention: nn.Module, x: torch.Tensor, rope, bias) -> torch.Tensor:
    """The softmax weights of the last query over every key, as the layer computes its logits."""
    q, k, _ = attention.queries_keys_values(x, rope)  # the layer's own projection and RoPE
    # The last query sees every key of its window, so no causal mask is needed for its row.
    logits = (q[:, :, -1:] @ k.transpose(-2, -1)).squeeze(2) / math.sqrt(q.shape[-1])
    if bias is not None:  # [heads, T, T]: the last row is the last query's
        logits = logits + bias[:, -1]
    return logits.softmax(dim=-1)  # [B, heads, T]
