"""Attention without positions is permutation-equivariant; a causal mask hides the future."""

import math

import torch

from helpers import SelfAttention, scaled_dot_product_attention


def test_matches_the_formula():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 5, 8).unbind(0)
    out, weights = scaled_dot_product_attention(q, k, v)
    expected = torch.softmax(q @ k.T / math.sqrt(8), dim=-1)
    assert torch.allclose(weights, expected)
    assert torch.allclose(out, expected @ v)
    assert torch.allclose(weights.sum(-1), torch.ones(5))


def test_permuting_the_inputs_permutes_the_outputs():
    torch.manual_seed(0)
    attention = SelfAttention(16)
    x = torch.randn(6, 16)
    order = torch.tensor([3, 0, 5, 1, 4, 2])
    out, _ = attention(x)
    shuffled_out, _ = attention(x[order])
    assert torch.allclose(shuffled_out, out[order], atol=1e-6)


def test_causal_mask_hides_later_tokens():
    torch.manual_seed(0)
    attention = SelfAttention(8)
    x = torch.randn(1, 5, 8)
    out, weights = attention(x, causal=True)
    assert torch.all(weights[0].triu(1) == 0)
    changed = x.clone()
    changed[0, 3] += 1.0
    out_changed, _ = attention(changed, causal=True)
    assert torch.allclose(out[0, :3], out_changed[0, :3])
    assert not torch.allclose(out[0, 3], out_changed[0, 3])


def test_bias_is_added_to_the_scores():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 4, 8).unbind(0)
    bias = torch.randn(4, 4)
    _, weights = scaled_dot_product_attention(q, k, v, bias=bias)
    assert torch.allclose(weights, torch.softmax(q @ k.T / math.sqrt(8) + bias, dim=-1))
