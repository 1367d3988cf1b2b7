"""The checks of notebook 06's exercises: right answers in several forms pass; each typical
mistake, the forbidden shortcut and a bad type get their own sentence; nothing raises."""

import math

import numpy as np
import pytest
import torch

import helpers
from helpers.exercises import relative as checks
from helpers.relative import t5_relative_position_bucket

# Bound at import, as a learner's `from helpers import ...` cell binds them in the notebook.
from helpers import alibi_slopes as course_slopes  # noqa: E402
from helpers import relative_position_index as course_index  # noqa: E402

torch.set_num_threads(1)


def verdict(capsys, check, answer):
    """(returned verdict, printed line); the check must never raise."""
    result = check(answer)
    return result, capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# 1. Shaw's index
# --------------------------------------------------------------------------------------------

def index_broadcast(t, k):
    return (torch.arange(t)[None, :] - torch.arange(t)[:, None]).clamp(-k, k) + k


def index_loops(t, k):
    return [[max(-k, min(j - i, k)) + k for j in range(t)] for i in range(t)]


def index_numpy(t, k):
    return np.clip(np.arange(t)[None, :] - np.arange(t)[:, None], -k, k) + k


def index_float(t, k):
    return index_broadcast(t, k).float()


@pytest.mark.parametrize("answer", [index_broadcast, index_loops, index_numpy, index_float])
def test_index_right_answers_in_any_form(capsys, answer):
    ok, out = verdict(capsys, checks.check_relative_position_index, answer)
    assert ok and out.startswith("Correct: ")


@pytest.mark.parametrize("answer,words", [
    (lambda t, k: (torch.arange(t)[:, None] - torch.arange(t)[None, :]).clamp(-k, k) + k,
     "rows and columns swapped"),
    (lambda t, k: (torch.arange(t)[None, :] - torch.arange(t)[:, None]).clamp(-k, k),
     "the shift is missing"),
    (lambda t, k: torch.arange(t)[None, :] - torch.arange(t)[:, None] + k, "not clipped"),
    (lambda t, k: torch.zeros(t, t + 1), "expected shape"),
    (lambda t, k: index_broadcast(t, k) + 0.5, "fractions"),
])
def test_index_typical_mistakes(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_relative_position_index, answer)
    assert not ok and out.startswith("Not yet: ") and words in out


def test_index_refuses_the_course_function(capsys):
    ok, out = verdict(capsys, checks.check_relative_position_index,
                      lambda t, k: course_index(t, k))
    assert not ok and "`course_index`" in out
    # Reached through the package at call time: refused while the check runs.
    ok, out = verdict(capsys, checks.check_relative_position_index,
                      lambda t, k: helpers.relative_positions(t).clamp(-k, k) + k)
    assert not ok and "called the course's function" in out
    assert helpers.relative_positions(2).tolist() == [[0, 1], [-1, 0]]  # restored afterwards


@pytest.mark.parametrize("answer,start,words", [
    (None, "Not done yet: ", "replace None"),
    (lambda t, k: None, "Not done yet: ", "returns None"),
    (lambda t, k: 1 / 0, "Not yet: ", "ZeroDivisionError"),
    (index_broadcast(5, 2), "Not yet: ", "not its result"),
    (lambda t, k: "rows", "Not yet: ", "expected a tensor"),
    (lambda t, k: {"a": 1}, "Not yet: ", "got dict"),
])
def test_index_bad_answers_get_a_sentence(capsys, answer, start, words):
    ok, out = verdict(capsys, checks.check_relative_position_index, answer)
    assert not ok and out.startswith(start) and words in out


# --------------------------------------------------------------------------------------------
# 2. T5's bucket function
# --------------------------------------------------------------------------------------------

