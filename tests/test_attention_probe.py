"""The attention probe's weights are the ones each layer uses: applied to the layer's values they
give the layer's own output, for every position scheme; the mass by distance sums them in bands."""

import pytest
import torch

from helpers import POSITION_SCHEMES, TinyGPT
from helpers.attention_probe import attention_mass_by_distance, last_query_attention


@pytest.mark.parametrize("scheme", POSITION_SCHEMES)
def test_weights_reproduce_each_layers_output(scheme):
    torch.manual_seed(0)
    model = TinyGPT(vocab_size=50, context_length=24, position=scheme, t5_max_distance=20).eval()
    if scheme == "rope":  # a scaled RoPE too: the attention factor must enter the logits
        model.set_rope_scaling({"rope_type": "yarn", "factor": 2.0,
                                "original_max_position_embeddings": 12})
    inputs = torch.randint(0, 50, (3, 24 if scheme == "learned" else 40))
    seen = []

    def keep(attention, args, output):
        seen.append((attention, args[0], output))

    hooks = [block.attention.register_forward_hook(keep) for block in model.blocks]
    with torch.no_grad():
        model(inputs)
    for hook in hooks:
        hook.remove()
    weights = last_query_attention(model, inputs)
    assert weights.shape == (2, 3, 4, inputs.shape[1])
    assert torch.allclose(weights.sum(dim=-1), torch.ones(2, 3, 4))
    for layer, (attention, x, output) in enumerate(seen):
        batch, length, d_model = x.shape
        values = attention.qkv(x).view(batch, length, 3, 4, -1)[:, :, 2].transpose(1, 2)
        mixed = (weights[layer].unsqueeze(2) @ values).squeeze(2)  # [B, heads, head size]
        assert torch.allclose(attention.out(mixed.reshape(batch, d_model)), output[:, -1],
                              atol=1e-5)


def test_mass_by_distance_sums_bands():
    weights = torch.zeros(1, 2, 1, 6)
    weights[0, 0, 0] = torch.tensor([0.1, 0.1, 0.2, 0.2, 0.2, 0.2])  # key 5 is distance 0
    weights[0, 1, 0] = torch.tensor([0.5, 0.0, 0.0, 0.0, 0.0, 0.5])
    mass = attention_mass_by_distance(weights, [0, 2, 6])
    assert mass.shape == (1, 1, 2)
    assert torch.allclose(mass[0, 0], torch.tensor([(0.4 + 0.5) / 2, (0.6 + 0.5) / 2]))


@pytest.mark.parametrize("edges", [[0], [0, 0, 3], [3, 1], [-1, 2]])
def test_bad_edges_are_refused(edges):
    with pytest.raises(ValueError, match="edges must be at least two increasing distances"):
        attention_mass_by_distance(torch.ones(1, 1, 1, 4) / 4, edges)


def test_bad_inputs_are_refused():
    model = TinyGPT(vocab_size=10, context_length=8)
    with pytest.raises(ValueError, match=r"expected token ids \[batch, T\], got shape \(8,\)"):
        last_query_attention(model, torch.zeros(8, dtype=torch.long))
