"""Positions in two dimensions (helpers/positions_2d.py): each function against formulas written
out independently here, the properties notebook 09 relies on (axial RoPE and M-RoPE scores depend
only on position differences), the conventions it states, and clear errors for bad input."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import (apply_mrope, apply_rope, apply_rope_2d, interpolate_table_2d,
                     mrope_position_ids, patch_grid, patchify, scaled_patch_grid, sinusoidal_table,
                     sinusoidal_table_2d)
from helpers.positions_2d import QWEN2_VL_MROPE_SECTION

PROPERTY = settings(deadline=None, max_examples=30)
sides = st.integers(1, 9)
dims_of_four = st.integers(1, 16).map(lambda quarter: 4 * quarter)
bases = st.sampled_from([100.0, 10000.0, 1e6])
layouts = st.sampled_from(["interleaved", "half"])


def random(*shape, seed=0, dtype=torch.float64):
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


# ---- reference formulas, written independently of helpers/positions_2d.py -------------------

def reference_table_2d(height, width, dim, base=10000.0):
    """MAE's layout, entry by entry: [sin(c ω) | cos(c ω) | sin(r ω) | cos(r ω)]."""
    quarter = dim // 4
    omega = [base ** (-i / quarter) for i in range(quarter)]  # = base^(-2i/(dim/2))
    rows = []
    for r in range(height):
        for c in range(width):
            rows.append([math.sin(c * w) for w in omega] + [math.cos(c * w) for w in omega]
                        + [math.sin(r * w) for w in omega] + [math.cos(r * w) for w in omega])
    return torch.tensor(rows, dtype=torch.float64).reshape(height * width, dim)


