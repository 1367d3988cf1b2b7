"""Reading a learner's answer without tripping over it: the shared tools of every check.

A check must never raise. The learner's answer may be None (not written yet), a number in any
form (int, float, a one-element tensor, a NumPy scalar), a list where we expected a tuple, or a
function that crashes. These helpers turn each of those into either a clean value or a sentence
that says what was expected, and `course_functions_hidden` runs the learner's code with the
course's own implementation out of reach, so that calling it is not a way to pass.
"""

from __future__ import annotations

import contextlib
import importlib
import numbers
from typing import Any, Callable, Iterator

import numpy as np
import torch

from .feedback import not_done, not_yet


def call_learner(function: Callable, *args, **kwargs) -> tuple[Any, str | None]:
    """(result, None), or (None, a sentence) when the learner's function raises."""
    try:
        return function(*args, **kwargs), None
    except Exception as error:  # any mistake in the learner's code is reported, never raised
        return None, f"your function raised {type(error).__name__}: {error}"


def as_number(answer) -> float | None:
    """A real number from an int, a float, a NumPy scalar, a one-element tensor or a one-element
    NumPy array; else None."""
    if isinstance(answer, bool):
        return None  # True is 1 to Python, but never a meant answer
    try:  # a huge int overflows float(), a tensor on the meta device has no value to read
        if isinstance(answer, np.ndarray):
            answer = torch.from_numpy(answer) if answer.dtype.kind in "iuf" else None
        if isinstance(answer, torch.Tensor):
            return answer.item() if answer.numel() == 1 and not answer.is_complex() else None
        if isinstance(answer, numbers.Real):
            return float(answer)
    except Exception:  # whatever the learner's object does, the answer is "not a number"
        return None
    return None


def as_tensor(answer, shape: tuple[int, ...] | None = None,
              dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor | None, str | None]:
    """(tensor, None) from a tensor, array or nested list; or (None, what was expected)."""
    expected = f"a tensor of shape {list(shape)}" if shape is not None else "a tensor"
    if answer is None or isinstance(answer, (str, bytes, dict)):
        return None, f"expected {expected}, got {type(answer).__name__}."
    try:
        tensor = torch.as_tensor(answer).to(dtype)
        if tensor.device.type == "meta":  # shapes only, no values to compare
            raise ValueError("a tensor on the meta device holds no values")
    except Exception:  # an object whose __len__ or __float__ raises is not a tensor either
        return None, f"expected {expected}, got {type(answer).__name__}."
    if shape is not None and tuple(tensor.shape) != tuple(shape):
        return None, f"expected shape {list(shape)}, got {list(tensor.shape)}."
    return tensor, None


def as_int_list(answer) -> list[int] | None:
    """A list of whole numbers from a list, tuple, range or 1-D tensor/array; else None."""
    if isinstance(answer, (str, bytes, dict)) or answer is None:
        return None
    try:
        values = torch.as_tensor(answer).flatten().tolist() if not isinstance(
            answer, (list, tuple, range)) else list(answer)
    except Exception:  # whatever the learner's object raises, it is not a list of integers
        return None
    numbers_ = [as_number(value) for value in values]
    if any(value is None or value != int(value) for value in numbers_):
        return None
    return [int(value) for value in numbers_]


class CourseFunctionUsed(Exception):
    """Raised inside the learner's code when it calls what the exercise asks them to write."""


@contextlib.contextmanager
def course_functions_hidden(*dotted_names: str) -> Iterator[None]:
    """While inside, each named course function ("helpers.rope.apply_rope", ...) raises.

    The name is replaced in its own module and wherever `helpers` re-exports it, so both
    `helpers.apply_rope(...)` and `from helpers.rope import apply_rope` (done before the check)
    are caught when the function is looked up through its module. Restored on the way out.
    """
    replaced: list[tuple[object, str, object]] = []

    def refuse(name: str) -> Callable:
        def refused(*args, **kwargs):
            raise CourseFunctionUsed(
                f"this exercise asks you to write it yourself, without {name}")
        return refused

    try:
        for dotted in dotted_names:
            module_name, _, attribute = dotted.rpartition(".")
            module = importlib.import_module(module_name)
            original = getattr(module, attribute)
            for owner in (module, importlib.import_module("helpers")):
                if getattr(owner, attribute, None) is original:
                    replaced.append((owner, attribute, original))
                    setattr(owner, attribute, refuse(dotted))
        yield
    finally:
        for owner, attribute, original in reversed(replaced):
            setattr(owner, attribute, original)


def names_used(function: Callable) -> set[str]:
    """Every global or attribute name the function's code (and code nested in it) mentions."""
    found: set[str] = set()
    stack = [getattr(function, "__code__", None)]
    while stack:
        code = stack.pop()
        if code is None:
            continue
        found.update(code.co_names)
        found.update(code.co_freevars)  # names reached through a closure
        stack.extend(const for const in code.co_consts if hasattr(const, "co_names"))
    return found


def refers_to(function: Callable, *forbidden: object) -> str | None:
    """The name under which `function` reaches one of the `forbidden` objects, if it does.

    Catches `from helpers.rope import apply_rope` followed by a call of `apply_rope` inside the
    learner's function, which `course_functions_hidden` cannot see (the name is already bound).
    """
    scope = dict(getattr(function, "__globals__", {}))
    for cell_name, cell in zip(getattr(getattr(function, "__code__", None), "co_freevars", ()),
                               getattr(function, "__closure__", None) or ()):
        with contextlib.suppress(ValueError):
            scope[cell_name] = cell.cell_contents
    for name in names_used(function):
        if any(scope.get(name) is thing for thing in forbidden):
            return name
    # A default argument (def f(x, g=apply_rope)) binds the object without any name lookup.
    code = getattr(function, "__code__", None)
    defaults = list(zip(code.co_varnames[code.co_argcount - len(function.__defaults__ or ()):
                                         code.co_argcount], function.__defaults__ or ())) if (
        code is not None) else []
    defaults += list((getattr(function, "__kwdefaults__", None) or {}).items())
    for name, value in defaults:
        if any(value is thing for thing in forbidden):
            return name
    return None


STUB = "returns None; write its body, then run this cell again."


def run_hidden(function: Callable, hidden: tuple[str, ...], *args) -> tuple[Any, str | None]:
    """(result, None), or (None, what went wrong): the learner's function with `hidden` refused.

    What went wrong is STUB for a function that still returns None, so that the check can say
    "Not done yet" for it and "Not yet" for everything else.
    """
    try:
        with course_functions_hidden(*hidden):
            result = function(*args)
    except CourseFunctionUsed as error:
        return None, f"called the course's function: {error}."
    except Exception as error:  # a learner's bug is a wrong answer, not a crash of the check
        return None, f"raised {type(error).__name__}: {error}"
    return (None, STUB) if result is None else (result, None)


def report(call: str, error: str) -> bool:
    """A stub (still returning None) is not done yet; any other failure is a wrong answer."""
    return (not_done if error == STUB else not_yet)(f"{call} {error}")
