"""Write a new course notebook from a list of cells, with the course's standard opening.

    from notebook_builder import build, md, code
    build("notebooks/09_topic.ipynb", "Title", ["objective 1", ...], [md("..."), code("..."), ...])

Prepends the Colab badge and title, the learning objectives and the setup cell, then
executes the notebook so it is stored with outputs. Afterwards the .ipynb is the source:
edit it in Jupyter (or with nbformat) and re-run `make notebooks`.
"""

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # a maintainer tool run from a checkout, not course code

from helpers.course import SETUP_CELL, colab_badge  # noqa: E402
from execute_notebooks import KERNELSPEC, execute  # noqa: E402


def md(source: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(source.strip("\n"))


def code(source: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source.strip("\n"))


def build(path: str, title: str, objectives: list[str], cells: list, run: bool = True) -> None:
    relative = Path(path).resolve().relative_to(ROOT).as_posix()
    opening = f"{colab_badge(relative)}\n\n# {title}\n\n**You will learn to**\n" + "".join(
        f"\n- {objective}" for objective in objectives)
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = KERNELSPEC
    setup = code(SETUP_CELL)
    setup.metadata.update(tags=["remove-cell"], cellView="form")  # hidden on the site, a form in Colab
    notebook.cells = [md(opening), setup, *cells]
    nbformat.write(notebook, path)
    if run:
        print(f"{path}: executed in {execute(Path(path)):.1f} s")
