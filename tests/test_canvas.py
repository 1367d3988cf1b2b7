"""helpers.plots.canvas: the slider canvas skips work (text bitmaps, unchanged axes) and still
draws exactly what plain Agg draws, on every slider of the course."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import ipywidgets
import matplotlib
import numpy as np
import pytest
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure

matplotlib.use("Agg")

from helpers.plots.canvas import (AxisMemory, SliderCanvas, remember_each_range,  # noqa: E402
                                  remember_unchanging)
from helpers.widgets import SLIDER_DPI, png_bytes, slider_renderer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from redraw import find_widgets  # noqa: E402

WIDGETS = {widget.name: widget for widget in find_widgets()}


def plain_png(fig: Figure) -> bytes:
    """The figure drawn by matplotlib's own Agg canvas, with no memory of earlier draws."""
    fig.set_dpi(SLIDER_DPI)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return png_bytes(np.asarray(canvas.buffer_rgba())[..., :3])


def one_step(control, value, direction: int):
    """Where an arrow key takes `control` from `value` (clamped to its range)."""
    if isinstance(control, ipywidgets.Checkbox):
        return not value
    if isinstance(control, ipywidgets.FloatLogSlider):
        exponent = np.log10(value) + direction * control.step
        return float(10 ** np.clip(exponent, control.min, control.max))
    return type(value)(np.clip(value + direction * control.step, control.min, control.max))


def walk(widget, moves: int = 8) -> list[dict]:
    """The widget's benchmark settings, then arrow-key moves of one slider at a time."""
    rng = random.Random(widget.name)
    settings = widget.settings()
    current = dict(settings[0])
    for _ in range(moves):
        name = rng.choice(sorted(widget.controls))
        current = {**current, name: one_step(widget.controls[name], current[name],
                                             rng.choice((-1, 1)))}
        settings.append(current)
    return settings


@pytest.mark.parametrize("name", sorted(WIDGETS))
def test_every_slider_figure_is_drawn_as_plain_agg_draws_it(name, monkeypatch):
    """Kept text bitmaps, replayed axes and in-place updates together change no pixel."""
    widget = WIDGETS[name]
    render = slider_renderer(widget.plot)
    for setting in walk(widget):
        assert render(**setting) == plain_png(widget.plot(**setting)), setting


@pytest.mark.parametrize("name", ["03 learned_table_at_step", "05 plot_rotation",
                                  "09 plot_query_attention"])
def test_sliders_that_keep_their_axes_replay_them(name, count_calls):
    """On these sliders most moves leave the axes as they were: most axes are replayed."""
    widget = WIDGETS[name]
    render = slider_renderer(widget.plot)
    asked = count_calls(AxisMemory, "draw")  # every axis the slider canvas draws
    drawn = count_calls(Axis, "draw")        # those matplotlib drew in full
    render(**widget.settings()[0])
    asked.clear()
    drawn.clear()
    for setting in walk(widget)[len(widget.settings()):]:  # the arrow-key moves
        render(**setting)
    assert asked and len(drawn) < len(asked) / 2, (len(drawn), len(asked))


@pytest.mark.parametrize("name, drawn_in_full", [("06 plot_shaw_index", []),
                                                  ("06 plot_t5_buckets", []),
                                                  ("08 plot_scaled_frequencies", []),
                                                  ("09 plot_grid_change", []),
                                                  ("10 plot_packed_mask", []),
                                                  ("10 plot_padded_positions", ["y"])])
def test_sliders_whose_range_follows_them_replay_each_range_shown_before(name, drawn_in_full,
                                                                          axis_calls, monkeypatch):
    """On these sliders most moves change the range of axes (lesson 10's row length, 06's T and
    k, 08's head size and factor, 09's grid side), and those axes keep a drawing of each state
    they have shown (`remember_each_range`): back at a setting shown before, no axis is drawn in
    full. Only 10's batch's prompt names, which change at a same range, are."""
    widget = WIDGETS[name]
    render = slider_renderer(widget.plot)
    # Each setting shown once, after the widest (the last), which makes every tick object an axis
    # will have: a range first drawn with fewer would be drawn in full once more.
    for setting in widget.settings()[-1:] + widget.settings():
        render(**setting)
    for setting in widget.settings():  # and again
        drawn = axis_calls("draw")  # the axes matplotlib draws in full
        png = render(**setting)
        monkeypatch.undo()
        assert set(drawn) <= set(drawn_in_full), setting
        assert png == plain_png(widget.plot(**setting)), setting


