"""Positions in two dimensions (`helpers.positions_2d`) against Hugging Face `transformers` and
lucidrains' `rotary-embedding-torch`.

    sinusoidal_table_2d        ViT-MAE's position table as `ViTMAEEmbeddings` initialises it
                               (MAE's released layout, column first), and transformers'
                               `build_2d_sinusoidal_position_embedding` with its halves swapped
                               (that function is row first; ViT-MAE swaps them to load MAE)
    apply_rope_2d, "half"      Qwen2-VL's vision encoder: `Qwen2VLVisionRotaryEmbedding` and
                               `apply_rotary_pos_emb_vision`
    apply_rope_2d, interleaved `rotary-embedding-torch`'s axial frequencies (`get_axial_freqs`,
                               the code EVA-02's 2-D RoPE is based on) and `apply_rotary_emb`
    interpolate_table_2d       ViT's `ViTEmbeddings.interpolate_pos_encoding` (bicubic,
                               align_corners=False, as MAE's `interpolate_pos_embed`)
    mrope_position_ids         Qwen2-VL's `get_rope_index`
    apply_mrope                Qwen2-VL's `Qwen2VLRotaryEmbedding` (its mrope_section split)
                               and `apply_rotary_pos_emb`
    (lesson 09's numbers)      Qwen2-VL's image processor (the PIL one; the default needs
                               torchvision): `smart_resize` keeps the area within 56·56 and
                               28·28·1280 pixels by default

One known difference is tested as such: after a video with more frames than merged rows and
columns, transformers 5.x starts the next text at (start + max(rows, columns)), inside the ids
the video already uses; the course follows the Qwen2-VL paper and transformers 4.x (largest id
so far, plus one).
"""

import inspect

import pytest
import torch
from rotary_embedding_torch import RotaryEmbedding, apply_rotary_emb
from transformers import Qwen2VLConfig, ViTConfig, ViTMAEConfig
from transformers.models.qwen2_vl import image_processing_pil_qwen2_vl as qwen2_vl_images
from transformers.models.qwen2_vl import modeling_qwen2_vl as qwen2_vl
from transformers.models.qwen2_vl.configuration_qwen2_vl import (Qwen2VLTextConfig,
                                                                 Qwen2VLVisionConfig)
from transformers.models.vit.modeling_vit import ViTEmbeddings
from transformers.models.vit_mae.modeling_vit_mae import (
    ViTMAEEmbeddings, build_2d_sinusoidal_position_embedding)
from transformers.vision_utils import get_vision_position_ids

from helpers import (apply_mrope, apply_rope_2d, interpolate_table_2d, mrope_position_ids,
                     patch_grid, sinusoidal_table_2d)
from tolerance import DTYPES, FREQ_RTOL, assert_within, random_tensor, unit_roundoff

U32 = unit_roundoff(torch.float32)


def rotation_bound(x: torch.Tensor, largest_position: float) -> float:
    """How far two correct rotations may be apart (see test_rope_peers.default_path_bound):
    frequencies within FREQ_RTOL and angles rounded once per side, so at position m the angles
    differ by m·(FREQ_RTOL + 2·u32); plus eight roundings of the arithmetic."""
    u = max(unit_roundoff(x.dtype), U32)
    scale = float(x.abs().max())
    return scale * (8 * u + 2 ** 0.5 * largest_position * (FREQ_RTOL + 2 * U32))


# ---- MAE's 2-D sin-cos table -----------------------------------------------------------------

@pytest.mark.parametrize("grid,dim", [(14, 768), (2, 8), (7, 32), (16, 1024), (1, 4)])
def test_table_2d_is_vit_maes_position_table(grid, dim):
    """ViT-MAE (square grids only) computes in float64 and rounds to float32, as the course
    does: at most a float32 rounding apart (2·u32 on values up to 1)."""
    config = ViTMAEConfig(hidden_size=dim, image_size=grid * 4, patch_size=4, num_channels=1)
    embeddings = ViTMAEEmbeddings(config)
    embeddings.initialize_weights()
    theirs = embeddings.position_embeddings.detach()[0, 1:]  # row 0 is the [CLS] token's zeros
    assert_within(sinusoidal_table_2d(grid, grid, dim), theirs, 2 * U32, "table vs ViT-MAE")


