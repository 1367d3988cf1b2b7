"""Key-to-paint time of every slider of the course, measured in JupyterLab in headless Chromium.

    .venv/bin/python benchmarks/browser_redraw.py [--moves 6] [--only 05] [--check]

What a learner feels when pressing an arrow key on a slider: the time from the key press to the
new figure being painted. The run reuses `tests/browser`'s harness (a throwaway JupyterLab on a
loopback port, Debian's chromium, the real notebooks): each notebook with sliders is opened and
run up to its last slider cell, then every slider is moved `--moves` times, each move one step
to a setting it does not show yet (right while it can, then left), `--pause` milliseconds after
the last picture was painted (300: a learner looks at the figure before pressing again; 0 times
key presses in a rush, each waiting for what the kernel is drawing ahead).

Each move is split into where its time goes:
- key -> kernel: the key press in the browser until the kernel asks for the new picture
  (slider handling, the widget message, the server, the kernel's message loop, and a picture
  being drawn ahead that the move must wait for);
- picture: the kernel getting the picture, either ready (drawn ahead by `helpers.slider_frames`,
  or on an earlier visit: the "kept" column counts these moves) or drawn now, in three steps:
  plot, the course's plot function; draw, matplotlib's Agg draw; png, the PNG encoding;
- -> page: from the picture until it is in the page (the kernel sending it, the server, the
  front end's widget code);
- paint: decoding the picture and the next frame painted.
`--cold` switches drawing ahead off, so every move to a new setting is drawn while it waits:
what a learner feels when dragging a slider to a far setting.
Kernel and browser stamp times on the same wall clock (this machine's, to the millisecond),
see `benchmarks/kernel_timing.py`; a move whose key press led to more or fewer than one redraw
in the kernel is timed as a whole, its steps left out.

Before the course's sliders, the same is timed for a slider under a tiny figure (80 x 40 pixels,
a few milliseconds in the kernel), in a notebook written for the purpose into the git-ignored
test-artifacts/: the floor, what the trip from key to paint costs whatever the figure.

Targets per slider: median at most 50 ms, max at most 100 ms; `--check` exits 1 otherwise.
Not a test: timings are noisy, and the machine is shared (the yardstick below says how fast it
was). Run it before and after a change, on the same machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))

import nbformat  # noqa: E402
from conftest import CHROMIUM, CHROMIUM_ARGS, VIEWPORT  # noqa: E402 - the browser tests' settings
from lab_server import LabServer  # noqa: E402
from notebook_check import (INTERACTIVE_WIDGET, SLIDER_STATE, NotebookCheck,  # noqa: E402
                            notebooks_with_sliders)
from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from yardstick import yardstick_ms  # noqa: E402 - benchmarks/yardstick.py

from helpers.slider_frames import DRAW_AHEAD_SWITCH  # noqa: E402
MEDIAN_TARGET_MS = 50
MAX_TARGET_MS = 100
PAINT_TIMEOUT_MS = 30_000
PAUSE_MS = 300  # between a picture painted and the next key: a learner looks at the figure
STEPS = ("key -> kernel", "picture", "plot", "draw", "png", "-> page", "paint")

# Armed before a key press: stamps the key, the moment a picture not seen before is in the
# output (a new <img>, or a new src on the old one), and the frame after it is decoded.
ARM = """([handle, output]) => {
  const now = () => Date.now();  // the wall clock, as the kernel's time.time()
  const seen = new Set([...output.querySelectorAll('img')].map(img => img.src));
  const move = {key: null, page: null, paint: null};
  window.__move = move;
  handle.addEventListener('keydown', () => { move.key = now(); }, {capture: true, once: true});
  const fresh = () => [...output.querySelectorAll('img')].find(img => !seen.has(img.src));
  const observer = new MutationObserver(() => {
    const img = fresh();
    if (!img || move.page !== null) return;
    move.page = now();
    observer.disconnect();
    img.decode().catch(() => null).then(() => requestAnimationFrame(() => {
      const channel = new MessageChannel();  // runs right after the frame is painted
      channel.port1.onmessage = () => { move.paint = now(); };
      channel.port2.postMessage(null);
    }));
  });
  observer.observe(output, {subtree: true, childList: true, attributes: true,
                            attributeFilter: ['src']});
}"""


FLOOR_NOTEBOOK = ROOT / "test-artifacts" / "benchmark" / "floor.ipynb"
FLOOR_CELLS = ["""\
from matplotlib.figure import Figure
from helpers.widgets import interactive_plot, slider