def line_figure(limit: float = 10.0, label: str = "x") -> Figure:
    fig = Figure(figsize=(3, 2), dpi=SLIDER_DPI)
    fig.subplots_adjust(left=0.3, bottom=0.35)  # room for labels that move away from the axes
    ax = fig.add_subplot()
    ax.plot([0, limit], [0, 1])
    ax.set_xlim(0, limit)
    ax.set_xlabel(label)
    ax.grid(alpha=0.3)
    return fig


def test_an_unchanged_axis_is_replayed_not_drawn_again(count_calls):
    fig = line_figure()
    canvas = SliderCanvas(fig)
    canvas.draw()
    first = bytes(canvas.buffer_rgba())
    assert all(isinstance(vars(axis)["draw"].__self__, AxisMemory)
               for axis in (fig.axes[0].xaxis, fig.axes[0].yaxis))
    axis_draws = count_calls(Axis, "draw")
    fig.axes[0].lines[0].set_ydata([1, 0])  # new data, same axes
    canvas.draw()
    assert axis_draws == []
    fig.axes[0].lines[0].set_ydata([0, 1])
    canvas.draw()
    assert bytes(canvas.buffer_rgba()) == first


@pytest.mark.parametrize("change", [
    lambda ax: ax.set_xlim(0, 20),                       # limits, so tick places
    lambda ax: ax.set_xlabel("another label"),           # the axis label
    lambda ax: ax.xaxis.label.set_fontsize(14),          # its style
    lambda ax: ax.xaxis.set_ticks([0, 5]),               # the ticks themselves
    lambda ax: ax.xaxis.set_major_formatter("{x:.1f}"),  # their labels only
    lambda ax: ax.tick_params(axis="x", labelsize=12),   # the tick style
    lambda ax: ax.tick_params(axis="x", colors="red"),
    lambda ax: ax.grid(False),                           # grid lines off
    lambda ax: ax.set_xscale("log"),                     # the scale
    lambda ax: ax.set_position([0.3, 0.3, 0.5, 0.5]),    # the place on the canvas
    lambda ax: ax.xaxis.set_label_position("top"),
    lambda ax: ax.xaxis.set_visible(False),
    lambda ax: ax.set_xlabel("x", labelpad=20),           # the label's distance
    lambda ax: ax.set_xlabel("x", loc="right"),            # its place along the axis
    lambda ax: ax.xaxis.label.set_alpha(0.3),
    lambda ax: ax.xaxis.label.set_horizontalalignment("left"),
    lambda ax: ax.xaxis.set_label_coords(0.2, -0.3),       # placed by hand
    lambda ax: ax.spines["bottom"].set_position(("outward", 10)),
    lambda ax: ax.get_xticklabels()[1].set_color("red"),  # one tick label styled by hand
    lambda ax: ax.xaxis.get_major_ticks()[1].gridline.set_visible(False),
    lambda ax: ax.set_xlim(1e6, 1e6 + 10),                 # an offset text appears...
])
def test_a_changed_axis_is_drawn_again(change):
    fig = line_figure()
    canvas = SliderCanvas(fig)
    canvas.draw()
    change(fig.axes[0])
    canvas.draw()
    assert png_bytes(np.asarray(canvas.buffer_rgba())[..., :3]) == plain_png(fig)


def test_an_axis_at_zero_follows_the_other_axis():
    """A spine placed at zero moves with the other axis's limits, and its ticks with it."""
    def figure_at(left: float) -> Figure:
        fig = line_figure()
        fig.axes[0].set_xlim(left, 10)
        fig.axes[0].spines["left"].set_position("zero")
        return fig

    fig = figure_at(-5)
    canvas = SliderCanvas(fig)
    canvas.draw()
    fig.axes[0].set_xlim(-2, 10)  # the y axis is not touched, yet it moves
    canvas.draw()
    assert png_bytes(np.asarray(canvas.buffer_rgba())[..., :3]) == plain_png(figure_at(-2))


