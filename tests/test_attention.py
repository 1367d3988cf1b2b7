"""Attention without positions is permutation-equivariant; a causal mask hides the future;
heads are slices of the width, and the multi-head layer is PyTorch's and the tiny GPT's."""

import math

import pytest
import torch
import torch.nn.functional as F

from helpers import (MultiHeadSelfAttention, SelfAttention, merge_heads,
                     scaled_dot_product_attention, split_heads)
from helpers.model import CausalSelfAttention


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


def test_causal_queries_are_the_last_positions_when_keys_are_more():
    """With a cache, 2 queries at positions 3 and 4 against 5 keys: query 0 sees keys 0..3, query
    1 sees all 5, exactly the last two rows of the square causal attention."""
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 5, 8).unbind(0)
    full_out, full_weights = scaled_dot_product_attention(q, k, v, causal=True)
    out, weights = scaled_dot_product_attention(q[:, 3:], k, v, causal=True)
    assert weights.shape == (2, 2, 5)
    assert torch.all(weights[:, 0, 4] == 0) and torch.all(weights[:, 0, :4] > 0)
    assert torch.all(weights[:, 1] > 0)
    assert torch.allclose(weights, full_weights[:, 3:]) and torch.allclose(out, full_out[:, 3:])
    one_query, _ = scaled_dot_product_attention(q[:, -1:], k, v, causal=True)
    assert torch.allclose(one_query, full_out[:, -1:])  # one new token sees every key
    with pytest.raises(ValueError, match="2 queries and 1 keys"):
        scaled_dot_product_attention(q[:, :2], k[:, :1], v[:, :1], causal=True)


def test_bias_is_added_to_the_scores():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 4, 8).unbind(0)
    bias = torch.randn(4, 4)
    _, weights = scaled_dot_product_attention(q, k, v, bias=bias)
    assert torch.allclose(weights, torch.softmax(q @ k.T / math.sqrt(8) + bias, dim=-1))


def test_split_and_merge_heads_are_inverse_and_slice_columns():
    x = torch.randn(2, 5, 12)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)  # [B, n_heads, T, d_h], d_h = 12 / 3
    assert torch.equal(heads[:, 1], x[..., 4:8])  # head 1 holds columns 4..7
    assert torch.equal(merge_heads(heads), x)


def test_split_heads_takes_a_non_contiguous_input():
    x = torch.randn(12, 5).T  # [5, 12], transposed: not contiguous, so .view would fail
    assert not x.is_contiguous()
    assert torch.equal(split_heads(x, 3), split_heads(x.contiguous(), 3))
    assert torch.equal(merge_heads(split_heads(x, 3)), x)


def test_multi_head_matches_torch_scaled_dot_product_attention():
    torch.manual_seed(0)
    attention = MultiHeadSelfAttention(16, n_heads=4)
    x = torch.randn(2, 6, 16)
    q, k, v = (split_heads(f(x), 4) for f in (attention.query, attention.key, attention.value))
    for causal in (False, True):
        out, weights = attention(x, causal=causal)
        expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        assert weights.shape == (2, 4, 6, 6)
        assert torch.allclose(out, attention.out(merge_heads(expected)), atol=1e-6)


def test_multi_head_is_the_tiny_gpts_attention():
    """Same weights in the tiny GPT's fused layout give the same outputs (it is always causal)."""
    torch.manual_seed(0)
    attention = MultiHeadSelfAttention(16, n_heads=4)
    fused = CausalSelfAttention(16, n_heads=4)
    with torch.no_grad():
        fused.qkv.weight.copy_(torch.cat([attention.query.weight, attention.key.weight,
                                          attention.value.weight]))
        fused.out.weight.copy_(attention.out.weight)
    x = torch.randn(2, 6, 16)
    assert torch.allclose(attention(x, causal=True)[0], fused(x), atol=1e-6)


def test_one_head_without_output_map_is_self_attention():
    torch.manual_seed(0)
    single = SelfAttention(8)
    multi = MultiHeadSelfAttention(8, n_heads=1)
    multi.query, multi.key, multi.value = single.query, single.key, single.value
    multi.out = torch.nn.Identity()
    x = torch.randn(5, 8)
    assert torch.allclose(multi(x, causal=True)[0], single(x, causal=True)[0])


def test_heads_need_a_divisible_width():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadSelfAttention(10, n_heads=4)
