"""helpers.slider_frames: pictures kept by setting, and the settings one step away drawn ahead."""

import asyncio
import math

import ipywidgets
import matplotlib
import pytest

matplotlib.use("Agg")

from helpers import slider_frames, widgets  # noqa: E402
from helpers.plots.absolute.sinusoidal import plot_sinusoidal_table  # noqa: E402
from helpers.slider_frames import SliderFrames, next_settings, one_step, setting_key  # noqa: E402


# -- one step of each kind of control ------------------------------------------------------------

def test_one_step_of_an_integer_slider_stops_at_its_ends():
    control = widgets.slider("dim", 4, 2, 8, step=2)
    assert one_step(control, 4, +1) == 6 and one_step(control, 4, -1) == 2
    assert one_step(control, 8, +1) is None and one_step(control, 2, -1) is None


def test_one_step_of_a_float_slider_is_the_decimal_the_readout_shows():
    control = widgets.float_slider("frequency", 0.4, 0.05, 1.5, 0.05)
    assert one_step(control, 0.4, +1) == 0.45  # not 0.45000000000000007
    assert one_step(control, 1.5, +1) is None


def test_one_step_of_a_log_slider_is_a_step_of_the_exponent():
    control = widgets.log_slider("base", 1e4, 1, 6)
    assert one_step(control, 1e4, +1) == pytest.approx(10 ** 4.1, rel=1e-12)
    assert one_step(control, 1e4, -1) == pytest.approx(10 ** 3.9, rel=1e-12)
    assert one_step(control, 1e6, +1) is None and one_step(control, 10.0, -1) is None


def test_one_step_of_a_checkbox_is_its_other_state():
    control = ipywidgets.Checkbox(value=True)
    assert one_step(control, True, +1) is False and one_step(control, False, -1) is True


def test_a_float_setting_is_known_again_after_the_browser_computed_it_its_own_way():
    # The front end computes 10 ** 4.1 itself; the last digit may differ from Python's.
    assert setting_key({"base": 10 ** 4.1}) == setting_key({"base": 12589.254117941662})
    assert setting_key({"base": 10 ** 4.1}) != setting_key({"base": 10 ** 4.2})
    assert setting_key({"dim": 4, "base": 1.5}) == setting_key({"base": 1.5, "dim": 4})


# -- which settings are drawn ahead, in which order ----------------------------------------------

CONTROLS = {"dim": widgets.slider("dim", 4, 2, 8, step=2),
            "length": widgets.slider("length", 1, 1, 16)}


def test_the_settings_one_step_away_skip_the_ends():
    found = next_settings(CONTROLS, {"dim": 4, "length": 1})
    assert found == [{"dim": 6, "length": 1}, {"dim": 2, "length": 1}, {"dim": 4, "length": 2}]


def test_after_a_move_the_next_step_the_same_way_comes_first():
    found = next_settings(CONTROLS, {"dim": 4, "length": 5}, moved=("length", -1))
    assert found[0] == {"dim": 4, "length": 4}
    assert len(found) == 4 and len({setting_key(setting) for setting in found}) == 4


# -- kept pictures and drawing ahead -------------------------------------------------------------

class CountingRender:
    """Stands in for `slider_renderer(plot)`: a distinct 'picture' per setting, draws counted."""

    def __init__(self, broken_at=None):
        self.drawn: list[dict] = []
        self.broken_at = broken_at

    def __call__(self, **values) -> bytes:
        if values == self.broken_at:
            raise RuntimeError("broken on purpose")
        self.drawn.append(values)
        return repr(sorted(values.items())).encode()


class FakeLoop:
    """Collects what `SliderFrames` schedules; `run_one` runs the oldest, as an event loop would."""

    def __init__(self):
        self.waiting: list[tuple[float, object]] = []

    def schedule(self, delay, callback):
        self.waiting.append((delay, callback))

    def run_one(self):
        _, callback = self.waiting.pop(0)
        callback()

    def run_all(self):
        while self.waiting:
            self.run_one()


def test_a_setting_shown_before_is_not_drawn_again():
    render = CountingRender()
    frames = SliderFrames(render, CONTROLS)
    first = frames.picture({"dim": 4, "length": 1})
    frames.picture({"dim": 6, "length": 1})
    assert frames.picture({"dim": 4, "length": 1}) == first and len(render.drawn) == 2


def test_drawing_ahead_draws_one_setting_per_turn_of_the_loop_after_a_pause():
    render, loop = CountingRender(), FakeLoop()
    frames = SliderFrames(render, CONTROLS)
    frames.picture({"dim": 4, "length": 1})
    frames.draw_ahead({"dim": 4, "length": 1}, loop.schedule)
    assert render.drawn == [{"dim": 4, "length": 1}]  # nothing drawn before the loop runs
    assert loop.waiting[0][0] == slider_frames.PAUSE_BEFORE_DRAWING_AHEAD
    loop.run_one()
    assert len(render.drawn) == 2 and len(loop.waiting) == 1  # one picture, then the next turn
    loop.run_all()
    assert len(render.drawn) == 4
    drawn_before = len(render.drawn)
    for setting in next_settings(CONTROLS, {"dim": 4, "length": 1}):  # each is ready now
        frames.picture(setting)
    assert len(render.drawn) == drawn_before


