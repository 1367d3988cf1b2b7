"""Redraw time of notebook 05's sliders: figure function + PNG render, as a slider move costs.

    OMP_NUM_THREADS=1 python benchmarks/redraw_rope.py

Target: under 100 ms per redraw (figure function + PNG render with
`helpers.widgets.figure_png`, 80 dpi). Each slider setting is drawn a few times, each time
right after a yardstick figure that the course guide timed on this machine (a 512 x 512 heatmap
with a colour bar, 84 ms). Printed: median wall-clock and CPU time, and the median ratio of CPU
time to the yardstick's, which stays meaningful when other programs share the cores and slow
everything down; ratio x 84 ms is the redraw time on a quiet machine.
"""

import statistics
import time

import matplotlib
import torch

matplotlib.use("Agg")

from helpers.plots.rope import (plot_cos_tables, plot_long_term_decay,  # noqa: E402
                                plot_rotation, plot_wavelengths)
from helpers.widgets import figure_png  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

TARGET_MS = 100
GUIDE_MS = 84  # the course guide's time for `heatmap_512`
REPEATS = 5

# The settings the notebook's sliders reach: defaults and both ends of every range.
SETTINGS = {
    plot_rotation: [dict(query_position=5, key_position=2, frequency=0.4),
                    dict(query_position=0, key_position=15, frequency=0.05),
                    dict(query_position=15, key_position=0, frequency=1.5)],
    plot_cos_tables: [dict(length=64, dim=32, base=10000.0),
                      dict(length=8, dim=4, base=10.0),
                      dict(length=1024, dim=256, base=1e7)],
    plot_long_term_decay: [dict(dim=128, base=10000.0),
                           dict(dim=8, base=100.0),
                           dict(dim=512, base=1e7)],
    plot_wavelengths: [dict(dim=128, base=10000.0, length=4096),
                       dict(dim=8, base=100.0, length=16),
                       dict(dim=512, base=1e7, length=131072)],
}


def timed(make, settings) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one redraw (CPU time leaves out waiting for the cores)."""
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    figure_png(make(**settings))
    return time.perf_counter() - start_wall, time.process_time() - start_cpu


def empty_axes() -> Figure:
    """Yardstick: the cheapest figure with axes."""
    fig = Figure(figsize=(9, 4.2))
    fig.subplots().plot([0, 1], [0, 1])
    return fig


def heatmap_512() -> Figure:
    """Yardstick: a 512 x 512 heatmap with a colour bar, which the course guide timed at
    GUIDE_MS on this machine when it was quiet."""
    fig = Figure(figsize=(6, 5))
    ax = fig.subplots()
    image = ax.imshow(torch.rand(512, 512, generator=torch.Generator().manual_seed(0)).numpy())
    fig.colorbar(image, ax=ax)
    return fig


def main() -> None:
    figure_png(plot_rotation())  # the first figure pays for matplotlib's font cache
    print(f"{'':64s} {'wall':>8s} {'cpu':>8s} {'cpu / yardstick':>16s}")
    worst_wall = worst_ratio = 0.0
    for plot, settings_list in [*SETTINGS.items(), (empty_axes, [{}])]:
        for settings in settings_list:
            # Alternate with the yardstick, so that both see the same load on a shared machine.
            rounds = [(timed(plot, settings), timed(heatmap_512, {})) for _ in range(REPEATS)]
            wall = 1e3 * statistics.median(plot_time[0] for plot_time, _ in rounds)
            cpu = 1e3 * statistics.median(plot_time[1] for plot_time, _ in rounds)
            ratio = statistics.median(p[1] / y[1] for p, y in rounds)
            if plot is not empty_axes:
                worst_wall, worst_ratio = max(worst_wall, wall), max(worst_ratio, ratio)
            shown = ", ".join(f"{key}={value:g}" for key, value in settings.items())
            print(f"{plot.__name__:22s} {shown:41s} {wall:6.1f} ms {cpu:5.1f} ms {ratio:16.2f}")
    print(f"\nworst median redraw here and now: {worst_wall:.0f} ms wall-clock "
          f"(target < {TARGET_MS} ms)")
    print(f"worst CPU time relative to the yardstick: {worst_ratio:.2f}, i.e. about "
          f"{worst_ratio * GUIDE_MS:.0f} ms at the speed at which the course guide timed it "
          f"({GUIDE_MS} ms): {'met' if worst_ratio * GUIDE_MS < TARGET_MS else 'MISSED'}")


if __name__ == "__main__":
    main()
