"""The canvas that slider figures are drawn on: matplotlib's Agg, doing no work twice.

A slider move changes a few numbers; most of what matplotlib draws comes back unchanged (tick
marks, tick labels, grid lines, axis labels). Three memories skip that work and leave the picture
the same, pixel for pixel (`tests/test_canvas.py` checks it on every slider of the course):

- **Text bitmaps.** Agg draws a text in two steps: FreeType lays out the glyphs and turns them
  into a small grey-scale bitmap, then that bitmap is blended onto the picture in the text's
  colour. `TextMemoryRenderer` keeps each bitmap and blends the kept one when the same string
  comes back in the same font.
- **Axes' ticks.** Drawing an axis (`matplotlib.axis.Axis`: ticks, their labels, grid lines,
  the axis label) is mostly Python bookkeeping: placing each tick, measuring each label, moving
  the axis label clear of them. That takes most of a redraw, yet it only ends in a few dozen
  calls to the renderer ("draw this path here, this text there"). `AxisMemory` notes those
  calls; at the next draw, if nothing that decides them has changed (`axis_state`), it makes
  the same calls again instead of redoing the bookkeeping. Replayed onto the canvas in the same
  order, they blend with what lies beneath exactly as before. An axis whose range follows a
  slider keeps the calls of each state it has shown (`remember_each_range`), not just the last.
- **Artists that change in known ways.** A legend, a table's numbers: a plot function that
  vouches for what can change about an artist lets the canvas replay it (`remember_unchanging`).

`axis_state` covers what the course's figures change between moves and the usual styling: the
limits of the axis (and the other axis's, if a spine is placed at a data value of it), the scale,
the place on the canvas, the ticks and their labels, the tick, grid and label styles (each
tick's too), the spines' placement, the axis label (text, place, padding, alignment, style) and
the offset text. It cannot list every setting matplotlib has, so the memory is used only where
the list is known to suffice: flat (rectilinear) axes, not shared with another and not aligned
with another axes' labels, drawn on this canvas. Anything else is drawn as plain Agg draws it.
"""

from __future__ import annotations

from math import cos, radians, sin
from typing import Callable, Hashable

import numpy as np
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.font_manager import FontProperties
from matplotlib.scale import SymmetricalLogTransform
from matplotlib.transforms import Transform

MAX_KEPT_TEXTS = 2000  # a slider figure draws a few dozen; the memory is emptied past this
RANGES_KEPT = 32  # states kept by an axis whose range follows a slider (08: 32 head sizes)
VARIANTS_KEPT = 16  # drawings kept by an unchanging artist: its variants, at each place


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


class CallRecorder:
    """Stands in for a renderer: passes every call on, and notes each drawing call (`draw_...`)
    with frozen copies of the arguments that may change later (transforms, fonts). The other
    arguments are kept as they are: paths and the graphics state's clip box belong to artists
    that build new ones when they change, and a change there also changes `axis_state`."""

    def __init__(self, renderer):
        self.renderer = renderer
        self.calls: list[tuple[str, object, tuple, dict]] = []

    def __getattr__(self, name):
        method = getattr(self.renderer, name)
        if not name.startswith("draw_"):  # sizes of texts, points to pixels: answered, not noted
            return method

        def draw_and_note(gc, *args, **kwargs):
            kept_gc = self.renderer.new_gc()
            kept_gc.copy_properties(gc)
            kept_args = tuple(_frozen(argument) for argument in args)
            # `mtext` is the Text artist itself, which Agg does not use; it is not kept.
            kept_kwargs = {key: value for key, value in kwargs.items() if key != "mtext"}
            self.calls.append((name, kept_gc, kept_args, kept_kwargs))
            return method(gc, *args, **kwargs)

        return draw_and_note


def _frozen(argument):
    if isinstance(argument, Transform):
        return argument.frozen()
    if isinstance(argument, FontProperties):
        return argument.copy()
    return argument


def _style(artist, *properties: str) -> tuple:
    """The artist's properties, each read with its getter (`get_color()`, ...), as text."""
    return tuple(str(getattr(artist, f"get_{name}")()) for name in properties)


