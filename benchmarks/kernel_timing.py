"""Kernel half of the browser benchmark: when each step of a slider's redraw ends.

`benchmarks/browser_redraw.py` copies this file into a throwaway IPython startup folder, so every
kernel of its JupyterLab runs it before the notebook's first cell; learners' kernels never do.
It wraps the steps of a slider move without changing what they return:
- `SliderFrames.picture` (the move's picture asked for: start and end, and whether the picture
  was kept from before, drawn ahead or on an earlier visit),
- the plot function that `slider_renderer` receives (start and end of the plot function),
- `FigureCanvasAgg.draw` (end of the Agg draw),
- `png_bytes` (end of the PNG encoding),
and appends one JSON line per move, with wall-clock times in milliseconds since the epoch (the
page stamps its times with `Date.now()`, the same clock), to the file named by
$POSITIONS_REDRAW_TIMING. Pictures drawn ahead between moves are not logged: only what a move
waits for.
"""

import functools
import json
import os
import time

from matplotlib.backends.backend_agg import FigureCanvasAgg

import helpers.widgets
from helpers.slider_frames import SliderFrames, setting_key

_LOG = os.environ["POSITIONS_REDRAW_TIMING"]
_current: dict = {}  # the move under way: {"move_start": ms, ...}; empty between moves


def _now_ms() -> float:
    return time.time() * 1e3


def _timed_picture(picture):
    @functools.wraps(picture)
    def timed(self, values):
        _current.clear()
        _current.update(move_start=_now_ms(), kept=setting_key(values) in self.kept)
        try:
            return picture(self, values)
        finally:
            _current["move_end"] = _now_ms()
            with open(_LOG, "a") as log:
                log.write(json.dumps(_current) + "\n")
            _current.clear()
    return timed


def _timed_renderer(slider_renderer):
    @functools.wraps(slider_renderer)
    def renderer(plot):
        @functools.wraps(plot)  # keeps the signature: the renderer looks for a `figure` parameter
        def timed_plot(*args, **kwargs):
            moving = bool(_current)
            if moving:
                _current["plot_start"] = _now_ms()
            figure = plot(*args, **kwargs)
            if moving:
                _current["plot_end"] = _now_ms()
            return figure
        return slider_renderer(timed_plot)
    return renderer


def _timed_draw(draw):
    @functools.wraps(draw)
    def timed(self, *args, **kwargs):
        result = draw(self, *args, **kwargs)
        if "plot_end" in _current and "png_end" not in _current:
            _current["draw_end"] = _now_ms()  # the last draw before the PNG counts
        return result
    return timed


def _timed_png(png_bytes):
    @functools.wraps(png_bytes)
    def timed(*args, **kwargs):
        data = png_bytes(*args, **kwargs)
        if "draw_end" in _current:
            _current["png_end"] = _now_ms()
        return data
    return timed


SliderFrames.picture = _timed_picture(SliderFrames.picture)
helpers.widgets.slider_renderer = _timed_renderer(helpers.widgets.slider_renderer)
FigureCanvasAgg.draw = _timed_draw(FigureCanvasAgg.draw)
helpers.widgets.png_bytes = _timed_png(helpers.widgets.png_bytes)
