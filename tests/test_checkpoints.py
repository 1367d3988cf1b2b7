"""helpers.checkpoints without transformers: every weight lands once, in the layout the peer
expects (tests/peers/test_generation_peers.py loads them into Hugging Face's models)."""

import pytest
import torch

from helpers import TinyGPT, apply_rope, rope_layout_permutation
from helpers.checkpoints import gpt2_config, gpt2_state_dict, llama_config, llama_state_dict


def make(**kwargs):
    torch.manual_seed(0)
    return TinyGPT(30, 16, d_model=32, n_heads=4, n_layers=2, **kwargs)


def signature(tensor):
    """The tensor's values, sorted: the same for a weight, its transpose or its rows reordered."""
    return tuple(tensor.detach().flatten().sort().values.tolist())


def test_every_weight_is_carried_over_once():
    """Each parameter's values land in exactly one carried tensor (transposed or with rows
    reordered as the peer expects), and nothing else is carried but GPT-2's zero biases."""
    for model, state in ((make(position="rope", architecture="llama"), llama_state_dict),
                         (make(position="learned"), gpt2_state_dict)):
        for parameter in model.parameters():  # random init: no two parameters share values
            torch.nn.init.normal_(parameter)
        carried = [t for t in state(model).values() if t.abs().sum() > 0]  # drop zero biases
        ours = [signature(p) for p in model.parameters()]
        # TinyGPT's fused qkv becomes three tensors (Llama) or stays one (GPT-2).
        fused = {signature(b.attention.qkv.weight) for b in model.blocks}
        theirs = [signature(t) for t in carried]
        if len(theirs) != len(ours):  # Llama: compare the three parts with the fused whole
            split = [signature(part) for b in model.blocks
                     for part in b.attention.qkv.weight.chunk(3)]
            ours = [s for s in ours if s not in fused] + split
        assert sorted(ours) == sorted(theirs)


def test_llama_queries_turned_in_the_half_layout_are_ours_reordered():
    model = make(position="rope", architecture="llama")
    x = torch.randn(5, 32)
    ours = (x @ model.blocks[0].attention.qkv.weight.chunk(3)[0].T).view(5, 4, 8).transpose(0, 1)
    theirs = (x @ llama_state_dict(model)["model.layers.0.self_attn.q_proj.weight"].T)
    theirs = theirs.view(5, 4, 8).transpose(0, 1)
    order = rope_layout_permutation(8)
    torch.testing.assert_close(apply_rope(theirs, layout="half"), apply_rope(ours)[..., order])
    config = llama_config(model)
    assert (config["head_dim"], config["num_key_value_heads"], config["intermediate_size"]) == (
        8, 4, 128)


def test_gpt2_stores_linear_weights_transposed():
    model = make(position="learned")
    carried = gpt2_state_dict(model)
    assert torch.equal(carried["transformer.h.1.attn.c_attn.weight"].T,
                       model.blocks[1].attention.qkv.weight)
    assert gpt2_config(model)["n_positions"] == 16


@pytest.mark.parametrize("convert, kwargs", [
    (llama_state_dict, dict(position="rope")),  # the GPT-2 block, not Llama's
    (llama_config, dict(position="alibi", architecture="llama")),
    (gpt2_state_dict, dict(position="sinusoidal")),
    (gpt2_config, dict(position="learned", architecture="llama")),
])
def test_only_the_matching_model_converts(convert, kwargs):
    with pytest.raises(ValueError, match="is TinyGPT with position="):
        convert(make(**kwargs))


def test_a_model_with_changed_frequencies_is_refused():
    model = make(position="rope", architecture="llama")
    model.set_rope_scaling({"rope_type": "linear", "factor": 2.0})
    with pytest.raises(ValueError, match="not rope_theta.*rope_theta=10000.0.*rope_scaling"):
        llama_config(model)
    model.set_rope_scaling(None)
    llama_config(model)
    with pytest.raises(ValueError, match="rope_theta=500000"):
        llama_config(model, rope_theta=500000.0)
