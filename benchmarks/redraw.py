"""How long each slider of the course takes to redraw its figure in the kernel. Target: 30 ms.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/redraw.py [--rounds 5] [--only 04] [--check]

The sliders are found in the notebooks themselves (lessons and solutions): every cell that calls
`interactive_plot(plot, name=slider(...), ...)` gives one widget, so a new lesson's sliders are
timed without a change here (`find_widgets`). The slider calls are evaluated as written, which
gives each slider's range; the plot function is looked up among `helpers.plots`. A plot function
that a notebook defines itself (03's `table_at_step`, which shows snapshots of a training run)
needs a stand-in in `STAND_INS`; `tests/test_benchmarks.py` fails when one is missing.

A redraw is timed exactly as a slider move runs it: `helpers.widgets.slider_renderer`, i.e. the
plot function (updating the previous figure in place when it can) and the PNG. Each widget is
moved through its settings (the starting values, each slider at both ends, all at their lows,
all at their highs) round after round, so every timed redraw is a move from a different
setting, as in the notebook.

The machines this runs on are shared and their speed drifts, by a third within a minute on the
CI machine kind. The report gives, per widget, the slowest setting's median and its fastest run
(what the code costs when nothing else slows the machine), and a yardstick timed before and
after, `sum(range(10**6))`, which takes about 26 ms there at full speed: when it reads much
more, the machine was slow and the medians say more about it than about the code.
--check exits 1 if a median is over the target.

What a learner feels also includes the trip to the browser and back: `benchmarks/browser_redraw.py`.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import itertools
import json
import pkgutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import ipywidgets
import matplotlib

matplotlib.use("Agg")

import torch  # noqa: E402

import helpers.plots  # noqa: E402
from helpers import widgets as course_widgets  # noqa: E402
from helpers.plots.absolute import plot_learned_rows  # noqa: E402
from helpers.widgets import slider_renderer  # noqa: E402
from yardstick import yardstick_ms  # noqa: E402 - benchmarks/yardstick.py

ROOT = Path(__file__).resolve().parent.parent
TARGET_MS = 30
INTERACTIVE_CALL = "interactive_plot"


# -- stand-ins for plot functions that a notebook defines itself ---------------------------------

# Notebook 03's training slider shows snapshots of a 64 x 32 table; these stand in for them.
torch.manual_seed(0)
_BEFORE = 0.02 * torch.randn(64, 32)
_SNAPSHOTS = [_BEFORE + step / 150 * torch.randn(64, 32) * (torch.arange(64) < 32)[:, None]
              for step in range(0, 151, 10)]


def learned_table_at_step(step, figure=None):
    return plot_learned_rows(_SNAPSHOTS[step // 10], 32, f"learned table after {step} steps",
                             limit=1.0, initial=_BEFORE, figure=figure)


STAND_INS = {"table_at_step": learned_table_at_step}


# -- finding the sliders in the notebooks --------------------------------------------------------

@dataclass
class Widget:
    name: str                      # "04 plot_sinusoidal_table"
    plot: Callable                 # as the notebook passes it to interactive_plot
    controls: dict                 # parameter name -> ipywidgets control, as the notebook builds it

    def settings(self) -> list[dict]:
        """The starting values, each control at both ends, all at their lows, all at their highs
        (the last is drawn first, as the heaviest case is usually there)."""
        start = {name: control.value for name, control in self.controls.items()}
        ends = {name: control_ends(control) for name, control in self.controls.items()}
        found = [start]
        for name, (low, high) in ends.items():
            found += [{**start, name: low}, {**start, name: high}]
        found += [{name: low for name, (low, _) in ends.items()},
                  {name: high for name, (_, high) in ends.items()}]
        unique = []
        for setting in found:
            if setting not in unique:
                unique.append(setting)
        return unique


def control_ends(control) -> tuple:
    if isinstance(control, ipywidgets.Checkbox):
        return (False, True)
    if isinstance(control, ipywidgets.FloatLogSlider):  # its min and max are exponents
        return (control.base ** control.min, control.base ** control.max)
    return (control.min, control.max)


def plot_functions() -> dict[str, Callable]:
    """Every `plot_*` function of `helpers.plots`, by name."""
    found = {}
    for module_info in pkgutil.walk_packages(helpers.plots.__path__, "helpers.plots."):
        module = importlib.import_module(module_info.name)
        found.update({name: value for name, value in vars(module).items()
                      if name.startswith("plot_") and callable(value)})
    return found


def interactive_calls(source: str) -> list[ast.Call]:
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: not a slider cell of the course
        return []
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == INTERACTIVE_CALL]


def slider_calls(root: Path = ROOT) -> Iterator[tuple[Path, dict, ast.Call]]:
    """(notebook, cell, call) for each `interactive_plot(...)` call, in course order (lessons
    and solutions; JupyterLab's hidden checkpoint copies left out)."""
    for path in sorted((root / "notebooks").rglob("*.ipynb")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                for call in interactive_calls("".join(cell["source"])):
                    yield path, cell, call


def find_widgets(root: Path = ROOT) -> list[Widget]:
    """One `Widget` per `interactive_plot(...)` call in the course's notebooks.

    Raises ValueError naming the notebook when a call's plot function cannot be found (a new
    notebook-local function needs a stand-in in `STAND_INS`)."""
    namespace = {**plot_functions(), **STAND_INS, "partial": functools.partial,
                 "widgets": ipywidgets, "slider": course_widgets.slider,
                 "float_slider": course_widgets.float_slider,
                 "log_slider": course_widgets.log_slider}
    found = []
    for path, _, call in slider_calls(root):
        plot_source = ast.unparse(call.args[0])
        try:
            plot = eval(plot_source, dict(namespace))  # noqa: S307 - the course's own cells
        except NameError as error:
            raise ValueError(
                f"{path.name}: interactive_plot({plot_source}, ...) uses {error.name!r}, "
                "which is neither a helpers.plots function nor in STAND_INS of "
                "benchmarks/redraw.py; add a stand-in there") from None
        controls = {keyword.arg: eval(ast.unparse(keyword.value), dict(namespace))  # noqa: S307
                    for keyword in call.keywords if keyword.arg != "height"}
        label = getattr(plot, "__name__", None) or plot.func.__name__
        found.append(Widget(f"{path.name[:2]} {label}", plot, controls))
    return found


# -- timing --------------------------------------------------------------------------------------

def label(setting: dict) -> str:
    return ", ".join(f"{key}={value:g}" for key, value in setting.items())


def time_widget(plot, moves: list[dict], rounds: int) -> dict[str, list[float]]:
    """Milliseconds per setting, each a move from the setting before it."""
    render = slider_renderer(plot)
    render(**moves[-1])  # also warms caches
    times = {label(setting): [] for setting in moves}
    for setting in itertools.chain.from_iterable([moves] * rounds):
        start = time.perf_counter()
        render(**setting)
        times[label(setting)].append(1e3 * (time.perf_counter() - start))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="", help="widgets whose name starts with this")
    parser.add_argument("--check", action="store_true",
                        help=f"exit 1 if a widget's slowest median is over {TARGET_MS} ms")
    args = parser.parse_args()

    before = yardstick_ms()
    print(f"{args.rounds} rounds per widget; times in ms\n")
    print(f"{'widget':34s} {'median':>6s} {'fastest':>7s}  slowest setting (by median)")
    slowest = 0.0
    for widget in find_widgets():
        if not widget.name.startswith(args.only):
            continue
        times = time_widget(widget.plot, widget.settings(), args.rounds)
        medians = {setting: statistics.median(values) for setting, values in times.items()}
        worst = max(medians, key=medians.get)
        slowest = max(slowest, medians[worst])
        print(f"{widget.name:34s} {medians[worst]:6.0f} {min(times[worst]):7.0f}  {worst}")
    print(f"\nyardstick sum(range(10**6)): {before:.0f} ms before, {yardstick_ms():.0f} ms after "
          "(about 26 ms at full speed)")
    verdict = "within" if slowest <= TARGET_MS else "OVER"
    print(f"slowest widget: {slowest:.0f} ms median, {verdict} the {TARGET_MS} ms target")
    return 1 if args.check and slowest > TARGET_MS else 0


if __name__ == "__main__":
    sys.exit(main())