def tiny(n):
    figure = Figure(figsize=(1, 0.5))
    figure.text(0.5, 0.5, str(n))
    return figure""", 'display(interactive_plot(tiny, height="60px", n=slider("n", 1, 0, 50)))']


def write_floor_notebook() -> Path:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)
                                               for source in FLOOR_CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    FLOOR_NOTEBOOK.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, FLOOR_NOTEBOOK)
    return FLOOR_NOTEBOOK


@dataclass
class SliderTimes:
    notebook: str
    name: str
    moves: list[dict] = field(default_factory=list)  # one {step: ms, "total": ms} per move
    unchanged: int = 0  # moves after which no new picture came (the same figure)

    def totals(self) -> list[float]:
        return [move["total"] for move in self.moves]


def read_kernel_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def breakdown(move: dict, kernel: dict | None) -> dict:
    """Milliseconds per step of one move (kernel steps left out if the kernel logged none;
    plot, draw and png only for a picture drawn during the move, not kept from before)."""
    times = {"total": move["paint"] - move["key"]}
    if kernel and {"move_start", "move_end"} <= kernel.keys():
        times.update({"key -> kernel": kernel["move_start"] - move["key"],
                      "picture": kernel["move_end"] - kernel["move_start"],
                      "-> page": move["page"] - kernel["move_end"],
                      "kept": kernel["kept"]})
        if {"plot_start", "plot_end", "draw_end", "png_end"} <= kernel.keys():
            times.update({"plot": kernel["plot_end"] - kernel["plot_start"],
                          "draw": kernel["draw_end"] - kernel["plot_end"],
                          "png": kernel["png_end"] - kernel["draw_end"]})
    times["paint"] = move["paint"] - move["page"]
    return times


class NotebookTiming(NotebookCheck):
    """The browser harness's notebook, run up to its last slider cell, its sliders timed."""

    def __init__(self, page, lab_url, notebook_file, artifacts, kernel_log: Path, moves: int,
                 pause_ms: int):
        super().__init__(page, lab_url, ROOT, notebook_file, artifacts)
        self.kernel_log = kernel_log
        self.moves = moves
        self.pause_ms = pause_ms
        self.sliders: list[SliderTimes] = []

    def run_cells(self) -> bool:
        """Only the cells up to the last slider cell: the rest cannot change a slider."""
        last = max(self.report.interactive_cells)
        self.cells = [cell if index <= last or cell["cell_type"] != "code"
                      else {**cell, "cell_type": "skipped"}
                      for index, cell in enumerate(self.cells)]
        return super().run_cells()

    def time_sliders(self) -> None:
        for cell in self.report.interactive_cells:
            widgets = self.page.locator(f'[data-browser-test-cell="{cell}"] {INTERACTIVE_WIDGET}')
            for number in range(widgets.count()):
                widget = widgets.nth(number)
                widget.scroll_into_view_if_needed()
                sliders = widget.locator(":scope > .widget-hbox > .widget-slider")
                for slider_number in range(sliders.count()):
                    self.time_slider(widget, sliders.nth(slider_number))

    def time_slider(self, widget, slider) -> None:
        name = slider.locator(".widget-label").text_content().strip()
        times = SliderTimes(Path(self.path).stem, name)
        output = widget.locator(":scope > .widget-output")
        handle = slider.locator(".noUi-handle")
        self.wait_for_figure(output)
        for _ in range(self.moves):
            state = handle.evaluate(SLIDER_STATE)
            right = state["position"] + state["step"] <= state["max"] + 1e-9
            self.page.wait_for_timeout(self.pause_ms)  # the learner looks before the next key
            logged = len(read_kernel_log(self.kernel_log))
            self.page.evaluate(ARM, [handle.element_handle(), output.element_handle()])
            handle.press("ArrowRight" if right else "ArrowLeft")
            try:
                self.page.wait_for_function("() => window.__move.paint !== null",
                                            timeout=PAINT_TIMEOUT_MS, polling=20)
            except PlaywrightTimeout:  # no new picture: the setting draws what is shown
                times.unchanged += 1
                self.wait_for_idle(None, f"after moving {name!r}")
                continue
            self.wait_for_idle(None, f"after moving {name!r}")
            move = self.page.evaluate("() => window.__move")
            kernel = read_kernel_log(self.kernel_log)[logged:]
            times.moves.append(breakdown(move, kernel[0] if len(kernel) == 1 else None))
        self.sliders.append(times)


def time_notebook(browser, server, notebook: Path, artifacts: Path, kernel_log: Path,
                  moves: int, pause_ms: int) -> list[SliderTimes]:
    context = browser.new_context(viewport=VIEWPORT)
    try:
        check = NotebookTiming(context.new_page(), server.url, notebook, artifacts, kernel_log,
                               moves, pause_ms)
        if not (check.open() and check.run_cells()):
            raise RuntimeError(f"{notebook.name} did not run: {check.report.problems}")
        check.time_sliders()
        return check.sliders
    finally:
        context.close()
        server.shut_down_kernels()


def median_of(moves: list[dict], step: str) -> str:
    values = [move[step] for move in moves if step in move]
    return f"{statistics.median(values):6.0f}" if values else f"{'-':>6s}"


