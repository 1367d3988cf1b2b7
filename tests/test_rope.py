"""RoPE: frequencies, both layouts against reference formulas, the properties the notebook
relies on (relative scores, norms, layout permutation), partial rotary, bad input and figures."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

from helpers import (ROPE_LAYOUTS, apply_rope, rope_layout_permutation, rope_decay_bound,
                     rope_frequencies, rope_wavelengths)
from helpers.plots.rope import (plot_attention_maps, plot_cos_tables, plot_long_term_decay,
                                plot_rotation, plot_wavelengths)

# torch's first call is slow, so no deadline; few examples keep the suite quick on two cores.
PROPERTY = settings(deadline=None, max_examples=40)
even_dims = st.integers(1, 48).map(lambda half: 2 * half)
bases = st.sampled_from([100.0, 10000.0, 500000.0, 1e6])


def random(*shape, seed=0, dtype=torch.float64):
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


# ---- reference implementations, written independently of helpers/rope.py -------------------

def reference_angles(length_or_positions, dim, base=10000.0):
    positions = (torch.arange(length_or_positions) if isinstance(length_or_positions, int)
                 else length_or_positions)
    thetas = torch.tensor([base ** (-2 * i / dim) for i in range(dim // 2)], dtype=torch.float64)
    return positions.double()[:, None] * thetas  # [T, dim/2]


def reference_interleaved(x, angles):
    """RoFormer / Meta's Llama: neighbours are one complex number, times e^(i·angle)."""
    pairs = torch.view_as_complex(x.double().contiguous().unflatten(-1, (-1, 2)))
    return torch.view_as_real(pairs * torch.exp(1j * angles)).flatten(-2)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def reference_half(x, angles):
    """GPT-NeoX / Hugging Face's Llama: x·cos + rotate_half(x)·sin, tables repeated twice."""
    cos, sin = torch.cat((angles.cos(), angles.cos()), -1), torch.cat((angles.sin(),) * 2, -1)
    return x.double() * cos + rotate_half(x.double()) * sin


# ---- frequencies, wavelengths, permutation ---------------------------------------------------