def bucket_torch(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    n = num_buckets // 2 if bidirectional else num_buckets
    bucket = torch.zeros_like(relative_position)
    if bidirectional:
        bucket = bucket + (relative_position > 0).long() * n
        distance = relative_position.abs()
    else:
        distance = (-relative_position).clamp(min=0)
    exact = n // 2
    large = exact + (torch.log(distance.float() / exact) / math.log(max_distance / exact)
                     * (n - exact)).long()
    large = torch.minimum(large, torch.full_like(large, n - 1))
    return bucket + torch.where(distance < exact, distance, large)


def bucket_python(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """One position at a time, in float64 with math.log, returned as a list."""
    out = []
    for p in relative_position.tolist():
        n, offset = (num_buckets // 2, num_buckets // 2 if p > 0 else 0) if bidirectional else (
            num_buckets, 0)
        d = abs(p) if bidirectional else max(-p, 0)
        exact = n // 2
        if d < exact:
            out.append(offset + d)
        else:
            out.append(offset + min(n - 1, exact + int(math.log(d / exact, max_distance / exact)
                                                       * (n - exact))))
    return out


def bucket_half_scale_list(relative_position, bidirectional=True, num_buckets=32,
                           max_distance=128):
    """A learner's own code that scales the logarithmic part by n // 2, returned as a list:
    right for every even n, wrong for odd n (bidirectional, num_buckets=10: n = 5)."""
    out = []
    for p in relative_position.tolist():
        n = num_buckets // 2 if bidirectional else num_buckets
        offset = n if bidirectional and p > 0 else 0
        d = abs(p) if bidirectional else max(-p, 0)
        exact = n // 2
        log_bucket = exact + int(math.log(max(d, 1) / exact) / math.log(max_distance / exact)
                                 * exact)
        out.append(offset + (d if d < exact else min(n - 1, log_bucket)))
    return out


def bucket_numpy_float(relative_position, bidirectional=True, num_buckets=32,
                       max_distance=128):
    return np.asarray(bucket_torch(relative_position, bidirectional, num_buckets,
                                   max_distance).numpy(), dtype=np.float64)


@pytest.mark.parametrize("answer", [bucket_torch, bucket_python, bucket_numpy_float])
def test_t5_right_answers_in_any_form(capsys, answer):
    ok, out = verdict(capsys, checks.check_t5_bucket, answer)
    assert ok and out.startswith("Correct: ") and "4096" in out


def mistake(name):
    def answer(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        return checks._t5_variant(relative_position, bidirectional, num_buckets, max_distance,
                                  name)
    return answer


@pytest.mark.parametrize("answer,words", [
    (lambda p, b, n, m: bucket_torch(-p, b, n, m), "query minus key"),
    (mistake("no_halving"), "two halves"),
    (mistake("no_offset"), "their own half"),
    (mistake("abs_causal"), "future keys"),
    (mistake("no_cap"), "shares the last bucket"),
    (mistake("round"), "rounded down"),
    (mistake("scale"), "n - max_exact"),
    (mistake("half_scale"), "one more than n // 2"),
    (bucket_half_scale_list, "one more than n // 2"),
    (lambda p, b, n, m: bucket_torch(p, b, n, m) + 1, "expected"),
    (lambda p, b, n, m: bucket_torch(p, b, n, m).float() + 0.5, "fractions"),
    (lambda p, b, n, m: bucket_torch(p[:10], b, n, m), "expected shape"),
])
def test_t5_typical_mistakes(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_t5_bucket, answer)
    assert not ok and out.startswith("Not yet: ") and words in out


def test_t5_the_mistake_variants_really_differ_from_t5():
    positions = torch.arange(-300, 301)
    for name in checks._T5_MISTAKES:
        if name == "sign":
            continue
        # n // 2 and n - n // 2 differ only for odd n: 10 buckets, 5 per direction.
        setting = (True, 10, 20) if name == "half_scale" else (name != "abs_causal", 32, 128)
        assert not torch.equal(checks._t5_variant(positions, *setting, name),
                               t5_relative_position_bucket(positions, *setting)), name
    assert torch.equal(checks._t5_variant(positions, True, 32, 128, "none"),
                       t5_relative_position_bucket(positions, True, 32, 128))


def test_t5_refuses_the_course_function(capsys):
    ok, out = verdict(capsys, checks.check_t5_bucket,
                      lambda p, b, n, m: t5_relative_position_bucket(p, b, n, m))
    assert not ok and "`t5_relative_position_bucket`" in out
    ok, out = verdict(capsys, checks.check_t5_bucket,
                      lambda p, b, n, m: helpers.relative.t5_relative_position_bucket(p, b, n, m))
    assert not ok and "t5_relative_position_bucket" in out
    # The module that wraps it is refused too: T5RelativeBias.buckets looks the function up.
    ok, out = verdict(capsys, checks.check_t5_bucket,
                      lambda p, b, n, m: helpers.T5RelativeBias(1, n, m, b).buckets(1, 1))
    assert not ok and "called the course's function" in out


@pytest.mark.parametrize("answer,start,words", [
    (None, "Not done yet: ", "replace None"),
    (lambda p, b, n, m: None, "Not done yet: ", "returns None"),
    (lambda p, b, n, m: p.foo(), "Not yet: ", "AttributeError"),
    (lambda p: p, "Not yet: ", "TypeError"),
    (17, "Not yet: ", "not its result"),
    (lambda p, b, n, m: "buckets", "Not yet: ", "expected a tensor"),
])
def test_t5_bad_answers_get_a_sentence(capsys, answer, start, words):
    ok, out = verdict(capsys, checks.check_t5_bucket, answer)
    assert not ok and out.startswith(start) and words in out


# --------------------------------------------------------------------------------------------
# 3. ALiBi slopes
# --------------------------------------------------------------------------------------------

def slopes_recursive(n):
    if n & (n - 1) == 0:
        return [2 ** (-8 * h / n) for h in range(1, n + 1)]
    m = 2 ** math.floor(math.log2(n))
    return slopes_recursive(m) + slopes_recursive(2 * m)[0::2][: n - m]


def slopes_reference_code_style(n):
    """Start and ratio 2^(-8/n), as the ALiBi code writes it; a tensor, a tuple."""
    def power_of_two(m):
        start = 2 ** (-(2 ** -(math.log2(m) - 3)))
        return [start * start ** h for h in range(m)]
    if math.log2(n).is_integer():
        return torch.tensor(power_of_two(n))
    m = 2 ** math.floor(math.log2(n))
    return tuple(power_of_two(m) + list(slopes_reference_code_style(2 * m).tolist())[0::2][: n - m])


def slopes_odd_places(n):
    m = 2 ** math.floor(math.log2(n))
    return slopes_recursive(m) + slopes_recursive(2 * m)[1::2][: n - m]


@pytest.mark.parametrize("answer", [slopes_recursive, slopes_reference_code_style,
                                    lambda n: np.array(slopes_recursive(n))[:, None]])
def test_alibi_right_answers_in_any_form(capsys, answer):
    ok, out = verdict(capsys, checks.check_alibi_slopes, answer)
    assert ok and out.startswith("Correct: ")


@pytest.mark.parametrize("answer,words", [
    (lambda n: [2 ** (-8 * h / n) for h in range(1, n + 1)], "plain sequence 2^(-8h/H)"),
    (lambda n: [2 ** (-8 * h / n) for h in range(0, n)], "off by one in h"),
    (lambda n: [2 ** (-8 * h / n) for h in range(2, n + 2)], "off by one in h"),
    (lambda n: slopes_recursive(n)[::-1], "reverse order"),
    (lambda n: sorted(slopes_recursive(n), reverse=True), "sorted"),
    (lambda n: slopes_recursive(n) if n & (n - 1) == 0 else slopes_odd_places(n), "odd places"),
    (lambda n: [0.5] * n if n > 1 else [2 ** -8], "share a slope"),
    (lambda n: [0.5] * (n + 1), "one per head"),
    (lambda n: [1 / n] * 1 if n == 1 else slopes_recursive(n), "expected"),
])
def test_alibi_typical_mistakes(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_alibi_slopes, answer)
    assert not ok and out.startswith("Not yet: ") and words in out


def paper_formula(n):
    return [2 ** (-8 * h / n) for h in range(1, n + 1)]


def test_alibi_powers_of_two_only(capsys):
    """The core exercise: the paper's formula passes when only powers of two are tried, and the
    full check still asks for the reference code's rule on other head counts."""
    for answer in (paper_formula, slopes_recursive):
        ok, out = verdict(capsys, lambda fn: checks.check_alibi_slopes(
            fn, powers_of_two_only=True), answer)
        assert ok and out.startswith("Correct: ") and "powers of two" in out
    ok, out = verdict(capsys, checks.check_alibi_slopes, paper_formula)
    assert not ok and "not a power of two" in out
    for answer, words in [(lambda n: paper_formula(n)[::-1], "reverse order"),
                          (lambda n: [2 ** (-8 * h / n) for h in range(n)], "off by one"),
                          (lambda n: None, "returns None")]:
        ok, out = verdict(capsys, lambda fn: checks.check_alibi_slopes(
            fn, powers_of_two_only=True), answer)
        assert not ok and words in out, out
    ok, out = verdict(capsys, lambda fn: checks.check_alibi_slopes(
        fn, powers_of_two_only=True), lambda n: course_slopes(n))
    assert not ok and "`course_slopes`" in out


def test_alibi_refuses_the_course_function(capsys):
    ok, out = verdict(capsys, checks.check_alibi_slopes, lambda n: course_slopes(n))
    assert not ok and "`course_slopes`" in out
    ok, out = verdict(capsys, checks.check_alibi_slopes,
                      lambda n: helpers.alibi_bias(n, 2)[:, 1, 0].neg())
    assert not ok and "called the course's function" in out
    assert helpers.alibi_slopes(2).tolist() == [1 / 16, 1 / 256]  # restored afterwards


@pytest.mark.parametrize("answer,start,words", [
    (None, "Not done yet: ", "replace None"),
    (lambda n: None, "Not done yet: ", "returns None"),
    (lambda n: 1 / 0, "Not yet: ", "ZeroDivisionError"),
    ([0.5, 0.25], "Not yet: ", "not its result"),
    (lambda n: "slopes", "Not yet: ", "expected a tensor"),
])
def test_alibi_bad_answers_get_a_sentence(capsys, answer, start, words):
    ok, out = verdict(capsys, checks.check_alibi_slopes, answer)
    assert not ok and out.startswith(start) and words in out


# --------------------------------------------------------------------------------------------
# 4. Shaw's logits
# --------------------------------------------------------------------------------------------

def shaw_einsum(q, k, table, clip):
    index = helpers.relative_position_index(q.shape[0], clip)
    return (q @ k.T + torch.einsum("id,ijd->ij", q, table[index])) / math.sqrt(q.shape[1])


def shaw_loops(q, k, table, clip):
    t, d = q.shape
    return [[float(q[i] @ (k[j] + table[max(-clip, min(j - i, clip)) + clip])) / math.sqrt(d)
             for j in range(t)] for i in range(t)]


@pytest.mark.parametrize("answer", [shaw_einsum, shaw_loops,
                                    lambda q, k, t, c: shaw_einsum(q, k, t, c).double().numpy()])
def test_shaw_right_answers_in_any_form(capsys, answer):
    ok, out = verdict(capsys, checks.check_shaw_logits, answer)
    assert ok and out.startswith("Correct: ")


@pytest.mark.parametrize("answer,words", [
    (lambda q, k, t, c: shaw_einsum(q, k, t, c) * math.sqrt(q.shape[1]), "unscaled"),
    (lambda q, k, t, c: q @ k.T / math.sqrt(q.shape[1]), "relative term is missing"),
    (lambda q, k, t, c: (q @ k.T + torch.einsum(
        "id,ijd->ij", q, t[helpers.relative_position_index(q.shape[0], c).T])) / math.sqrt(
        q.shape[1]), "you used i - j"),
    (lambda q, k, t, c: q @ k.T, "expected"),
    (lambda q, k, t, c: q, "expected shape"),
])
def test_shaw_typical_mistakes(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_shaw_logits, answer)
    assert not ok and out.startswith("Not yet: ") and words in out


@pytest.mark.parametrize("answer,start,words", [
    (None, "Not done yet: ", "replace None"),
    (lambda q, k, t, c: None, "Not done yet: ", "returns None"),
    (lambda q, k, t, c: 1 / 0, "Not yet: ", "ZeroDivisionError"),
    ("logits", "Not yet: ", "pass a function"),
    (lambda q, k, t, c: "logits", "Not yet: ", "expected a tensor"),
])
def test_shaw_bad_answers_get_a_sentence(capsys, answer, start, words):
    ok, out = verdict(capsys, checks.check_shaw_logits, answer)
    assert not ok and out.startswith(start) and words in out
