"""How long the sliders of notebooks 03 and 04 take to redraw: plot function + PNG at dpi 80.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/redraw_absolute.py [--rounds 5] [--check]

Every slider setting listed below is drawn and rendered exactly as a slider move does it
(`figure_png(plot(**setting))`). The target is under 100 ms for the heaviest setting, dimension
512 and length 512. The machine is shared, so every figure is timed right after a reference
figure (a 512 x 512 heatmap with a colour bar, about 84 ms on a quiet machine of this kind, see
COURSE_GUIDE.md), and the report gives each figure's median time and median ratio to that
reference: a ratio below 100/84 = 1.19 means "under 100 ms on a quiet machine", whatever the load.
"""

import argparse
import itertools
import statistics
import sys
import time

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from helpers.plots.absolute import (plot_dot_product_matrix, plot_learned_rows,  # noqa: E402
                                    plot_shift_rotation, plot_sinusoidal_table,
                                    plot_wavelength_spectrum)
from helpers.widgets import figure_png  # noqa: E402

TARGET_MS = 100
REFERENCE_QUIET_MS = 84  # COURSE_GUIDE.md: 512x512 heatmap + colour bar, no tight bounding box

torch.manual_seed(0)
_BEFORE = 0.02 * torch.randn(64, 32)
_SNAPSHOTS = [_BEFORE + step / 150 * torch.randn(64, 32) * (torch.arange(64) < 32)[:, None]
              for step in range(0, 151, 10)]

# The notebooks' sliders: their default, their extremes, and dimension 512 x length 512.
SETTINGS = {
    "03 learned table (step slider)": (
        lambda step: plot_learned_rows(_SNAPSHOTS[step // 10], 32, f"after {step} steps",
                                       limit=1.0, initial=_BEFORE),
        [dict(step=s) for s in (0, 150)]),
    "04 sinusoidal table": (plot_sinusoidal_table, [
        dict(dim=d, length=n, base=b)
        for d, n, b in [(128, 128, 1e4), (2, 1, 10.0), (512, 1, 1e6), (2, 512, 10.0),
                        (512, 512, 10.0), (512, 512, 1e4), (512, 512, 1e6)]]),
    "04 wavelength spectrum": (
        lambda dim, length, base: plot_wavelength_spectrum(dim, length, bases=(base,)),
        [dict(dim=d, length=n, base=b)
         for d, n, b in [(512, 512, 1e4), (2, 1, 10.0), (512, 4096, 1e6), (512, 1, 10.0)]]),
    "04 dot products": (plot_dot_product_matrix, [
        dict(dim=d, length=n, base=b)
        for d, n, b in [(128, 128, 1e4), (2, 2, 10.0), (512, 512, 10.0), (512, 512, 1e4)]]),
    "04 shift rotation": (
        lambda offset: plot_shift_rotation(offset=offset, dim=16),
        [dict(offset=k) for k in (-12, 3, 12)]),
}


def reference_figure() -> Figure:
    data = np.random.default_rng(0).standard_normal((512, 512))
    fig = Figure(figsize=(7, 4.6))
    ax = fig.add_subplot()
    image = ax.imshow(data, aspect="auto", cmap="RdBu_r")
    fig.colorbar(image, ax=ax)
    ax.set_xlabel("dimension")
    ax.set_ylabel("position")
    return fig


def time_ms(draw) -> float:
    start = time.perf_counter()
    figure_png(draw())
    return 1e3 * (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if a redraw is slower than 100/84 x the reference figure")
    args = parser.parse_args()

    jobs = []
    for name, (plot, settings) in SETTINGS.items():
        for setting in settings:
            label = ", ".join(f"{key}={value:g}" for key, value in setting.items())
            jobs.append((name, label, lambda plot=plot, setting=setting: plot(**setting)))
    for _, _, draw in jobs:  # warm-up: fonts, colour maps, first-call costs
        figure_png(draw())
    figure_png(reference_figure())
    milliseconds = {(name, label): [] for name, label, _ in jobs}
    ratios = {(name, label): [] for name, label, _ in jobs}
    references = []
    for _ in range(args.rounds):
        for name, label, draw in jobs:
            # The reference right before each figure: both see the same load on a busy machine.
            reference = time_ms(reference_figure)
            ms = time_ms(draw)
            references.append(reference)
            milliseconds[(name, label)].append(ms)
            ratios[(name, label)].append(ms / reference)
    median_ms = {key: statistics.median(values) for key, values in milliseconds.items()}
    median_ratio = {key: statistics.median(values) for key, values in ratios.items()}

    print(f"{args.rounds} rounds; the reference figure took {statistics.median(references):.0f} ms "
          f"here (median), about {REFERENCE_QUIET_MS} ms on a quiet machine.")
    print("Per figure, its slowest setting (by median ratio to the reference drawn just before "
          "it).\n")
    print(f"{'figure':32s} {'slowest setting':34s} {'ms here':>8s} {'/ ref':>6s} {'quiet ms':>9s}")
    worst_ratio = 0.0
    for name in SETTINGS:
        keys = [key for key in median_ratio if key[0] == name]
        key = max(keys, key=median_ratio.get)
        worst_ratio = max(worst_ratio, median_ratio[key])
        print(f"{name:32s} {key[1]:34s} {median_ms[key]:8.0f} {median_ratio[key]:6.2f} "
              f"{median_ratio[key] * REFERENCE_QUIET_MS:9.0f}")
    key = ("04 sinusoidal table", "dim=512, length=512, base=10000")
    print(f"\nsinusoidal table at dimension 512, length 512: {median_ms[key]:.0f} ms here, "
          f"{median_ratio[key]:.2f} x reference, "
          f"about {median_ratio[key] * REFERENCE_QUIET_MS:.0f} ms on a quiet machine")
    if args.check and worst_ratio > TARGET_MS / REFERENCE_QUIET_MS:
        print(f"slowest redraw is {worst_ratio:.2f} x the reference: "
              f"over the {TARGET_MS} ms target")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