def test_axes_the_memory_does_not_cover_are_drawn_as_plain_agg_draws_them():
    """Polar axes, and axes whose labels are aligned with another's, are never replayed."""
    polar = Figure(figsize=(3, 3), dpi=SLIDER_DPI)
    ax = polar.add_subplot(projection="polar")
    ax.plot([0, 1, 2], [1, 2, 1])
    aligned = Figure(figsize=(3, 4), dpi=SLIDER_DPI)
    top, bottom = aligned.subplots(2, 1)
    top.set_ylabel("top")
    bottom.set_ylabel("bottom")
    aligned.align_ylabels([top, bottom])
    for fig, change in ((polar, lambda: ax.set_theta_offset(0.5)),
                        (aligned, lambda: top.set_ylim(0, 1000))):
        canvas = SliderCanvas(fig)
        canvas.draw()
        change()
        canvas.draw()
        assert png_bytes(np.asarray(canvas.buffer_rgba())[..., :3]) == plain_png(fig)


def test_other_canvases_draw_the_figure_as_if_it_had_never_been_on_a_slider(tmp_path):
    """After a slider draw, savefig (here to SVG) writes exactly what it wrote before."""
    def svg(fig) -> bytes:
        path = tmp_path / "figure.svg"
        with matplotlib.rc_context({"svg.hashsalt": "course"}):
            fig.savefig(path, format="svg", metadata={"Date": None})
        return path.read_bytes()

    fig = line_figure()
    fig.axes[0].set_title("centred title")
    before = svg(fig)
    SliderCanvas(fig).draw()
    assert svg(fig) == before


def test_kept_text_bitmaps_spare_freetype_and_change_no_pixel(count_calls):
    fig = line_figure()
    fig.axes[0].set_xticks([0, 5, 10])  # fixed ticks: the same labels wherever the axes are
    fig.axes[0].set_yticks([0, 1])
    canvas = SliderCanvas(fig)
    canvas.draw()
    layouts = count_calls(RendererAgg, "_prepare_font")
    fig.axes[0].set_position([0.2, 0.25, 0.7, 0.6])  # every text drawn again, elsewhere
    canvas.draw()
    assert layouts == []
    assert png_bytes(np.asarray(canvas.buffer_rgba())[..., :3]) == plain_png(fig)


def test_rotated_and_coloured_texts_come_out_as_plain_agg_draws_them():
    fig = line_figure(label="a label")
    fig.axes[0].set_ylabel("turned", rotation=90, color="tab:red")
    fig.axes[0].text(2, 0.5, "at 30 degrees", rotation=30)
    fig.axes[0].set_title("$x^2$ math and text")
    canvas = SliderCanvas(fig)
    for _ in range(2):  # the second draw takes every text from memory
        canvas.draw()
        assert png_bytes(np.asarray(canvas.buffer_rgba())[..., :3]) == plain_png(fig)


@pytest.mark.parametrize("name", sorted(WIDGETS))
def test_every_slider_redraw_reuses_its_figure_and_axes(name):
    """A move updates the figure it drew before: no new figure, no axes built again."""
    widget = WIDGETS[name]
    first, *moves = widget.settings()
    figure = widget.plot(**first)
    axes = list(figure.axes)
    for setting in moves:
        assert widget.plot(**setting, figure=figure) is figure, setting
        assert figure.axes[:len(axes)] == axes, setting


def test_an_axis_is_replayed_when_only_the_other_axis_changes(axis_calls):
    """A slider move that rescales y (08's factor) leaves the x axis as it was: replayed."""
    fig = line_figure()
    canvas = SliderCanvas(fig)
    canvas.draw()
    drawn = axis_calls("draw")
    fig.axes[0].set_ylim(0, 50)
    canvas.draw()
    assert drawn == ["y"]
    assert png_bytes(np.asarray(canvas.buffer_rgba())[..., :3]) == plain_png(fig)


def test_a_changed_axis_state_is_read_once_per_draw(count_calls):
    """Reading an axis's state costs; a move that changes the axis reads it once, not twice."""
    import helpers.plots.canvas as canvas_module

    fig = line_figure()
    fig.axes[0].set_xticks([0, 5, 10])  # as many ticks before and after the move
    canvas = SliderCanvas(fig)
    canvas.draw()
    reads = count_calls(canvas_module, "axis_state")
    fig.axes[0].set_xlim(0, 20)  # both axes' states are read; x is drawn again, y replayed
    canvas.draw()
    assert len(reads) == 2
    assert png_bytes(np.asarray(canvas.buffer_rgba())[..., :3]) == plain_png(fig)


