"""Redrawing a figure in place, for sliders: keep the axes, replace what is drawn on them.

Building a figure's axes (ticks, spines, fonts measured for the first time) costs more than
drawing the figure, so the plot functions that sliders call take `figure=None`. Given the figure
they returned on the previous move, they empty it with `clear_plotted` and draw the new numbers
onto the same axes; images are updated with `show_image`, so that a colour bar attached to one
keeps working. `helpers.widgets.slider_renderer` hands the figure back; the tests check that a
reused figure renders exactly what a new one would.
"""

from __future__ import annotations

import functools

import numpy as np
from matplotlib import colormaps
from matplotlib.collections import PolyCollection
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.transforms import nonsingular

from .canvas import remember_unchanging


def one_axes_figure(size: tuple[float, float], **margins) -> Figure:
    """A new figure with one axes placed by fixed margins (a layout engine would lay everything
    out again at every redraw)."""
    fig = Figure(figsize=size)
    fig.add_subplot()
    fig.subplots_adjust(**margins)
    return fig


def clear_plotted(figure: Figure, keep_texts_in=()) -> Figure:
    """Remove the lines, markers, bars, patches, text and legends of every axes; keep the axes
    (with their scales, tick settings and labels) and any images (see `show_image`).

    The texts of the axes in `keep_texts_in` are kept too, for a plot function that gives them
    new words rather than making them again (06's Shaw table, whose cells hold numbers)."""
    for ax in figure.axes:
        if ax.get_label() == "<colorbar>":
            continue  # a colour bar's axes belong to the colour bar, which updates itself
        for container in list(ax.containers):  # bars: remove the group and its rectangles
            container.remove()
        texts = [] if ax in keep_texts_in else ax.texts
        for artist in [*ax.lines, *ax.collections, *ax.patches, *texts]:
            artist.remove()
        if ax.legend_ is not None:
            ax.legend_.remove()
        ax.relim()  # forget the old data's limits, so that autoscaling fits the new data
    return figure


def show_image(ax, data: np.ndarray, *, vmin: float | None = None, vmax: float | None = None,
               extent=None, cmap=None, **imshow_options) -> AxesImage:
    """`ax.imshow(data, ...)`, or, if `ax` shows an image already, that image with new numbers.

    The cells are coloured here and handed to matplotlib as RGBA bytes: scaling a picture is
    several times cheaper than colouring the scaled-up numbers at every redraw. The image keeps
    the colour map and scale all the same, so a colour bar made from it is right. Without `vmin`
    and `vmax` the scale spans the data (masked, NaN and infinite cells aside; masked cells take
    the colour map's "bad" colour). Other options (interpolation, aspect, ...) apply when the
    image is made and are then kept.
    """
    colour_map = colormaps.get_cmap(cmap)  # None: matplotlib's default colour map
    if vmin is None and vmax is None:
        finite = np.ma.masked_invalid(data)
        vmin, vmax = float(finite.min()), float(finite.max())
    colours = colour_map(Normalize(vmin, vmax)(data), bytes=True)
    return show_colours(ax, colours, colour_map, vmin, vmax, extent=extent, **imshow_options)


def show_colours(ax, colours: np.ndarray, cmap, vmin: float, vmax: float, *, extent=None,
                 **imshow_options) -> AxesImage:
    """`show_image` for cells coloured already (RGBA bytes, coloured with `cmap` from `vmin` to
    `vmax`): for a picture whose cells take few distinct values, colouring those values and
    picking each cell's colour from them is cheaper than colouring every cell."""
    colour_map = colormaps.get_cmap(cmap)
    rows, columns = np.shape(colours)[:2]
    if vmin == vmax:
        # A colour bar widens an empty scale itself, as `nonsingular` does here, and redraws once
        # per end it moves: three redraws per move. Widened first, it redraws once. (The cells
        # are coloured already: the scale they were coloured with is not changed.)
        vmin, vmax = nonsingular(vmin, vmax, expander=0.1)
    if not ax.images:
        image = ax.imshow(colours, extent=extent, **imshow_options)
        image.set_cmap(colour_map)
        image.set_clim(vmin, vmax)
        return image
    image = ax.images[0]
    image.set_data(colours)
    if extent is None:  # what imshow chooses: one unit per cell, centred on whole numbers
        low, high = (-0.5, rows - 0.5) if image.origin == "lower" else (rows - 0.5, -0.5)
        extent = (-0.5, columns - 0.5, low, high)
    image.set_extent(extent)
    # Each change of colours or scale also redraws an attached colour bar: change only what differs.
    if image.get_cmap() != colour_map:
        image.set_cmap(colour_map)
    if (image.norm.vmin, image.norm.vmax) != (vmin, vmax):
        image.set_clim(vmin, vmax)
    return image


def boxes(ax, left, bottom, width, height, **style) -> PolyCollection:
    """Rectangles (arrays or single numbers, broadcast) drawn as one artist.

    `ax.bar` and `Rectangle` patches make one artist per box, and a redraw pays for each; one
    collection of polygons draws dozens of boxes for the price of one.
    """
    left, bottom, width, height = np.broadcast_arrays(*(np.asarray(value, dtype=float)
                                                       for value in (left, bottom, width, height)))
    right, top = left + width, bottom + height
    corners = np.stack([np.stack(corner, axis=-1) for corner in
                        ((left, bottom), (right, bottom), (right, top), (left, top))], axis=-2)
    collection = PolyCollection(corners.reshape(-1, 4, 2), **{"linewidth": 0, **style})
    ax.add_collection(collection)
    return collection


def write_in_cells(ax, cells: list[tuple[float, float, str, str]], fontsize: float = 7) -> None:
    """Write each (column, row, text, colour) centred in its cell of `ax`, and nothing else.

    The texts already in `ax` (from a slider's previous moves) are given the new words, places
    and colours, and those not needed now are hidden, kept for a later move: making a text costs
    several times more than changing one, and a table of numbers has dozens. Laying a text out
    costs too: the slider canvas replays each text shown before (`remember_unchanging`)."""
    kept = list(ax.texts)
    for text, (column, row, words, colour) in zip(kept, cells):
        text.set(x=column, y=row, text=words, color=colour, visible=True)
    for text in kept[len(cells):]:
        text.set_visible(False)
    for column, row, words, colour in cells[len(kept):]:
        text = ax.text(column, row, words, ha="center", va="center", fontsize=fontsize,
                       color=colour)
        remember_unchanging(text, variant=functools.partial(_cell_text_look, text))


def _cell_text_look(text) -> tuple:
    """All that `write_in_cells` changes about a text (its words, colour, cell, whether it shows),
    and what else moves the cell on the canvas: its axes' limits and scales."""
    ax = text.axes
    return (text.get_text(), text.get_color(), text.get_position(), text.get_visible(),
            tuple(ax.viewLim.bounds), ax.get_xscale(), ax.get_yscale())