def axis_state(axis: Axis, renderer) -> dict:
    """Everything that decides what `axis` draws, as far as the course's figures go (see the
    module's docstring). Equal states draw equal pictures."""
    axes = axis.axes
    major, minor = axis.get_majorticklocs(), axis.get_minorticklocs()
    spines = ("bottom", "top") if axis.axis_name == "x" else ("left", "right")
    return dict(
        canvas=(renderer.width, renderer.height, renderer.dpi, get_hinting_flag()),
        place=tuple(axes.bbox.bounds),
        limits=_limits(axis),
        scale=_scale(axis),
        shown=(axis.get_visible(), axes.axison),
        spines=tuple(str(axes.spines[name].get_position()) for name in spines),
        ticks=(tuple(major), tuple(axis.major.formatter.format_ticks(major)),
               tuple(minor), tuple(axis.minor.formatter.format_ticks(minor)),
               axis.get_ticks_position()),
        # Tick, grid and tick-label styles as set for the whole axis (tick_params, grid), then as
        # each tick object carries them (a single tick label can be styled by hand).
        tick_settings=repr(sorted(axis._major_tick_kw.items()))
        + repr(sorted(axis._minor_tick_kw.items())),
        each_tick=tuple((_style(tick.label1, "color", "alpha", "fontsize", "rotation", "visible"),
                         _style(tick.tick1line, "color", "markersize", "visible"),
                         _style(tick.gridline, "color", "alpha", "linestyle", "visible"))
                        for tick in axis.majorTicks + axis.minorTicks),
        label=(axis.label.get_text(), axis.get_label_position(), axis.labelpad,
               _label_place(axis),
               _style(axis.label, "color", "alpha", "fontproperties", "rotation", "visible",
                      "horizontalalignment", "verticalalignment")),
        offset_text=(axis.major.formatter.get_offset(),
                     _style(axis.offsetText, "color", "alpha", "fontproperties", "visible")),
    )


def _limits(axis: Axis) -> tuple:
    """The axis's limits, and the other axis's limits and scale if a spine of this axis is placed
    at a data value of the other (`set_position("zero")`, `("data", value)`): the spine and its
    ticks then move with them. Otherwise nothing the axis draws depends on the other axis, and a
    slider move that changes only the other one replays this one."""
    axes = axis.axes
    other = axes.yaxis if axis.axis_name == "x" else axes.xaxis
    spines = ("bottom", "top") if axis.axis_name == "x" else ("left", "right")
    positions = [axes.spines[name].get_position() for name in spines]
    own = tuple(axis.get_view_interval())
    if any(place == "zero" or (not isinstance(place, str) and place[0] == "data")
           for place in positions):
        return own, tuple(other.get_view_interval()), str(other.get_transform())
    return own


def _scale(axis: Axis) -> str:
    """The axis's scale as text. A symlog transform has no text of its own (`str` gives its place
    in memory, new at every `set_xscale`), so it is described by its settings: 06's T5 figure
    sets its scale at every move, and the same scale must read the same."""
    transform = axis.get_transform()
    if isinstance(transform, SymmetricalLogTransform):
        return (f"SymmetricalLogTransform(base={transform.base}, "
                f"linthresh={transform.linthresh}, linscale={transform.linscale})")
    return str(transform)


def _label_place(axis: Axis):
    """Where the axis label goes. Placed automatically, only its place along the axis is set
    beforehand: the drawing moves it clear of the tick labels, which the state holds already."""
    x, y = axis.label.get_position()
    if axis._autolabelpos:
        return ("automatic", x if axis.axis_name == "x" else y)
    return ("fixed", x, y)


def _remembered(axis: Axis) -> bool:
    """Whether `axis_state` covers everything this axis can depend on (see the docstring)."""
    axes = axis.axes
    return (axes.name == "rectilinear" and len(axis._get_shared_axis()) == 1
            and not axes.figure._align_label_groups[axis.axis_name].get_siblings(axes)[1:])


class KeptDrawings:
    """The renderer calls of earlier draws, by the state they were drawn from; at most `most`,
    and when one more comes, the one used longest ago goes."""

    def __init__(self, most: int):
        self.most = most
        self.calls: dict[Hashable, list] = {}  # state -> calls, the one used longest ago first

    def replay(self, state: Hashable, renderer) -> bool:
        """Make the calls drawn from `state` again, if kept; return whether they were."""
        calls = self.calls.pop(state, None)
        if calls is None:
            return False
        self.calls[state] = calls  # now the latest used
        for name, gc, args, kwargs in calls:
            getattr(renderer, name)(gc, *args, **kwargs)
        return True

    def keep(self, state: Hashable, calls: list) -> None:
        if len(self.calls) >= self.most:
            del self.calls[next(iter(self.calls))]
        self.calls[state] = calls


