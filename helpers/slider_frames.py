"""Pictures of a slider figure kept by setting, and the next ones drawn while the learner looks.

A slider move costs a redraw in the kernel (plot, Agg draw, PNG: 10 to 40 ms) on top of the trip
from the browser to the kernel and back. Most moves go one step from the setting shown (an arrow
key, a click beside the handle), so after each move the kernel draws the settings one step away
while nobody waits for it: the next step then finds its picture ready and only the trip is left.

- `SliderFrames.picture(values)` gives the PNG for a setting: the kept one if it was drawn
  before, else a fresh draw (kept for next time, up to `FRAMES_KEPT` per widget).
- `SliderFrames.draw_ahead(values, schedule)` queues the settings one step away (`next_settings`)
  and draws them one at a time, each through `schedule` (the kernel's event loop: `call_later`),
  so a slider move that arrives meanwhile waits for one picture at most, never for the whole
  queue. A new move replaces the queue. The first waits `PAUSE_BEFORE_DRAWING_AHEAD`: the
  picture just asked for is still on its way to the browser, and on a 2-core machine drawing
  at once would slow its trip.

The picture of a setting does not depend on how the slider got there (the plot functions set
everything they show; `tests/test_canvas.py` compares every slider with a plain draw), so a kept
picture is the picture a fresh draw would give. A float setting is keyed to 10 significant
digits: the browser computes a log slider's value as 10 ** exponent itself, which can differ from
Python's in the last digit, and no picture of the course shows a difference that small.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections import OrderedDict
from typing import Callable

import ipywidgets as widgets

FRAMES_KEPT = 32  # pictures per widget: the settings near the ones shown; a few MB at most
PAUSE_BEFORE_DRAWING_AHEAD = 0.05  # seconds
# Set to 0 to switch drawing ahead off (the browser benchmark times cold moves that way).
DRAW_AHEAD_SWITCH = "POSITIONS_DRAW_AHEAD"


def setting_key(values: dict) -> tuple:
    """A hashable key for a setting; floats to 10 significant digits (see the docstring)."""
    return tuple((name, float(f"{value:.10g}") if isinstance(value, float) else value)
                 for name, value in sorted(values.items()))


def one_step(control: widgets.ValueWidget, value, direction: int):
    """The value one step from `value` in `direction` (+1 or -1), or None past the slider's end."""
    if isinstance(control, widgets.Checkbox):
        return not value
    if isinstance(control, widgets.FloatLogSlider):  # its steps are steps of the exponent
        exponent = math.log(value, control.base) + direction * control.step
        if not control.min - 1e-9 <= exponent <= control.max + 1e-9:
            return None
        return control.base ** exponent  # as the browser computes it, up to the last digit
    if isinstance(control, (widgets.IntSlider, widgets.FloatSlider)):
        stepped = value + direction * control.step
        if not control.min <= stepped <= control.max:
            return None
        return stepped if isinstance(stepped, int) else float(f"{stepped:.10g}")
    return None  # another kind of control: not drawn ahead


def next_settings(controls: dict[str, widgets.ValueWidget], values: dict,
                  moved: tuple[str, int] | None = None) -> list[dict]:
    """The settings one step from `values`, most likely first: if the last move was `moved`
    (control name, direction), the next step the same way; then each control one step either way.
    A checkbox's one step is its other state."""
    order = [moved] if moved else []
    order += [(name, direction) for name in controls for direction in (+1, -1)]
    found = []
    for name, direction in order:
        value = one_step(controls[name], values[name], direction)
        setting = {**values, name: value}
        if value is not None and setting not in found:
            found.append(setting)
    return found


Schedule = Callable[[float, Callable[[], None]], object]  # (seconds, callback), as call_later


def event_loop_scheduler() -> Schedule | None:
    """`call_later` of the running event loop (a Jupyter kernel's, when a slider moves or a cell
    runs), or None outside one (a script, a test) or when drawing ahead is switched off."""
    if os.environ.get(DRAW_AHEAD_SWITCH, "1") == "0":
        return None
    try:
        return asyncio.get_running_loop().call_later
    except RuntimeError:
        return None


class SliderFrames:
    """The pictures of one slider figure by setting, drawn on demand or ahead (module docstring).

    `render(**values)` draws one setting to PNG bytes (`helpers.widgets.slider_renderer`)."""

    def __init__(self, render: Callable[..., bytes], controls: dict[str, widgets.ValueWidget]):
        self.render = render
        self.controls = controls
        self.kept: OrderedDict[tuple, bytes] = OrderedDict()  # setting key -> PNG, oldest first
        self.queue: list[dict] = []  # settings still to draw ahead
        self.shown: dict | None = None  # the setting last asked for

    def picture(self, values: dict) -> bytes:
        key = setting_key(values)
        if key in self.kept:
            self.kept.move_to_end(key)
        else:
            self.keep(key, self.render(**values))
        return self.kept[key]

    def keep(self, key: tuple, png: bytes) -> None:
        self.kept[key] = png
        while len(self.kept) > FRAMES_KEPT:
            self.kept.popitem(last=False)

    def last_move(self, values: dict) -> tuple[str, int] | None:
        """(control, direction) if `values` is one step from the setting shown before."""
        if self.shown is None:
            return None
        for name, control in self.controls.items():
            for direction in (+1, -1):
                step = one_step(control, self.shown[name], direction)
                if step is not None and setting_key({**self.shown, name: step}) == setting_key(
                        values):
                    return name, direction
        return None

    def draw_ahead(self, values: dict, schedule: Schedule | None) -> None:
        """Queue the settings one step from `values` that are not kept yet, and draw the first
        through `schedule`; each drawing schedules the next. No `schedule`: nothing is drawn."""
        moved = self.last_move(values)
        self.shown = dict(values)
        if schedule is None:
            return
        already_running = bool(self.queue)
        self.queue = [setting for setting in next_settings(self.controls, values, moved)
                      if setting_key(setting) not in self.kept]
        if self.queue and not already_running:
            schedule(PAUSE_BEFORE_DRAWING_AHEAD, lambda: self.draw_next(schedule))

    def draw_next(self, schedule: Schedule) -> None:
        if not self.queue:
            return
        setting = self.queue.pop(0)
        key = setting_key(setting)
        if key not in self.kept:
            try:
                self.keep(key, self.render(**setting))
            except Exception:  # noqa: BLE001 - a move there will draw it and show the error
                self.queue.clear()
                return
        if self.queue:
            schedule(0, lambda: self.draw_next(schedule))
