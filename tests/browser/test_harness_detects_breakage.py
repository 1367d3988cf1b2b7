"""The browser test must be able to fail: a notebook with faults planted on purpose.

The notebook is generated (into the git-ignored artifacts folder, inside JupyterLab's root) with
one sound widget and one of each fault a learner would notice. The harness must report exactly
the faulty cells, and must not report the error demonstration, which catches and prints its error.
"""

import nbformat
from conftest import REPO_ROOT
from nbformat.v4 import new_code_cell, new_notebook
from notebook_check import check_notebook

SETUP = """\
from matplotlib.figure import Figure
from helpers.widgets import interactive_plot, log_slider, slider

def line(points, scale=1.0):
    figure = Figure(figsize=(4, 2))
    axes = figure.add_subplot()
    axes.plot([scale * i for i in range(points)], marker="o")
    axes.set_title(f"{points} points, scale {scale:g}")
    return figure"""
# How the course shows an error: caught and printed, so nothing is reported.
ERROR_DEMO = """\
try:
    int("four")
except ValueError as error:
    print(f"ValueError: {error}")"""
# Starts at the top of its range, so the harness has to step left; the log slider checks the
# readout of a value shown as a power of ten.
SOUND = """\
display(interactive_plot(line, height="260px", points=slider("points", 8, 2, 8),
                         scale=log_slider("scale", 10.0, 0, 3, 0.5)))"""
BROKEN_CALLBACK = """\
def breaks_when_moved(points):
    if points != 4:
        raise RuntimeError("callback broken on purpose")
    return line(points)

display(interactive_plot(breaks_when_moved, height="260px", points=slider("points", 4, 2, 8)))"""
FROZEN_FIGURE = """\
display(interactive_plot(lambda points: line(5), height="260px",
                         points=slider("points", 4, 2, 8)))"""
UNEXPECTED_ERROR = 'int("four")'

CELLS = [SETUP, ERROR_DEMO, SOUND, BROKEN_CALLBACK, FROZEN_FIGURE, UNEXPECTED_ERROR]


def write_faulty_notebook(path):
    notebook = new_notebook(cells=[new_code_cell(code) for code in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                       "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


def test_the_harness_reports_each_planted_fault(lab_page, lab_server, artifacts):
    notebook = write_faulty_notebook(artifacts / "selftest" / "planted_faults.ipynb")

    report = check_notebook(lab_page, lab_server.url, REPO_ROOT, notebook, artifacts)

    problems = "\n".join(map(str, report.problems))
    print(problems, *report.sliders_moved, sep="\n")
    by_cell = {}
    for problem in report.problems:
        by_cell.setdefault(problem.cell, []).append(problem.what)
    broken, frozen, unexpected = (CELLS.index(code) for code in
                                  (BROKEN_CALLBACK, FROZEN_FIGURE, UNEXPECTED_ERROR))
    assert set(by_cell) == {broken, frozen, unexpected}, problems
    assert any("callback failed: RuntimeError: callback broken on purpose" in what
               for what in by_cell[broken]), problems
    assert any("no new figure after the move, or the same one" in what
               for what in by_cell[frozen]), problems
    assert by_cell[unexpected] == ["error output: ValueError: invalid literal for int() "
                                   "with base 10: 'four'"], problems
    # The sound widget's two sliders were moved and checked, without complaint.
    sound = CELLS.index(SOUND)
    assert [move for move in report.sliders_moved if move.startswith(f"cell {sound} ")] == [
        f"cell {sound} points: 8 (ArrowLeft) -> 7",
        f"cell {sound} scale: 10.0 (ArrowRight) -> 31.6"]