def report(sliders: list[SliderTimes]) -> list[str]:
    """The table (one row per slider, then per notebook and overall); returns what misses."""
    header = f"{'notebook':22s} {'slider':26s} {'median':>6s} {'max':>5s} | " + " ".join(
        f"{step:>13s}" for step in STEPS) + " | kept"
    print(header + "\n" + "-" * len(header))
    misses = []
    for times in sliders:
        totals = times.totals()
        if not totals:
            print(f"{times.notebook[:22]:22s} {times.name[:26]:26s} no move drew a new picture")
            misses.append(f"{times.notebook} {times.name!r}: no move drew a new picture")
            continue
        median, longest = statistics.median(totals), max(totals)
        print(f"{times.notebook[:22]:22s} {times.name[:26]:26s} {median:6.0f} {longest:5.0f} | "
              + " ".join(f"{median_of(times.moves, step):>13s}" for step in STEPS)
              + f" | {sum(move.get('kept', False) for move in times.moves)}/{len(totals)}")
        if median > MEDIAN_TARGET_MS or longest > MAX_TARGET_MS:
            misses.append(f"{times.notebook} {times.name!r}: median {median:.0f} ms, "
                          f"max {longest:.0f} ms")
    print("\nper notebook (all moves of its sliders): median, max in ms")
    by_notebook: dict[str, list[float]] = {}
    for times in sliders:
        by_notebook.setdefault(times.notebook, []).extend(times.totals())
    everything = [total for totals in by_notebook.values() for total in totals]
    for notebook, totals in [*by_notebook.items(), ("all", everything)]:
        print(f"  {notebook:28s} {statistics.median(totals):6.0f} {max(totals):6.0f}"
              f"   ({len(totals)} moves)")
    return misses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=6, help="moves per slider")
    parser.add_argument("--only", default="", help="notebooks whose name starts with this")
    parser.add_argument("--pause", type=int, default=PAUSE_MS,
                        help="milliseconds between a picture painted and the next key press")
    parser.add_argument("--cold", action="store_true",
                        help="switch drawing ahead off: every move to a new setting is drawn "
                             "while the learner waits")
    parser.add_argument("--check", action="store_true",
                        help=f"exit 1 if a slider's median is over {MEDIAN_TARGET_MS} ms or its "
                             f"max over {MAX_TARGET_MS} ms")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} not found: `make test-browser` installs Debian's chromium")

    notebooks = [path for path in notebooks_with_sliders(ROOT)
                 if path.name.startswith(args.only) and "solutions" not in path.parts]
    before = yardstick_ms()
    with tempfile.TemporaryDirectory(prefix="browser-redraw-") as scratch:
        scratch = Path(scratch)
        startup = scratch / "ipython" / "profile_default" / "startup"
        startup.mkdir(parents=True)
        shutil.copy(ROOT / "benchmarks" / "kernel_timing.py", startup / "kernel_timing.py")
        kernel_log = scratch / "kernel-timing.jsonl"
        # Read by the kernels that JupyterLab starts (it passes its environment on).
        os.environ.update(IPYTHONDIR=str(scratch / "ipython"),
                          POSITIONS_REDRAW_TIMING=str(kernel_log), TQDM_DISABLE="1")
        if args.cold:
            os.environ[DRAW_AHEAD_SWITCH] = "0"
        server = LabServer(ROOT, scratch / "lab", scratch / "jupyterlab.log")
        sliders: list[SliderTimes] = []
        floor: list[SliderTimes] = []
        try:
            server.wait_until_ready()
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                     args=CHROMIUM_ARGS)
                try:
                    floor = time_notebook(browser, server, write_floor_notebook(),
                                          scratch / "shots", kernel_log, args.moves, args.pause)
                    for notebook in notebooks:
                        print(f"timing {notebook.name} ...", file=sys.stderr, flush=True)
                        sliders += time_notebook(browser, server, notebook, scratch / "shots",
                                                 kernel_log, args.moves, args.pause)
                finally:
                    browser.close()
        finally:
            server.stop()

    print(f"key-to-paint in JupyterLab + headless Chromium, {args.moves} moves per slider, "
          f"drawing ahead {'off' if args.cold else 'on'}, {args.pause} ms between a paint and the "
          f"next key; times in ms (steps: medians; "
          "kept: moves whose picture was ready)\n")
    floor_totals = [total for times in floor for total in times.totals()]
    print(f"floor (a slider under an 80 x 40 figure): median "
          f"{statistics.median(floor_totals):.0f} ms, max {max(floor_totals):.0f} ms\n")
    misses = report(sliders)
    print(f"\nyardstick sum(range(10**6)): {before:.0f} ms before, {yardstick_ms():.0f} ms after "
          "(about 26 ms at full speed)")
    if misses:
        print(f"\nover the targets (median {MEDIAN_TARGET_MS} ms, max {MAX_TARGET_MS} ms):",
              *misses, sep="\n  ")
    else:
        print(f"\nevery slider within the targets (median {MEDIAN_TARGET_MS} ms, "
              f"max {MAX_TARGET_MS} ms)")
    return 1 if args.check and misses else 0


if __name__ == "__main__":
    sys.exit(main())
