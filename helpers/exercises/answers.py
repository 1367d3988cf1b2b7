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
import sys
from typing import Any, Callable, Iterator

import numpy as np
import torch

from .feedback import not_done, not_yet

# What a check adds when an answer in half precision misses the tolerance.
TOO_COARSE = "float16/bfloat16 is too coarse here: compute in float32 or float64"


def call_learner(function: Callable, *args, **kwargs) -> tuple[Any, str | None]:
    """(result, None), or (None, a sentence) when the learner's function raises."""
    try:
        return function(*args, **kwargs), None
    except Exception as error:  # any mistake in the learner's code is reported, never raised
        return None, f"your function raised {type(error).__name__}: {error}"
    except SystemExit:  # sys.exit() would end the check; KeyboardInterrupt still stops it
        return None, "your function called sys.exit()"


# --------------------------------------------------------------------------------------------
# Numbers and tensors
# --------------------------------------------------------------------------------------------

def as_number(answer) -> float | None:
    """A real number from an int, a float, a NumPy scalar, a one-element tensor or a one-element
    NumPy array; else None (also for True and False, in any form)."""
    try:  # a huge int overflows float(), a tensor on the meta device has no value to read
        if isinstance(answer, bool):
            return None  # True is 1 to Python, but never a meant answer
        if isinstance(answer, np.ndarray):
            answer = torch.from_numpy(answer) if answer.dtype.kind in "iuf" else None
        if isinstance(answer, torch.Tensor):
            if answer.numel() != 1 or answer.is_complex() or answer.dtype == torch.bool:
                return None
            return answer.item()
        if isinstance(answer, numbers.Real):
            return float(answer)
    except Exception:  # whatever the learner's object does, the answer is "not a number"
        return None
    return None


def one_number(answer) -> float | None:
    """`as_number`, from any one-element form, a one-element list too; else None."""
    number = as_number(answer)
    if number is not None:
        return number
    try:
        if answer is None or isinstance(answer, (str, bytes, dict)):
            return None
        return as_number(torch.as_tensor(answer))
    except Exception:  # an object whose __len__ or __float__ raises is not a number either
        return None


def _torch_values(answer) -> torch.Tensor:
    """torch.as_tensor, and for the float arrays torch cannot take (NumPy's longdouble), their
    float64 values."""
    try:
        return torch.as_tensor(answer)
    except Exception:
        values = np.asarray(answer)
        if values.dtype.kind != "f":
            raise
        return torch.from_numpy(np.asarray(values, np.float64))


def as_tensor(answer, shape: tuple[int, ...] | None = None,
              dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor | None, str | None]:
    """(tensor, None) from a tensor, array or nested list; or (None, what was expected)."""
    expected = f"a tensor of shape {list(shape)}" if shape is not None else "a tensor"
    got = f"expected {expected}, got {type(answer).__name__}."
    try:
        if answer is None or isinstance(answer, (str, bytes, dict)):
            return None, got
        tensor = _torch_values(answer).to(dtype)
    except Exception:  # an object whose __len__ or __float__ raises is not a tensor either
        return None, got
    if tensor.device.type == "meta":  # shapes only, no values to compare
        return None, f"expected {expected} of values: a tensor on the meta device holds no values."
    if shape is not None and tuple(tensor.shape) != tuple(shape):
        return None, f"expected shape {list(shape)}, got {list(tensor.shape)}."
    return tensor, None


def as_plain_tensor(answer, shape: tuple[int, ...]) -> tuple[torch.Tensor | None, str | None]:
    """(a float64 CPU copy of shape `shape`, detached and dense, None), or (None, what was
    expected): `as_tensor`, refusing complex numbers, never raising."""
    expected = f"a tensor of shape {list(shape)}"
    try:
        if (isinstance(answer, torch.Tensor) and answer.is_complex()) or (
                isinstance(answer, np.ndarray) and answer.dtype.kind == "c"):
            return None, f"expected {expected} of real numbers, got complex numbers."
        tensor, problem = as_tensor(answer, shape=shape)
        if problem:
            return None, problem
        tensor = tensor.detach()
        if tensor.layout != torch.strided:  # a sparse tensor
            tensor = tensor.to_dense()
        return tensor.to("cpu", torch.float64).clone(), None
    except Exception:  # whatever the learner's object raises, it is not a tensor
        return None, f"expected {expected}, got {type(answer).__name__}."


def half_precision(answer) -> bool:
    """True if the answer holds float16 or bfloat16 numbers: a tensor, a NumPy array or scalar,
    or a list or tuple of them. Their rounding (about 1e-3) fails the checks' tolerances."""
    def half(value) -> bool:
        if isinstance(value, torch.Tensor):
            return value.dtype in (torch.float16, torch.bfloat16)
        return isinstance(value, (np.ndarray, np.generic)) and value.dtype == np.float16

    try:
        if isinstance(answer, (list, tuple)):
            return any(half(item) for item in answer)
        return half(answer)
    except Exception:  # an object that will not say what it holds is not half precision
        return False


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


def sequence_length(answer) -> int | None:
    """len() of a tuple or list answer; None for anything else, or if len() fails."""
    try:
        return len(answer) if isinstance(answer, (tuple, list)) else None
    except Exception:  # a list subclass whose __len__ raises
        return None


# --------------------------------------------------------------------------------------------
# The learner's function
# --------------------------------------------------------------------------------------------

