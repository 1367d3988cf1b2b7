"""The shared tools every exercise check reads answers with (helpers.exercises.answers)."""

import numpy as np
import pytest
import torch

import helpers
from helpers import rope
from helpers.exercises.answers import (CourseFunctionUsed, as_int_list, as_number, as_tensor,
                                       call_learner, course_functions_hidden, refers_to)
from helpers.exercises.feedback import passes


@pytest.mark.parametrize("answer, expected", [
    (3, 3.0), (2.5, 2.5), (np.float32(1.5), 1.5), (np.int64(7), 7.0), (torch.tensor(4.0), 4.0),
    (torch.tensor([9]), 9.0), (np.array([0.5]), 0.5), (np.array(2), 2.0), (True, None),
    ("3", None), (None, None), (torch.ones(2), None), (np.ones(2), None),
    (np.array(["3"]), None), ([1], None), (10 ** 400, None),
    (torch.ones(1, device="meta"), None)])
def test_as_number_accepts_every_numeric_form_and_nothing_else(answer, expected):
    assert as_number(answer) == expected


def test_as_tensor_reports_type_and_shape_in_a_sentence():
    tensor, problem = as_tensor([[1, 2], [3, 4]], shape=(2, 2))
    assert problem is None and tensor.dtype == torch.float64 and tensor[1, 0] == 3
    assert as_tensor("abc", shape=(2,)) == (None, "expected a tensor of shape [2], got str.")
    assert as_tensor([1, 2, 3], shape=(2,))[1] == "expected shape [2], got [3]."
    assert as_tensor(None)[1] == "expected a tensor, got NoneType."


@pytest.mark.parametrize("answer, expected", [
    ([0, 2, 1], [0, 2, 1]), ((3, 4), [3, 4]), (range(3), [0, 1, 2]),
    (torch.tensor([1, 0]), [1, 0]), (np.array([5.0, 6.0]), [5, 6]), ([1.5, 2], None),
    ("012", None), (None, None), (7, [7])])
def test_as_int_list(answer, expected):
    assert as_int_list(answer) == expected


def test_call_learner_turns_a_crash_into_a_sentence():
    assert call_learner(lambda x: x + 1, 1) == (2, None)
    result, problem = call_learner(lambda: 1 / 0)
    assert result is None and problem == "your function raised ZeroDivisionError: division by zero"


def test_course_functions_hidden_refuses_then_restores():
    original = helpers.apply_rope
    with course_functions_hidden("helpers.rope.apply_rope"):
        with pytest.raises(CourseFunctionUsed, match="without helpers.rope.apply_rope"):
            helpers.apply_rope(torch.zeros(2, 4))
        with pytest.raises(CourseFunctionUsed):
            rope.apply_rope(torch.zeros(2, 4))
    assert helpers.apply_rope is original and rope.apply_rope is original


apply_rope = helpers.apply_rope  # bound before any check runs, as a learner's import would be


def test_refers_to_finds_a_name_bound_before_the_check():
    def shortcut(x):
        return apply_rope(x)

    def own(x):
        return x * 2

    def nested(x):
        return [apply_rope(row) for row in x]

    def outer():
        rotate = helpers.apply_rope

        def through_a_closure(x):
            return rotate(x)
        return through_a_closure

    assert refers_to(shortcut, helpers.apply_rope) == "apply_rope"
    assert refers_to(outer(), helpers.apply_rope) == "rotate"
    assert refers_to(nested, helpers.apply_rope) == "apply_rope"
    assert refers_to(own, helpers.apply_rope) is None


def test_passes_returns_the_verdict_quietly(capsys):
    assert passes(lambda answer: answer == 1, 1) is True
    assert passes(lambda answer: answer == 1, 2) is False
    assert capsys.readouterr().out == ""


class LengthRaises:
    def __len__(self):
        raise ZeroDivisionError("no length")

    def __getitem__(self, index):
        raise ZeroDivisionError("no item")


def test_conversions_never_raise_whatever_the_object_does():
    assert as_number(LengthRaises()) is None
    assert as_tensor(LengthRaises())[1] == "expected a tensor, got LengthRaises."
    assert as_tensor(torch.ones(2, device="meta"))[1] == "expected a tensor, got Tensor."
    assert as_int_list(LengthRaises()) is None


def test_refers_to_finds_a_course_function_bound_as_a_default_argument():
    def positional(x, g=rope.apply_rope):
        return g(x)

    def keyword_only(x, *, g=rope.apply_rope):
        return g(x)

    def harmless(x, scale=2.0):
        return x * scale

    assert refers_to(positional, rope.apply_rope) == "g"
    assert refers_to(keyword_only, rope.apply_rope) == "g"
    assert refers_to(harmless, rope.apply_rope) is None
    assert refers_to(lambda x, g=rope.apply_rope: g(x), rope.apply_rope) == "g"
