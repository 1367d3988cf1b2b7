"""Kernel half of the browser benchmark: when each step of a slider's redraw ends.

`benchmarks/browser_redraw.py` copies this file into a throwaway IPython startup folder, so every
kernel of its JupyterLab runs it before the notebook's first cell; learners' kernels never do.
It wraps three steps of `helpers.widgets` without changing what they return:
- the plot function that `slider_renderer` receives (start and end of the plot function),
- `FigureCanvasAgg.draw` (end of the Agg draw),
- `png_bytes` (end of the PNG encoding),
and appends one JSON line per redraw, with wall-clock times in milliseconds since the epoch (the
page stamps its times with `Date.now()`, the same clock), to the file named by
$POSITIONS_REDRAW_TIMING.
"""

import functools
import json
import os
import time

from matplotlib.backends.backend_agg import FigureCanvasAgg

import helpers.widgets

_LOG = os.environ["POSITIONS_REDRAW_TIMING"]
_current: dict = {}  # the redraw under way: {"plot_start": ms, ...}


def _now_ms() -> float:
    return time.time() * 1e3


def _timed_renderer(slider_renderer):
    @functools.wraps(slider_renderer)
    def renderer(plot):
        @functools.wraps(plot)  # keeps the signature: the renderer looks for a `figure` parameter
        def timed_plot(*args, **kwargs):
            _current.clear()
            _current["plot_start"] = _now_ms()
            figure = plot(*args, **kwargs)
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
        if "plot_end" in _current:
            _current["png_end"] = _now_ms()
            with open(_LOG, "a") as log:
                log.write(json.dumps(_current) + "\n")
            _current.clear()
        return data
    return timed


helpers.widgets.slider_renderer = _timed_renderer(helpers.widgets.slider_renderer)
FigureCanvasAgg.draw = _timed_draw(FigureCanvasAgg.draw)
helpers.widgets.png_bytes = _timed_png(helpers.widgets.png_bytes)
