"""Every notebook follows the house style: badge, setup cell, objectives, stored outputs,
exercises with solutions, a summary, and the python3 kernel (JupyterLab asks otherwise)."""

import json
import re
from pathlib import Path

import pytest

from helpers.course import SETUP_CELL, colab_badge, github_url

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SOLUTIONS = sorted((ROOT / "notebooks" / "solutions").glob("*.ipynb"))
ALL = LESSONS + SOLUTIONS


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def source(cell):
    return "".join(cell["source"])


def test_the_course_has_notebooks():
    assert len(LESSONS) >= 2


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_opening_badge_title_objectives_setup(path):
    cells = load(path)["cells"]
    opening = source(cells[0])
    assert cells[0]["cell_type"] == "markdown"
    assert colab_badge(path.relative_to(ROOT).as_posix()) in opening, "badge missing or stale"
    assert re.search(r"^# \S", opening, re.M), "no title"
    objectives = re.findall(r"^- ", opening.split("You will learn", 1)[-1], re.M)
    assert "You will learn" in opening and 3 <= len(objectives) <= 5, "3-5 learning objectives"
    assert cells[1]["cell_type"] == "code" and source(cells[1]) == SETUP_CELL


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_stored_executed_with_figures_and_no_errors(path):
    notebook = load(path)
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    for cell in code:
        assert cell["execution_count"] is not None, f"unexecuted cell: {source(cell)[:60]!r}"
    if path in LESSONS:
        images = [o for c in code for o in c["outputs"] if "image/png" in o.get("data", {})]
        assert images, "a lesson stored without figures shows nothing on GitHub"


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_no_machine_paths(path):
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"/(root|home|tmp|work)/", text)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lessons_end_with_exercises_solutions_and_summary(path):
    cells = load(path)["cells"]
    headings = [line for c in cells if c["cell_type"] == "markdown"
                for line in source(c).splitlines() if line.startswith("## ")]
    assert any("Exercises" in h for h in headings)
    assert any("Summary" in h for h in headings)
    assert "check_" in "".join(source(c) for c in cells if c["cell_type"] == "code")
    solutions = ROOT / "notebooks" / "solutions" / f"{path.stem}_solutions.ipynb"
    assert solutions.exists(), f"missing {solutions.name}"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_every_exercise_has_a_collapsed_hint_and_a_tested_solution(path):
    """At least two exercises; each check call has a hint in the markdown just before it, and
    the solutions notebook asserts that the same check passes."""
    cells = load(path)["cells"]
    start = next(i for i, c in enumerate(cells)
                 if re.search(r"^## Exercises", source(c), re.M))
    calls = [i for i in range(start, len(cells)) if cells[i]["cell_type"] == "code"
             and re.search(r"\bcheck_\w+\(", source(cells[i]))]
    assert len(calls) >= 2, "at least two exercises"
    for i in calls:
        before = source(cells[i - 1])
        assert "<details><summary>Hint</summary>" in before, (
            f"cell {i}: the exercise's hint belongs in the markdown cell right before it")
    solutions = ROOT / "notebooks" / "solutions" / f"{path.stem}_solutions.ipynb"
    solved = "".join(source(c) for c in load(solutions)["cells"] if c["cell_type"] == "code")
    for i in calls:
        check = re.search(r"\b(check_\w+)\(", source(cells[i])).group(1)
        assert f"passes({check}" in solved, f"{solutions.name} never asserts {check} passes"


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_every_interactive_cell_stores_its_starting_figure(path):
    """Where widgets cannot run (GitHub, nbconvert, the website, JupyterLab before the kernel
    starts) a slider cell shows its starting figure, never the widget's `VBox(...)` text."""
    for cell in load(path)["cells"]:
        if cell["cell_type"] == "code" and "interactive_plot(" in source(cell):
            data = [o.get("data", {}) for o in cell["outputs"]]
            own = [d for d in data if "".join(d.get("text/plain", "")).startswith(
                "A figure with sliders")]
            assert own and "image/png" in own[0], f"no starting figure: {source(cell)[:60]!r}"
            assert not any("VBox(" in "".join(d.get("text/plain", "")) for d in data), (
                source(cell)[:60])
            # A trusted notebook would show "model not found" in place of a stored widget view.
            assert not any("application/vnd.jupyter.widget-view+json" in d for d in data)


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_no_plain_figure_duplicates_a_slider_cell(path):
    """The slider cell shows its own starting figure: no bare call of the same plot just before."""
    code = [c for c in load(path)["cells"] if c["cell_type"] == "code" and not is_check_cell(c)]
    for before, cell in zip(code, code[1:]):
        called = re.search(r"interactive_plot\(\s*(?:partial\()?(\w+)", source(cell))
        if called:
            assert not source(before).lstrip().startswith(called.group(1) + "("), (
                f"{source(before)[:60]!r} repeats the figure of the slider cell after it")


