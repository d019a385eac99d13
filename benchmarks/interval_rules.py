"""Count the interval rules each profile breaks over 200 random states (fixed seed): a cost, rate or share
below 0, a cost or rate (drops aside) past 10 x its value, a value outside its interval, drops above the
source rate's own upper bound.

    python benchmarks/interval_rules.py        # in any checkout: it imports the one it is run in

One line per profile: its id, its NUMA nodes (0: not stated) and the rules broken, each with its count of
states (and the largest ratio or bound where it has one).  A one-node machine is asked the same node only.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.getcwd())
from skbmodel import schema, uncertainty  # noqa: E402
from skbmodel.machine.profile import available_profiles, load_profile  # noqa: E402
from skbmodel.params import MODEL_PARAMS  # noqa: E402

N = 200


def random_grid(n: int = N, seed: int = 7) -> dict:
    """``n`` random states over every scenario parameter's range and choices."""
    rng = np.random.default_rng(seed)
    grid = {}
    for p in MODEL_PARAMS:
        if p.key in ("cpu", "ghz", "noise_ns"):
            continue
        if p.kind == "choice":
            grid[p.key] = np.array(p.choices)[rng.integers(len(p.choices), size=n)]
        else:
            x = rng.uniform(p.lo, p.hi, n)
            grid[p.key] = np.round(x) if p.kind == "int" else x
    return grid


def broken(values: dict, iv: dict) -> list[tuple]:
    """The rules the intervals ``iv`` of ``values`` break."""
    out = []
    for o, (lo, hi) in iv.items():
        kind = schema.BY_NAME[o].kind
        f = np.asarray(values[o], dtype=float)
        lo, hi = np.broadcast_to(lo, f.shape), np.broadcast_to(hi, f.shape)
        if kind in ("cost", "rate", "share") and np.any(lo < 0):
            out.append((o, "below 0", int(np.sum(lo < 0))))
        if kind in ("cost", "rate") and o != "cpumap.drop_mpps":
            ratio = np.where(f > 0, hi / np.where(f > 0, f, 1.0), 0.0)
            if np.any(ratio > 10):
                out.append((o, "past 10x", int(np.sum(ratio > 10)), float(ratio.max())))
        outside = ~((lo <= f + 1e-9) & (f <= hi + 1e-9))
        if np.any(outside):
            out.append((o, "outside", int(np.sum(outside))))
    drop_hi, src_hi = iv["cpumap.drop_mpps"][1], iv["cpumap.src_mpps"][1]
    above = np.asarray(drop_hi) > np.asarray(src_hi) + 1e-9
    if np.any(above):
        out.append(("cpumap.drop_mpps", "above the source's bound", int(np.sum(above)), float(np.max(drop_hi))))
    return out


def main() -> None:
    grid = random_grid()
    for pid in available_profiles():
        prof = load_profile(pid)
        g = dict(grid)
        if prof.numa_nodes == 1:
            g["numa"] = np.array(["same"] * N)
        values, iv = uncertainty.evaluate_with_intervals(g, prof)
        print(pid, prof.numa_nodes, broken(values, iv))


if __name__ == "__main__":
    main()
