"""The canvas that slider figures are drawn on: matplotlib's Agg, doing no work twice.

A slider move changes a few numbers; most of what matplotlib draws comes back unchanged (tick
marks, tick labels, grid lines, axis labels). Two memories skip that work and leave the picture
the same, pixel for pixel (`tests/test_canvas.py` checks it on every slider of the course):

- **Text bitmaps.** Agg draws a text in two steps: FreeType lays out the glyphs and turns them
  into a small grey-scale bitmap, then that bitmap is blended onto the picture in the text's
  colour. `TextMemoryRenderer` keeps each bitmap and blends the kept one when the same string
  comes back in the same font.
- **Axes' ticks.** Drawing an axis (`matplotlib.axis.Axis`: ticks, their labels, grid lines,
  the axis label) is mostly Python bookkeeping: placing each tick, measuring each label, moving
  the axis label clear of them. That takes most of a redraw, yet it only ends in a few dozen
  calls to the renderer ("draw this path here, this text there"). `AxisMemory` notes those
  calls; at the next draw, if nothing that decides them has changed (`axis_state`: the limits,
  the ticks and their labels, the tick and label styles, the place on the canvas), it makes
  the same calls again instead of redoing the bookkeeping. Replayed onto the canvas in the same
  order, they blend with what lies beneath exactly as before.
"""

from __future__ import annotations

from math import cos, radians, sin

import numpy as np
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.font_manager import FontProperties
from matplotlib.transforms import Transform

MAX_KEPT_TEXTS = 2000  # a slider figure draws a few dozen; the memory is emptied past this


class TextMemoryRenderer(RendererAgg):
    """Agg's renderer, drawing plain (not math) text from bitmaps it made before."""

    def __init__(self, width, height, dpi):
        super().__init__(width, height, dpi)
        # (string, font, antialiased, hinting) -> (bitmap, descent, x offset, y offset)
        self.kept_texts: dict[tuple, tuple[np.ndarray, float, float, float]] = {}
        # (string, font, math or not, hinting) -> (width, height, descent), as measured by Agg
        self.kept_sizes: dict[tuple, tuple[float, float, float]] = {}

    def get_text_width_height_descent(self, s, prop, ismath):
        # matplotlib keeps sizes per renderer object; an axis being noted (`CallRecorder`) is
        # drawn through a stand-in, so they are kept here too.
        key = (s, hash(prop), ismath, get_hinting_flag())
        if key not in self.kept_sizes:
            if len(self.kept_sizes) >= MAX_KEPT_TEXTS:
                self.kept_sizes.clear()
            self.kept_sizes[key] = super().get_text_width_height_descent(s, prop, ismath)
        return self.kept_sizes[key]

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath:  # math text has its own layout step; leave it to Agg
            return super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
        key = (s, hash(prop), gc.get_antialiased(), get_hinting_flag())
        if key not in self.kept_texts:
            if len(self.kept_texts) >= MAX_KEPT_TEXTS:
                self.kept_texts.clear()
            font = self._prepare_font(prop)
            # As RendererAgg.draw_text: laid out at angle 0, rotated when blended.
            font.set_text(s, 0, flags=get_hinting_flag())
            font.draw_glyphs_to_bitmap(antialiased=gc.get_antialiased())
            x_offset, y_offset = font.get_bitmap_offset()
            self.kept_texts[key] = (np.array(font.get_image()), font.get_descent() / 64.0,
                                    x_offset / 64.0, y_offset / 64.0)
        bitmap, descent, x_offset, y_offset = self.kept_texts[key]
        # The same placement as RendererAgg.draw_text (the descent turns with the text).
        x = round(x + x_offset + descent * sin(radians(angle)))
        y = round(y + y_offset + descent * cos(radians(angle)))
        self._renderer.draw_text_image(bitmap, x, y + 1, angle, gc)


# The renderer calls an axis makes when it draws on Agg; everything else it asks the renderer
# (sizes of texts, points to pixels) is answered and not noted.
DRAWING_CALLS = ("draw_path", "draw_markers", "draw_path_collection", "draw_text", "draw_image")


class CallRecorder:
    """Stands in for a renderer: passes every call on, and notes the drawing calls with frozen
    copies of their arguments (graphics state, transforms, fonts), which may change later."""

    def __init__(self, renderer):
        self.renderer = renderer
        self.calls: list[tuple[str, object, tuple, dict]] = []

    def __getattr__(self, name):
        method = getattr(self.renderer, name)
        if name not in DRAWING_CALLS:
            return method

        def draw_and_note(gc, *args, **kwargs):
            kept_gc = self.renderer.new_gc()
            kept_gc.copy_properties(gc)
            kept = tuple(_frozen(argument) for argument in args)
            kwargs.pop("mtext", None)  # the Text artist itself; Agg does not use it
            self.calls.append((name, kept_gc, kept, kwargs))
            return method(gc, *args, **kwargs)

        return draw_and_note


def _frozen(argument):
    if isinstance(argument, Transform):
        return argument.frozen()
    if isinstance(argument, FontProperties):
        return argument.copy()
    return argument


def axis_state(axis: Axis, renderer) -> tuple:
    """Everything that decides what `axis` draws (see the module's docstring)."""
    axes = axis.axes
    major, minor = axis.get_majorticklocs(), axis.get_minorticklocs()
    label = axis.label
    return (id(renderer), tuple(axes.bbox.bounds), tuple(axis.get_view_interval()),
            str(axis.get_transform()), axis.get_visible(), axes.axison,
            tuple(major), tuple(axis.major.formatter.format_ticks(major)),
            axis.major.formatter.get_offset(),
            tuple(minor), tuple(axis.minor.formatter.format_ticks(minor)),
            repr(sorted(axis._major_tick_kw.items())), repr(sorted(axis._minor_tick_kw.items())),
            axis.get_label_position(), axis.get_ticks_position(),
            label.get_text(), label.get_visible(), hash(label.get_fontproperties()),
            str(label.get_color()), label.get_rotation(),
            None if axis._autolabelpos else tuple(label.get_position()))


class AxisMemory:
    """Draws one axis, replaying the renderer calls of its last draw when its state is the same."""

    def __init__(self, axis: Axis):
        self.axis = axis
        self.state = None
        self.calls: list = []

    def draw(self, renderer) -> None:
        axis = self.axis
        if len(axis._get_shared_axis()) > 1:  # a shared axis also depends on its siblings
            return type(axis).draw(axis, renderer)
        state = axis_state(axis, renderer)
        if state == self.state:
            for name, gc, args, kwargs in self.calls:
                getattr(renderer, name)(gc, *args, **kwargs)
            axis.stale = False
            return
        recorder = CallRecorder(renderer)
        type(axis).draw(axis, recorder)
        self.state, self.calls = state, recorder.calls


def remember_axes(figure) -> None:
    """Give every axis of `figure` an `AxisMemory` (once; axes added later get theirs next time)."""
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            if "draw" not in vars(axis):  # the instance's own draw, in front of the class's
                axis.draw = AxisMemory(axis).draw


class SliderCanvas(FigureCanvasAgg):
    """An Agg canvas that draws text from kept bitmaps and replays unchanged axes."""

    def draw(self):
        remember_axes(self.figure)
        super().draw()

    def get_renderer(self):
        width, height = self.figure.bbox.size
        key = (width, height, self.figure.dpi)
        if self._lastKey != key:  # as FigureCanvasAgg: a new renderer only for a new size
            self.renderer = TextMemoryRenderer(width, height, self.figure.dpi)
            self._lastKey = key
        return self.renderer