CHECK_TAGS = {"check", "remove-cell"}
ASSERT_LINE = re.compile(r"^\s*assert\b", re.M)
CLAIM_CALL = re.compile(r"^\s*claim\(", re.M)


def is_check_cell(cell):
    return CHECK_TAGS <= set(cell["metadata"].get("tags", []))


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_asserts_live_only_in_collapsed_tagged_check_cells(path):
    """Learners read prose, teaching code and figures; the checks behind every stated number sit
    in their own cells, removed by renderers (tag remove-cell) and collapsed in JupyterLab."""
    cells = load(path)["cells"]
    for cell in cells[1:]:
        if cell["cell_type"] != "code":
            continue
        text = source(cell)
        if not is_check_cell(cell):
            assert not ASSERT_LINE.search(text), f"assert outside a check cell: {text[:80]!r}"
            continue
        assert cell["metadata"].get("jupyter", {}).get("source_hidden") is True, text[:80]
        # Colab ignores source_hidden: its own way to hide code is a form showing the @title.
        assert cell["metadata"].get("cellView") == "form", f"not a Colab form: {text[:80]!r}"
        first = text.split("\n", 1)[0]
        assert re.fullmatch(r"# @title Check: \S.{10,}", first), (
            f"no one-line description: {first!r}")
        assert "TODO" not in first, first
        # assert for exact statements, helpers.checks.claim for statements about training runs
        assert ASSERT_LINE.search(text) or CLAIM_CALL.search(text), (
            f"a check cell that checks nothing: {first!r}")
        assert not cell["outputs"], f"a check cell prints (its output would stay visible): {first!r}"


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_no_cell_raises_and_nbval_directives_are_tags(path):
    """A raising cell stops "Run all" in Colab, JupyterLab and VS Code: errors are shown by
    catching and printing them. nbval reads its directives from cell tags, not comments."""
    for cell in load(path)["cells"]:
        if cell["cell_type"] != "code":
            continue
        tags = cell["metadata"].get("tags", [])
        assert "raises-exception" not in tags, source(cell)[:60]
        assert "NBVAL" not in source(cell), source(cell)[:60]
        assert not any(o["output_type"] == "error" for o in cell["outputs"]), source(cell)[:60]


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_no_cell_moves_sliders(path):
    """Slider settings are exercised by the unit tests (plot functions called with them) and by
    the browser tests (sliders moved in JupyterLab), not by cells learners have to read."""
    for cell in load(path)["cells"]:
        if cell["cell_type"] == "code":
            text = source(cell)
            assert ".children[" not in text and not re.search(r"slider\w*\.value\s*=", text), (
                text[:80])


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_setup_cell_is_removed_from_rendered_pages_and_a_form_in_colab(path):
    metadata = load(path)["cells"][1]["metadata"]
    assert "remove-cell" in metadata.get("tags", [])
    assert metadata.get("cellView") == "form" and SETUP_CELL.startswith("# @title ")


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_no_memory_addresses_in_stored_outputs(path):
    """A repr like <torch._C.Generator at 0x7f...> changes at every run: assign it to _."""
    for cell in load(path)["cells"]:
        for output in cell.get("outputs", []):
            text = "".join(output.get("text", "")) + "".join(
                output.get("data", {}).get("text/plain", ""))
            assert not re.search(r" at 0x[0-9a-f]+>", text), f"{source(cell)[:60]!r}: {text[:80]}"


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_links_to_the_course_pages_open_from_colab(path):
    """A relative link (`../site/glossary.md`) does not open from Colab: lessons give the page's
    GitHub address (helpers.course.github_url), which the website's build maps to its own page."""
    text = "".join(source(c) for c in load(path)["cells"] if c["cell_type"] == "markdown")
    assert not re.search(r"\]\((?:\.\./)+site/", text)
    assert not re.search(r"\]\((?:\.\./)*solutions/", text), "link solutions by colab_url"
    for target in re.findall(r"\]\((https://github\.com/[^)#]+)", text):
        if "/site/" in target:
            assert target.startswith(github_url("site/")), target
            assert (ROOT / target.removeprefix(github_url(""))).exists(), target