@pytest.mark.parametrize("height,width,dim", [(3, 5, 16), (14, 9, 64), (1, 12, 8), (10, 1, 4)])
def test_table_2d_is_transformers_table_with_the_halves_swapped(height, width, dim):
    """transformers' own function is row first ([sin_h | cos_h | sin_w | cos_w]); MAE's code,
    and so the course, is column first. The same numbers, the halves exchanged."""
    theirs = build_2d_sinusoidal_position_embedding(height, width, dim)
    swapped = torch.cat([theirs[:, dim // 2:], theirs[:, :dim // 2]], dim=-1)
    ours = sinusoidal_table_2d(height, width, dim)
    assert_within(ours, swapped, 2 * U32, "table vs transformers, halves swapped")
    if height != width or height > 1:
        assert not torch.allclose(ours, theirs), "the two layouts should differ"


# ---- a new grid -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("trained,new,dim", [(14, 24, 32), (8, 12, 16), (4, 3, 8), (16, 32, 4)])
def test_interpolate_table_2d_is_vits_interpolate_pos_encoding(trained, new, dim, dtype):
    """transformers' ViT resizes its learned table as MAE does (square grids only): the [CLS]
    row aside, the patch rows bicubic (align_corners=False) to the new grid. The same
    operations in the same order, so the same numbers."""
    patch = 4
    config = ViTConfig(hidden_size=dim, image_size=trained * patch, patch_size=patch,
                       num_channels=1)
    embeddings = ViTEmbeddings(config).to(dtype)
    table = random_tensor((1 + trained * trained, dim), dtype, seed=trained + new)
    with torch.no_grad():
        embeddings.position_embeddings.copy_(table[None])
        theirs = embeddings.interpolate_pos_encoding(
            torch.zeros(1, 1 + new * new, dim, dtype=dtype), new * patch, new * patch)[0]
    ours = interpolate_table_2d(table[1:], trained, trained, new, new)
    assert torch.equal(theirs[0], table[0])  # the [CLS] row, unchanged
    assert torch.equal(ours, theirs[1:])


def test_qwen2_vl_pixel_range_is_the_lessons():
    """Lesson 09: by default an image's area is kept within 56·56 and 28·28·1280 pixels, so at
    most 1,280 tokens of 28 x 28 pixels after merging; a larger image is shrunk."""
    size = qwen2_vl_images.Qwen2VLImageProcessorPil.size  # as Qwen2VLImageProcessor's (torchvision)
    assert (size["shortest_edge"], size["longest_edge"]) == (3_136, 1_003_520)
    defaults = inspect.signature(qwen2_vl_images.smart_resize).parameters
    assert (defaults["min_pixels"].default, defaults["max_pixels"].default) == (3_136, 1_003_520)
    height, width = qwen2_vl_images.smart_resize(2800, 2800)  # 10,000 tokens of 28 x 28 as is
    assert height % 28 == 0 and width % 28 == 0 and height * width <= 1_003_520
    assert qwen2_vl_images.smart_resize(280, 420) == (280, 420)  # within the range: unchanged


# ---- axial 2-D RoPE --------------------------------------------------------------------------

def qwen_vision_rotation(x: torch.Tensor, positions: torch.Tensor, base: float) -> torch.Tensor:
    """Qwen2-VL's vision encoder rotates q and k [T, heads, head_dim] with (row, column) ids."""
    heads, head_dim = x.shape[1], x.shape[2]
    config = Qwen2VLVisionConfig(embed_dim=heads * head_dim, num_heads=heads, depth=1,
                                 rope_parameters={"rope_type": "axial", "rope_theta": base})
    cos, sin = qwen2_vl.Qwen2VLVisionRotaryEmbedding(config)(x, positions)
    rotated, _ = qwen2_vl.apply_rotary_pos_emb_vision(x, x, cos, sin)
    return rotated


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("height,width,heads,head_dim,base", [
    (4, 6, 2, 16, 10000.0), (14, 14, 1, 80, 10000.0), (1, 9, 3, 8, 100.0),
    (32, 24, 2, 64, 10000.0)])
def test_rope_2d_half_layout_is_qwen2_vls_vision_encoder(height, width, heads, head_dim, base,
                                                         dtype):
    """Qwen2-VL's ViT has 80-wide heads (1280 / 16): 20 pairs by the row, 20 by the column."""
    grid = patch_grid(height, width)
    x = random_tensor((height * width, heads, head_dim), dtype, seed=height * width + head_dim)
    theirs = qwen_vision_rotation(x, grid, base)
    ours = apply_rope_2d(x.transpose(0, 1), grid, base, layout="half").transpose(0, 1)
    bound = rotation_bound(x, max(height, width))
    assert_within(ours, theirs, bound, "axial RoPE (half) vs Qwen2-VL's vision encoder")


def test_rope_2d_takes_qwen2_vls_merge_order_of_patches():
    """Qwen2-VL feeds patches in 2 x 2 merge blocks, not in raster order; its (row, column) ids
    say where each one sits, and the course's function takes them as they are."""
    grid_thw = torch.tensor([[1, 6, 8]])
    positions = get_vision_position_ids(grid_thw, 2)  # [48, 2] (row, column), block order
    assert sorted(map(tuple, positions.tolist())) == sorted(map(tuple, patch_grid(6, 8).tolist()))
    assert not torch.equal(positions, patch_grid(6, 8))
    x = random_tensor((48, 2, 16), torch.float32, seed=3)
    theirs = qwen_vision_rotation(x, positions, 10000.0)
    ours = apply_rope_2d(x.transpose(0, 1), positions, layout="half").transpose(0, 1)
    assert_within(ours, theirs, rotation_bound(x, 8), "axial RoPE in Qwen2-VL's merge order")


@pytest.mark.parametrize("dtype", (torch.float32, torch.float64), ids=str)
@pytest.mark.parametrize("height,width,head_dim,base", [
    (4, 6, 16, 10000.0), (16, 16, 64, 10000.0), (3, 1, 8, 100.0), (7, 12, 32, 10.0)])
def test_rope_2d_interleaved_is_rotary_embedding_torch_axial(height, width, head_dim, base,
                                                             dtype):
    """lucidrains' axial frequencies: one RoPE of size head_dim/2 per axis, rows first, pairs of
    neighbours. Its angles are float32 whatever x's dtype."""
    rotary = RotaryEmbedding(dim=head_dim // 2, freqs_for="lang", theta=base)
    freqs = rotary.get_axial_freqs(height, width)  # [height, width, head_dim]
    x = random_tensor((2, height, width, head_dim), dtype, seed=head_dim + height)
    theirs = apply_rotary_emb(freqs, x).reshape(2, height * width, head_dim)
    ours = apply_rope_2d(x.reshape(2, height * width, head_dim), patch_grid(height, width), base)
    assert_within(ours, theirs, rotation_bound(x, max(height, width)),
                  "axial RoPE (interleaved) vs rotary-embedding-torch")


# ---- M-RoPE ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def qwen2_vl_model():
    """A tiny Qwen2-VL, built from a config in code (nothing is downloaded): get_rope_index
    reads only the config's spatial_merge_size."""
    config = Qwen2VLConfig(
        vision_config=dict(depth=1, embed_dim=32, num_heads=2, hidden_size=32,
                           spatial_merge_size=2),
        text_config=dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=2,
                         intermediate_size=32, num_hidden_layers=1, vocab_size=64,
                         bos_token_id=0, eos_token_id=0,
                         rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]}))
    return qwen2_vl.Qwen2VLModel(config).eval()


def their_rope_index(model, segments, merge=2):
    """transformers' numbering for a sequence given as text lengths and (t, h, w) grids:
    token types 0 (text), 1 (image, t = 1) or 2 (video), and the grids in order."""
    types, images, videos = [], [], []
    for segment in segments:
        if isinstance(segment, int):
            types += [0] * segment
            continue
        t, h, w = segment
        kind = 1 if t == 1 else 2
        types += [kind] * (t * (h // merge) * (w // merge))
        (images if kind == 1 else videos).append(segment)
    token_types = torch.tensor([types])
    position_ids, _ = model.get_rope_index(torch.zeros_like(token_types), token_types,
                                           torch.tensor(images) if images else None,
                                           torch.tensor(videos) if videos else None)
    return position_ids[:, 0]


# In Qwen2-VL every image sits between <|vision_start|> and <|vision_end|>, text tokens.
SEQUENCES = [
    [3, (1, 4, 6), 2],
    [1, (1, 28, 40), 5],  # a 392 x 560 picture in 14-pixel patches
    [(1, 8, 4), 5],
    [2, (1, 2, 2), 1, (1, 6, 2), 4, (1, 4, 4), 1],
    [4, (2, 4, 4), 2],  # a video whose frames do not outnumber its rows and columns
    [6, (1, 16, 16), 3, (3, 12, 8), 2],
    [7],
]


@pytest.mark.parametrize("segments", SEQUENCES, ids=str)
def test_mrope_ids_are_qwen2_vls_get_rope_index(qwen2_vl_model, segments):
    assert torch.equal(mrope_position_ids(segments), their_rope_index(qwen2_vl_model, segments))


def test_mrope_ids_after_a_long_video_follow_the_paper_not_transformers_5(qwen2_vl_model):
    """9 frames of 2 x 2 tokens after 4 text tokens: t reaches 4 + 8 = 12. The course (the
    Qwen2-VL paper, transformers 4.x) starts the text after at 13; transformers 5.x at 4 + 2 = 6,
    ids the video already uses. If this starts failing, transformers changed its rule."""
    segments = [4, (9, 4, 4), 2]
    ours, theirs = mrope_position_ids(segments), their_rope_index(qwen2_vl_model, segments)
    assert torch.equal(ours[:, :-2], theirs[:, :-2])  # text before and the video: the same
    assert ours[:, -2:].tolist() == [[13, 14]] * 3
    assert theirs[:, -2:].tolist() == [[6, 7]] * 3


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("head_dim,section,base,segments", [
    (128, [16, 24, 24], 1e6, [5, (1, 8, 12), 4]),  # Qwen2-VL-7B's heads and split
    (16, [2, 3, 3], 10000.0, [2, (1, 4, 6), 3, (1, 2, 2), 1]),
    (32, [4, 6, 6], 1e6, [1, (3, 4, 8), 2]),
])
def test_apply_mrope_is_qwen2_vls_rotation(head_dim, section, base, segments, dtype):
    """cos and sin from Qwen2VLRotaryEmbedding (float32, cast to x's dtype), applied by
    apply_rotary_pos_emb (rotate_half), against apply_mrope on the same ids."""
    heads = 2
    config = Qwen2VLTextConfig(hidden_size=heads * head_dim, num_attention_heads=heads,
                               num_key_value_heads=heads, intermediate_size=32,
                               num_hidden_layers=1, vocab_size=64, bos_token_id=0,
                               eos_token_id=0, rope_scaling={"type": "mrope",
                                                             "mrope_section": section,
                                                             "rope_theta": base})
    ids = mrope_position_ids(segments)
    x = random_tensor((1, heads, ids.shape[1], head_dim), dtype, seed=head_dim)
    cos, sin = qwen2_vl.Qwen2VLRotaryEmbedding(config)(x, ids[:, None, :])
    theirs, _ = qwen2_vl.apply_rotary_pos_emb(x, x, cos, sin)
    ours = apply_mrope(x, ids, section, base)
    # Their cos and sin are rounded to x's dtype before the products: a few more roundings.
    bound = rotation_bound(x, int(ids.max())) + 4 * unit_roundoff(dtype) * float(x.abs().max())
    assert_within(ours, theirs, bound, "M-RoPE vs Qwen2-VL")
