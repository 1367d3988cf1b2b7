"""How fast is `helpers.apply_rope` on the hot path of attention?

    pip install -r benchmarks/requirements.txt     # the peer implementation, benchmark only
    python benchmarks/apply_rope_speed.py          # 1 thread, then all cores
    python benchmarks/apply_rope_speed.py --threads 1 --check

Times one call on queries of shape [8, 8, 1024, 64] (batch, heads, positions, head size),
float32, side by side in one process: candidates take turns in every round, so a busy machine
slows them alike, and each figure is the median over the rounds. Targets: `apply_rope` takes
at most half the time of lucidrains' `rotate_queries_or_keys` and at most 4x the time of one
elementwise pass over the tensor (`x * 2.0`). Both a contiguous tensor and the
non-contiguous view that splitting heads with a transpose produces are measured.
"""

import argparse
import os
import statistics
import time

import torch

from helpers import apply_rope

SHAPE = (8, 8, 1024, 64)
TARGET_VS_PEER, TARGET_VS_PASS = 0.5, 4.0


def median_ms(candidates: dict, rounds: int, warmups: int) -> dict:
    for run in candidates.values():
        for _ in range(warmups):
            run()
    times = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, run in candidates.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: 1e3 * statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count()])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--warmups", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args()

    from rotary_embedding_torch import RotaryEmbedding  # optional peer, see requirements.txt

    torch.manual_seed(0)
    batch, heads, length, head_dim = SHAPE
    peer = RotaryEmbedding(head_dim)  # interleaved pairs, base 10,000: the same rotation
    tensors = {
        "contiguous": torch.randn(SHAPE),
        "transposed": torch.randn(batch, length, heads, head_dim).transpose(1, 2),
    }
    for x in tensors.values():  # same numbers as the peer before timing anything
        torch.testing.assert_close(apply_rope(x), peer.rotate_queries_or_keys(x),
                                   atol=1e-4, rtol=0)  # angles ~1000 rad in float32

    missed = []
    print(f"torch {torch.__version__}, shape {list(SHAPE)} float32, "
          f"median of {args.rounds} rounds")
    for threads in args.threads:
        torch.set_num_threads(threads)
        for kind, x in tensors.items():
            positions = torch.arange(length)  # explicit positions: tables rebuilt every call
            ms = median_ms({
                "x * 2.0": lambda: x * 2.0,
                "rotary-embedding-torch": lambda: peer.rotate_queries_or_keys(x),
                "apply_rope": lambda: apply_rope(x),
                "apply_rope, half layout": lambda: apply_rope(x, layout="half"),
                "apply_rope, tables not cached": lambda: apply_rope(x, positions=positions),
            }, args.rounds, args.warmups)
            print(f"\n{threads} thread(s), {kind} input")
            print(f"  {'':31s} {'ms':>7s} {'/ x*2.0':>8s} {'/ peer':>7s}")
            for name, value in ms.items():
                print(f"  {name:31s} {value:7.2f} {value / ms['x * 2.0']:8.2f} "
                      f"{value / ms['rotary-embedding-torch']:7.2f}")
            for name in ("apply_rope", "apply_rope, half layout"):
                vs_peer = ms[name] / ms["rotary-embedding-torch"]
                vs_pass = ms[name] / ms["x * 2.0"]
                if vs_peer > TARGET_VS_PEER or vs_pass > TARGET_VS_PASS:
                    missed.append(f"{threads} thread(s), {kind}, {name}: "
                                  f"{vs_peer:.2f}x peer, {vs_pass:.2f}x x*2.0")
    print(f"\ntargets: <= {TARGET_VS_PEER}x the peer and <= {TARGET_VS_PASS}x x*2.0")
    print("all met" if not missed else "missed:\n  " + "\n  ".join(missed))
    if args.check and missed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