def function_name(function) -> str:
    """The learner's function's own name, for the messages; "your function" for a lambda."""
    try:
        name = getattr(function, "__name__", None)
    except Exception:  # a callable object whose __getattr__ raises
        name = None
    return name if isinstance(name, str) and name.isidentifier() else "your function"


def not_a_function(function, arguments: str) -> bool:
    """True, after saying so, if the learner passed something other than a function (often the
    function's result, from `check(f(...))`)."""
    if callable(function):
        return False
    not_yet(f"pass a function of {arguments}, not its result (got {type(function).__name__}).")
    return True


# --------------------------------------------------------------------------------------------
# The course's own functions, out of reach while the learner's code runs
# --------------------------------------------------------------------------------------------

class CourseFunctionUsed(Exception):
    """Raised inside the learner's code when it calls what the exercise asks them to write."""


@contextlib.contextmanager
def course_functions_hidden(*hidden) -> Iterator[None]:
    """While inside, each hidden function raises `CourseFunctionUsed` when called.

    An entry is either a dotted name ("helpers.rope.apply_rope"), replaced in its own module and
    wherever `helpers` re-exports it, so both `helpers.apply_rope(...)` and
    `from helpers.rope import apply_rope` (done before the check) are caught when the function
    is looked up through its module; or a triple (owner, key, shown): the attribute `key` of the
    module `owner`, or the entry `key` of the dict `owner`, refused under the name `shown`, the
    name the learner knows it by. Everything is restored on the way out.
    """
    replaced: list[tuple[object, str, object]] = []

    def refuse(name: str) -> Callable:
        def refused(*args, **kwargs):
            raise CourseFunctionUsed(
                f"this exercise asks you to write it yourself, without {name}")
        return refused

    def replace(owner, key: str, shown: str) -> None:
        if isinstance(owner, dict):
            replaced.append((owner, key, owner[key]))
            owner[key] = refuse(shown)
        else:
            replaced.append((owner, key, getattr(owner, key)))
            setattr(owner, key, refuse(shown))

    try:
        for entry in hidden:
            if not isinstance(entry, str):
                replace(*entry)
                continue
            module_name, _, attribute = entry.rpartition(".")
            module = importlib.import_module(module_name)
            original = getattr(module, attribute)
            for owner in (module, importlib.import_module("helpers")):
                if getattr(owner, attribute, None) is original:
                    replace(owner, attribute, entry)
        yield
    finally:
        for owner, key, original in reversed(replaced):
            if isinstance(owner, dict):
                owner[key] = original
            else:
                setattr(owner, key, original)


def hidden_names(*functions: object, package: str = "helpers") -> tuple[str, ...]:
    """The dotted name of every attribute of a `package` module that is one of `functions`, for
    `course_functions_hidden`: a course function under every module's name for it
    (`helpers.model.rope_inv_freq` as well as `helpers.rope_scaling.rope_inv_freq`), and a check
    module's own reference functions."""
    names = []
    for module_name, module in list(sys.modules.items()):
        if module_name != package and not module_name.startswith(package + "."):
            continue
        try:
            attributes = list(vars(module).items())
        except TypeError:  # not a module (sys.modules may hold anything)
            continue
        names += [f"{module_name}.{attribute}" for attribute, value in attributes
                  if any(value is function for function in functions)]
    return tuple(names)


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


# --------------------------------------------------------------------------------------------
# Running the learner's function
# --------------------------------------------------------------------------------------------

STUB = "returns None; write its body, then run this cell again."


def run_hidden(function: Callable, hidden: tuple, *args) -> tuple[Any, str | None]:
    """(result, None), or (None, what went wrong): the learner's function with `hidden` refused
    (entries as `course_functions_hidden` takes them).

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
    except SystemExit:  # sys.exit() would end the check; KeyboardInterrupt still stops it
        return None, "called sys.exit()"
    return (None, STUB) if result is None else (result, None)


def settled(result, depth: int = 0):
    """The result with every value read out of the learner's objects.

    A list subclass, a tensor subclass or a sequence-like object runs the learner's code when
    read; `run_settled` reads it here, while the course's functions are still hidden. Plain
    values come back as they are.
    """
    kind = type(result)
    if (result is None or kind in (bool, int, float, complex, str, bytes, dict, torch.Tensor)
            or isinstance(result, np.generic)
            or (kind is np.ndarray and result.dtype != object)):
        return result
    if isinstance(result, (list, tuple)) and depth < 3:  # a named tuple, a list subclass too
        items = [settled(item, depth + 1) for item in result]
        return tuple(items) if isinstance(result, tuple) else items
    try:
        values = np.asarray(result.tolist() if isinstance(result, torch.Tensor) else result)
    except CourseFunctionUsed:
        raise
    except Exception:  # not readable: the check says so later, in a sentence
        return result
    return result if values.dtype == object else values


def run_settled(function: Callable, hidden: tuple, *args) -> tuple[Any, str | None]:
    """`run_hidden`, with the result read (`settled`) while `hidden` is still refused."""
    return run_hidden(lambda *given: settled(function(*given)), hidden, *args)


def report(call: str, error: str) -> bool:
    """A stub (still returning None) is not done yet; any other failure is a wrong answer."""
    return (not_done if error == STUB else not_yet)(f"{call} {error}")
