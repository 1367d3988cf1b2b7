"""TinyGPT at inference: the KV cache, left-padded batches, packed documents, and their errors.

Every property is checked for every position scheme and every fixed RoPE scaling; dynamic NTK
is the one case where a cache changes the result, and a test measures by how much.
"""

import pytest
import torch

from helpers import POSITION_SCHEMES, KVCache, TinyGPT, apply_rope

VOCAB, CONTEXT = 40, 24
TRAINED = 8  # the "original length" the scaled RoPE configs stretch from

FIXED_SCALINGS = {
    "linear": {"rope_type": "linear", "factor": 2.0},
    "ntk": {"rope_type": "ntk", "factor": 2.0},
    "yarn": {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": TRAINED},
    "llama3": {"rope_type": "llama3", "factor": 2.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": TRAINED},
}
DYNAMIC = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": TRAINED}

# Every scheme, then RoPE once more under each fixed scaling, and the Llama-style block.
SETTINGS = [(p, None, "gpt2") for p in POSITION_SCHEMES] + [
    ("rope", name, "gpt2") for name in FIXED_SCALINGS] + [("rope", None, "llama")]
SETTING_IDS = [f"{p}-{s or 'plain'}-{a}" for p, s, a in SETTINGS]


def make(position, scaling=None, architecture="gpt2", seed=0):
    torch.manual_seed(seed)
    model = TinyGPT(VOCAB, CONTEXT, d_model=32, n_heads=4, n_layers=2, position=position,
                    architecture=architecture).eval()
    if scaling is not None:
        model.set_rope_scaling(FIXED_SCALINGS[scaling] if isinstance(scaling, str) else scaling)
    # Larger token vectors than the default init: logits far apart, so greedy choices are
    # clear-cut and rounding cannot flip one.
    with torch.no_grad():
        model.tokens.weight.mul_(3)
    return model


def prompts(batch=3, length=6, seed=1):
    return torch.randint(0, VOCAB, (batch, length), generator=torch.Generator().manual_seed(seed))


def left_pad(rows, pad_id=0):
    """Prompts of different lengths as one left-padded batch and its attention mask."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id)
    mask = torch.zeros(len(rows), width, dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, width - len(row):] = row
        mask[i, width - len(row):] = 1
    return ids, mask


@pytest.mark.parametrize("position, scaling, architecture", SETTINGS, ids=SETTING_IDS)
def test_cached_and_uncached_generation_agree(position, scaling, architecture):
    model = make(position, scaling, architecture)
    ids = prompts()
    cached, cached_logits = model.generate(ids, 10, output_logits=True)
    fresh, fresh_logits = model.generate(ids, 10, use_cache=False, output_logits=True)
    assert cached.shape == (3, 16)
    assert torch.equal(cached[:, :6], ids)
    assert torch.equal(cached, fresh)
    torch.testing.assert_close(cached_logits, fresh_logits, rtol=1e-5, atol=1e-5)
    # And each step's logits are what a plain forward pass over the whole sequence gives.
    whole = model(cached[:, :-1])[:, 5:]
    torch.testing.assert_close(cached_logits, whole, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("position, scaling, architecture", SETTINGS, ids=SETTING_IDS)
@pytest.mark.parametrize("use_cache", [True, False], ids=["cached", "uncached"])
def test_a_left_padded_row_generates_what_its_prompt_generates_alone(
        position, scaling, architecture, use_cache):
    model = make(position, scaling, architecture)
    rows = [prompts(1, n, seed=n)[0] for n in (7, 3, 5)]
    ids, mask = left_pad(rows)
    batch, batch_logits = model.generate(ids, 6, attention_mask=mask, use_cache=use_cache,
                                         output_logits=True)
    for i, row in enumerate(rows):
        alone, alone_logits = model.generate(row[None], 6, use_cache=use_cache,
                                             output_logits=True)
        assert torch.equal(batch[i, 7:], alone[0, len(row):])
        torch.testing.assert_close(batch_logits[i], alone_logits[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("position, scaling, architecture", SETTINGS, ids=SETTING_IDS)
def test_a_packed_row_gives_each_document_its_own_logits(position, scaling, architecture):
    model = make(position, scaling, architecture)
    lengths = (5, 9, 1, 7)
    documents = [prompts(1, n, seed=10 + n)[0] for n in lengths]
    packed = torch.cat(documents)[None]
    document_ids = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
    logits = model(packed, document_ids=document_ids[None])[0]
    start = 0
    for document in documents:
        alone = model(document[None])[0]
        torch.testing.assert_close(logits[start:start + len(document)], alone,
                                   rtol=1e-5, atol=1e-5)
        start += len(document)


@pytest.mark.parametrize("position", [p for p in POSITION_SCHEMES if p != "none"])
def test_packing_without_document_ids_leaks_across_documents(position):
    """The control: the same packed row without document_ids is not the documents alone."""
    model = make(position)
    first, second = prompts(1, 6, seed=3)[0], prompts(1, 6, seed=4)[0]
    packed = model(torch.cat([first, second])[None])[0, 6:]
    assert not torch.allclose(packed, model(second[None])[0], atol=1e-3)


def test_a_cache_holds_rotated_keys_and_the_next_position_is_its_length():
    model = make("rope")
    cache = KVCache()
    ids = prompts(2, 5)
    model(ids, cache=cache)
    assert len(cache) == 5 and len(cache.keys) == 2  # one entry per layer
    assert cache.keys[0].shape == (2, 4, 5, 8)  # [B, heads, T, head_dim]
    # The keys are stored rotated: layer 0's are the rotated projections of its input.
    block = model.blocks[0]
    x = block.norm1(model.tokens(ids))
    _, keys, _ = block.attention.qkv(x).view(2, 5, 3, 4, 8).permute(2, 0, 3, 1, 4)
    torch.testing.assert_close(cache.keys[0], apply_rope(keys))
    step = model(prompts(2, 1, seed=7), cache=cache)
    assert step.shape == (2, 1, VOCAB) and len(cache) == 6


def test_dynamic_ntk_gives_different_results_with_and_without_a_cache():
    """Dynamic NTK picks frequencies for the current length. Without a cache every key is
    turned again with the newest frequencies; with one, the cached keys keep the frequencies
    of the step that made them. Within the trained length the two agree; past it they part."""
    model = make("rope", DYNAMIC)
    ids = prompts(2, TRAINED - 2)
    cached, cached_logits = model.generate(ids, 12, output_logits=True)
    fresh, fresh_logits = model.generate(ids, 12, use_cache=False, output_logits=True)
    # Steps whose sequence is still within the trained length (TRAINED - 2 + step <= TRAINED):
    within = 3
    torch.testing.assert_close(cached_logits[:, :within], fresh_logits[:, :within],
                               rtol=1e-5, atol=1e-5)
    gap = (cached_logits - fresh_logits).abs().amax(dim=-1)  # [B, steps]
    # Past the trained length the two part, by far more than rounding (~1e-7 here) ...
    assert (gap[:, within:] > 1e-5).all(), gap
    # ... and by more as the sequence grows and the frequencies move further from those the
    # early keys were turned with (this random model: ~2e-4 at the first step past, ~2e-3 at
    # the last) ...
    assert (gap[:, -3:].mean(dim=1) > 3 * gap[:, within]).all(), gap
    # ... yet small next to the logits themselves: each cached key is off by a small turn.
    spread = fresh_logits.amax(-1) - fresh_logits.amin(-1)
    assert float(gap.max()) < 0.01 * float(spread.min()), (gap.max(), spread.min())


def test_the_learned_table_refuses_to_generate_past_its_length():
    """The last new token is chosen but never fed back: 20 prompt tokens and 5 new ones feed
    positions 0..23, the table's last row; a sixth new token would need row 24."""
    model = make("learned")
    model.generate(prompts(1, 20), 5)
    model.generate(prompts(1, CONTEXT), 1)  # a full prompt still gets its next token
    with pytest.raises(ValueError, match=r"positions up to 24.*rows only for positions 0\.\.23"):
        model.generate(prompts(1, 20), 6)
    # Left pads take no positions: only the longest real prompt counts.
    ids, mask = left_pad([prompts(1, 20)[0], prompts(1, 2)[0]])
    model.generate(ids, 5, attention_mask=mask)
    with pytest.raises(ValueError, match="positions up to 24"):
        model.generate(ids, 6, attention_mask=mask)
    with pytest.raises(ValueError, match=r"rows only for positions 0\.\.23"):
        model(prompts(1, 1), cache=_filled_cache(model, 24))


def _filled_cache(model, length):
    cache = KVCache()
    model(prompts(1, length), cache=cache)
    return cache


def test_generation_keeps_the_models_mode_and_gradients_off():
    model = make("alibi").train()
    out = model.generate(prompts(), 2)
    assert model.training and not out.requires_grad
    assert torch.equal(model.generate(prompts(), 0), prompts())


@pytest.mark.parametrize("call, message", [
    (lambda m: m.generate(prompts(), -1), r"max_new_tokens must be an integer >= 0, got -1"),
    (lambda m: m.generate(prompts(), 2.0), r"max_new_tokens must be an integer"),
    (lambda m: m.generate(prompts()[0], 2), r"expected prompts \[batch, T\]"),
    (lambda m: m.generate(prompts(), 2, attention_mask=torch.ones(3, 5, dtype=torch.long)),
     r"attention_mask must have shape .*\[3, 6\].*got \[3, 5\]"),
    (lambda m: m.generate(prompts(), 2, attention_mask=torch.full((3, 6), 2)),
     r"1 \(a real token\) and 0 \(a pad\)"),
    (lambda m: m.generate(prompts(), 2, attention_mask=torch.ones(3, 6)),
     r"1 \(a real token\) and 0 \(a pad\)"),
    (lambda m: m.generate(prompts(), 2, attention_mask=torch.tensor([[1] * 6, [0] * 6, [1] * 6])),
     r"at least one real token"),
    (lambda m: m.generate(prompts(), 2, attention_mask=torch.tensor(
        [[1] * 6, [1, 1, 1, 1, 0, 0], [1] * 6])), r"left padding.*row 1"),
    (lambda m: m(prompts(), document_ids=torch.tensor([[0, 0, 1, 1, 0, 2]] * 3)),
     r"non-decreasing along each row"),
    (lambda m: m(prompts(), document_ids=torch.zeros(3, 5, dtype=torch.long)),
     r"document_ids must have the shape of ids, \[3, 6\]"),
    (lambda m: m(prompts(), document_ids=torch.zeros(3, 6)), r"must be integers"),
    (lambda m: m(prompts(), attention_mask=torch.ones(3, 6, dtype=torch.long),
                 document_ids=torch.zeros(3, 6, dtype=torch.long)), r"not both"),
    (lambda m: m(prompts(), document_ids=torch.zeros(3, 6, dtype=torch.long),
                 cache=_filled_cache(m, 2)), r"cannot be used with a cache"),
])
def test_bad_input_names_the_rule(call, message):
    with pytest.raises(ValueError, match=message):
        call(make("rope"))


def test_the_llama_block_has_rmsnorm_swiglu_and_no_biases():
    model = make("rope", architecture="llama")
    assert isinstance(model.norm, torch.nn.RMSNorm)
    assert all(isinstance(b.norm1, torch.nn.RMSNorm) for b in model.blocks)
    assert not [name for name, _ in model.named_parameters() if name.endswith("bias")]
    assert {name.split(".")[-2] for name, _ in model.named_parameters() if ".mlp." in name} == {
        "gate", "up", "down"}
    with pytest.raises(ValueError, match="architecture must be one of"):
        TinyGPT(VOCAB, CONTEXT, architecture="bert")
