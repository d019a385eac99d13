"""Prediction intervals: cost of each method against a plain evaluate, and how well the two agree.

    python benchmarks/bench_intervals.py [--points 200] [--repeat 30] [--samples 1000]

On a sweep of ``--points`` states (bulk, VETH_XDP_BATCH, bytes zeroed, drop_batch and recycle ratio
moving together, every output), for each shipped profile, in one run: the median time of
``model.evaluate``, of ``uncertainty.intervals(method="linear")`` and of
``uncertainty.intervals(method="sampling")``; then the ratio of the two methods' half-widths
(linear / sampling) over every state of the smooth outputs (costs in cycles and ns; the rates, a
reciprocal, and the runs count, a ceiling, are listed apart).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skbmodel import constant_sets, model, uncertainty  # noqa: E402
from skbmodel.machine.profile import available_profiles, load_profile  # noqa: E402

SMOOTH_UNITS = ("cycles", "ns")


def sweep(cpu: str, n: int) -> dict:
    p = model.default_params(cpu)
    t = np.linspace(0.0, 1.0, n)
    p.update(bulk=np.round(1 + 255 * t), xdp_batch=np.round(1 + 63 * t), zero_bytes=np.round(8 + 1016 * t),
             drop_batch=np.round(1 + 1023 * t), pp_recycle=t)
    return p


def timed(fn, repeat: int) -> float:
    fn()  # warm-up
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--samples", type=int, default=uncertainty.N_SAMPLES)
    args = ap.parse_args(argv)
    print(f"{args.points}-point sweep, every output ({len(model.OUTPUT_UNITS)}), median of {args.repeat} runs")
    for cpu in available_profiles():
        prof = load_profile(cpu)
        p = sweep(cpu, args.points)
        n_unc = len(constant_sets.uncertain_constants(prof)[0])
        t_plain = timed(lambda: model.evaluate(p, prof), args.repeat)
        t_lin = timed(lambda: uncertainty.intervals(p, prof, method="linear"), args.repeat)
        t_mc = timed(lambda: uncertainty.intervals(p, prof, method="sampling", n_samples=args.samples),
                     max(3, args.repeat // 10))
        print(f"\nprofile {cpu} ({n_unc} uncertain constants)")
        print(f"  plain evaluate            {t_plain:8.2f} ms")
        print(f"  linearised (1+2x{n_unc} sets)  {t_lin:8.2f} ms  ({t_lin / t_plain:.1f}x plain)")
        print(f"  sampling ({args.samples} draws)     {t_mc:8.2f} ms  ({t_mc / t_plain:.1f}x plain)")
        lin = uncertainty.intervals(p, prof, method="linear")
        mc = uncertainty.intervals(p, prof, method="sampling", n_samples=args.samples)
        groups = {"smooth (cycles, ns)": [], "rates (Mpps, Krps, %)": [], "other": []}
        for o, unit in model.OUTPUT_UNITS.items():
            a = np.broadcast_to(uncertainty.half_width(lin[o]), (args.points,))
            b = np.broadcast_to(uncertainty.half_width(mc[o]), (args.points,))
            ok = b > 1e-12 * np.maximum(1.0, np.abs(a))
            if not ok.any():
                continue
            key = ("smooth (cycles, ns)" if unit in SMOOTH_UNITS and o != "veth.zero_delta_runs" else
                   "rates (Mpps, Krps, %)" if unit in ("Mpps", "Krps", "%") else "other")
            groups[key].append((o, a[ok] / b[ok]))
        print("  half-width linear / sampling:")
        for key, items in groups.items():
            if not items:
                continue
            r = np.concatenate([x for _, x in items])
            worst = max(items, key=lambda it: np.max(np.abs(it[1] - 1)))
            print(f"    {key:<22} median {np.median(r):.3f}, 5-95 % {np.quantile(r, 0.05):.3f}-"
                  f"{np.quantile(r, 0.95):.3f}, worst {worst[0]} {worst[1][np.argmax(np.abs(worst[1] - 1))]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