def reference_rope_2d(x, rows, cols, base, layout):
    """Rotate each pair by an explicit 2x2 matrix: which pairs, which axis, which frequency."""
    dim = x.shape[-1]
    quarter = dim // 4
    out = x.double().clone()
    for k in range(2 * quarter):  # pair k: the first dim/4 pairs by row, the rest by column
        axis_positions = rows if k < quarter else cols
        theta = base ** (-2 * (k % quarter) / (dim // 2))
        if layout == "interleaved":
            a_index, b_index = 2 * k, 2 * k + 1
        else:
            a_index, b_index = k, k + dim // 2
        angle = axis_positions.double() * theta
        a, b = x[..., a_index].double(), x[..., b_index].double()
        out[..., a_index] = a * angle.cos() - b * angle.sin()
        out[..., b_index] = a * angle.sin() + b * angle.cos()
    return out


def reference_mrope(x, ids, sections, base):
    """Pair i = (xᵢ, x_{i+d/2}) turned by (its section's id) · base^(-2i/d)."""
    dim = x.shape[-1]
    owner = [axis for axis, size in enumerate(sections) for _ in range(size)]
    out = x.double().clone()
    for i in range(dim // 2):
        angle = ids[owner[i]].double() * base ** (-2 * i / dim)
        a, b = x[..., i].double(), x[..., i + dim // 2].double()
        out[..., i] = a * angle.cos() - b * angle.sin()
        out[..., i + dim // 2] = a * angle.sin() + b * angle.cos()
    return out


# ---- patch_grid and patchify -----------------------------------------------------------------

def test_patch_grid_is_raster_order():
    assert patch_grid(2, 3).tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    grid = patch_grid(14, 14)  # ViT-B/16 at 224 x 224: 196 patches
    assert grid.shape == (196, 2) and grid.dtype == torch.long
    index = grid[:, 0] * 14 + grid[:, 1]
    assert torch.equal(index, torch.arange(196))


@pytest.mark.parametrize("height, width, bad", [(0, 3, "height=0"), (3, 0, "width=0"),
                                                (-1, 2, "height=-1"), (2.5, 2, "height=2.5"),
                                                (True, 2, "height=True"), ("3", 2, "height='3'")])
def test_patch_grid_rejects_empty_or_odd_sizes(height, width, bad):
    with pytest.raises(ValueError, match="positive integer") as error:
        patch_grid(height, width)
    assert bad in str(error.value)


def test_patch_grid_accepts_numpy_and_tensor_integers():
    assert torch.equal(patch_grid(np.int64(2), torch.tensor(3)), patch_grid(2, 3))


def test_patchify_cuts_raster_patches_pixels_row_by_row():
    image = torch.arange(4 * 6 * 3).reshape(4, 6, 3)
    patches = patchify(image, 2)
    assert patches.shape == (6, 2 * 2 * 3)
    for k, (r, c) in enumerate(patch_grid(2, 3).tolist()):
        block = image[2 * r:2 * r + 2, 2 * c:2 * c + 2]
        assert torch.equal(patches[k], block.reshape(-1))


def test_patchify_takes_numpy_and_grey_images():
    grey = np.arange(16, dtype=np.float32).reshape(4, 4)
    patches = patchify(grey, 2)
    assert patches.shape == (4, 4) and patches.dtype == torch.float32
    assert patches[1].tolist() == [2.0, 3.0, 6.0, 7.0]


@pytest.mark.parametrize("shape, size, message", [
    ((600, 512, 3), 64, "600 pixels high, not a positive multiple of patch_size=64"),
    ((64, 50, 3), 16, "50 pixels wide"),
    ((0, 16, 3), 16, "0 pixels high"),
    ((4, 4, 3, 1), 2, r"shape \[H, W, C\] or \[H, W\]"),
    ((4, 4, 3), 0, "patch_size=0")])
def test_patchify_explains_bad_input(shape, size, message):
    with pytest.raises(ValueError, match=message):
        patchify(torch.zeros(shape), size)


# ---- the 2-D sinusoidal table (MAE) ----------------------------------------------------------

@given(sides, sides, dims_of_four, bases)
@PROPERTY
def test_table_2d_matches_maes_layout_entry_by_entry(height, width, dim, base):
    table = sinusoidal_table_2d(height, width, dim, base)
    assert table.shape == (height * width, dim) and table.dtype == torch.float32
    assert torch.allclose(table.double(), reference_table_2d(height, width, dim, base),
                          atol=1e-6)


def test_table_2d_is_two_1d_tables_column_first():
    table = sinusoidal_table_2d(3, 5, 16)
    by_column, by_row = sinusoidal_table(5, 8, layout="half"), sinusoidal_table(3, 8, layout="half")
    for k, (r, c) in enumerate(patch_grid(3, 5).tolist()):
        assert torch.equal(table[k, :8], by_column[c]) and torch.equal(table[k, 8:], by_row[r])


def test_table_2d_transposing_a_square_grid_swaps_the_halves():
    table = sinusoidal_table_2d(6, 6, 32).reshape(6, 6, 32)
    swapped = torch.cat([table[..., 16:], table[..., :16]], dim=-1)
    assert torch.equal(table.transpose(0, 1), swapped)


@given(sides, sides, dims_of_four)
@PROPERTY
def test_table_2d_dot_products_depend_only_on_the_offset(height, width, dim):
    """PE(p)·PE(q) = Σ cos(Δcol·ωᵢ) + Σ cos(Δrow·ωᵢ): a function of (Δrow, Δcol) alone."""
    table = sinusoidal_table_2d(height, width, dim).double()
    grid = patch_grid(height, width)
    omega = torch.tensor([10000.0 ** (-4 * i / dim) for i in range(dim // 4)],
                         dtype=torch.float64)
    delta = (grid[:, None, :] - grid[None, :, :]).double()  # [P, P, 2]
    expected = (torch.cos(delta[..., 1:] * omega).sum(-1) + torch.cos(delta[..., :1] * omega)
                .sum(-1))
    assert torch.allclose(table @ table.T, expected, atol=1e-5)


@pytest.mark.parametrize("dim", [6, 2, 0, -4, 8.0, True])
def test_table_2d_needs_a_multiple_of_four(dim):
    with pytest.raises(ValueError, match=r"multiple of 4 .*column.*row") as error:
        sinusoidal_table_2d(3, 3, dim)
    assert f"dim={dim!r}" in str(error.value)


def test_table_2d_rejects_empty_grids_and_bad_bases():
    with pytest.raises(ValueError, match="height=0"):
        sinusoidal_table_2d(0, 4, 8)
    with pytest.raises(ValueError, match="width=0"):
        sinusoidal_table_2d(4, 0, 8)
    with pytest.raises(ValueError, match="base"):
        sinusoidal_table_2d(4, 4, 8, base=1.0)


# ---- axial 2-D RoPE --------------------------------------------------------------------------

@given(sides, sides, dims_of_four, bases, layouts)
@PROPERTY
def test_rope_2d_matches_the_explicit_rotations(height, width, dim, base, layout):
    x = random(2, height * width, dim, seed=height * 31 + width)
    grid = patch_grid(height, width)
    expected = reference_rope_2d(x, grid[:, 0], grid[:, 1], base, layout)
    assert torch.allclose(apply_rope_2d(x, grid, base, layout), expected, atol=1e-10)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype, tolerance", [(torch.float64, 1e-9), (torch.float32, 2e-3)])
def test_rope_2d_score_depends_only_on_row_and_column_offsets(layout, dtype, tolerance):
    """The property notebook 09 checks: shift every patch by (a, b), every score stays."""
    q, k = random(3, 40, 32, seed=1, dtype=dtype), random(3, 40, 32, seed=2, dtype=dtype)
    grid = torch.randint(0, 12, (40, 2), generator=torch.Generator().manual_seed(3))
    scores = apply_rope_2d(q, grid, layout=layout) @ apply_rope_2d(k, grid, layout=layout).mT
    for shift in ([5, 0], [0, 7], [-3, 11], [100, -250]):
        moved = grid + torch.tensor(shift)
        shifted = (apply_rope_2d(q, moved, layout=layout)
                   @ apply_rope_2d(k, moved, layout=layout).mT)
        assert (shifted - scores).abs().max() < tolerance * scores.abs().max()


def test_rope_2d_tells_rows_from_columns_and_from_raster_distance():
    """Unlike one position (r + c, or r·width + c), the pair (Δrow, Δcol) is seen as such."""
    q, k = random(1, 32, seed=4), random(1, 32, seed=5)

    def score(query_at, key_at):
        rotated_q = apply_rope_2d(q, torch.tensor([query_at]))
        return float(rotated_q @ apply_rope_2d(k, torch.tensor([key_at])).T)

    right, below = score((3, 3), (3, 4)), score((3, 3), (4, 3))
    assert abs(right - below) > 0.1  # one step right is not one step down
    assert abs(score((3, 3), (4, 4)) - score((3, 3), (2, 5))) > 0.1  # Δr + Δc = 2 in both
    assert score((0, 0), (5, 7)) == pytest.approx(score((10, 20), (15, 27)), abs=1e-9)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rope_2d_fractional_positions_and_norms(layout):
    x = random(4, 6, 16, seed=6)
    grid = torch.tensor([[0.5, 1.25], [2.0, 0.0], [3.5, 9.0], [0.0, 0.0], [7.0, 1.0], [1.0, 7.0]])
    rotated = apply_rope_2d(x, grid, layout=layout)
    assert torch.allclose(rotated.norm(dim=-1), x.norm(dim=-1))
    assert torch.allclose(rotated, reference_rope_2d(x, grid[:, 0], grid[:, 1], 10000.0,
                                                     layout))
    assert torch.equal(apply_rope_2d(x, torch.zeros(6, 2), layout=layout), x)


def test_rope_2d_interleaved_halves_are_1d_rope_of_half_the_size():
    x = random(2, 12, 24, seed=7)
    grid = patch_grid(3, 4)
    rotated = apply_rope_2d(x, grid, base=100.0)
    assert torch.allclose(rotated[..., :12], apply_rope(x[..., :12], grid[:, 0], 100.0))
    assert torch.allclose(rotated[..., 12:], apply_rope(x[..., 12:], grid[:, 1], 100.0))


def test_rope_2d_layouts_are_one_permutation_of_coordinates():
    """New place j < d/4 holds old 2j (row pairs), d/4 + i holds old d/2 + 2i (column pairs);
    the second members follow d/2 further on."""
    dim = 16
    q = dim // 4
    firsts = [2 * j for j in range(q)] + [dim // 2 + 2 * i for i in range(q)]
    order = torch.tensor(firsts + [f + 1 for f in firsts])
    x, grid = random(3, 20, dim, seed=8), patch_grid(4, 5)
    assert torch.allclose(apply_rope_2d(x[..., order], grid, layout="half"),
                          apply_rope_2d(x, grid)[..., order])


def test_rope_2d_keeps_dtype_shape_and_works_on_views():
    x = random(2, 9, 3, 8, seed=9, dtype=torch.float32).transpose(1, 2)  # [batch, heads, T, d]
    grid = patch_grid(3, 3)
    rotated = apply_rope_2d(x, grid)
    assert rotated.shape == x.shape and rotated.dtype == torch.float32
    assert torch.allclose(rotated, apply_rope_2d(x.contiguous(), grid))
    half = apply_rope_2d(x.to(torch.bfloat16), grid)
    assert half.dtype == torch.bfloat16


@pytest.mark.parametrize("x, positions, layout, message", [
    (torch.zeros(4, 6), patch_grid(2, 2), "interleaved", r"multiple of 4 .*row.*column.*got 6"),
    (torch.zeros(4, 2), patch_grid(2, 2), "interleaved", "got 2"),
    (torch.zeros(4, 8, dtype=torch.long), patch_grid(2, 2), "interleaved", "floating-point"),
    (torch.zeros(8), patch_grid(2, 2), "interleaved", r"\[\.\.\., T, dim\]"),
    (torch.zeros(4, 8), torch.arange(4), "interleaved", r"\[T, 2\] = \[4, 2\].*got \[4\]"),
    (torch.zeros(4, 8), patch_grid(2, 3), "interleaved", r"got \[6, 2\]"),
    (torch.zeros(4, 8), torch.zeros(4, 2, dtype=torch.bool), "interleaved", "torch.bool"),
    (torch.zeros(4, 8), patch_grid(2, 2), "neox", "layout must be one of"),
])
def test_rope_2d_explains_bad_input(x, positions, layout, message):
    with pytest.raises(ValueError, match=message):
        apply_rope_2d(x, positions, layout=layout)


def test_rope_2d_rejects_a_bad_base():
    with pytest.raises(ValueError, match="base"):
        apply_rope_2d(torch.zeros(4, 8), patch_grid(2, 2), base=-1.0)


# ---- M-RoPE position ids ---------------------------------------------------------------------

def test_mrope_ids_of_text_image_text():
    # 3 text tokens, an image of 4 x 6 patches (2 x 3 tokens after merging 2 x 2), 2 text tokens
    ids = mrope_position_ids([3, (1, 4, 6), 2])
    assert ids.tolist() == [[0, 1, 2, 3, 3, 3, 3, 3, 3, 6, 7],
                            [0, 1, 2, 3, 3, 3, 4, 4, 4, 6, 7],
                            [0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7]]
    assert ids.dtype == torch.long


def test_mrope_ids_text_after_an_image_starts_past_its_largest_id():
    for height, width in [(2, 2), (4, 16), (16, 4), (32, 32), (6, 10)]:
        ids = mrope_position_ids([5, (1, height, width), 1], spatial_merge_size=1)
        image = ids[:, 5:-1]
        assert image.shape[1] == height * width
        assert torch.equal(image[0], torch.full((height * width,), 5))  # one frame: t stays
        assert ids[0, -1] == image.max() + 1 == 5 + max(height, width)
        assert len(set(ids[:, -1].tolist())) == 1  # text: t = h = w


def test_mrope_ids_text_only_is_plain_counting():
    assert torch.equal(mrope_position_ids([7]), torch.arange(7).expand(3, 7))
    assert torch.equal(mrope_position_ids([3, 4]), torch.arange(7).expand(3, 7))


def test_mrope_ids_of_a_video_count_frames_first_then_rows_then_columns():
    ids = mrope_position_ids([(3, 2, 4)], spatial_merge_size=2)  # 3 frames of 1 x 2 tokens
    assert ids.tolist() == [[0, 0, 1, 1, 2, 2], [0, 0, 0, 0, 0, 0], [0, 1, 0, 1, 0, 1]]
    after = mrope_position_ids([1, (9, 4, 4), 2])  # frames outnumber rows: t reaches 1 + 8
    assert after[:, -2].tolist() == [10, 10, 10]


def test_mrope_ids_of_two_images_in_a_row():
    ids = mrope_position_ids([(1, 2, 2), (1, 2, 4)], spatial_merge_size=1)
    assert ids[:, :4].tolist() == [[0, 0, 0, 0], [0, 0, 1, 1], [0, 1, 0, 1]]
    assert ids[:, 4:].tolist() == [[2] * 8, [2, 2, 2, 2, 3, 3, 3, 3], [2, 3, 4, 5, 2, 3, 4, 5]]


def test_mrope_ids_accept_numpy_and_tensor_numbers():
    same = mrope_position_ids([np.int64(2), torch.tensor([1, 4, 4]), [1, 2, 2]])
    assert torch.equal(same, mrope_position_ids([2, (1, 4, 4), (1, 2, 2)]))


@pytest.mark.parametrize("segments, merge, message", [
    ([], 2, "segments is empty"),
    ([3, (1, 5, 4)], 2, r"segment 1: the grid's height h=5 is not a multiple of "
                        r"spatial_merge_size=2"),
    ([(1, 4, 7)], 2, "width w=7"),
    ([0], 2, "at least one token"),
    ([-2], 2, "at least one token"),
    ([(1, 0, 4)], 2, r"at least one frame, row and column, got \(1, 0, 4\)"),
    ([(1, 4)], 2, r"three integers, got \(1, 4\)"),
    ([2.5], 2, "three integers, got 2.5"),
    (["text"], 2, "three integers"),
    ([True], 2, "three integers"),
    ("text", 2, "segments must be a list"),
    (5, 2, "segments must be a list"),
    ([4], 0, "spatial_merge_size=0"),
])
def test_mrope_ids_explain_bad_input(segments, merge, message):
    with pytest.raises(ValueError, match=message):
        mrope_position_ids(segments, spatial_merge_size=merge)


# ---- M-RoPE rotation -------------------------------------------------------------------------

def test_mrope_for_text_is_1d_rope_in_the_half_layout():
    x = random(2, 4, 9, 128, seed=10)
    positions = torch.arange(9) + 3
    rotated = apply_mrope(x, positions.expand(3, -1), base=1e6)
    assert torch.allclose(rotated, apply_rope(x, positions, 1e6, layout="half"), atol=1e-12)


@given(st.integers(0, 8), st.integers(0, 8), st.integers(0, 8), bases)
@PROPERTY
def test_mrope_matches_the_explicit_rotations(t, h, w, base):
    sections = (t, h, w)
    dim = 2 * sum(sections)
    if dim == 0:
        return
    ids = mrope_position_ids([2, (1, 4, 6), 3])
    x = random(ids.shape[1], dim, seed=dim)
    assert torch.allclose(apply_mrope(x, ids, sections, base),
                          reference_mrope(x, ids, sections, base), atol=1e-10)


def test_mrope_with_qwen2_vl_settings_on_an_image():
    ids = mrope_position_ids([4, (1, 8, 12), 3])
    x = random(ids.shape[1], 128, seed=11)
    assert torch.allclose(apply_mrope(x, ids, QWEN2_VL_MROPE_SECTION, 1e6),
                          reference_mrope(x, ids, QWEN2_VL_MROPE_SECTION, 1e6), atol=1e-10)


def test_mrope_score_depends_only_on_the_differences_of_t_h_w():
    ids = mrope_position_ids([3, (1, 6, 8), 4])
    q, k = random(ids.shape[1], 32, seed=12), random(ids.shape[1], 32, seed=13)
    sections = (4, 6, 6)
    scores = apply_mrope(q, ids, sections) @ apply_mrope(k, ids, sections).T
    for shift in ([9, 9, 9], [0, 5, -2], [40, -7, 3]):
        moved = ids + torch.tensor(shift)[:, None]
        again = apply_mrope(q, moved, sections) @ apply_mrope(k, moved, sections).T
        assert torch.allclose(scores, again, atol=1e-9)


def test_mrope_float32_and_bfloat16_keep_their_dtype():
    ids = mrope_position_ids([2, (1, 4, 4), 2])
    x = random(1, 2, ids.shape[1], 16, seed=14, dtype=torch.float32)
    assert apply_mrope(x, ids, (2, 3, 3)).dtype == torch.float32
    assert apply_mrope(x.bfloat16(), ids, (2, 3, 3)).dtype == torch.bfloat16


@pytest.mark.parametrize("sections, message", [
    ((16, 24, 20), r"add up to dim/2 = 64 .* got \[16, 24, 20\] \(sum 60\)"),
    ((32, 32), "three non-negative integers"),
    ((16, 24, 24, 0), "three non-negative integers"),
    ((-8, 40, 32), "three non-negative integers"),
    ((16.5, 23.5, 24), "three non-negative integers"),
    (64, "three non-negative integers"),
])
def test_mrope_explains_a_section_split_that_does_not_add_up(sections, message):
    with pytest.raises(ValueError, match=message):
        apply_mrope(torch.zeros(5, 128), torch.zeros(3, 5), sections)


@pytest.mark.parametrize("x, ids, message", [
    (torch.zeros(5, 15), torch.zeros(3, 5), "multiple of 2"),
    (torch.zeros(5, 16), torch.zeros(5), r"\[3, T\] = \[3, 5\].*got \[5\]"),
    (torch.zeros(5, 16), torch.zeros(3, 4), r"got \[3, 4\]"),
    (torch.zeros(5, 16), torch.zeros(3, 5, dtype=torch.bool), "torch.bool"),
    (torch.zeros(5, 16, dtype=torch.int32), torch.zeros(3, 5), "floating-point"),
])
def test_mrope_explains_bad_input(x, ids, message):
    with pytest.raises(ValueError, match=message):
        apply_mrope(x, ids, (2, 3, 3))


# ---- a new grid: MAE's interpolation, EVA-02's scaled positions -----------------------------

def reference_interpolate_pos_embed(pos_tokens, orig_size, new_size):
    """MAE's `interpolate_pos_embed` (util/pos_embed.py), the patch rows only, square grids."""
    embedding_size = pos_tokens.shape[-1]
    pos_tokens = pos_tokens.reshape(-1, orig_size, orig_size, embedding_size).permute(0, 3, 1, 2)
    pos_tokens = torch.nn.functional.interpolate(
        pos_tokens, size=(new_size, new_size), mode="bicubic", align_corners=False)
    return pos_tokens.permute(0, 2, 3, 1).flatten(1, 2)[0]


@pytest.mark.parametrize("old, new", [(8, 12), (14, 24), (16, 7), (5, 5)])
def test_interpolate_table_2d_is_maes_interpolate_pos_embed(old, new):
    table = random(old * old, 16)
    got = interpolate_table_2d(table, old, old, new, new)
    assert torch.equal(got, reference_interpolate_pos_embed(table, old, new))


def test_interpolate_table_2d_keeps_the_same_grid_and_constant_tables():
    table = random(6 * 4, 8)
    assert torch.allclose(interpolate_table_2d(table, 6, 4, 6, 4), table, atol=1e-12)
    constant = torch.full((6 * 4, 8), 0.25, dtype=torch.float64)
    assert torch.allclose(interpolate_table_2d(constant, 6, 4, 9, 13), constant[:1])


def test_interpolate_table_2d_resizes_rows_and_columns_separately():
    """A table that depends on the column only stays one after resizing (not a square grid)."""
    by_column = random(1, 5, 8).expand(3, 5, 8).reshape(15, 8)
    resized = interpolate_table_2d(by_column, 3, 5, 7, 10).reshape(7, 10, 8)
    assert torch.allclose(resized, resized[:1].expand(7, 10, 8), atol=1e-12)


def test_interpolate_table_2d_keeps_dtype():
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        table = random(16, 4).to(dtype)
        assert interpolate_table_2d(table, 4, 4, 6, 6).dtype == dtype


@pytest.mark.parametrize("table, sizes, message", [
    (torch.zeros(63, 8), (8, 8, 12, 12), "one row per patch of the 8 x 8 grid, 64 rows, got 63"),
    (torch.zeros(64, 8, dtype=torch.long), (8, 8, 12, 12), "real floating-point"),
    (torch.zeros(8, 8, 8), (8, 8, 12, 12), "shape \\[patches, dim\\]"),
    ([[0.0]], (1, 1, 2, 2), "got a list"),
    (torch.zeros(64, 8), (8, 8, 0, 12), "new_height must be a positive integer"),
    (torch.zeros(64, 8), (8, 8, 12, 2.5), "new_width must be a positive integer"),
    (torch.zeros(64, 8), (0, 8, 12, 12), "height must be a positive integer"),
])
def test_interpolate_table_2d_explains_bad_input(table, sizes, message):
    with pytest.raises(ValueError, match=message):
        interpolate_table_2d(table, *sizes)


def test_scaled_patch_grid_is_eva02s_positions():
    """EVA-02's rope.py: t = torch.arange(ft_seq_len) / ft_seq_len * pt_seq_len, per axis."""
    for new, trained in [(32, 16), (12, 8), (5, 8), (16, 16)]:
        t = torch.arange(new) / new * trained  # float32, as EVA-02 computes it
        grid = scaled_patch_grid(new, new, trained, trained)
        assert torch.allclose(grid[:, 0], t.double().repeat_interleave(new), atol=1e-6)
        assert torch.allclose(grid[:, 1], t.double().repeat(new), atol=1e-6)


def test_scaled_patch_grid_stays_in_the_trained_range_and_is_patch_grid_when_unchanged():
    assert torch.equal(scaled_patch_grid(3, 5, 3, 5), patch_grid(3, 5).double())
    grid = scaled_patch_grid(40, 9, 8, 6)
    assert grid[:, 0].min() == 0 and grid[:, 0].max() < 8 and grid[:, 1].max() < 6
    assert grid[1, 1] == pytest.approx(6 / 9) and grid[9, 0] == pytest.approx(8 / 40)


@pytest.mark.parametrize("sizes, message", [
    ((0, 4, 8, 8), "height must be a positive integer"),
    ((4, 4, 8, -1), "trained_width must be a positive integer"),
    ((4, True, 8, 8), "width must be a positive integer"),
])
def test_scaled_patch_grid_explains_bad_input(sizes, message):
    with pytest.raises(ValueError, match=message):
        scaled_patch_grid(*sizes)
