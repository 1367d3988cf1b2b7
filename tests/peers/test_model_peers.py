"""TinyGPT's attention layer with RoPE against Hugging Face's `LlamaAttention` carrying the same
weights: the same outputs.

TinyGPT rotates in the interleaved layout and Llama (in Hugging Face) in the half layout, so the
query and key rows of each head are reordered by `rope_layout_permutation` when the weights are
copied: that is exactly what converting a checkpoint between the two layouts takes. Values and
the output projection are copied as they are. Every RoPE scaling is covered: Hugging Face's
`LlamaRotaryEmbedding` makes cos and sin from the config (YaRN's attention factor included, and
"dynamic" recomputed for the input's length), the course passes `rope_inv_freq`'s result.
"""

import pytest
import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaAttention, LlamaRotaryEmbedding

from helpers import TinyGPT, rope_layout_permutation
from helpers.rope_scaling import rope_inv_freq
from tolerance import DTYPES, FREQ_RTOL, assert_within, random_tensor, unit_roundoff

U32 = unit_roundoff(torch.float32)

TRAINED = 32  # the original context of the scaled configs
SCALINGS = {
    "none": None,
    "linear": {"rope_type": "linear", "factor": 4.0},
    "dynamic": {"rope_type": "dynamic", "factor": 4.0},
    "yarn": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": TRAINED},
    "yarn-betas": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": TRAINED,
                   "beta_fast": 8, "beta_slow": 2, "attention_factor": 1.3},
    "llama3": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": TRAINED},
}
# (batch, T, d_model, heads): head sizes 16 and 32; T below, at and past the trained length.
SHAPES = [(2, 1, 64, 4), (2, 17, 64, 4), (1, 32, 96, 3), (2, 100, 64, 4)]
SHAPE_IDS = [f"B{b}-T{t}-d{d}-h{h}" for b, t, d, h in SHAPES]


def course_rope(head_dim: int, scaling: dict | None, length: int):
    """(inv_freq, attention_factor) as TinyGPT gets them; the course's "dynamic" needs the
    trained length in the dict, which Hugging Face takes from max_position_embeddings."""
    if scaling is not None and scaling["rope_type"] == "dynamic":
        scaling = dict(scaling, original_max_position_embeddings=TRAINED)
    return rope_inv_freq(head_dim, 10000.0, scaling, seq_len=length)


def llama_layer(d_model: int, heads: int, scaling: dict | None, implementation: str):
    config = LlamaConfig(hidden_size=d_model, num_attention_heads=heads,
                         num_key_value_heads=heads, head_dim=d_model // heads,
                         rope_theta=10000.0, max_position_embeddings=TRAINED,
                         rope_scaling=None if scaling is None else dict(scaling),
                         attention_bias=False, attention_dropout=0.0)
    config._attn_implementation = implementation
    return LlamaAttention(config, layer_idx=0).eval(), LlamaRotaryEmbedding(config)


def copy_weights(ours, theirs, heads: int) -> None:
    """TinyGPT's fused qkv projection into Llama's q_proj, k_proj, v_proj, with each head's
    query and key rows reordered from the interleaved to the half layout."""
    d_model = ours.out.weight.shape[0]
    head_dim = d_model // heads
    order = rope_layout_permutation(head_dim)
    w_q, w_k, w_v = ours.qkv.weight.chunk(3)  # rows: [q | k | v], heads in order within each

    def half_layout(w):
        return w.view(heads, head_dim, d_model)[:, order].reshape(d_model, d_model)

    with torch.no_grad():
        theirs.q_proj.weight.copy_(half_layout(w_q))
        theirs.k_proj.weight.copy_(half_layout(w_k))
        theirs.v_proj.weight.copy_(w_v)
        theirs.o_proj.weight.copy_(ours.out.weight)


def rounding_bound(out: torch.Tensor, dtype: torch.dtype, d_model: int, length: int,
                   implementation: str) -> float:
    """How far two correct computations of this layer in `dtype` may be apart.

    Eight stages (projections to q, k and v; the rotation; scores; softmax; the weighted sum of
    values; the output projection). A reduction of n <= max(d_model, T) terms, accumulated in
    float32 (bfloat16 on the CPU too) or float64, is off by about √n·u_acc of its terms' size
    (rounding errors add up like a random walk; 4√n allows for the two sides grouping their sums
    differently); each stage's result is then rounded to `dtype` once or twice (2·u).
    Hugging Face's eager attention takes the softmax in float32 even for float64 inputs: its
    weights then carry float32 roundings, 16·u32 of the output at most. Relative to the
    largest output.
    """
    n = max(d_model, length)
    u_acc = unit_roundoff(torch.promote_types(dtype, torch.float32))
    u_softmax = U32 if implementation == "eager" else 0.0
    relative = 8 * (4 * n ** 0.5 * u_acc + 2 * unit_roundoff(dtype)) + 16 * u_softmax
    return relative * float(out.abs().max())


