"""The starting figure stored in each slider cell is what the code draws today, byte for byte:
a change to a plot function (or to how sliders draw) must come with re-executed notebooks."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from redraw import STAND_INS, find_widgets, slider_calls  # noqa: E402

from helpers.widgets import slider_renderer  # noqa: E402


def stored_slider_figures() -> list[tuple[str, bytes | None]]:
    """(notebook, stored PNG) per interactive_plot call, in find_widgets' order."""
    found = []
    for path, cell, _ in slider_calls(ROOT):
        pictures = [output["data"]["image/png"] for output in cell.get("outputs", [])
                    if "image/png" in output.get("data", {})]
        found.append((path.name, base64.b64decode(pictures[0]) if pictures else None))
    return found


CASES = list(zip(find_widgets(), stored_slider_figures()))


@pytest.mark.parametrize("widget, stored", CASES, ids=[widget.name for widget, _ in CASES])
def test_the_stored_starting_figure_is_what_the_code_draws(widget, stored):
    notebook, png = stored
    assert png is not None, f"{notebook}: {widget.name} stores no starting figure"
    if widget.plot in STAND_INS.values():
        pytest.skip("drawn from the notebook's own training run, which the benchmark stands in for")
    start = {name: control.value for name, control in widget.controls.items()}
    assert slider_renderer(widget.plot)(**start) == png, (
        f"{notebook}: {widget.name}'s stored figure is not what the code draws: "
        "re-execute the notebook (make notebooks)")
