"""TinyGPT's weights under Hugging Face's names: the same network as a Llama or a GPT-2.

    llama_config(model), llama_state_dict(model)   for `LlamaForCausalLM`
    gpt2_config(model), gpt2_state_dict(model)     for `GPT2LMHeadModel`

The configs are plain dicts (`LlamaConfig(**llama_config(model))`), so this module needs no
`transformers`; only the code that builds the Hugging Face model does.

Three things change on the way, none of them the network itself:
    - TinyGPT computes queries, keys and values with one fused matrix `qkv`; Llama keeps three
      (`q_proj`, `k_proj`, `v_proj`), and GPT-2 one (`c_attn`) stored transposed.
    - TinyGPT turns RoPE pairs in the interleaved layout, Llama in Hugging Face in the half
      layout. Reordering each head's query and key rows (`rope_layout_permutation`) makes the
      two the same rotation: that is what converting a checkpoint between them takes.
    - GPT-2 has biases on its attention projections; TinyGPT has none, so they are zeros.
"""

from __future__ import annotations

import torch

from .rope import rope_frequencies, rope_layout_permutation

__all__ = ["llama_config", "llama_state_dict", "gpt2_config", "gpt2_state_dict"]

# TinyGPT's vocabulary has no beginning- or end-of-text token of its own (and generation never
# stops early), so the configs name none.
NO_SPECIAL_TOKENS = dict(bos_token_id=None, eos_token_id=None, pad_token_id=None)


def _require(model, position: str, architecture: str, peer: str) -> None:
    if model.position != position or model.architecture != architecture:
        raise ValueError(f"{peer} is TinyGPT with position={position!r} and architecture="
                         f"{architecture!r}; this model has position={model.position!r} and "
                         f"architecture={model.architecture!r}")


def _sizes(model) -> tuple[int, int, int, int]:
    d_model = model.tokens.embedding_dim
    return d_model, model.n_heads, d_model // model.n_heads, len(model.blocks)


def llama_config(model, rope_theta: float = 10000.0) -> dict:
    """The `LlamaConfig` settings of a TinyGPT(position="rope", architecture="llama") whose
    frequencies are rope_theta^(-2i/d). A stretched RoPE goes into the config's `rope_scaling`
    (the same dict `model.set_rope_scaling` reads), not into the converted model."""
    _require(model, "rope", "llama", "Llama")
    d_model, heads, head_dim, layers = _sizes(model)
    expected = rope_frequencies(head_dim, rope_theta)
    if (model.rope_scaling is not None or model.rope_attention_factor != 1.0
            or not torch.allclose(model.rope_inv_freq.cpu(), expected)):
        raise ValueError(f"the model's RoPE frequencies are not rope_theta^(-2i/d) with "
                         f"rope_theta={rope_theta}: convert the unscaled model, and give the "
                         f"config the scaling as rope_scaling")
    return dict(vocab_size=model.tokens.num_embeddings, hidden_size=d_model,
                intermediate_size=model.blocks[0].mlp.gate.out_features,
                num_hidden_layers=layers, num_attention_heads=heads,
                num_key_value_heads=heads,  # one key head per query head (no grouped queries)
                head_dim=head_dim, hidden_act="silu", rms_norm_eps=1e-6,
                max_position_embeddings=model.context_length, rope_theta=rope_theta,
                attention_bias=False, mlp_bias=False, tie_word_embeddings=False,
                attention_dropout=0.0, **NO_SPECIAL_TOKENS)


def llama_state_dict(model) -> dict[str, torch.Tensor]:
    """The weights of a TinyGPT(position="rope", architecture="llama") as `LlamaForCausalLM`
    names them, with query and key rows in the half layout."""
    _require(model, "rope", "llama", "Llama")
    d_model, heads, head_dim, _ = _sizes(model)
    order = rope_layout_permutation(head_dim)

    def half_layout(weight):  # each head's rows: interleaved pairs -> first halves, second halves
        return weight.view(heads, head_dim, d_model)[:, order].reshape(d_model, d_model)

    weights = {"model.embed_tokens.weight": model.tokens.weight,
               "model.norm.weight": model.norm.weight, "lm_head.weight": model.head.weight}
    for i, block in enumerate(model.blocks):
        at = f"model.layers.{i}."
        w_q, w_k, w_v = block.attention.qkv.weight.chunk(3)  # rows: [q | k | v]
        weights |= {at + "self_attn.q_proj.weight": half_layout(w_q),
                    at + "self_attn.k_proj.weight": half_layout(w_k),
                    at + "self_attn.v_proj.weight": w_v,
                    at + "self_attn.o_proj.weight": block.attention.out.weight,
                    at + "mlp.gate_proj.weight": block.mlp.gate.weight,
                    at + "mlp.up_proj.weight": block.mlp.up.weight,
                    at + "mlp.down_proj.weight": block.mlp.down.weight,
                    at + "input_layernorm.weight": block.norm1.weight,
                    at + "post_attention_layernorm.weight": block.norm2.weight}
    return {name: tensor.detach().clone() for name, tensor in weights.items()}


def gpt2_config(model) -> dict:
    """The `GPT2Config` settings of a TinyGPT(position="learned"): exact GELU (TinyGPT's
    `nn.GELU()`; GPT-2 itself uses the tanh approximation, "gelu_new") and no dropout."""
    _require(model, "learned", "gpt2", "GPT-2")
    d_model, heads, _, layers = _sizes(model)
    return dict(vocab_size=model.tokens.num_embeddings, n_positions=model.context_length,
                n_embd=d_model, n_layer=layers, n_head=heads, n_inner=4 * d_model,
                activation_function="gelu", layer_norm_epsilon=1e-5, resid_pdrop=0.0,
                embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=False, **NO_SPECIAL_TOKENS)


def gpt2_state_dict(model) -> dict[str, torch.Tensor]:
    """The weights of a TinyGPT(position="learned") as `GPT2LMHeadModel` names them. GPT-2's
    `Conv1D` layers store their weight as [in, out], the transpose of `nn.Linear`'s."""
    _require(model, "learned", "gpt2", "GPT-2")
    d_model = model.tokens.embedding_dim
    weights = {"transformer.wte.weight": model.tokens.weight,
               "transformer.wpe.weight": model.positions.table.weight,
               "transformer.ln_f.weight": model.norm.weight,
               "transformer.ln_f.bias": model.norm.bias,
               "lm_head.weight": model.head.weight}
    for i, block in enumerate(model.blocks):
        at = f"transformer.h.{i}."
        expand, _, contract = block.mlp  # Linear, GELU, Linear
        weights |= {at + "ln_1.weight": block.norm1.weight, at + "ln_1.bias": block.norm1.bias,
                    at + "attn.c_attn.weight": block.attention.qkv.weight.T,
                    at + "attn.c_attn.bias": torch.zeros(3 * d_model),
                    at + "attn.c_proj.weight": block.attention.out.weight.T,
                    at + "attn.c_proj.bias": torch.zeros(d_model),
                    at + "ln_2.weight": block.norm2.weight, at + "ln_2.bias": block.norm2.bias,
                    at + "mlp.c_fc.weight": expand.weight.T, at + "mlp.c_fc.bias": expand.bias,
                    at + "mlp.c_proj.weight": contract.weight.T,
                    at + "mlp.c_proj.bias": contract.bias}
    return {name: tensor.detach().clone() for name, tensor in weights.items()}
