"""Every slider of every course notebook, moved in JupyterLab in headless Chromium.

nbval proves that the notebooks run; this proves that a learner who moves a slider sees the
readout change and the figure redraw, with no error anywhere in the notebook. Notebooks are found
by their cells that call `interactive_plot(`, so a new notebook with sliders is covered at once.
Screenshots (before and after each move, and the page) go to test-artifacts/browser/<notebook>/.
"""

import json

import pytest
from conftest import REPO_ROOT
from notebook_check import check_notebook, notebooks_with_sliders

NOTEBOOKS = notebooks_with_sliders(REPO_ROOT)


def test_the_notebooks_with_sliders_are_found():
    names = [path.name for path in NOTEBOOKS]
    assert "02_dataloader.ipynb" in names, names


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_every_slider_redraws_its_figure(notebook, lab_page, lab_server, artifacts):
    # JupyterLab stops at a kernel picker for any other kernel name.
    kernelspec = json.loads(notebook.read_text())["metadata"].get("kernelspec", {})
    assert kernelspec.get("name") == "python3", kernelspec

    report = check_notebook(lab_page, lab_server.url, REPO_ROOT, notebook, artifacts)

    print(f"{report.notebook}: cells ran in {report.seconds_running_cells} s; moved:",
          *report.sliders_moved, sep="\n  ")
    assert not report.problems, "\n".join(map(str, report.problems))
    assert report.sliders_moved, "no slider was moved"
    assert report.interactive_cells, "no cell calling interactive_plot( in the opened notebook"
    for cell in report.interactive_cells:
        assert any(move.startswith(f"cell {cell} ") for move in report.sliders_moved), cell
