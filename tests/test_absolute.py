"""Absolute position tables (helpers.absolute) and their figures and exercise checks."""

import math

import matplotlib.pyplot as plt
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure
from torch import nn

import helpers
from helpers import (InputEmbedding, LearnedPositionalEmbedding, layout_permutation,
                     sinusoidal_frequencies, sinusoidal_shift_matrix, sinusoidal_table,
                     sinusoidal_wavelengths)
from helpers.plots import absolute as plots

even_dims = st.integers(1, 64).map(lambda half: 2 * half)
bases = st.sampled_from([2.0, 10.0, 100.0, 10000.0, 1e6])


def textbook_table(num_positions, dim, base=10000.0):
    """The formula entry by entry, in double precision: the reference for the vectorized table."""
    table = torch.zeros(num_positions, dim, dtype=torch.float64)
    for pos in range(num_positions):
        for pair in range(dim // 2):
            angle = pos / base ** (2 * pair / dim)
            table[pos, 2 * pair] = math.sin(angle)
            table[pos, 2 * pair + 1] = math.cos(angle)
    return table


# --- sinusoidal_table ----------------------------------------------------------------------------


@settings(deadline=None, max_examples=40)
@given(num_positions=st.integers(0, 40), dim=even_dims, base=bases)
def test_sinusoidal_table_matches_the_formula(num_positions, dim, base):
    table = sinusoidal_table(num_positions, dim, base)
    assert table.shape == (num_positions, dim) and table.dtype == torch.float32
    assert torch.allclose(table.double(), textbook_table(num_positions, dim, base), atol=1e-6)


def test_worked_example_d6_position_2():
    row = sinusoidal_table(3, 6)[2]
    assert abs(row[0] - 0.909) < 1e-3 and abs(row[1] + 0.416) < 1e-3
    assert abs(row[2] - math.sin(2 / 10000 ** (2 / 6))) < 1e-7


def test_sinusoidal_table_first_row_and_column_pattern():
    table = sinusoidal_table(5, 8)
    assert torch.equal(table[0], torch.tensor([0.0, 1.0] * 4))  # sin 0 = 0, cos 0 = 1
    assert torch.allclose(table[:, 0], torch.sin(torch.arange(5.0)))  # pair 0: w = 1


def test_empty_table():
    assert sinusoidal_table(0, 16).shape == (0, 16)
    assert sinusoidal_table(0, 16, layout="half").shape == (0, 16)


def test_large_positions_stay_accurate():
    # Angles are computed in float64, so the table is right even at position 100,000.
    row = sinusoidal_table(100_001, 4)[100_000].double()
    expected = torch.tensor([math.sin(100_000), math.cos(100_000),
                             math.sin(100_000 / 100), math.cos(100_000 / 100)], dtype=torch.float64)
    assert torch.allclose(row, expected, atol=1e-6)


@settings(deadline=None, max_examples=30)
@given(num_positions=st.integers(0, 30), dim=even_dims, base=bases)
def test_half_layout_is_a_column_permutation(num_positions, dim, base):
    interleaved = sinusoidal_table(num_positions, dim, base, "interleaved")
    half = sinusoidal_table(num_positions, dim, base, "half")
    assert torch.equal(interleaved[:, layout_permutation(dim)], half)
    assert torch.allclose(interleaved @ interleaved.T, half @ half.T, atol=1e-4)


def test_half_layout_holds_sines_then_cosines():
    half = sinusoidal_table(10, 8, layout="half").double()
    reference = textbook_table(10, 8)
    assert torch.allclose(half[:, :4], reference[:, 0::2], atol=1e-7)
    assert torch.allclose(half[:, 4:], reference[:, 1::2], atol=1e-7)


def test_properties_bounded_equal_norms_distinct_rows():
    table = sinusoidal_table(256, 64)
    assert table.abs().max() <= 1
    assert torch.allclose(table.norm(dim=1), torch.full((256,), math.sqrt(32)), atol=1e-4)
    distances = torch.cdist(table.double(), table.double())
    distances.fill_diagonal_(math.inf)
    assert distances.min() > 0.5


def test_dot_product_depends_only_on_the_offset():
    table = sinusoidal_table(128, 32).double()
    gram = table @ table.T
    for k in range(0, 128, 7):
        diagonal = gram.diagonal(k)
        assert (diagonal - diagonal[0]).abs().max() < 1e-5
        expected = torch.cos(k * sinusoidal_frequencies(32)).sum()
        assert abs(diagonal[0] - expected) < 1e-5


def test_sinusoidal_table_is_fast():
    # Vectorized: a 2,048 x 1,024 table (2 million entries) in well under a second.
    sinusoidal_table(2048, 1024)  # warm-up
    import time
    start = time.perf_counter()
    sinusoidal_table(2048, 1024)
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("dim", [7, 1, 0, -2, 2.0, "8", None, True])
def test_sinusoidal_table_rejects_bad_dim(dim):
    with pytest.raises(ValueError, match="dim"):
        sinusoidal_table(4, dim)


@pytest.mark.parametrize("num_positions", [-1, 2.5, "3", None, False])
def test_sinusoidal_table_rejects_bad_num_positions(num_positions):
    with pytest.raises(ValueError, match="num_positions"):
        sinusoidal_table(num_positions, 4)


@pytest.mark.parametrize("layout", ["halves", "Interleaved", "", None])
def test_sinusoidal_table_rejects_unknown_layout(layout):
    with pytest.raises(ValueError, match="layout"):
        sinusoidal_table(4, 4, layout=layout)


@pytest.mark.parametrize("base", [1.0, 0.5, 0, -10, math.inf, math.nan, "10000", None])
def test_sinusoidal_table_rejects_bad_base(base):
    with pytest.raises(ValueError, match="base"):
        sinusoidal_table(4, 4, base=base)


def test_error_message_names_the_value_and_the_rule():
    with pytest.raises(ValueError) as error:
        sinusoidal_table(4, 7)
    assert "dim=7" in str(error.value) and "even" in str(error.value)


# --- frequencies, wavelengths, permutation -------------------------------------------------------


@settings(deadline=None, max_examples=30)
@given(dim=even_dims, base=bases)
def test_wavelengths_run_from_2pi_to_2pi_base_power(dim, base):
    waves = sinusoidal_wavelengths(dim, base)
    assert len(waves) == dim // 2
    assert math.isclose(waves[0], 2 * math.pi)
    assert math.isclose(waves[-1], 2 * math.pi * base ** ((dim - 2) / dim), rel_tol=1e-12)
    if dim > 2:
        ratios = waves[1:] / waves[:-1]
        assert torch.allclose(ratios, torch.full_like(ratios, base ** (2 / dim)))
    assert torch.allclose(sinusoidal_frequencies(dim, base) * waves,
                          torch.full_like(waves, 2 * math.pi))


def test_wavelength_at_d512():
    assert round(sinusoidal_wavelengths(512)[-1].item()) == 60611


def _tensor2tensor_table(num_positions, dim, base=10000.0):
    """tensor2tensor's get_timing_signal_1d, written from its formula: log-spaced timescales
    from 1 to base over dim/2 - 1 steps, sines then cosines."""
    half = dim // 2
    increment = math.log(base) / max(half - 1, 1)
    inv_timescales = torch.exp(-increment * torch.arange(half, dtype=torch.float64))
    angles = torch.arange(num_positions, dtype=torch.float64)[:, None] * inv_timescales
    return torch.cat([angles.sin(), angles.cos()], dim=1)


@settings(deadline=None, max_examples=30)
@given(dim=even_dims, base=bases, num_positions=st.integers(0, 300))
def test_tensor2tensor_ladder_is_its_formula(dim, base, num_positions):
    ours = sinusoidal_table(num_positions, dim, base, layout="half", ladder="tensor2tensor")
    assert torch.allclose(ours.double(), _tensor2tensor_table(num_positions, dim, base), atol=1e-6)
    frequencies = sinusoidal_frequencies(dim, base, ladder="tensor2tensor")
    assert frequencies[0] == 1 and len(frequencies) == dim // 2
    if dim > 2:
        assert math.isclose(frequencies[-1], 1 / base, rel_tol=1e-12)  # exactly 1/base


def test_tensor2tensor_ladder_is_not_a_permutation_of_the_papers():
    paper = sinusoidal_table(512, 512, layout="half").double()
    t2t = sinusoidal_table(512, 512, layout="half", ladder="tensor2tensor").double()
    assert torch.allclose(t2t[:, 0], paper[:, 0])  # pair 0 turns at 1 in both
    closest = torch.cdist(t2t.T, paper.T).min(dim=1).values / math.sqrt(512)
    assert closest.max() > 0.1  # some t2t column is far from every paper column
    assert round(2 * math.pi / sinusoidal_frequencies(512, ladder="tensor2tensor")[-1].item()) \
        == 62832
    assert sinusoidal_frequencies(2, ladder="tensor2tensor").tolist() == [1.0]


@pytest.mark.parametrize("ladder", ["t2t", "", None, "Paper"])
def test_unknown_ladder_is_refused(ladder):
    with pytest.raises(ValueError, match="ladder"):
        sinusoidal_frequencies(8, ladder=ladder)
    with pytest.raises(ValueError, match="ladder"):
        sinusoidal_table(4, 8, ladder=ladder)


@pytest.mark.parametrize("bad", [{"dim": 5}, {"dim": 0}, {"dim": 4, "base": 1.0}])
def test_frequencies_and_wavelengths_reject_bad_input(bad):
    arguments = {"dim": 4, "base": 10000.0, **bad}
    with pytest.raises(ValueError):
        sinusoidal_frequencies(**arguments)
    with pytest.raises(ValueError):
        sinusoidal_wavelengths(**arguments)


def test_layout_permutation():
    assert layout_permutation(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert layout_permutation(2).tolist() == [0, 1]
    assert sorted(layout_permutation(64).tolist()) == list(range(64))
    with pytest.raises(ValueError, match="dim"):
        layout_permutation(9)


# --- sinusoidal_shift_matrix ---------------------------------------------------------------------


@settings(deadline=None, max_examples=40)
@given(offset=st.integers(-50, 50), dim=even_dims, base=bases,
       layout=st.sampled_from(["interleaved", "half"]))
def test_shift_matrix_moves_every_row_by_the_offset(offset, dim, base, layout):
    table = sinusoidal_table(120, dim, base, layout).double()
    matrix = sinusoidal_shift_matrix(offset, dim, base, layout).double()
    start, stop = max(0, -offset), 120 - max(0, offset)
    assert torch.allclose(table[start:stop] @ matrix.T, table[start + offset:stop + offset],
                          atol=1e-5)


def test_shift_matrix_is_a_block_rotation():
    matrix = sinusoidal_shift_matrix(3, 8).double()
    assert torch.allclose(matrix @ matrix.T, torch.eye(8, dtype=torch.float64), atol=1e-6)
    assert torch.allclose(sinusoidal_shift_matrix(0, 8), torch.eye(8))
    off_blocks = matrix.clone()
    for pair in range(4):
        off_blocks[2 * pair:2 * pair + 2, 2 * pair:2 * pair + 2] = 0
    assert off_blocks.abs().max() == 0
    composed = sinusoidal_shift_matrix(3, 8).double() @ sinusoidal_shift_matrix(4, 8).double()
    assert torch.allclose(composed, sinusoidal_shift_matrix(7, 8).double(), atol=1e-6)
    assert torch.allclose(sinusoidal_shift_matrix(-3, 8).double(), matrix.T, atol=1e-6)


@pytest.mark.parametrize("bad", [{"offset": 1.5}, {"offset": True}, {"offset": None},
                                 {"dim": 3}, {"base": 0.0}, {"layout": "rows"}])
def test_shift_matrix_rejects_bad_input(bad):
    arguments = {"offset": 1, "dim": 4, "base": 10000.0, "layout": "interleaved", **bad}
    with pytest.raises(ValueError, match=next(iter(bad))):
        sinusoidal_shift_matrix(**arguments)


# --- LearnedPositionalEmbedding ------------------------------------------------------------------


def test_learned_rows_for_ids_and_embeddings():
    positions = LearnedPositionalEmbedding(max_len=10, dim=6)
    table = positions.table.weight
    assert isinstance(table, nn.Parameter) and table.shape == (10, 6)
    ids = torch.randint(0, 100, (3, 7))
    rows = positions(ids)
    assert rows.shape == (1, 7, 6)
    assert torch.equal(rows[0], table[:7])
    assert torch.equal(positions(torch.randn(3, 7, 6)), rows)
    full = positions(torch.zeros(2, 10, dtype=torch.long))  # T = max_len is fine
    assert full.shape == (1, 10, 6)
    assert positions(torch.zeros(2, 0, dtype=torch.long)).shape == (1, 0, 6)


def test_learned_rows_follow_the_input_device():
    positions = LearnedPositionalEmbedding(8, 4).to("meta")
    rows = positions(torch.zeros(2, 5, dtype=torch.long, device="meta"))
    assert rows.device.type == "meta" and rows.shape == (1, 5, 4)


def test_learned_table_gets_gradient_only_in_used_rows():
    positions = LearnedPositionalEmbedding(8, 4)
    positions(torch.zeros(1, 3, dtype=torch.long)).sum().backward()
    touched = positions.table.weight.grad.abs().sum(dim=1) > 0
    assert touched.tolist() == [True] * 3 + [False] * 5


def test_learned_table_refuses_positions_past_max_len():
    positions = LearnedPositionalEmbedding(8, 4)
    with pytest.raises(ValueError) as error:
        positions(torch.zeros(1, 9, dtype=torch.long))
    message = str(error.value)
    assert "9 positions" in message and "max_len=8" in message and "position 8" in message


def test_learned_rows_at_given_positions():
    """`at` reads any positions, e.g. per row of a left-padded batch, and refuses the rest."""
    positions = LearnedPositionalEmbedding(8, 4)
    asked = torch.tensor([[0, 0, 1, 2], [0, 1, 2, 3]])
    assert torch.equal(positions.at(asked), positions.table.weight[asked])
    assert torch.equal(positions.at(torch.arange(5))[None], positions(torch.zeros(1, 5)))
    for bad, message in ((torch.tensor([3, 8]), r"position 8 is asked for.*0\.\.7 \(max_len=8\)"),
                         (torch.tensor([-1, 2]), r"position -1 is asked for"),
                         (torch.tensor([1.0]), "must be integers")):
        with pytest.raises(ValueError, match=message):
            positions.at(bad)


@pytest.mark.parametrize("shape", [(5,), (1, 2, 3, 4)])
def test_learned_table_rejects_other_input_shapes(shape):
    with pytest.raises(ValueError, match="shape"):
        LearnedPositionalEmbedding(8, 4)(torch.zeros(shape))


@pytest.mark.parametrize("max_len, dim", [(0, 4), (-1, 4), (8, 0), (8.0, 4), (8, "4"), (True, 4)])
def test_learned_table_rejects_bad_sizes(max_len, dim):
    with pytest.raises(ValueError):
        LearnedPositionalEmbedding(max_len, dim)


# --- InputEmbedding ------------------------------------------------------------------------------


def test_input_embedding_is_layernorm_of_token_plus_position():
    torch.manual_seed(0)
    embed = InputEmbedding(vocab_size=50, max_len=12, dim=8).eval()
    ids = torch.randint(0, 50, (3, 12))
    expected = embed.norm(embed.tokens(ids) + embed.positions.table.weight[:12])
    assert torch.allclose(embed(ids), expected)
    assert embed(ids).shape == (3, 12, 8)
    assert torch.allclose(embed(ids).mean(dim=-1), torch.zeros(3, 12), atol=1e-5)


def test_input_embedding_uses_berts_dropout_and_epsilon():
    embed = InputEmbedding(50, 12, 8)
    assert embed.dropout.p == 0.1 and embed.norm.eps == 1e-12
    torch.manual_seed(0)
    embed.train()
    zeroed = (embed(torch.randint(0, 50, (64, 12))) == 0).float().mean()
    assert 0.07 < zeroed < 0.13
    no_dropout = InputEmbedding(50, 12, 8, dropout=0.0).train()
    ids = torch.randint(0, 50, (2, 5))
    assert torch.equal(no_dropout(ids), no_dropout.eval()(ids))


def test_input_embedding_works_on_another_device():
    embed = InputEmbedding(50, 12, 8).to("meta")
    assert embed(torch.zeros(2, 5, dtype=torch.long, device="meta")).device.type == "meta"


def test_input_embedding_refuses_long_inputs_and_bad_shapes():
    embed = InputEmbedding(50, 12, 8)
    with pytest.raises(ValueError, match="max_len=12"):
        embed(torch.zeros(1, 13, dtype=torch.long))
    with pytest.raises(ValueError, match="token ids"):
        embed(torch.zeros(1, 5, 8))


@pytest.mark.parametrize("arguments", [
    {"vocab_size": 0}, {"vocab_size": 5.0}, {"max_len": 0}, {"dim": -8},
    {"dropout": 1.0}, {"dropout": -0.1}, {"dropout": "0.1"}, {"dropout": None},
])
def test_input_embedding_rejects_bad_arguments(arguments):
    with pytest.raises(ValueError):
        InputEmbedding(**{"vocab_size": 50, "max_len": 12, "dim": 8, **arguments})


def test_top_level_names():
    for name in ["sinusoidal_table", "LearnedPositionalEmbedding", "InputEmbedding",
                 "sinusoidal_shift_matrix", "layout_permutation", "sinusoidal_wavelengths"]:
        assert hasattr(helpers, name)


# --- Figures -------------------------------------------------------------------------------------


def _learned_pair():
    torch.manual_seed(0)
    before = 0.02 * torch.randn(16, 8)
    return before, before + torch.randn(16, 8) * torch.arange(16).lt(8)[:, None]


FIGURES = {
    "learned_before_after": lambda: plots.plot_learned_before_after(*_learned_pair(), 8),
    "learned_no_line": lambda: plots.plot_learned_before_after(*_learned_pair()),
    "similarity_by_offset": lambda: plots.plot_similarity_by_offset(
        dict(zip("ab", _learned_pair()))),
    "table_default": plots.plot_sinusoidal_table,
    "table_smallest": lambda: plots.plot_sinusoidal_table(dim=2, length=1, base=10.0),
    "table_half": lambda: plots.plot_sinusoidal_table(64, 32, layout="half"),
    "spectrum": lambda: plots.plot_wavelength_spectrum(64, 512, (10.0, 1e4)),
    "spectrum_d2": lambda: plots.plot_wavelength_spectrum(2, 1),
    "binary": plots.plot_binary_counter,
    "value_range": lambda: plots.plot_value_range(sinusoidal_table(64, 16)),
    "row_distances": lambda: plots.plot_row_distances(sinusoidal_table(64, 16)),
    "dot_product_matrix": plots.plot_dot_product_matrix,
    "dot_product_matrix_small": lambda: plots.plot_dot_product_matrix(dim=2, length=1, base=10.0),
    "dot_product_curve": plots.plot_dot_product_curve,
    "dot_product_curve_small": lambda: plots.plot_dot_product_curve(dim=2, length=1),
    "shift_matrix": plots.plot_shift_matrix,
    "shift_rotation": plots.plot_shift_rotation,
    "shift_rotation_negative": lambda: plots.plot_shift_rotation(offset=-12),
    "shift_rotation_one_pair": lambda: plots.plot_shift_rotation(offset=1, dim=2, pairs=1),
    "learned_rows": lambda: plots.plot_learned_rows(_learned_pair()[1], 8,
                                                    initial=_learned_pair()[0]),
    "learned_rows_alone": lambda: plots.plot_learned_rows(_learned_pair()[1], 8, limit=2.0),
    "layouts": plots.plot_layouts,
    "layout_training": lambda: plots.plot_layout_training({"a": [3.0, 1.0], "b": [3.0, 1.0]}, 9.0),
    "add_vs_concat": lambda: plots.plot_add_vs_concat({"x": torch.ones(5), "y": torch.rand(5) + 1},
                                                      torch.randn(100) * 0.05),
    "similarity_by_base": plots.plot_similarity_by_base,
    "frequency_ladders": plots.plot_frequency_ladders,
    "frequency_ladders_d2": lambda: plots.plot_frequency_ladders(dim=2, pair=0, length=10),
}


@pytest.mark.parametrize("name", FIGURES)
def test_figures_are_pure(name):
    open_before = plt.get_fignums()
    figure = FIGURES[name]()
    assert isinstance(figure, Figure) and figure.axes
    assert all(ax.get_title() or ax.get_xlabel() or ax.get_ylabel() for ax in figure.axes)
    assert plt.get_fignums() == open_before  # made without pyplot: nothing left open


def test_similarity_helpers():
    table = torch.tensor([[1.0, 0.0], [2.0, 0.0], [0.0, 3.0]])
    similarity = plots.cosine_similarity_matrix(table)
    assert torch.allclose(similarity, torch.tensor([[1.0, 1, 0], [1, 1, 0], [0, 0, 1]]))
    assert torch.allclose(plots.mean_similarity_by_offset(table), torch.tensor([0.5, 0.0]))