@pytest.mark.parametrize("dim, base", [(2, 10000.0), (8, 10000.0), (64, 500000.0), (128, 1e6)])
def test_rope_frequencies_follow_the_formula(dim, base):
    thetas = rope_frequencies(dim, base)
    assert thetas.shape == (dim // 2,) and thetas.dtype == torch.float32
    expected = torch.tensor([base ** (-2 * i / dim) for i in range(dim // 2)])
    torch.testing.assert_close(thetas, expected, rtol=1e-6, atol=0)
    assert thetas[0] == 1 and bool((thetas[1:] < thetas[:-1]).all())


def test_rope_frequencies_known_values():
    torch.testing.assert_close(rope_frequencies(8), torch.tensor([1.0, 0.1, 0.01, 0.001]))
    assert rope_frequencies(8, base=100) [1].item() == pytest.approx(100 ** -0.25)


@pytest.mark.parametrize("dim", [7, 1, 0, -4, 8.0, True, "8", None])
def test_rope_frequencies_rejects_bad_dim(dim):
    with pytest.raises(ValueError, match="dim must be a positive even integer"):
        rope_frequencies(dim)


@pytest.mark.parametrize("base", [0, -10000.0, math.inf, math.nan, True, "10000", None])
def test_rope_frequencies_rejects_bad_base(base):
    with pytest.raises(ValueError, match="base must be a positive finite number"):
        rope_frequencies(8, base)


def test_rope_wavelengths():
    wavelengths = rope_wavelengths(128)
    assert wavelengths[0].item() == pytest.approx(2 * math.pi)
    assert wavelengths[-1].item() == pytest.approx(2 * math.pi * 10000 ** (126 / 128), rel=1e-5)
    with pytest.raises(ValueError):
        rope_wavelengths(5)


def test_layout_permutation_example_and_bad_dim():
    assert rope_layout_permutation(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert sorted(rope_layout_permutation(64).tolist()) == list(range(64))
    with pytest.raises(ValueError, match="even"):
        rope_layout_permutation(9)


# ---- apply_rope against the references -------------------------------------------------------

@PROPERTY
@given(dim=even_dims, length=st.integers(1, 40), base=bases, seed=st.integers(0, 10**6))
def test_interleaved_matches_complex_multiplication(dim, length, base, seed):
    x = random(2, length, dim, seed=seed)
    expected = reference_interleaved(x, reference_angles(length, dim, base))
    torch.testing.assert_close(apply_rope(x, base=base), expected, atol=1e-5, rtol=0)


@PROPERTY
@given(dim=even_dims, length=st.integers(1, 40), base=bases, seed=st.integers(0, 10**6))
def test_half_matches_rotate_half(dim, length, base, seed):
    x = random(3, length, dim, seed=seed)
    expected = reference_half(x, reference_angles(length, dim, base))
    torch.testing.assert_close(apply_rope(x, base=base, layout="half"), expected,
                               atol=1e-5, rtol=0)


def test_small_case_by_hand():
    """One pair at position 1 with θ₀ = 1: (1, 0) turns by one radian to (cos 1, sin 1)."""
    x = torch.tensor([[0.0, 0.0], [1.0, 0.0]])
    torch.testing.assert_close(apply_rope(x)[1], torch.tensor([math.cos(1), math.sin(1)]))
    torch.testing.assert_close(apply_rope(x, layout="half")[1],
                               torch.tensor([math.cos(1), math.sin(1)]))


def test_float32_agrees_with_float64():
    x = random(2, 4, 300, 64, seed=1)
    torch.testing.assert_close(apply_rope(x.float()).double(), apply_rope(x),
                               atol=3e-4, rtol=0)  # angles up to 299 rad in float32


@PROPERTY
@given(dim=even_dims, length=st.integers(1, 30), seed=st.integers(0, 10**6))
def test_layouts_are_the_same_rotation_up_to_a_permutation(dim, length, seed):
    x = random(2, length, dim, seed=seed)
    order = rope_layout_permutation(dim)
    torch.testing.assert_close(apply_rope(x[..., order], layout="half"),
                               apply_rope(x)[..., order], atol=1e-12, rtol=0)


def test_layouts_differ_without_the_permutation():
    x = random(10, 16, seed=2)
    assert (apply_rope(x) - apply_rope(x, layout="half")).abs().max() > 0.5


# ---- the properties ---------------------------------------------------------------------------

@PROPERTY
@given(dim=even_dims, layout=st.sampled_from(ROPE_LAYOUTS), base=bases,
       m=st.floats(-500, 500), n=st.floats(-500, 500), shift=st.floats(-1000, 1000),
       seed=st.integers(0, 10**6))
def test_relative_property(dim, layout, base, m, n, shift, seed):
    """q_m·k_n = g(q, k, m - n): shifting both positions changes nothing."""
    q, k = random(2, dim, seed=seed)

    def score(m, n):
        rotated_q = apply_rope(q[None], torch.tensor([m], dtype=torch.float64), base, layout)
        rotated_k = apply_rope(k[None], torch.tensor([n], dtype=torch.float64), base, layout)
        return (rotated_q @ rotated_k.T).item()

    assert score(m, n) == pytest.approx(score(m + shift, n + shift), abs=1e-9)
    assert score(m, n) == pytest.approx(score(0.0, n - m), abs=1e-9)


def test_relative_property_over_a_whole_score_table():
    q, k = random(2, 64, seed=3)
    positions = torch.arange(128)
    scores = apply_rope(q.expand(128, 64), positions) @ apply_rope(k.expand(128, 64)).T
    for offset in range(-127, 128):  # every diagonal m - n = const holds one value
        diagonal = scores.diagonal(offset)
        assert diagonal.max() - diagonal.min() < 1e-10


@PROPERTY
@given(dim=even_dims, layout=st.sampled_from(ROPE_LAYOUTS), length=st.integers(1, 50),
       seed=st.integers(0, 10**6))
def test_norms_are_preserved(dim, layout, length, seed):
    x = random(2, length, dim, seed=seed)
    positions = torch.rand(length, dtype=torch.float64) * 10**4
    torch.testing.assert_close(apply_rope(x, positions, layout=layout).norm(dim=-1),
                               x.norm(dim=-1), atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_position_zero_is_the_identity(layout):
    x = random(1, 16, seed=4)
    torch.testing.assert_close(apply_rope(x, layout=layout), x, atol=0, rtol=0)


# ---- positions and inv_freq ------------------------------------------------------------------

@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_default_positions_and_integer_dtypes(layout):
    x = random(2, 12, 16, seed=5)
    default = apply_rope(x, layout=layout)
    for dtype in (torch.int64, torch.int32, torch.float32, torch.float64):
        torch.testing.assert_close(apply_rope(x, torch.arange(12, dtype=dtype), layout=layout),
                                   default)
    torch.testing.assert_close(apply_rope(x, list(range(12)), layout=layout), default)


@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_float_positions(layout):
    x = random(7, 16, seed=6)
    positions = torch.tensor([0.0, 0.5, 1.25, 2.0, 10.5, 100.75, 1234.5])
    expected = (reference_interleaved if layout == "interleaved" else reference_half)(
        x, reference_angles(positions, 16))
    torch.testing.assert_close(apply_rope(x, positions, layout=layout), expected, atol=1e-9,
                               rtol=0)


@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_inv_freq_replaces_the_frequencies(layout):
    x = random(2, 20, 32, seed=7)
    # dividing every frequency by 4 is the same as dividing every position by 4
    torch.testing.assert_close(apply_rope(x, layout=layout, inv_freq=rope_frequencies(32) / 4),
                               apply_rope(x, torch.arange(20) / 4, layout=layout), atol=1e-6,
                               rtol=0)
    torch.testing.assert_close(apply_rope(x, layout=layout, inv_freq=rope_frequencies(32, 5e5)),
                               apply_rope(x, base=5e5, layout=layout), atol=1e-5, rtol=0)
    per_pair = torch.linspace(0.01, 2.0, 16, dtype=torch.float64)
    expected = (reference_interleaved if layout == "interleaved" else reference_half)(
        x, torch.arange(20).double()[:, None] * per_pair)
    torch.testing.assert_close(apply_rope(x, layout=layout, inv_freq=per_pair), expected,
                               atol=1e-9, rtol=0)


# ---- shapes, dtypes, views, autograd, the cache ----------------------------------------------

@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 1e-5), (torch.float16, 1e-2),
                                              (torch.bfloat16, 5e-2), (torch.float64, 1e-12)])
def test_keeps_dtype_and_shape(layout, dtype, tolerance):
    x = random(2, 3, 10, 16, seed=8).to(dtype)
    rotated = apply_rope(x, layout=layout)
    assert rotated.dtype == dtype and rotated.shape == x.shape
    expected = apply_rope(x.double(), layout=layout)
    assert (rotated.double() - expected).abs().max() < tolerance


@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_non_contiguous_views_and_input_untouched(layout):
    heads_last = random(2, 10, 4, 16, seed=9)  # [B, T, H, D], as projections come out
    x = heads_last.transpose(1, 2)  # [B, H, T, D], a view
    assert not x.is_contiguous()
    before = x.clone()
    torch.testing.assert_close(apply_rope(x, layout=layout),
                               apply_rope(x.contiguous(), layout=layout), atol=0, rtol=0)
    torch.testing.assert_close(x, before, atol=0, rtol=0)
    odd_offset = torch.randn(1 + 6 * 8, dtype=torch.float64)[1:].view(6, 8)  # contiguous view
    torch.testing.assert_close(apply_rope(odd_offset, layout=layout),
                               apply_rope(odd_offset.clone(), layout=layout), atol=0, rtol=0)


def test_any_number_of_leading_dimensions():
    x = random(5, 8, seed=10)
    expected = apply_rope(x)
    for shape in [(1, 5, 8), (2, 3, 5, 8), (1, 1, 1, 5, 8)]:
        torch.testing.assert_close(apply_rope(x.expand(shape)), expected.expand(shape))
    assert apply_rope(torch.zeros(3, 0, 8)).shape == (3, 0, 8)


@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_gradients(layout):
    x = random(2, 5, 8, seed=11).requires_grad_()
    assert torch.autograd.gradcheck(lambda x: apply_rope(x, layout=layout), (x,))
    view = random(2, 5, 3, 8, seed=12).requires_grad_()
    assert torch.autograd.gradcheck(lambda v: apply_rope(v.transpose(1, 2), layout=layout),
                                    (view,))


@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_tables_made_in_inference_mode_do_not_break_training(layout):
    with torch.inference_mode():
        apply_rope(torch.randn(1, 37, 8), layout=layout)
    x = torch.randn(1, 37, 8, requires_grad=True)
    apply_rope(x, layout=layout).pow(2).sum().backward()  # raises if inference tables are reused
    torch.testing.assert_close(x.grad, 2 * x.detach(), atol=1e-5, rtol=1e-5)  # norms kept


def test_cached_tables_match_fresh_ones():
    for length, dim, base in [(5, 8, 10000.0), (50, 8, 10000.0), (5, 16, 10000.0),
                              (5, 8, 500.0), (5, 8, 10000.0)]:
        x = random(length, dim, seed=length + dim)
        for layout in ROPE_LAYOUTS:
            torch.testing.assert_close(apply_rope(x, base=base, layout=layout),
                                       apply_rope(x, torch.arange(length), base, layout),
                                       atol=0, rtol=0)
            torch.testing.assert_close(apply_rope(x.float(), base=base, layout=layout),
                                       apply_rope(x.float(), torch.arange(length), base, layout))


def test_matches_rotary_embedding_torch_when_installed():
    """lucidrains' rotary-embedding-torch (a benchmark-only peer) rotates interleaved pairs."""
    peer = pytest.importorskip("rotary_embedding_torch")
    x = torch.randn(2, 4, 64, 32)
    expected = peer.RotaryEmbedding(32).rotate_queries_or_keys(x)
    torch.testing.assert_close(apply_rope(x), expected, atol=2e-5, rtol=0)


# ---- partial rotary (GPT-J, GPT-NeoX) ----------------------------------------------------------

@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
@pytest.mark.parametrize("dim, rotary_dim", [(256, 64), (96, 24), (8, 2), (10, 6)])
def test_partial_rotary_turns_the_first_coordinates_with_their_own_frequencies(layout, dim,
                                                                               rotary_dim):
    x = random(2, 9, dim, seed=dim + rotary_dim)
    positions = torch.tensor([0, 1, 2, 5, 9, 40, 41, 300, 4095])
    angles = reference_angles(positions, rotary_dim)  # θᵢ = base^(-2i/rotary_dim)
    reference = reference_interleaved if layout == "interleaved" else reference_half
    expected = torch.cat((reference(x[..., :rotary_dim], angles), x[..., rotary_dim:]), dim=-1)
    got = apply_rope(x, positions, layout=layout, rotary_dim=rotary_dim)
    assert torch.allclose(got, expected, atol=1e-10)
    assert torch.equal(got[..., rotary_dim:], x[..., rotary_dim:])  # passed through untouched


@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_partial_rotary_of_the_whole_head_is_plain_rope(layout):
    x = random(3, 5, 16, seed=7)
    assert torch.equal(apply_rope(x, layout=layout, rotary_dim=16), apply_rope(x, layout=layout))


def test_partial_rotary_with_inv_freq_and_low_precision():
    x = random(4, 12, seed=8)
    inv_freq = torch.tensor([0.5, 0.25], dtype=torch.float64)
    got = apply_rope(x, torch.arange(4) + 0.5, inv_freq=inv_freq, rotary_dim=4)
    expected = apply_rope(x[..., :4], torch.arange(4) + 0.5, inv_freq=inv_freq)
    assert torch.equal(got[..., :4], expected) and torch.equal(got[..., 4:], x[..., 4:])
    half = apply_rope(x.bfloat16(), rotary_dim=4)
    assert half.dtype == torch.bfloat16 and half.shape == x.shape


def test_partial_rotary_scores_stay_relative():
    q, k = random(2, 96, seed=9)
    positions = torch.arange(64)
    queries = apply_rope(q.expand(64, 96), positions, layout="half", rotary_dim=24)
    keys = apply_rope(k.expand(64, 96), positions, layout="half", rotary_dim=24)
    scores = queries @ keys.T
    for offset in range(-63, 64):
        diagonal = scores.diagonal(offset)
        assert (diagonal.max() - diagonal.min()).item() < 1e-10


@pytest.mark.parametrize("rotary_dim", [0, -2, 3, 10, 2.0, True, "64"])
def test_bad_rotary_dim(rotary_dim):
    with pytest.raises(ValueError, match="rotary_dim must be a positive even integer no larger "
                                         "than the head size 8"):
        apply_rope(torch.zeros(6, 8), rotary_dim=rotary_dim)


def test_bad_inv_freq_for_a_partial_rotation():
    with pytest.raises(ValueError, match=r"\[dim // 2\] = \[2\]"):
        apply_rope(torch.zeros(6, 8), inv_freq=torch.ones(4), rotary_dim=4)


# ---- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("x, message", [
    (torch.zeros(4, 7), "last dimension of x must be even"),
    (torch.zeros(4, 0), "last dimension of x must be even and positive"),
    (torch.zeros(8), r"shape \[\.\.\., T, dim\]"),
    (torch.zeros(4, 8, dtype=torch.long), "real floating-point"),
    (torch.zeros(4, 8, dtype=torch.complex64), "real floating-point"),
    ([[0.0, 1.0]], "got a list"),
])
def test_bad_x(x, message):
    with pytest.raises(ValueError, match=message):
        apply_rope(x)


@pytest.mark.parametrize("positions, message", [
    (torch.arange(5), r"shape \[T\] = \[6\].*got \[5\]"),
    (torch.arange(7), r"got \[7\]"),
    (torch.zeros(3, 6), r"broadcasting to x's \[2, 6\], got \[3, 6\]"),
    (torch.zeros(2, 1, 6), r"got \[2, 1, 6\]"),
    (torch.tensor(3), r"got \[\]"),
    (torch.ones(6, dtype=torch.bool), "integers or real numbers"),
    (torch.ones(6, dtype=torch.complex64), "integers or real numbers"),
])
def test_bad_positions(positions, message):
    with pytest.raises(ValueError, match=message):
        apply_rope(torch.zeros(2, 6, 8), positions)


@pytest.mark.parametrize("layout", ROPE_LAYOUTS)
def test_positions_per_row_turn_each_row_by_its_own(layout):
    """A padded or packed batch: each row (and every head of it) gets its own positions."""
    x = torch.randn(2, 3, 5, 8)  # [B, heads, T, dim]
    positions = torch.tensor([[0, 0, 0, 1, 2], [0, 1, 2, 0, 1]])  # left padding; two documents
    rotated = apply_rope(x, positions[:, None, :], layout=layout)
    for row in range(2):
        assert torch.equal(rotated[row], apply_rope(x[row], positions[row], layout=layout))
    same_for_all = apply_rope(x, torch.arange(5)[None, None, :], layout=layout)
    assert torch.equal(same_for_all, apply_rope(x, torch.arange(5), layout=layout))


@pytest.mark.parametrize("layout", ["halves", "Interleaved", "neox", None])
def test_bad_layout(layout):
    with pytest.raises(ValueError, match="layout must be one of"):
        apply_rope(torch.zeros(6, 8), layout=layout)


@pytest.mark.parametrize("inv_freq", [torch.ones(3), torch.ones(8), torch.ones(4, 1),
                                      torch.ones(4, dtype=torch.long)])
def test_bad_inv_freq(inv_freq):
    with pytest.raises(ValueError, match=r"inv_freq must be a float tensor of shape \[dim // 2\]"):
        apply_rope(torch.zeros(6, 8), inv_freq=inv_freq)


@pytest.mark.parametrize("base", [0, -1.0, math.inf, "big"])
def test_bad_base_in_apply_rope(base):
    with pytest.raises(ValueError, match="base must be"):
        apply_rope(torch.zeros(6, 8), base=base)


# ---- long-term decay ---------------------------------------------------------------------------

def test_decay_bound_values():
    bound = rope_decay_bound(torch.tensor([0.0, 10.0, 100.0, 1000.0]), 128)
    assert bound[0].item() == pytest.approx(32.5)  # (d/2 + 1)/2: every S_j = j at distance 0
    assert bound[0] > bound[1] > bound[2] > bound[3]
    brute = [sum(abs(sum(complex(math.cos(r * t), math.sin(r * t))
                         for t in rope_frequencies(8).double().tolist()[:j]))
                 for j in range(1, 5)) / 4 for r in (0.0, 3.0, 7.5)]
    torch.testing.assert_close(rope_decay_bound([0.0, 3.0, 7.5], 8),
                               torch.tensor(brute, dtype=torch.float64))


@PROPERTY
@given(dim=even_dims, distance=st.floats(0, 10**5), seed=st.integers(0, 10**6))
def test_decay_bound_bounds_the_score(dim, distance, seed):
    """|Σ hᵢ e^(i·r·θᵢ)| ≤ max|hᵢ₊₁ - hᵢ| · Σⱼ|Sⱼ| (with h after the last pair = 0)."""
    real, imag = random(2, dim // 2, seed=seed)
    h = torch.complex(real, imag)
    angles = distance * rope_frequencies(dim).double()
    score = (h * torch.exp(1j * angles)).sum().abs()
    steps = torch.cat((h, torch.zeros(1, dtype=h.dtype))).diff().abs().max()
    bound = steps * rope_decay_bound(distance, dim) * (dim // 2)
    assert score <= bound + 1e-9


# ---- figures -----------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: plot_rotation(),
    lambda: plot_rotation(15, 0, 1.5),
    lambda: plot_cos_tables(),
    lambda: plot_cos_tables(length=512, dim=128, base=500000.0),
    lambda: plot_long_term_decay(),
    lambda: plot_long_term_decay(dim=16, base=1e6),
    lambda: plot_wavelengths(),
    lambda: plot_wavelengths(dim=8, base=10.0, length=2),
    lambda: plot_attention_maps({"a": torch.rand(6, 6), "b": torch.eye(6)}),
])
def test_figures_have_labelled_axes(make):
    fig = make()
    assert isinstance(fig, Figure)
    for ax in fig.axes:
        if ax.get_label() != "<colorbar>":
            assert (ax.get_xlabel() or fig.get_supxlabel()) and ax.get_title()
        else:
            assert ax.get_ylabel()  # the colour bar says what its colours mean
    assert fig.axes[0].get_ylabel()


def test_wavelength_figure_counts_slow_pairs():
    title = plot_wavelengths(dim=128, base=10000.0, length=4096).axes[0].get_title()
    assert title.startswith(f"{int((rope_wavelengths(128) > 4096).sum())} of 64 pairs")


# The exercise checks are tested in tests/exercises/test_rope_checks.py.