def test_an_unchanging_legend_is_replayed_and_drawn_as_plain_agg_draws_it(count_calls):
    """08's legend stays the same from move to move: the slider canvas replays it."""
    from matplotlib.legend import Legend

    fig = line_figure()
    fig.axes[0].lines[0].set_label("a line")
    remember_unchanging(fig.axes[0].legend(loc="center right"))
    canvas = SliderCanvas(fig)
    canvas.draw()
    layouts = count_calls(Legend, "draw")
    fig.axes[0].lines[0].set_ydata([1, 0])  # new data, the same legend at the same place
    canvas.draw()
    assert layouts == []
    assert png_bytes(np.asarray(canvas.buffer_rgba())[..., :3]) == plain_png(fig)
    layouts.clear()  # (plain_png drew it too)
    fig.axes[0].set_position([0.2, 0.2, 0.5, 0.5])  # the axes move: the legend is drawn again
    canvas.draw()
    assert layouts == ["draw"]
    assert png_bytes(np.asarray(canvas.buffer_rgba())[..., :3]) == plain_png(fig)


def drawn_png(canvas) -> bytes:
    return png_bytes(np.asarray(canvas.buffer_rgba())[..., :3])


def test_an_axis_remembering_each_range_replays_every_state_it_has_shown(axis_calls):
    """An axis given `remember_each_range` keeps a drawing per state, not just the last: back
    at a range, or at a range shown before with other ticks (06's k moves a tick), it is
    replayed, and the picture is plain Agg's."""
    fig = line_figure()
    ax = fig.axes[0]
    remember_each_range(ax.xaxis)
    canvas = SliderCanvas(fig)
    states = [lambda: (ax.set_xlim(0, 10), ax.set_xticks([0, 5, 10])),
              lambda: (ax.set_xlim(0, 20), ax.set_xticks([0, 10, 20])),
              lambda: ax.set_xticks([0, 4, 20])]  # the same range, other ticks
    for show in states:
        show()
        canvas.draw()
    drawn = axis_calls("draw")
    for show in states:
        show()
        canvas.draw()
        assert drawn == []
        assert drawn_png(canvas) == plain_png(fig)
        drawn.clear()  # (plain_png drew both axes)


def test_a_symlog_axis_set_anew_with_the_same_settings_is_replayed(axis_calls, monkeypatch):
    """06's T5 figure sets its symlog scale at every move: the same settings read as the same
    scale (a symlog transform's own text is its place in memory), other settings do not."""
    fig = line_figure()
    ax = fig.axes[0]
    ax.set_xscale("symlog", linthresh=2)
    canvas = SliderCanvas(fig)
    canvas.draw()
    drawn = axis_calls("draw")
    ax.set_xscale("symlog", linthresh=2)
    canvas.draw()
    assert drawn == []
    ax.set_xscale("symlog", linthresh=4)
    canvas.draw()
    assert drawn == ["x"]
    monkeypatch.undo()
    assert drawn_png(canvas) == plain_png(fig)


def test_an_unchanging_artist_keeps_a_drawing_per_variant(count_calls):
    """08's legend shows its marks for small heads and none for big ones: each keeps its own
    drawing, so a move between them replays the legend instead of laying it out again."""
    from matplotlib.legend import Legend

    fig = line_figure()
    fig.axes[0].lines[0].set(label="a line", marker=".")
    legend = fig.axes[0].legend(loc="center right")
    remember_unchanging(legend, variant=lambda: legend.get_lines()[0].get_marker())
    canvas = SliderCanvas(fig)
    for marker in (".", "None"):
        legend.get_lines()[0].set_marker(marker)
        canvas.draw()
    layouts = count_calls(Legend, "draw")
    for marker in (".", "None"):
        legend.get_lines()[0].set_marker(marker)
        canvas.draw()
        assert layouts == []
        assert drawn_png(canvas) == plain_png(fig)
        layouts.clear()  # (plain_png drew it)
