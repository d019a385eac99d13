"""The carried constants' relative sd: where the old figure (skbmodel.evidence.derivation.opcounts.transfer_spread) came
from, the move that replaced it (skbmodel.evidence.derivation.carry.carry_spread), and the intervals before and after.

    python benchmarks/transfer_spread.py [--markdown] [profile ...]

Prints (1) every residual behind ``transfer_spread``: the constant, the CPU left out, its record's
kernel, ``ln(measured / predicted)``, the mean kernel-year gap to the records that predict it and the
kernel drift the derivation itself gives that gap (``kernel_drift`` ^ 2 x years); (2) the summary:
rms, the rms with that drift taken out, the same-era residuals alone; (3) the same-era carry of measured
kernel code (``carry_residuals``: the page_pool costs of the measured CPUs, as core cycles, carried
unchanged as a path base is) and its rms, the move now used; (4) the 90 % intervals (linearised, as the
pages show them) of the headline outputs of the profiles asked for (default: every shipped profile but
the E5-1650 v4's two) before, with the archived version of the same values (model 0.3.0: each carry
adding ``transfer_spread`` linearly, a constant carried twice getting two moves), and after, with the
shipped profile (one move of ``carry_spread`` on log scale).  ``--markdown``: (4) as the table of
docs/intervals.md.  Nothing is written.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skbmodel import model, uncertainty  # noqa: E402
from skbmodel.machine import description, era  # noqa: E402
from skbmodel.evidence.derivation import carry, opcounts, pp_counts  # noqa: E402
from skbmodel.machine.profile import available_profiles, load_profile, profile_version  # noqa: E402

#: (page, extra state, outputs): the headline outputs of the veth and cpumap pages and the path cost
CASES = (("veth", {}, ("veth.mpps", "path.ns_per_packet")),
         ("cpumap", {"path": "cpumap"}, ("cpumap.src_mpps", "cpumap.dst_mpps")),
         ("cpumap/cross", {"path": "cpumap", "numa": "cross"}, ("cpumap.src_mpps", "cpumap.dst_mpps")))


def residuals(exclude=()):
    """``[(constant, cpu, kernel, ln error, mean year gap, drift variance)]`` as transfer_spread sees them."""
    train_all = opcounts.cost_training(exclude)
    s_cpu = pp_counts.spread(pp_counts.training(exclude=exclude))[0]
    drifts = {sub: opcounts.kernel_drift(exclude, sub, train_all) for sub in {v[0]
                                                                              for v in opcounts.COST_MODEL.values()}}
    out = []
    for k, recs in train_all.items():
        if len({t["uarch"] for t in recs}) < 2 or not opcounts.COST_MODEL[k][2]:
            continue
        drift = drifts[opcounts.COST_MODEL[k][0]][0]
        for cpu in sorted({t["uarch"] for t in recs}):
            rest = [t for t in recs if t["uarch"] != cpu]
            for t in (t for t in recs if t["uarch"] == cpu):
                pred = opcounts.derive_cost(k, description.load(cpu), t["kernel"], rest, s_cpu, drift)["core"]
                gap = float(np.mean([abs(era.year_of(t["kernel"]) - era.year_of(r["kernel"])) for r in rest]))
                out.append((k, cpu, t["kernel"], math.log(t["core"] / pred), gap, drift ** 2 * gap))
    return out


def before_after(pid: str):
    """``[(case, output, value, before (lo, hi), after (lo, hi))]`` of profile ``pid``: the archived version of
    its current values (the sds of model 0.3.0) against the shipped profile, linearised 90 % intervals."""
    now = load_profile(pid)
    old = load_profile(f"{pid}@{profile_version(pid)}")
    rows = []
    for case, extra, outs in CASES:
        if extra.get("numa") == "cross" and now.numa_nodes == 1:
            continue
        p = {**model.default_params(pid), **extra}
        f, iv_old = uncertainty.evaluate_with_intervals(p, old, outs)
        _, iv_new = uncertainty.evaluate_with_intervals(p, now, outs)
        for o in outs:
            rows.append((case, o, float(np.asarray(f[o])), tuple(float(np.asarray(x)) for x in iv_old[o]),
                         tuple(float(np.asarray(x)) for x in iv_new[o])))
    return rows


def _iv(lo_hi, digits: int) -> str:
    return f"{lo_hi[0]:.{digits}f} to {lo_hi[1]:.{digits}f}"


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    markdown = "--markdown" in args
    profiles = [a for a in args if not a.startswith("--")] or [p for p in available_profiles()
                                                               if not p.startswith("e5-1650v4")]
    if markdown:
        print("| profile | page | output | value | before (0.3.0) | after |\n|---|---|---|---|---|---|")
        for pid in profiles:
            for case, o, f, old, new in before_after(pid):
                d = 0 if o.endswith("_ns_per_packet") or o == "path.ns_per_packet" else 2
                print(f"| {pid} | {case} | {o} | {f:.{d}f} | {_iv(old, d)} | {_iv(new, d)} |")
        return 0
    rows = residuals()
    e = np.array([r[3] for r in rows])
    dvar = np.array([r[5] for r in rows])
    print(f"{'constant':28} {'left out':13} {'kernel':6} {'ln err':>7} {'gap y':>6} {'drift var':>9}")
    for k, cpu, kern, err, gap, dv in rows:
        print(f"{k:28} {cpu:13} {kern:6} {err:+7.3f} {gap:6.1f} {dv:9.3f}")
    n_const = len({r[0] for r in rows})
    print(f"\n{len(rows)} residuals of {n_const} constants ({len({round(abs(x), 6) for x in e})} distinct |ln err|: "
          "a constant two CPUs measure gives the same residual twice, mirrored)")
    print(f"rms ln error (transfer_spread): {np.sqrt(np.mean(e ** 2)):.3f}")
    print(f"mean ln err^2 {np.mean(e ** 2):.3f} against the derivation's own kernel drift over the same gaps "
          f"{np.mean(dvar):.3f}: CPU part sqrt(max(0, diff)) = {math.sqrt(max(0.0, np.mean(e ** 2 - dvar))):.3f}")
    same = [r for r in rows if r[4] <= 2.0]
    print(f"same-era residuals (gap <= 2 years): {len(same)}: " + ", ".join(f"{r[0]} {r[1]} {r[3]:+.3f}" for r in same))
    carried = carry.carry_residuals()
    s_new, n_new, who = carry.carry_spread()
    print(f"\nsame-era page_pool costs carried unchanged as core cycles (carry_residuals: {n_new} residuals, "
          f"profiles {who}):")
    for to, frm, k, err in carried:
        print(f"  {to:20} <- {frm:20} {k:17} {err:+.3f}")
    print(f"rms ln error (carry_spread, the move now used) {s_new:.3f}; without the EPYC 9684X (booted without a "
          f"return thunk) {np.sqrt(np.mean([r[3] ** 2 for r in carry if 'epyc' not in r[0] + r[1]])):.3f}")
    print(f"\n90 % intervals, linearised: before (archived version, model 0.3.0: linear, a move per carry) and "
          f"after (one move of {s_new:.2f} on log scale)")
    print(f"{'profile':22} {'page':13} {'output':20} {'value':>8}  {'before':>20}  {'after':>20}")
    for pid in profiles:
        for case, o, f, old, new in before_after(pid):
            print(f"{pid:22} {case:13} {o:20} {f:8.3f}  {_iv(old, 2):>20}  {_iv(new, 2):>20}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
