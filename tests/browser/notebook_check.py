"""Open a notebook in JupyterLab, run it, move every slider, list what a learner would see go wrong.

`check_notebook` returns a list of `Problem`s instead of stopping at the first one, so that one
run reports everything, and so that the harness's own test can check it finds each kind of fault.

Two choices worth knowing:
- Cells are run one at a time, not with "Run All". "Run All" sends every cell to the kernel at
  once, and after the first error the kernel drops the rest of the queue, so one error would hide
  the cells after it. Cell by cell, each run's promise settles when the kernel replies: an exact
  "this cell is done" signal, with a budget for the whole notebook. No course cell raises on
  purpose (error demonstrations catch and print the error), so every error output fails.
- A redraw is detected by a new <img> node in the slider's output (the old one is marked before
  the key press) or an error there, then the kernel going idle; only then are the old and new
  images compared, so a callback that draws the same picture again fails at once, not after a
  timeout.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Page, TimeoutError as PlaywrightTimeout

INTERACTIVE_CALL = "interactive_plot("

OPEN_TIMEOUT = 120_000     # ms: page load, kernel start (two busy cores)
RUN_TIMEOUT = 180_000      # ms: all cells of one notebook together
READOUT_TIMEOUT = 15_000   # ms: the readout follows the key press in the browser alone
REDRAW_TIMEOUT = 60_000    # ms: plot + PNG in the kernel, then back to the page
IDLE_TIMEOUT = 60_000      # ms
PICTURE_AFTER_IDLE_TIMEOUT = 5_000  # ms: the picture was sent before the kernel went idle

# interactive_plot's layout: VBox([HBox(sliders), Output]).
INTERACTIVE_WIDGET = ".widget-vbox:has(> .widget-hbox > .widget-slider):has(> .widget-output)"
ERROR_OUTPUT = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'

# Installed in the page before JupyterLab loads; everything reads the app JupyterLab exposes
# (`--LabApp.expose_app_in_browser`), and finds the notebook by its path, not by focus.
PAGE_HELPERS = """
window.__sliderTest = {
  panel(path) {
    const app = window.jupyterapp;
    if (!app) return null;
    for (const widget of app.shell.widgets('main')) {
      if (widget.context && widget.context.path === path && widget.content) return widget;
    }
    return null;
  },
  status(path) {
    if (!window.jupyterapp) return {phase: 'loading'};
    const dialog = document.querySelector('.jp-Dialog');
    if (dialog) return {phase: 'dialog', text: dialog.textContent};
    const panel = this.panel(path);
    if (!panel || !panel.context.isReady) return {phase: 'opening'};
    const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
    return {phase: 'open', kernel: kernel ? kernel.name : null,
            status: kernel ? kernel.status : null, cells: panel.content.widgets.length};
  },
  kernelIdle(path) {
    const panel = this.panel(path);
    const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
    return !!kernel && kernel.status === 'idle' && kernel.connectionStatus === 'connected';
  },
  cells(path) {  // as JupyterLab loaded them (the file on disk may have changed since)
    return this.panel(path).content.widgets.map(cell => ({
      cell_type: cell.model.type, source: cell.model.sharedModel.getSource(),
      metadata: {tags: cell.model.getMetadata('tags') || []}}));
  },
  markCells(path) {
    this.panel(path).content.widgets.forEach((cell, index) => {
      cell.node.dataset.browserTestCell = String(index);
    });
  },
  async runCell(path, index, timeoutMs) {
    const app = window.jupyterapp;
    const panel = this.panel(path);
    app.shell.activateById(panel.id);
    const notebook = panel.content;
    notebook.activeCellIndex = index;
    notebook.deselectAll();  // run exactly this cell
    let timer;
    const timeout = new Promise(resolve => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const run = app.commands.execute('notebook:run-cell')
      .then(ok => ok ? 'ok' : 'error', reason => 'error: ' + reason);
    const outcome = await Promise.race([run, timeout]);
    clearTimeout(timer);
    return {outcome, executionCount: notebook.widgets[index].model.executionCount};
  },
  cellReports(path) {
    const errorText = node => node.textContent;  // innerText is empty for cells scrolled away
    return this.panel(path).content.widgets.map((cell, index) => {
      if (cell.model.type !== 'code') return {index, code: false};
      const outputs = cell.model.outputs.toJSON();
      const text = output => Array.isArray(output.text) ? output.text.join('') : output.text;
      return {
        index, code: true, executionCount: cell.model.executionCount,
        errors: outputs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue),
        stderrTracebacks: outputs.filter(o => o.output_type === 'stream' && o.name === 'stderr')
          .map(text).filter(t => t.includes('Traceback')),
        // What the page shows, widget outputs included (they are not part of the cell model).
        shownErrors: [...cell.node.querySelectorAll(""" + json.dumps(ERROR_OUTPUT) + """)]
          .map(errorText).filter(t => /Traceback|Error/.test(t)),
      };
    });
  },
};
"""

# From noUiSlider's own API: its aria-valuenow is rounded to one decimal (0.45 shows as 0.5).
# A log slider's handle sits at the exponent; its readout shows the value.
SLIDER_STATE = """handle => {
  const slider = handle.closest('.widget-slider');
  const api = handle.closest('.noUi-target').noUiSlider;
  return {position: Number(api.get(true)), min: api.options.range.min,
          max: api.options.range.max, step: api.options.step,
          readout: slider.querySelector('.widget-readout').textContent.trim()};
}"""

# Each picture's source before the move: a picture with another source is a new one.
MARK_FIGURE = """output => {
  output.querySelectorAll('img').forEach(img => { img.dataset.beforeMove = img.src; });
}"""

# The figure not yet marked (the one drawn after the move), and the errors shown in the output.
FIGURE = """output => {
  // A new picture: a new <img>, or the same <img> showing a new source (a slider's image widget).
  const fresh = [...output.querySelectorAll('img')]
    .filter(img => img.dataset.beforeMove !== img.src);
  const errors = [...output.querySelectorAll(""" + json.dumps(ERROR_OUTPUT) + """)]
    .map(node => node.textContent).filter(text => /Traceback|Error/.test(text));
  return {src: fresh.length ? fresh[0].src : null, errors};
}"""
DRAWN_OR_FAILED = ("output => { const figure = (" + FIGURE + ")(output);"
                   " return figure.src || figure.errors.length; }")


@dataclass
class Problem:
    cell: int | None
    what: str

    def __str__(self) -> str:
        return f"cell {self.cell}: {self.what}" if self.cell is not None else self.what


@dataclass
class Report:
    notebook: str
    problems: list[Problem] = field(default_factory=list)
    sliders_moved: list[str] = field(default_factory=list)
    interactive_cells: list[int] = field(default_factory=list)
    seconds_running_cells: float = 0.0


def code_cells(cells: list[dict]) -> list[tuple[int, dict]]:
    """(index, cell) of the code cells, from nbformat JSON or the same shape read in the page."""
    return [(index, cell) for index, cell in enumerate(cells) if cell["cell_type"] == "code"]


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def interactive_cells(cells: list[dict]) -> list[int]:
    return [index for index, cell in code_cells(cells) if INTERACTIVE_CALL in source(cell)]


def notebooks_with_sliders(repo_root: Path) -> list[Path]:
    """Every course notebook (solutions too) with a cell that calls interactive_plot(."""
    found = []
    for path in sorted((repo_root / "notebooks").rglob("*.ipynb")):
        hidden = any(part.startswith(".") for part in path.relative_to(repo_root).parts)
        if not hidden and interactive_cells(json.loads(path.read_text())["cells"]):
            found.append(path)
    return found


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "slider"


def readout_value(text: str) -> float | None:
    try:
        return float(text.replace("\u2212", "-"))  # d3-format may print a real minus sign
    except ValueError:
        return None


def last_line(traceback_text: str) -> str:
    lines = [line.strip() for line in traceback_text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else traceback_text


class NotebookCheck:
    """One notebook in one browser page. Use `check_notebook` rather than this class directly."""

    def __init__(self, page: Page, lab_url: str, repo_root: Path, notebook_file: Path,
                 artifacts: Path):
        self.page = page
        self.lab_url = lab_url
        self.path = notebook_file.relative_to(repo_root).as_posix()
        self.cells: list[dict] = []  # read from the page once the notebook is open
        self.artifacts = artifacts
        self.report = Report(self.path)
        self.reported_errors: set[tuple[int, str]] = set()  # so check_outputs does not repeat them

    def problem(self, cell: int | None, what: str) -> None:
        self.report.problems.append(Problem(cell, what))

    # -- opening and running -------------------------------------------------------------------

    def open(self) -> bool:
        self.page.add_init_script(PAGE_HELPERS)
        self.page.goto(f"{self.lab_url}/lab/tree/{self.path}?reset", timeout=OPEN_TIMEOUT)
        ready = self.page.wait_for_function(
            """path => {
              const s = window.__sliderTest && window.__sliderTest.status(path);
              return s && (s.phase === 'dialog' || (s.phase === 'open' && s.status === 'idle'))
                ? s : null;
            }""", arg=self.path, timeout=OPEN_TIMEOUT, polling=250).json_value()
        if ready["phase"] == "dialog":  # e.g. a kernel picker: the notebook names no known kernel
            self.problem(None, f"JupyterLab showed a dialog, not a kernel: {ready['text']!r}")
            return False
        if ready["kernel"] != "python3":
            self.problem(None, f"kernel {ready['kernel']!r} started, expected 'python3'")
        autosave = self.page.evaluate("""async () => (await window.jupyterapp.serviceManager
            .settings.fetch('@jupyterlab/docmanager-extension:plugin')).settings.autosave""")
        assert autosave is False, "autosave must be off, or the stored notebook gets overwritten"
        self.page.evaluate("path => window.__sliderTest.markCells(path)", self.path)
        self.cells = self.page.evaluate("path => window.__sliderTest.cells(path)", self.path)
        self.report.interactive_cells = interactive_cells(self.cells)
        return True

    def run_cells(self) -> bool:
        """Run every code cell in order; False if one did not finish (the rest would hang)."""
        started = time.monotonic()
        for index, _ in code_cells(self.cells):
            budget_ms = RUN_TIMEOUT - (time.monotonic() - started) * 1000
            result = self.page.evaluate(  # an "error" outcome is judged in check_outputs
                "([path, index, ms]) => window.__sliderTest.runCell(path, index, ms)",
                [self.path, index, max(budget_ms, 1)])
            if result["outcome"] == "timeout":
                self.problem(index, f"still running when the {RUN_TIMEOUT // 1000} s budget "
                                    "for the whole notebook ran out")
                return False
        self.report.seconds_running_cells = round(time.monotonic() - started, 1)
        return self.wait_for_idle(None, "after running the cells")

    def wait_for_idle(self, cell: int | None, when: str) -> bool:
        try:
            self.page.wait_for_function("path => window.__sliderTest.kernelIdle(path)",
                                        arg=self.path, timeout=IDLE_TIMEOUT, polling=100)
            return True
        except PlaywrightTimeout:
            self.problem(cell, f"the kernel did not go idle {when} within {IDLE_TIMEOUT // 1000} s")
            return False

    # -- sliders ---------------------------------------------------------------------------------

    def check_interactive_cell(self, cell: int) -> None:
        widgets = self.page.locator(f'[data-browser-test-cell="{cell}"] {INTERACTIVE_WIDGET}')
        if widgets.count() == 0:
            self.problem(cell, "calls interactive_plot( but shows no sliders above a figure")
            return
        for number in range(widgets.count()):
            widget = widgets.nth(number)
            sliders = widget.locator(":scope > .widget-hbox > .widget-slider")
            for slider_number in range(sliders.count()):
                self.move_slider(cell, number, widget, sliders.nth(slider_number))

    def move_slider(self, cell: int, widget_number: int, widget, slider) -> None:
        name = slider.locator(".widget-label").text_content().strip()
        where = f"slider {name!r}"
        output = widget.locator(":scope > .widget-output")
        handle = slider.locator(".noUi-handle")
        readout = slider.locator(".widget-readout")
        first = self.wait_for_figure(output)  # the first drawing, made when the cell ran
        if first["src"] is None:
            self.problem(cell, f"{where}: no figure below the sliders before moving anything")
            for error in first["errors"]:
                self.reported_errors.add((cell, last_line(error)))
                self.problem(cell, f"{where}: the slider's callback failed: {last_line(error)}")
            return

        before = handle.evaluate(SLIDER_STATE)
        output.evaluate(MARK_FIGURE)
        stem = self.artifacts / f"cell{cell:02d}-w{widget_number}-{slug(name)}"
        widget.screenshot(path=f"{stem}-1-before.png")
        before_pixels = output.screenshot()

        # One step right; at the top of the range, one step left.
        direction = 1 if before["position"] + before["step"] <= before["max"] + 1e-9 else -1
        key = "ArrowRight" if direction == 1 else "ArrowLeft"
        expected_position = before["position"] + direction * before["step"]
        handle.press(key)
        self.report.sliders_moved.append(f"cell {cell} {name}: {before['readout']} ({key})")

        try:
            self.page.wait_for_function("([el, old]) => el.textContent.trim() !== old",
                                        arg=[readout.element_handle(), before["readout"]],
                                        timeout=READOUT_TIMEOUT, polling=50)
        except PlaywrightTimeout:
            self.problem(cell, f"{where}: readout stayed at {before['readout']} after {key}")
            return
        # The kernel sends the new picture before it reports idle; an unchanged picture is not
        # sent at all (the image widget's value stays the same), so a frozen figure shows no new
        # picture once the kernel is idle, and the wait for one can be short.
        self.wait_for_idle(cell, f"after moving {where}")
        self.wait_for_figure(output, timeout=PICTURE_AFTER_IDLE_TIMEOUT)

        after = handle.evaluate(SLIDER_STATE)
        figure = output.evaluate(FIGURE)
        widget.screenshot(path=f"{stem}-2-after.png")
        self.report.sliders_moved[-1] += f" -> {after['readout']}"

        self.check_readout(cell, where, before, after, expected_position)
        for error in figure["errors"]:
            self.reported_errors.add((cell, last_line(error)))
            self.problem(cell, f"{where}: the slider's callback failed: {last_line(error)}")
        if figure["src"] is None:
            if not figure["errors"]:
                self.problem(cell, f"{where}: no new figure after the move, or the same one "
                                   f"({before['readout']} -> {after['readout']})")
        elif output.screenshot() == before_pixels:
            self.problem(cell, f"{where}: a new image arrived but the page looks the same")

    def wait_for_figure(self, output, timeout: int = REDRAW_TIMEOUT) -> dict:
        """Wait for a figure not marked as old, or an error, in the output; return what is there."""
        try:
            self.page.wait_for_function(DRAWN_OR_FAILED, arg=output.element_handle(),
                                        timeout=timeout, polling=50)
        except PlaywrightTimeout:
            pass  # the caller reports the missing figure
        return output.evaluate(FIGURE)

    def check_readout(self, cell: int, where: str, before: dict, after: dict,
                      expected_position: float) -> None:
        if not math.isclose(after["position"], expected_position, abs_tol=1e-6):
            self.problem(cell, f"{where}: moved to {after['position']}, "
                               f"expected {expected_position}")
        shown_before = readout_value(before["readout"])
        shown_after = readout_value(after["readout"])
        if shown_before is None or shown_after is None:
            self.problem(cell, f"{where}: readout {before['readout']!r} -> "
                               f"{after['readout']!r} is not a number")
            return
        # The readout shows the value; a log slider's handle sits at its exponent (base 10 here).
        if math.isclose(shown_before, before["position"], rel_tol=5e-3, abs_tol=1e-9):
            expected = expected_position
        elif math.isclose(shown_before, 10 ** before["position"], rel_tol=5e-3):
            expected = 10 ** expected_position
        else:
            self.problem(cell, f"{where}: readout {before['readout']} does not match the "
                               f"handle's position {before['position']}")
            return
        # Integer sliders must show exactly old +- step; others within the readout's rounding.
        integer_slider = (expected == expected_position and float(before["step"]).is_integer()
                          and float(before["position"]).is_integer())
        close_enough = (shown_after == expected if integer_slider
                        else math.isclose(shown_after, expected, rel_tol=5e-3))
        if not close_enough:
            self.problem(cell, f"{where}: readout went {before['readout']} -> "
                               f"{after['readout']}, expected {expected:g}")

    # -- errors anywhere -------------------------------------------------------------------------

    def check_outputs(self) -> None:
        reports = self.page.evaluate("path => window.__sliderTest.cellReports(path)", self.path)
        for report in reports:
            if not report["code"]:
                continue
            cell = report["index"]
            if report["executionCount"] is None:
                self.problem(cell, "did not run")
            for error in report["errors"]:
                self.problem(cell, f"error output: {error}")
            # An error output is also shown on the page: count it once. Errors in a slider's
            # output (not in the cell model) count here unless a slider move reported them.
            shown = [] if report["errors"] else report["shownErrors"]
            for text in report["stderrTracebacks"] + shown:
                if (cell, last_line(text)) not in self.reported_errors:
                    self.problem(cell, f"error shown: {last_line(text)}")


def check_notebook(page: Page, lab_url: str, repo_root: Path, notebook_file: Path,
                   artifacts_root: Path) -> Report:
    """Run one notebook in the page, move every slider, return everything that went wrong."""
    artifacts = artifacts_root / notebook_file.stem
    shutil.rmtree(artifacts, ignore_errors=True)
    artifacts.mkdir(parents=True)
    check = NotebookCheck(page, lab_url, repo_root, notebook_file, artifacts)
    try:
        if check.open() and check.run_cells():
            for cell in check.report.interactive_cells:
                check.check_interactive_cell(cell)
            check.check_outputs()
    finally:
        try:  # for people to look at, also (especially) when something failed
            page.screenshot(path=artifacts / "notebook.png")
        except Exception as error:  # noqa: BLE001 - a closed page must not hide the real failure
            check.report.problems.append(Problem(None, f"no page screenshot: {error}"))
    return check.report
