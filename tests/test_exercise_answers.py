"""The shared tools every exercise check reads answers with (helpers.exercises.answers)."""

import functools
import sys
import types

import numpy as np
import pytest
import torch

import helpers
from helpers import rope
from helpers.exercises.answers import (STUB, TOO_COARSE, CourseFunctionUsed, as_int_list,
                                       as_number, as_plain_tensor, as_tensor, call_learner,
                                       course_functions_hidden, function_name, half_precision,
                                       hidden_names, not_a_function, one_number, refers_to,
                                       run_hidden, run_settled, sequence_length, settled)
from helpers.exercises.feedback import passes


@pytest.mark.parametrize("answer, expected", [
    (3, 3.0), (2.5, 2.5), (np.float32(1.5), 1.5), (np.int64(7), 7.0), (torch.tensor(4.0), 4.0),
    (torch.tensor([9]), 9.0), (np.array([0.5]), 0.5), (np.array(2), 2.0), (True, None),
    ("3", None), (None, None), (torch.ones(2), None), (np.ones(2), None),
    (np.array(["3"]), None), ([1], None), (10 ** 400, None),
    (torch.ones(1, device="meta"), None), (torch.tensor([True]), None), (np.array([True]), None),
    (np.longdouble(1.5), 1.5)])
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
    assert call_learner(lambda: sys.exit(2)) == (None, "your function called sys.exit()")


def interrupt():
    raise KeyboardInterrupt


def test_run_hidden_reports_sys_exit_restores_and_lets_keyboard_interrupt_through():
    original = helpers.apply_rope
    assert run_hidden(lambda: sys.exit(), ("helpers.rope.apply_rope",)) == (
        None, "called sys.exit()")
    assert helpers.apply_rope is original and rope.apply_rope is original
    with pytest.raises(KeyboardInterrupt):
        call_learner(interrupt)
    with pytest.raises(KeyboardInterrupt):
        run_hidden(interrupt, ("helpers.rope.apply_rope",))
    assert helpers.apply_rope is original
    assert run_hidden(lambda: None, ()) == (None, STUB)


@pytest.mark.parametrize("answer", [
    np.ones(3, dtype=np.longdouble), [np.longdouble(1.0)] * 3, (np.longdouble(1.0),) * 3])
def test_as_tensor_takes_float_arrays_torch_cannot_through_float64(answer):
    """NumPy's longdouble has no torch dtype: np.asarray(x, np.float64) first."""
    tensor, problem = as_tensor(answer, shape=(3,))
    assert problem is None and tensor.dtype == torch.float64 and tensor.tolist() == [1.0] * 3


def test_as_plain_tensor_gives_a_dense_detached_cpu_copy_or_a_sentence():
    values = torch.ones(3, requires_grad=True)
    plain, problem = as_plain_tensor(values.to_sparse(), (3,))
    assert problem is None and plain.layout == torch.strided and plain.dtype == torch.float64
    plain, _ = as_plain_tensor(values, (3,))
    assert not plain.requires_grad
    assert as_plain_tensor(torch.ones(3, dtype=torch.complex64), (3,))[1] == (
        "expected a tensor of shape [3] of real numbers, got complex numbers.")
    assert as_plain_tensor(torch.ones(3, device="meta"), (3,))[1] == (
        "expected a tensor of shape [3] of values: a tensor on the meta device holds no values.")
    assert as_plain_tensor(LengthRaises(), (3,))[1] == (
        "expected a tensor of shape [3], got LengthRaises.")


@pytest.mark.parametrize("answer, half", [
    (torch.ones(2, dtype=torch.float16), True), (torch.ones(2, dtype=torch.bfloat16), True),
    (np.ones(2, dtype=np.float16), True), (np.float16(1), True),
    ([torch.tensor(1.0, dtype=torch.bfloat16)] * 2, True), (torch.ones(2), False),
    (np.ones(2, dtype=np.float32), False), ([1.0, 2.0], False), (None, False),
    ("float16", False)])
def test_half_precision_is_recognised_in_every_form(answer, half):
    assert half_precision(answer) is half
    assert TOO_COARSE == "float16/bfloat16 is too coarse here: compute in float32 or float64"


def test_one_number_also_takes_a_one_element_list():
    assert one_number([2.5]) == 2.5 and one_number(np.float32(1.5)) == 1.5
    assert one_number([1, 2]) is None and one_number([True]) is None
    assert one_number("1") is None and one_number(LengthRaises()) is None


def test_sequence_length_and_function_name_never_raise(capsys):
    class LengthRaisesList(list):
        def __len__(self):
            raise ZeroDivisionError("no length")

    assert sequence_length((1, 2)) == 2 and sequence_length(torch.ones(2)) is None
    assert sequence_length(LengthRaisesList()) is None

    def my_answer():
        pass

    class NoAttributes:
        def __getattr__(self, name):
            raise RuntimeError(name)

        def __call__(self):
            pass

    assert function_name(my_answer) == "my_answer"
    assert function_name(lambda: 1) == "your function"
    assert function_name(functools.partial(my_answer)) == "your function"
    assert function_name(NoAttributes()) == "your function"
    assert not_a_function(my_answer, "(x)") is False and capsys.readouterr().out == ""
    assert not_a_function(torch.ones(2), "(x)") is True
    assert capsys.readouterr().out == (
        "Not yet: pass a function of (x), not its result (got Tensor).\n")


def test_course_functions_hidden_takes_a_module_attribute_or_a_dict_entry_by_another_name():
    """(owner, key, shown): refused under the name the learner knows, restored afterwards."""
    module = types.ModuleType("some_library")
    module.helper = lambda: "helper"
    table = {"entry": lambda: "entry"}
    originals = module.helper, table["entry"]
    with course_functions_hidden((module, "helper", "the_public_function"),
                                 (table, "entry", "TABLE['entry']")):
        with pytest.raises(CourseFunctionUsed, match="without the_public_function$"):
            module.helper()
        with pytest.raises(CourseFunctionUsed, match=r"without TABLE\['entry'\]$"):
            table["entry"]()
    assert (module.helper, table["entry"]) == originals


def test_hidden_names_finds_a_function_under_every_module_name(monkeypatch):
    holder = types.ModuleType("helpers._holder_for_test")
    holder.rotate = rope.apply_rope
    monkeypatch.setitem(sys.modules, "helpers._holder_for_test", holder)
    names = hidden_names(rope.apply_rope)
    assert {"helpers.rope.apply_rope", "helpers.apply_rope",
            "helpers._holder_for_test.rotate"} <= set(names)
    assert all(name.startswith("helpers.") for name in names)
    assert hidden_names(rope.apply_rope, package="no_such_package") == ()


class Lazy:
    """Sequence-like: its values are computed (with the course's function) only when read."""

    def __len__(self):
        return 2

    def __getitem__(self, index):
        if index >= 2:
            raise IndexError(index)
        return float(helpers.rope_frequencies(4)[index])


def test_run_settled_reads_the_result_while_the_course_is_still_hidden():
    assert settled([np.float32(1.0), (2, 3)]) == [np.float32(1.0), (2, 3)]
    assert settled(Lazy()).tolist() == pytest.approx([1.0, 0.01])
    result, problem = run_settled(Lazy, ("helpers.rope.rope_frequencies",))
    assert result is None and problem.startswith("called the course's function")
    result, problem = run_hidden(Lazy, ("helpers.rope.rope_frequencies",))
    assert problem is None and isinstance(result, Lazy)  # read later: too late to refuse


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
    assert as_tensor(torch.ones(2, device="meta"))[1] == (
        "expected a tensor of values: a tensor on the meta device holds no values.")
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
