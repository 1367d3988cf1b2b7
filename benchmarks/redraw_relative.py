"""How long notebook 06's sliders take to redraw: plot function + PNG at dpi 80, per setting.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/redraw_relative.py

The target is under 100 ms per redraw (the slowest setting, not the average). The machine is
shared, so the script also times a reference figure, a 512×512 heatmap with a colour bar (about
84 ms on a quiet machine of this kind, see COURSE_GUIDE.md), and reports each redraw as a
multiple of it: a ratio below 1 means "faster than the reference", whatever the load.
"""

import itertools
import statistics
import time

import matplotlib
import numpy as np

matplotlib.use("Agg")

from helpers.plots.relative import plot_alibi, plot_shaw_index, plot_t5_buckets  # noqa: E402
from helpers.widgets import figure_png  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

TARGET_MS = 100
REPEATS = 3

# The sliders' ranges in the notebook, at their extremes and in between.
SETTINGS = {
    "plot_shaw_index": (plot_shaw_index, [
        dict(seq_len=t, max_distance=k)
        for t, k in itertools.product([4, 8, 10, 32, 64], [0, 3, 16])]),
    "plot_t5_buckets": (plot_t5_buckets, [
        dict(num_buckets=b, max_distance=d, bidirectional=bi, seq_len=t)
        for b, d, bi, t in itertools.product([4, 32, 64], [40, 128, 512], [True, False],
                                             [16, 128, 512])
        if d > (b // 2 if bi else b) // 2]),
    "plot_alibi": (plot_alibi, [
        dict(num_heads=h, seq_len=t) for h, t in itertools.product([1, 6, 8, 12, 32, 64],
                                                                   [16, 512, 2048])]),
}


def time_redraw(plot, settings) -> float:
    """One redraw (plot + PNG at dpi 80), in milliseconds."""
    start = time.perf_counter()
    figure_png(plot(**settings), dpi=80)
    return (time.perf_counter() - start) * 1000


def reference_heatmap() -> Figure:
    fig = Figure(figsize=(6, 5))
    ax = fig.subplots()
    image = ax.imshow(np.random.default_rng(0).normal(size=(512, 512)), cmap="RdBu_r")
    fig.colorbar(image, ax=ax)
    return fig


def measure(plot, settings) -> tuple[float, float]:
    """(best redraw ms, best reference ms), timed alternately so both see the same load."""
    ours, reference = [], []
    for _ in range(REPEATS):
        ours.append(time_redraw(plot, settings))
        reference.append(time_redraw(reference_heatmap, {}))
    return min(ours), min(reference)


def main() -> None:
    time_redraw(reference_heatmap, {})  # warm-up: fonts, caches
    for name, (plot, settings_list) in SETTINGS.items():
        time_redraw(plot, settings_list[0])
        results = [(*measure(plot, s), s) for s in settings_list]
        ratios = [ms / reference for ms, reference, _ in results]
        slowest = max(range(len(results)), key=lambda n: ratios[n])
        ms, reference, worst = results[slowest]
        median_ms = statistics.median(r[0] for r in results)
        print(f"{name:16s} {len(results):3d} settings  median {median_ms:5.1f} ms"
              f" = {statistics.median(ratios):.2f}× reference;  slowest {ms:5.1f} ms = "
              f"{ratios[slowest]:.2f}× reference ({reference:.0f} ms) at {worst}  "
              f"{'ok' if ms < TARGET_MS else f'over {TARGET_MS} ms on this load'}")


if __name__ == "__main__":
    main()
