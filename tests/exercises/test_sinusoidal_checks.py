"""The checks of notebook 04's exercises: right answers in several forms pass; each typical
mistake, the forbidden shortcut and a bad type get their own sentence; nothing raises."""

import math

import numpy as np
import pytest
import torch

import helpers
from helpers.exercises import sinusoidal as checks

# Bound at import, as a learner's `from helpers import ...` cell binds them in the notebook.
from helpers import layout_permutation as course_order  # noqa: E402
from helpers import sinusoidal_frequencies as course_frequencies  # noqa: E402
from helpers import sinusoidal_shift_matrix as course_shift  # noqa: E402
from helpers import sinusoidal_table as course_table  # noqa: E402

torch.set_num_threads(1)


def verdict(capsys, check, answer):
    """(returned verdict, printed output); the check must never raise."""
    result = check(answer)
    return result, capsys.readouterr().out


def written_table(n, d, base=10000.0, layout="interleaved", *, frequencies=None, swap=False,
                  unit=1.0, start=0):
    """A learner's table, written independently of the course (float64), with optional slips."""
    pairs = torch.arange(d // 2, dtype=torch.float64)
    omega = base ** (-2 * pairs / d) if frequencies is None else frequencies(pairs, d, base)
    angles = torch.arange(start, start + n, dtype=torch.float64)[:, None] * omega * unit
    first, second = (angles.cos(), angles.sin()) if swap else (angles.sin(), angles.cos())
    if layout == "half":
        return torch.cat([first, second], dim=1)
    table = torch.empty(n, d, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = first, second
    return table


# --------------------------------------------------------------------------------------------
# Exercise 1: PE(3) by hand
# --------------------------------------------------------------------------------------------

PE3 = [math.sin(3), math.cos(3), math.sin(0.03), math.cos(0.03)]


@pytest.mark.parametrize("answer", [PE3, tuple(PE3), torch.tensor(PE3), np.array(PE3),
                                    [round(v, 4) for v in PE3], torch.tensor([PE3])])
def test_pe_row_right_answers_in_any_form(capsys, answer):
    ok, out = verdict(capsys, checks.check_pe_row, answer)
    assert ok and out.startswith("Correct: ")


@pytest.mark.parametrize("answer,words", [
    ([math.cos(3), math.sin(3), math.cos(0.03), math.sin(0.03)], "swapped"),
    ([math.sin(3), math.sin(0.03), math.cos(3), math.cos(0.03)], "half layout"),
    ([math.sin(3), math.cos(3), math.sin(3 / 10), math.cos(3 / 10)], "2i/d"),
    ([math.sin(math.radians(3)), math.cos(math.radians(3)), math.sin(math.radians(0.03)),
      math.cos(math.radians(0.03))], "degrees"),
    ([math.sin(3), math.cos(3), math.sin(3), math.cos(3)], "entry 2"),
    ([1, 2, 3], "expected 4 numbers"),
])
def test_pe_row_typical_mistakes(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_pe_row, answer)
    assert not ok and out.startswith("Not yet: ") and words in out


@pytest.mark.parametrize("answer", ["abc", {"a": 1}, [[1, 2], [3]], object()])
def test_pe_row_bad_types(capsys, answer):
    ok, out = verdict(capsys, checks.check_pe_row, answer)
    assert not ok and out.startswith("Not yet: ") and "expected" in out


# --------------------------------------------------------------------------------------------
# Exercise 2: the table from the formula, both layouts
# --------------------------------------------------------------------------------------------

def table_torch(n, d, base=10000.0, layout="interleaved"):
    return written_table(n, d, base, layout)


def table_float32(n, d, base=10000.0, layout="interleaved"):
    return written_table(n, d, base, layout).float()


def table_loops(n, d, base=10000.0, layout="interleaved"):
    rows = []
    for pos in range(n):
        sines = [math.sin(pos / base ** (2 * i / d)) for i in range(d // 2)]
        cosines = [math.cos(pos / base ** (2 * i / d)) for i in range(d // 2)]
        if layout == "half":
            rows.append(sines + cosines)
        else:
            rows.append([value for pair in zip(sines, cosines) for value in pair])
    return rows


def table_numpy(n, d, base=10000.0, layout="interleaved"):
    return written_table(n, d, base, layout).numpy()


@pytest.mark.parametrize("answer", [table_torch, table_float32, table_loops, table_numpy])
def test_table_right_answers_in_any_form(capsys, answer):
    ok, out = verdict(capsys, checks.check_sinusoidal_table, answer)
    assert ok and out.startswith("Correct: ")


def test_table_is_tried_on_fresh_sizes(capsys):
    cases = checks._table_cases(seed=1)
    assert {layout for *_, layout in cases} == {"interleaved", "half"}
    assert len({(n, d, base) for n, d, base, _ in cases}) >= 5
    assert checks._table_cases(seed=1) != checks._table_cases(seed=2)


def t2t(pairs, d, base):
    return base ** (-pairs / max(d // 2 - 1, 1))


def other_layout(n, d, base=10000.0, layout="interleaved"):
    return written_table(n, d, base, "half" if layout == "interleaved" else "interleaved")


@pytest.mark.parametrize("answer,words", [
    (lambda n, d, base, layout: written_table(n, d, base, layout, swap=True),
     "sine and cosine are swapped"),
    (lambda n, d, base, layout: written_table(n, d, base, layout,
                                              frequencies=lambda i, d, b: b ** (-i / d)),
     "not i/d"),
    (lambda n, d, base, layout: written_table(n, d, base, layout, frequencies=t2t),
     "tensor2tensor"),
    (lambda n, d, base, layout: written_table(n, d, base, layout, unit=math.pi / 180),
     "degrees"),
    (lambda n, d, base, layout: written_table(n, d, base, layout, unit=180 / math.pi),
     "converted to degrees"),
    (lambda n, d, base, layout: written_table(n, d, base, layout, start=1), "one position late"),
    (other_layout, "layout"),
    (lambda n, d, base, layout: written_table(n, d, base, "interleaved"),
     "layout='half' was asked"),
    (lambda n, d, base, layout: written_table(n, d, 10000.0, layout), "ignores `base`"),
    (lambda n, d, base, layout: written_table(n, d, base, layout).T, "rows and columns swapped"),
    (lambda n, d, base, layout: written_table(n + 1, d, base, layout), "expected ["),
    (lambda n, d, base, layout: written_table(n, d, base, layout) * 1.01, "entry ["),
    (lambda n, d, base, layout: 1 / 0, "ZeroDivisionError"),
    (lambda n, d, base, layout: "table", "expected a tensor"),
    (lambda n, d: written_table(n, d), "TypeError"),
])
def test_table_typical_mistakes(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_sinusoidal_table, answer)
    assert not ok and out.startswith("Not yet: ") and words in out


def test_table_other_layout_is_named_for_each_direction(capsys):
    ok, out = verdict(capsys, checks.check_sinusoidal_table,
                      lambda n, d, base, layout: written_table(n, d, base, "interleaved"))
    assert "this is the interleaved layout, but layout='half' was asked" in out
    ok, out = verdict(capsys, checks.check_sinusoidal_table,
                      lambda n, d, base, layout: written_table(n, d, base, "half"))
    assert "this is the half layout, but layout='interleaved' was asked" in out


def test_table_refuses_the_course_function(capsys):
    ok, out = verdict(capsys, checks.check_sinusoidal_table,
                      lambda n, d, base, layout: course_table(n, d, base, layout))
    assert not ok and "`course_table`" in out
    # Reached through the package at call time: refused while the check runs.
    ok, out = verdict(capsys, checks.check_sinusoidal_table,
                      lambda n, d, base, layout: helpers.sinusoidal_table(n, d, base, layout))
    assert not ok and "course's sinusoidal table" in out
    ok, out = verdict(capsys, checks.check_sinusoidal_table,
                      lambda n, d, base, layout: written_table(
                          n, d, base, layout,
                          frequencies=lambda i, d, b: helpers.sinusoidal_frequencies(d, b)))
    assert not ok and "course's sinusoidal table" in out
    assert helpers.sinusoidal_table(1, 2).tolist() == [[0.0, 1.0]]  # restored afterwards


@pytest.mark.parametrize("answer,start,words", [
    (None, "Not done yet: ", "replace None"),
    (lambda n, d, base, layout: None, "Not done yet: ", "returns None"),
    (42, "Not yet: ", "expected a function"),
    ("table", "Not yet: ", "expected a function"),
])
def test_table_not_done_and_bad_types(capsys, answer, start, words):
    ok, out = verdict(capsys, checks.check_sinusoidal_table, answer)
    assert not ok and out.startswith(start) and words in out


# --------------------------------------------------------------------------------------------
# Exercise 3: how many pairs are slower than the context
# --------------------------------------------------------------------------------------------

def counted(dim, base, length, *, turn=2 * math.pi, power=lambda pairs, dim: 2 * pairs / dim):
    """A learner's count, written independently of the course, with optional slips."""
    pairs = torch.arange(dim // 2, dtype=torch.float64)
    return int((turn * base ** power(pairs, dim) > length).sum())


def slow_pairs_loop(dim, base, length):
    count = 0
    for i in range(dim // 2):
        if 2 * math.pi * base ** (2 * i / dim) > length:
            count += 1
    return count


@pytest.mark.parametrize("answer", [
    counted,
    slow_pairs_loop,
    lambda dim, base, length: torch.tensor(counted(dim, base, length)),      # a 0-d tensor
    lambda dim, base, length: float(counted(dim, base, length)),             # 16.0
    lambda dim, base, length: np.int64(counted(dim, base, length)),
    # the closed form: pair i is slow when i > (d/2) · log_base(length / 2π)
    lambda dim, base, length: sum(1 for i in range(dim // 2)
                                  if i > dim / 2 * math.log(length / (2 * math.pi), base)),
])
def test_slow_pairs_right_answers_in_any_form(capsys, answer):
    ok, out = verdict(capsys, checks.check_slow_pairs, answer)
    assert ok and out.startswith("Correct: ")


def test_slow_pairs_is_tried_on_fresh_cases(capsys):
    seen = []
    def recording(dim, base, length):
        seen.append((dim, base, length))
        return counted(dim, base, length)
    for seed in (1, 2):
        assert checks.check_slow_pairs(recording, seed=seed)
    capsys.readouterr()
    first, second = seen[:len(seen) // 2], seen[len(seen) // 2:]
    assert (64, 10000.0, 512) in first and first != second and len(first) >= 8
    assert counted(64, 10000.0, 512) == 16 and counted(64, 1e6, 512) == 21


@pytest.mark.parametrize("answer,words", [
    (lambda d, b, l: counted(d, b, l, turn=1.0), "not 1 / ω_i"),
    (lambda d, b, l: counted(d, b, l, turn=360.0), "counted as 360"),
    (lambda d, b, l: counted(d, b, l, power=lambda p, d: p / d), "not i/d"),
    (lambda d, b, l: counted(d, b, l, power=lambda p, d: p / (d // 2 - 1)), "tensor2tensor"),
    (lambda d, b, l: d // 2 - counted(d, b, l), "fast pairs"),
    (lambda d, b, l: 2 * counted(d, b, l), "counts columns"),
    (lambda d, b, l: d - counted(d, b, l), "counts columns"),
    (lambda d, b, l: counted(d, b, l) + 1, "larger than `length`"),
])
def test_slow_pairs_typical_mistakes(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_slow_pairs, answer)
    assert not ok and out.startswith("Not yet: ") and words in out


def test_slow_pairs_refuses_the_course_functions(capsys):
    ok, out = verdict(capsys, checks.check_slow_pairs,
                      lambda d, b, l: int((helpers.sinusoidal_wavelengths(d, b) > l).sum()))
    assert not ok and "compute them from the formula" in out
    ok, out = verdict(capsys, checks.check_slow_pairs,
                      lambda d, b, l: int((2 * math.pi / course_frequencies(d, b) > l).sum()))
    assert not ok and "`course_frequencies`" in out
    assert helpers.sinusoidal_wavelengths(2).tolist() == [2 * math.pi]   # restored afterwards


@pytest.mark.parametrize("answer,start,words", [
    (None, "Not done yet: ", "replace None"),
    (lambda d, b, l: None, "Not done yet: ", "returns None"),
    (16, "Not yet: ", "expected a function"),
    ("16", "Not yet: ", "expected a function"),
    (lambda d, b, l: "16", "Not yet: ", "whole number"),
    (lambda d, b, l: 16.5, "Not yet: ", "whole number"),
    (lambda d, b, l: math.nan, "Not yet: ", "whole number"),
    (lambda d, b, l: [1, 2], "Not yet: ", "whole number"),
    (lambda d, b, l: 1 / 0, "Not yet: ", "ZeroDivisionError"),
])
def test_slow_pairs_not_done_and_bad_types(capsys, answer, start, words):
    ok, out = verdict(capsys, checks.check_slow_pairs, answer)
    assert not ok and out.startswith(start) and words in out


# --------------------------------------------------------------------------------------------
# Exercise 4: the shift matrix
# --------------------------------------------------------------------------------------------

def shift_blocks(k, dim, sign=1.0):
    matrix = torch.zeros(dim, dim, dtype=torch.float64)
    for i in range(dim // 2):
        t = k / 10000 ** (2 * i / dim)
        c, s = math.cos(t), sign * math.sin(t)
        matrix[2 * i:2 * i + 2, 2 * i:2 * i + 2] = torch.tensor([[c, s], [-s, c]])
    return matrix


def shift_lists(k, dim):
    return shift_blocks(k, dim).tolist()


def shift_block_diag(k, dim):
    t = k * 10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    return torch.block_diag(*[torch.stack([torch.stack([c, s]), torch.stack([-s, c])])
                              for c, s in zip(t.cos(), t.sin())]).float()


@pytest.mark.parametrize("answer", [shift_blocks, shift_lists, shift_block_diag])
def test_shift_matrix_right_answers_in_any_form(capsys, answer):
    ok, out = verdict(capsys, checks.check_shift_matrix, answer)
    assert ok and out.startswith("Correct: ")


@pytest.mark.parametrize("answer,words", [
    (lambda k, dim: shift_blocks(k, dim, sign=-1.0), "turn the wrong way"),
    (lambda k, dim: torch.eye(dim), "misses PE(p + k)"),
    (lambda k, dim: shift_blocks(k, dim)[:-1], "has shape"),
    (lambda k, dim: 1 / 0, "ZeroDivisionError"),
    (lambda k, dim: torch.full((dim, dim), math.nan), "misses PE(p + k)"),
    (lambda k, dim: "matrix", "expected a tensor"),
    ("matrix", "should be a function"),
])
def test_shift_matrix_typical_mistakes(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_shift_matrix, answer)
    assert not ok and out.startswith("Not yet: ") and words in out


def test_shift_matrix_refuses_the_course_function(capsys):
    ok, out = verdict(capsys, checks.check_shift_matrix, lambda k, dim: course_shift(k, dim))
    assert not ok and "`course_shift`" in out
    ok, out = verdict(capsys, checks.check_shift_matrix,
                      lambda k, dim: helpers.sinusoidal_shift_matrix(k, dim))
    assert not ok and "course's sinusoidal_shift_matrix" in out
    assert helpers.sinusoidal_shift_matrix(0, 2).tolist() == [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize("answer,words", [(None, "replace None"),
                                          (lambda k, dim: None, "returns None")])
def test_shift_matrix_not_done(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_shift_matrix, answer)
    assert not ok and out.startswith("Not done yet: ") and words in out


# --------------------------------------------------------------------------------------------
# Exercise 5: the permutation between the layouts
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    lambda dim: list(range(0, dim, 2)) + list(range(1, dim, 2)),
    lambda dim: torch.cat([torch.arange(0, dim, 2), torch.arange(1, dim, 2)]),
    lambda dim: np.concatenate([np.arange(0, dim, 2), np.arange(1, dim, 2)]),
    lambda dim: tuple(2 * j if j < dim // 2 else 2 * (j - dim // 2) + 1 for j in range(dim)),
    [0, 2, 4, 6, 1, 3, 5, 7],
    (0, 2, 4, 6, 1, 3, 5, 7),
    torch.tensor([0, 2, 4, 6, 1, 3, 5, 7]),
    [0.0, 2.0, 4.0, 6.0, 1.0, 3.0, 5.0, 7.0],
])
def test_order_right_answers_in_any_form(capsys, answer):
    ok, out = verdict(capsys, checks.check_layout_permutation, answer)
    assert ok and out.startswith("Correct: ")


@pytest.mark.parametrize("answer,words", [
    ([0, 4, 1, 5, 2, 6, 3, 7], "the way back"),
    (lambda dim: [j // 2 + (j % 2) * (dim // 2) for j in range(dim)], "the way back"),
    ([1, 3, 5, 7, 0, 2, 4, 6], "cosines come first"),
    ([0, 1, 2, 3, 4, 5, 6, 7], "column 1 of the half layout"),
    ([0, 2, 4, 6, 1, 3, 5], "expected 8 indices"),
    ([0, 0, 4, 6, 1, 3, 5, 7], "not a permutation"),
    (lambda dim: [0, 2, 4, 6, 1, 3, 5, 7], "for dim=2"),
    (lambda dim: 1 / 0, "ZeroDivisionError"),
    ("x", "flat list"),
    ([[0, 2], [4, 6]], "flat list"),
    (2.0, "the single number 2.0"),
    (8, "the single number 8"),
    (torch.tensor(8), "the single number"),
    ([0.5, 2, 4, 6, 1, 3, 5, 7], "whole numbers"),
])
def test_order_typical_mistakes(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_layout_permutation, answer)
    assert not ok and out.startswith("Not yet: ") and words in out


def test_order_refuses_the_course_function(capsys):
    ok, out = verdict(capsys, checks.check_layout_permutation, lambda dim: course_order(dim))
    assert not ok and "`course_order`" in out
    ok, out = verdict(capsys, checks.check_layout_permutation,
                      lambda dim: helpers.layout_permutation(dim).tolist())
    assert not ok and "course's layout_permutation" in out
    assert helpers.layout_permutation(2).tolist() == [0, 1]


@pytest.mark.parametrize("answer,words", [(None, "replace None"),
                                          (lambda dim: None, "returns None")])
def test_order_not_done(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_layout_permutation, answer)
    assert not ok and out.startswith("Not done yet: ") and words in out


def test_an_answer_ignoring_base_never_passes_by_luck():
    """The random cases can all draw base 10,000; a fixed case with another base catches it."""
    assert any(base != 10000.0 for _, _, base, _ in checks._table_cases(seed=None)[:4])
