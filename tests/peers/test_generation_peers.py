"""TinyGPT's cached generation against Hugging Face's, with the same weights (helpers.checkpoints).

- Llama: TinyGPT(position="rope", architecture="llama") is `LlamaForCausalLM` with RoPE in the
  other layout; both generate greedily with their KV caches, on prompts of one length and on a
  left-padded batch, plain RoPE and each fixed `rope_scaling` Hugging Face shares with the course.
- GPT-2: TinyGPT(position="learned") is `GPT2LMHeadModel` with exact GELU and zero attention
  biases; its `past_key_values` path is driven step by step, with the position ids a padded
  batch needs passed by hand, and through `generate`.

Tiny configs built in code, random weights: nothing is downloaded.
"""

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

from helpers import TinyGPT
from helpers.checkpoints import gpt2_config, gpt2_state_dict, llama_config, llama_state_dict

VOCAB, CONTEXT = 60, 32
NEW = 10
SCALINGS = {
    "plain": None,
    "linear": {"rope_type": "linear", "factor": 2.0},
    "yarn": {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": CONTEXT},
    "llama3": {"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": CONTEXT},
}
TOLERANCE = dict(rtol=1e-4, atol=1e-4)  # logits of a few units, two float32 computations


def course_llama(scaling):
    torch.manual_seed(0)
    ours = TinyGPT(VOCAB, CONTEXT, d_model=64, n_heads=4, n_layers=2, position="rope",
                   architecture="llama").eval()
    with torch.no_grad():  # clear-cut greedy choices: rounding cannot flip one
        ours.tokens.weight.mul_(8)
    return ours


def llama_pair(scaling, implementation):
    ours = course_llama(scaling)
    config = LlamaConfig(**llama_config(ours), rope_scaling=None if scaling is None else
                         dict(scaling))
    config._attn_implementation = implementation
    theirs = LlamaForCausalLM(config).eval()
    theirs.load_state_dict(llama_state_dict(ours), strict=True)
    if scaling is not None:
        ours.set_rope_scaling(dict(scaling))  # the course reads the same dict
    return ours, theirs


def left_padded(lengths, seed=1):
    generator = torch.Generator().manual_seed(seed)
    width = max(lengths)
    ids = torch.zeros(len(lengths), width, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, length in enumerate(lengths):
        ids[row, width - length:] = torch.randint(0, VOCAB, (length,), generator=generator)
        mask[row, width - length:] = 1
    return ids, mask


def hugging_face_generate(model, ids, mask):
    out = model.generate(ids, attention_mask=mask, max_new_tokens=NEW, min_new_tokens=NEW,
                         do_sample=False, output_logits=True, return_dict_in_generate=True)
    return out.sequences, torch.stack(out.logits, dim=1)


def assert_same_generation(ours, theirs, lengths):
    """Greedy generation on a (left-padded) batch: the same tokens, and logits within TOLERANCE."""
    ids, mask = left_padded(lengths)
    with torch.no_grad():
        expected, expected_logits = hugging_face_generate(theirs, ids, mask)
        actual, actual_logits = ours.generate(ids, NEW, attention_mask=mask, output_logits=True)
    assert torch.equal(actual, expected)
    torch.testing.assert_close(actual_logits, expected_logits, **TOLERANCE)


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
@pytest.mark.parametrize("scaling", SCALINGS)
@pytest.mark.parametrize("lengths", [(7, 7), (9, 3, 6)], ids=["same-length", "left-padded"])
def test_cached_generation_is_llamas(lengths, scaling, implementation):
    assert_same_generation(*llama_pair(SCALINGS[scaling], implementation), lengths)


def test_the_whole_llama_gives_the_same_logits():
    ours, theirs = llama_pair(None, "sdpa")
    ids = torch.randint(0, VOCAB, (2, CONTEXT), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        torch.testing.assert_close(ours(ids), theirs(ids).logits, **TOLERANCE)


def gpt2_pair():
    torch.manual_seed(0)
    ours = TinyGPT(VOCAB, CONTEXT, d_model=64, n_heads=4, n_layers=2, position="learned").eval()
    with torch.no_grad():
        ours.tokens.weight.mul_(8)
    theirs = GPT2LMHeadModel(GPT2Config(**gpt2_config(ours))).eval()
    missing, unexpected = theirs.load_state_dict(gpt2_state_dict(ours), strict=False)
    # Only non-persistent buffers may be left out (none are parameters).
    assert not unexpected and not {n for n in missing if n in dict(theirs.named_parameters())}
    return ours, theirs


def test_gpt2s_past_key_values_path_with_left_padding():
    """GPT-2's forward, step by step with its cache: the position ids of a left-padded batch
    come from the attention mask (a cumulative sum), passed by hand, as the course computes
    them inside the model."""
    ours, theirs = gpt2_pair()
    ids, mask = left_padded((9, 4, 6))
    with torch.no_grad():
        actual, actual_logits = ours.generate(ids, NEW, attention_mask=mask, output_logits=True)
        past, step_ids, step_mask, chosen, logits = None, ids, mask, [], []
        for _ in range(NEW):
            positions = (step_mask.cumsum(dim=1) - 1).clamp(min=0)[:, -step_ids.shape[1]:]
            out = theirs(input_ids=step_ids, attention_mask=step_mask, position_ids=positions,
                         past_key_values=past, use_cache=True)
            past = out.past_key_values
            logits.append(out.logits[:, -1])
            step_ids = out.logits[:, -1].argmax(dim=-1, keepdim=True)
            chosen.append(step_ids)
            step_mask = torch.cat([step_mask, torch.ones_like(step_ids)], dim=1)
    assert torch.equal(actual, torch.cat([ids, *chosen], dim=1))
    torch.testing.assert_close(actual_logits, torch.stack(logits, dim=1), **TOLERANCE)


@pytest.mark.parametrize("lengths", [(7, 7), (9, 3, 6)], ids=["same-length", "left-padded"])
def test_cached_generation_is_gpt2s(lengths):
    assert_same_generation(*gpt2_pair(), lengths)


def test_right_padding_breaks_hugging_faces_generation_and_the_course_refuses_it():
    """The classic bug: with pads on the right, new tokens follow the pads. Hugging Face
    generates anyway (with a warning); the course's generate raises instead."""
    ours, theirs = llama_pair(None, "sdpa")
    prompt = torch.randint(0, VOCAB, (1, 5), generator=torch.Generator().manual_seed(3))
    right = torch.cat([prompt, torch.zeros(1, 3, dtype=torch.long)], dim=1)
    right_mask = torch.tensor([[1] * 5 + [0] * 3])
    with torch.no_grad():
        alone, _ = hugging_face_generate(theirs, prompt, torch.ones_like(prompt))
        padded, _ = hugging_face_generate(theirs, right, right_mask)
    assert not torch.equal(padded[0, 8:], alone[0, 5:])
    with pytest.raises(ValueError, match="left padding"):
        ours.generate(right, NEW, attention_mask=right_mask)


def test_dynamic_ntk_with_a_cache_is_llamas_and_differs_without_one():
    """Past the trained length dynamic NTK changes the frequencies at every step. Both caches
    keep each key turned as it was when it was made, so the course's cached generation equals
    Hugging Face's step for step; recomputing every key with the newest frequencies (the
    course without a cache) gives other logits."""
    dynamic = {"rope_type": "dynamic", "factor": 4.0}
    ours = course_llama(None)
    config = LlamaConfig(**llama_config(ours), rope_scaling=dict(dynamic))
    theirs = LlamaForCausalLM(config).eval()
    theirs.load_state_dict(llama_state_dict(ours), strict=True)
    # Hugging Face reads the trained length from max_position_embeddings; the course's dict
    # names it.
    ours.set_rope_scaling(dict(dynamic, original_max_position_embeddings=CONTEXT))
    ids, mask = left_padded((CONTEXT - 4, CONTEXT - 4))
    with torch.no_grad():
        expected, expected_logits = hugging_face_generate(theirs, ids, mask)
        actual, actual_logits = ours.generate(ids, NEW, attention_mask=mask, output_logits=True)
        _, fresh_logits = ours.generate(ids, NEW, attention_mask=mask, use_cache=False,
                                        output_logits=True)
    assert torch.equal(actual, expected)
    torch.testing.assert_close(actual_logits, expected_logits, **TOLERANCE)
    past_the_trained_length = slice(5, None)  # steps whose sequence is longer than CONTEXT
    # (rounding alone moves these logits by about 1e-6)
    assert (actual_logits - fresh_logits)[:, past_the_trained_length].abs().max() > 1e-4