def llama_cos_sin(positions: torch.Tensor, inv_freq: torch.Tensor, attention_factor: float,
                  dtype: torch.dtype):
    """Hugging Face's recipe (LlamaRotaryEmbedding.forward) for cos and sin `[T, head_dim]`:
    the angles twice, times the attention factor, cast to x's dtype; from the given frequencies,
    in float32 (float64 for float64, where Hugging Face would stay in float32)."""
    work = torch.promote_types(dtype, torch.float32)
    angles = positions.to(work)[:, None] * inv_freq.to(work)[None, :]
    angles = torch.cat((angles, angles), dim=-1)
    return ((angles.cos() * attention_factor).to(dtype), (angles.sin() * attention_factor).to(dtype))


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("scaling", SCALINGS)
@pytest.mark.parametrize("batch,length,d_model,heads", SHAPES, ids=SHAPE_IDS)
def test_tinygpt_attention_is_llama_attention(batch, length, d_model, heads, scaling, dtype,
                                              implementation):
    settings = SCALINGS[scaling]
    torch.manual_seed(length + d_model)
    model = TinyGPT(50, TRAINED, d_model=d_model, n_heads=heads, n_layers=1, position="rope")
    ours = model.blocks[0].attention.to(dtype).eval()
    theirs, _ = llama_layer(d_model, heads, settings, implementation)
    theirs = theirs.to(dtype)
    copy_weights(ours, theirs, heads)

    x = random_tensor((batch, length, d_model), dtype, seed=length)
    # Eager attention needs an explicit causal mask; SDPA infers it when none is given.
    mask = None
    if implementation == "eager":
        future = torch.ones(length, length, dtype=torch.bool).triu(1)
        mask = torch.zeros(length, length, dtype=dtype).masked_fill(future, float("-inf"))
        mask = mask[None, None].expand(batch, 1, length, length)
    # The same angles on both sides (test_llama_rotary_embedding_is_rope_inv_freq checks that
    # Hugging Face's own cos and sin are these): what is compared here is the layer.
    inv_freq, attention_factor = course_rope(d_model // heads, settings, length)
    cos, sin = llama_cos_sin(torch.arange(length), inv_freq, attention_factor, dtype)
    with torch.no_grad():
        expected, _ = theirs(x, position_embeddings=(cos[None], sin[None]), attention_mask=mask)
        actual = ours(x, rope=(inv_freq, attention_factor, None))
    bound = rounding_bound(expected, dtype, d_model, length, implementation)
    assert_within(actual, expected, bound,
                  f"TinyGPT attention vs LlamaAttention ({implementation}, {scaling})")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("length", [1, 17, 32, 100, 1000])
@pytest.mark.parametrize("scaling", SCALINGS)
def test_llama_rotary_embedding_is_rope_inv_freq(scaling, length, dtype):
    """Hugging Face's LlamaRotaryEmbedding, built from the config, gives the cos and sin of the
    course's `rope_inv_freq` (times the attention factor): for "dynamic" too, whose frequencies
    it recomputes from the length of the positions it is given.

    Bound: its frequencies are within FREQ_RTOL of the course's and each side rounds the angle
    m·θᵢ in float32, so at position m the angles differ by m·θᵢ·(FREQ_RTOL + 2·u32); cos and sin
    are then rounded (float32, then x's dtype) and multiplied by the attention factor a.
    """
    settings = SCALINGS[scaling]
    _, rotary = llama_layer(64, 4, settings, "sdpa")
    x = torch.zeros(2, length, 64, dtype=dtype)  # read for its dtype only
    positions = torch.arange(length)
    cos, sin = rotary(x, positions.expand(2, length))
    inv_freq, attention_factor = course_rope(16, settings, length)
    assert rotary.attention_scaling == pytest.approx(attention_factor, rel=1e-15)
    ours = llama_cos_sin(positions, inv_freq, attention_factor, dtype)
    theta = torch.cat((inv_freq, inv_freq)).double()
    u = max(unit_roundoff(dtype), U32)
    bound = attention_factor * (positions.double()[:, None] * theta * (FREQ_RTOL + 2 * U32)
                                + 4 * u)
    for name, theirs, mine in (("cos", cos, ours[0]), ("sin", sin, ours[1])):
        assert_within(mine.expand_as(theirs), theirs, bound, f"{name}, {scaling}")


@pytest.mark.parametrize("length", [17, 32, 100])
@pytest.mark.parametrize("scaling", SCALINGS)
def test_tinygpt_set_rope_scaling_gives_llamas_frequencies(scaling, length):
    """TinyGPT.set_rope_scaling, then a forward pass: the frequencies and attention factor its
    attention layers receive are those of a fresh LlamaRotaryEmbedding for the same config and
    input length ("dynamic" recomputed for the length, as Hugging Face does for a first call)."""
    settings = SCALINGS[scaling]
    model = TinyGPT(50, TRAINED, d_model=64, n_heads=4, n_layers=1, position="rope").eval()
    course_settings = settings
    if settings is not None and settings["rope_type"] == "dynamic":
        course_settings = dict(settings, original_max_position_embeddings=TRAINED)
    model.set_rope_scaling(course_settings)
    received = []
    model.blocks[0].attention.register_forward_pre_hook(
        lambda module, args, kwargs: received.append(kwargs["rope"]), with_kwargs=True)
    with torch.no_grad():
        model(torch.zeros(1, length, dtype=torch.long))
    inv_freq, attention_factor, positions = received[0]
    assert positions is None  # one window: positions 0..T-1
    _, rotary = llama_layer(64, 4, settings, "sdpa")
    rotary(torch.zeros(1, length, 64), torch.arange(length)[None])
    assert attention_factor == pytest.approx(rotary.attention_scaling, rel=1e-15)
    assert_within(inv_freq.double(), rotary.inv_freq.double(),
                  FREQ_RTOL * rotary.inv_freq.double(), f"TinyGPT {scaling} at {length} tokens")


def test_dynamic_agrees_at_each_length_except_where_hugging_face_caches():
    """Hugging Face's rotary module keeps state: it recomputes the "dynamic" frequencies only
    for an input longer than any before, and returns to the original ones only for an input
    shorter than the trained length. `rope_inv_freq(..., seq_len=n)` has no state: it depends
    on n alone. So the two agree while inputs grow and after a return below the trained
    length; in between, Hugging Face keeps the frequencies of the longest input so far."""
    settings = SCALINGS["dynamic"]
    _, rotary = llama_layer(64, 4, settings, "sdpa")
    # (input length, the length whose course frequencies Hugging Face's module then holds)
    for length, held in ((100, 100), (17, 17), (1000, 1000), (500, 1000), (32, 1000), (31, 31),
                         (33, 33)):
        rotary(torch.zeros(1, length, 64), torch.arange(length)[None])  # updates its inv_freq
        inv_freq, _ = course_rope(16, settings, held)
        assert_within(inv_freq.double(), rotary.inv_freq.double(),
                      FREQ_RTOL * inv_freq.double(), f"dynamic at {length} tokens")
    assert not torch.allclose(course_rope(16, settings, 500)[0], course_rope(16, settings, 1000)[0])


def test_the_layouts_matter():
    """Without the row permutation the layers disagree: the test above can tell layouts apart."""
    model = TinyGPT(50, TRAINED, d_model=64, n_heads=4, n_layers=1, position="rope")
    ours = model.blocks[0].attention.eval()
    theirs, rotary = llama_layer(64, 4, None, "sdpa")
    with torch.no_grad():
        w_q, w_k, w_v = ours.qkv.weight.chunk(3)
        for projection, weight in zip((theirs.q_proj, theirs.k_proj, theirs.v_proj, theirs.o_proj),
                                      (w_q, w_k, w_v, ours.out.weight)):
            projection.weight.copy_(weight)
        x = random_tensor((2, 17, 64), torch.float32, seed=0)
        expected, _ = theirs(x, position_embeddings=rotary(x, torch.arange(17)[None]))
        actual = ours(x, rope=(model.rope_inv_freq, 1.0, None))
    assert (actual - expected).abs().max() > 1e-2