class AxisMemory:
    """Draws one axis, replaying the renderer calls of an earlier draw made from the same state.

    It keeps the calls of the last `states_kept` states the axis was drawn in: the last one for
    most axes (a slider move that leaves the axis as it was), more for an axis whose range
    follows a slider (`remember_each_range`)."""

    def __init__(self, axis: Axis, states_kept: int = 1):
        self.axis = axis
        self.drawings = KeptDrawings(states_kept)

    def draw(self, renderer) -> None:
        axis = self.axis
        plain_draw = type(axis).draw  # matplotlib's own Axis.draw (this memory hides it)
        if not isinstance(renderer, TextMemoryRenderer) or not _remembered(axis):
            return plain_draw(axis, renderer)  # another canvas (savefig), or not covered
        state = tuple(axis_state(axis, renderer).values())
        if self.drawings.replay(state, renderer):
            axis.stale = False
            return
        ticks = len(axis.majorTicks), len(axis.minorTicks)
        recorder = CallRecorder(renderer)
        plain_draw(axis, recorder)
        # The calls were made from `state`. Only if the draw made tick objects for new tick
        # places (their styles are part of the state) is it read again: a move that changes
        # the axis pays for each reading, a few tenths of a millisecond per axis.
        if (len(axis.majorTicks), len(axis.minorTicks)) != ticks:
            state = tuple(axis_state(axis, renderer).values())
        self.drawings.keep(state, recorder.calls)


class UnchangingArtistMemory:
    """Draws an artist that changes only in known ways, its `variant`, replaying the renderer
    calls of an earlier draw of the same variant while the canvas and the axes' place on it are
    the same.

    08's legend, at "center right", changes only its marks (shown or not); a number in a table
    (`write_in_cells`) only its words, colour and cell. The function that makes the artist
    vouches that nothing else about it changes (else it makes a new artist)."""

    def __init__(self, artist, variant: Callable[[], Hashable] = lambda: None):
        self.artist = artist
        self.variant = variant
        self.drawings = KeptDrawings(VARIANTS_KEPT)

    def draw(self, renderer) -> None:
        artist = self.artist
        plain_draw = type(artist).draw  # matplotlib's own draw (this memory hides it)
        if not isinstance(renderer, TextMemoryRenderer):
            return plain_draw(artist, renderer)  # another canvas (savefig)
        state = (renderer.width, renderer.height, renderer.dpi, get_hinting_flag(),
                 tuple(artist.axes.bbox.bounds), self.variant())
        if self.drawings.replay(state, renderer):
            artist.stale = False
            return
        recorder = CallRecorder(renderer)
        plain_draw(artist, recorder)
        self.drawings.keep(state, recorder.calls)


def remember_unchanging(artist, variant: Callable[[], Hashable] = lambda: None) -> None:
    """Let the slider canvas replay `artist` (see `UnchangingArtistMemory`): for an artist that
    costs much to draw (a legend lays out its entries at every draw) and never changes, or
    changes only in what `variant()` returns (a drawing is kept for each)."""
    artist.draw = UnchangingArtistMemory(artist, variant).draw


def remember_axes(figure) -> None:
    """Give every axis of `figure` an `AxisMemory` (once; axes added later get theirs next time).

    The memory's draw is set on the axis object itself: Python looks there before the class, so
    the axes that draws it calls the memory, which calls matplotlib's Axis.draw when it must."""
    for axes in figure.axes:
        for each in (axes, *axes.child_axes):  # child axes: e.g. a colour bar inset in the axes
            for axis in (each.xaxis, each.yaxis):
                if "draw" not in vars(axis):
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


def remember_each_range(*axes) -> None:
    """Give each axis an `AxisMemory` that keeps its last `RANGES_KEPT` states, not just one: for
    an axis whose range follows a slider (the batch's width, the head size).

    A slider canvas replays an axis only if it is drawn exactly as at some kept draw. Here every
    move changes the range, so an axis that remembers its last state only would draw in full,
    ticks, labels and all, at every move: most of a redraw. Keeping each state, a range the
    slider comes back to is replayed, as is a range shown again with other ticks (06's clip
    distance k moves a tick, not the range). The slider canvas gives an axis its own memory
    only if it has none (`remember_axes`): set here, this one is kept."""
    for axis in axes:
        axis.draw = AxisMemory(axis, states_kept=RANGES_KEPT).draw
