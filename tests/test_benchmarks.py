"""benchmarks/redraw.py finds every slider of the course by itself, so none goes untimed."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import ipywidgets
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from redraw import find_widgets  # noqa: E402


def test_every_interactive_plot_call_of_the_notebooks_is_timed():
    calls = 0
    for path in (ROOT / "notebooks").rglob("*.ipynb"):
        if any(part.startswith(".") for part in path.relative_to(ROOT).parts):
            continue  # JupyterLab's checkpoints
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                calls += len(re.findall(r"\binteractive_plot\(", "".join(cell["source"])))
    widgets = find_widgets()
    assert calls >= 16 and len(widgets) == calls
    assert {widget.name for widget in widgets} >= {"02 plot_sliding_windows",
                                                   "03 learned_table_at_step",
                                                   "04 plot_shift_rotation", "08 plot_scaled_frequencies"}


def test_each_slider_is_moved_to_both_ends_of_its_range():
    for widget in find_widgets():
        settings = widget.settings()
        for name, control in widget.controls.items():
            values = {setting[name] for setting in settings}
            if isinstance(control, ipywidgets.Checkbox):
                low, high = False, True
            elif isinstance(control, ipywidgets.FloatLogSlider):  # its range is in exponents
                low, high = 10.0 ** control.min, 10.0 ** control.max
            else:
                low, high = control.min, control.max
            assert {low, high, control.value} <= values, (widget.name, name)
            if not isinstance(control, ipywidgets.Checkbox):
                assert all(low <= value <= high for value in values), (widget.name, name)


def test_a_plot_function_of_a_notebook_alone_needs_a_stand_in(tmp_path):
    cell = nbformat.v4.new_code_cell(
        'def my_table(n, figure=None):\n    ...\n\n'
        'display(interactive_plot(my_table, n=slider("n", 1, 0, 3)))')
    (tmp_path / "notebooks").mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), tmp_path / "notebooks" / "10_new.ipynb")
    with pytest.raises(ValueError, match=r"10_new.ipynb: .*'my_table'.*STAND_INS"):
        find_widgets(tmp_path)