def test_a_kept_picture_is_the_picture_a_fresh_draw_gives():
    # A real figure updated in place, drawn ahead at Python's 10 ** 4.1, asked for at the value
    # a browser might send: the same bytes as drawing that setting on a fresh figure.
    controls = {"dim": widgets.slider("dim", 64, 2, 512, step=2),
                "length": widgets.slider("length", 64, 1, 512),
                "base": widgets.log_slider("base", 1e4, 1, 6)}
    frames, loop = SliderFrames(widgets.slider_renderer(plot_sinusoidal_table), controls), FakeLoop()
    start = {"dim": 64, "length": 64, "base": 1e4}
    frames.picture(start)
    frames.draw_ahead(start, loop.schedule)
    loop.run_all()
    for setting in [{**start, "base": math.pow(10, 4.1000000000000005)},
                    {**start, "dim": 66}, {**start, "length": 63}]:
        assert setting_key(setting) in frames.kept
        fresh = widgets.slider_renderer(plot_sinusoidal_table)(**setting)
        assert frames.picture(setting) == fresh


def test_a_new_move_replaces_the_settings_still_to_draw():
    render, loop = CountingRender(), FakeLoop()
    frames = SliderFrames(render, CONTROLS)
    frames.draw_ahead({"dim": 4, "length": 1}, loop.schedule)
    frames.draw_ahead({"dim": 4, "length": 9}, loop.schedule)
    assert len(loop.waiting) == 1  # the queue changed; the turn already scheduled draws it
    loop.run_all()
    assert [setting["length"] for setting in render.drawn] == [9, 9, 10, 8]  # dim first
    assert {setting_key(setting) for setting in render.drawn} == {
        setting_key(setting) for setting in next_settings(CONTROLS, {"dim": 4, "length": 9})}


def test_the_next_step_the_same_way_is_drawn_first():
    render, loop = CountingRender(), FakeLoop()
    frames = SliderFrames(render, CONTROLS)
    frames.draw_ahead({"dim": 4, "length": 5}, None)  # shown, nothing drawn ahead
    frames.draw_ahead({"dim": 4, "length": 4}, loop.schedule)  # a step left
    loop.run_one()
    assert render.drawn == [{"dim": 4, "length": 3}]


def test_only_so_many_pictures_are_kept_the_oldest_go_first(monkeypatch):
    monkeypatch.setattr(slider_frames, "FRAMES_KEPT", 3)
    frames = SliderFrames(CountingRender(), CONTROLS)
    for length in (1, 2, 3, 4):
        frames.picture({"dim": 4, "length": length})
    frames.picture({"dim": 4, "length": 2})  # used again: now the newest
    frames.picture({"dim": 4, "length": 5})
    assert [dict(key)["length"] for key in frames.kept] == [4, 2, 5]


def test_a_setting_that_fails_stops_drawing_ahead_and_fails_when_moved_to():
    broken = {"dim": 6, "length": 1}
    loop = FakeLoop()
    frames = SliderFrames(CountingRender(broken_at=broken), CONTROLS)
    frames.draw_ahead({"dim": 4, "length": 1}, loop.schedule)
    loop.run_all()  # no error escapes into the event loop
    assert frames.queue == [] and setting_key(broken) not in frames.kept
    with pytest.raises(RuntimeError, match="broken on purpose"):
        frames.picture(broken)


# -- in a kernel: the event loop --------------------------------------------------------------

def test_drawing_ahead_needs_a_running_event_loop_and_can_be_switched_off(monkeypatch):
    assert slider_frames.event_loop_scheduler() is None  # a script or a test: no loop

    async def inside_a_loop():
        return slider_frames.event_loop_scheduler()

    assert asyncio.run(inside_a_loop()) is not None
    monkeypatch.setenv(slider_frames.DRAW_AHEAD_SWITCH, "0")
    assert asyncio.run(inside_a_loop()) is None


def test_a_slider_move_in_a_kernel_finds_its_picture_drawn_ahead():
    calls = []

    def plot(slope, figure=None):
        calls.append(slope)
        return _line(slope)

    async def learner_moves_the_slider():
        control = widgets.slider("slope", 0, -2, 2)
        view = widgets.interactive_plot(plot, slope=control)
        await asyncio.sleep(slider_frames.PAUSE_BEFORE_DRAWING_AHEAD + 0.2)  # learner looks
        drawn = len(calls)
        control.value = 1  # one step right: ready
        assert len(calls) == drawn and view.png == view.frames.picture({"slope": 1})
        return calls

    assert sorted(asyncio.run(learner_moves_the_slider())[:3]) == [-1, 0, 1]


def _line(slope):
    from matplotlib.figure import Figure
    figure = Figure(figsize=(2, 1))
    figure.add_subplot().plot([0, 1], [0, slope])
    return figure
