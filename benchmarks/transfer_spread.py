"""Where the carried constants' relative sd (skbmodel.evidence.derive.transfer_spread) comes from, and the
intervals a same-era move would give instead.

    python benchmarks/transfer_spread.py

Prints (1) every residual behind ``transfer_spread``: the constant, the CPU left out, its record's
kernel, ``ln(measured / predicted)``, the mean kernel-year gap to the records that predict it and the
kernel drift the derivation itself gives that gap (``kernel_drift`` ^ 2 x years); (2) the summary:
rms, the rms with that drift taken out, the same-era residuals alone; (3) the same-era carry of measured kernel
code paths (the page_pool costs of the measured CPUs, as core cycles, carried unchanged as a path base
is); (4) the 90 % intervals of the headline rates on the profiles asked for (default epyc-9684x,
xeon-gold-6140, derived-zen4-genoa; veth and cpumap) as shipped (linear propagation, sd 0.69 x value),
with the same 0.69 as a log-scale sd (Monte Carlo, log-normal carried constants), and with the move of
(3) on log scale and one move per constant however often it was carried.  Computed in memory: no
profile file is written.
"""
from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skbmodel import model, uncertainty  # noqa: E402
from skbmodel.links import state as st  # noqa: E402
from skbmodel.machine import description, era  # noqa: E402
from skbmodel.evidence import derive  # noqa: E402
from skbmodel.machine.profile import load_profile  # noqa: E402

MOVE_TEXT = re.compile(r"relative sd [0-9.]+: its own ([0-9.]+) and ([0-9.]+) for another CPU")
CASES = (("veth", {}, ("veth.mpps",)),
         ("cpumap", {}, ("cpumap.src_mpps", "cpumap.dst_mpps")),
         ("cpumap", {"numa": "cross"}, ("cpumap.src_mpps", "cpumap.dst_mpps")))


def residuals(exclude=()):
    """``[(constant, cpu, kernel, ln error, mean year gap, drift variance)]`` as transfer_spread sees them."""
    train_all = derive.cost_training(exclude)
    s_cpu = derive.spread(derive.training(exclude=exclude))[0]
    drifts = {sub: derive.kernel_drift(exclude, sub, train_all) for sub in {v[0] for v in derive.COST_MODEL.values()}}
    out = []
    for k, recs in train_all.items():
        if len({t["uarch"] for t in recs}) < 2 or not derive.COST_MODEL[k][2]:
            continue
        drift = drifts[derive.COST_MODEL[k][0]][0]
        for cpu in sorted({t["uarch"] for t in recs}):
            rest = [t for t in recs if t["uarch"] != cpu]
            for t in (t for t in recs if t["uarch"] == cpu):
                pred = derive.derive_cost(k, description.load(cpu), t["kernel"], rest, s_cpu, drift)["core"]
                gap = float(np.mean([abs(era.year_of(t["kernel"]) - era.year_of(r["kernel"])) for r in rest]))
                out.append((k, cpu, t["kernel"], math.log(t["core"] / pred), gap, drift ** 2 * gap))
    return out


def carry_unchanged_residuals():
    """``[(to, from, cost, ln(core_to / core_from))]``: each measured CPU's page_pool costs in core cycles
    against every other CPU's of the same kernel era (``training()['eras']``), carried unchanged, as a
    path base is.  A constant measured on five CPUs gives each pair twice, mirrored."""
    tr = derive.training()
    out = []
    for t in tr:
        for k in t["core"]:
            for u in tr:
                if u["uarch"] != t["uarch"] and u["eras"][k] == t["eras"][k]:
                    out.append((t["profile"], u["profile"], k, math.log(t["core"][k] / u["core"][k])))
    return out


def _own_and_move(prof, k, c):
    """``(own relative sd, True)`` of a carried constant (its first profile's own where it was carried
    twice), or ``(None, False)`` for a constant that is not carried to another CPU."""
    m = MOVE_TEXT.search(c.source)
    if not m or not c.value:
        return None, False
    own = float(m.group(1))
    there = c.source.split("; there: ", 1)[1] if "; there: " in c.source else ""
    origin = re.match(r"carried from (\S+) ", there)
    if origin:  # carried already: the sd it brings holds a move; take its first profile's own
        o = load_profile(origin.group(1)).constants[k]
        own = o.stderr / o.value if o.value else 0.0
    return own, True


def sampled_interval(prof, params, outs, s_move: float, n: int = 4000, seed: int = 1):
    """90 % interval by Monte Carlo: each carried constant drawn log-normal, ``c exp(N(0, hypot(own,
    s_move)))`` (one move, however often it was carried), every other uncertain constant normal with its
    stderr, all independent (the fitted constants' correlations are left out: an approximation)."""
    names, sd, _ = uncertainty._relevant(prof, outs)
    rng = np.random.default_rng(seed)
    draws = {}
    for name, s in zip(names, sd):
        c = prof.constants[name]
        own, carried = _own_and_move(prof, name, c)
        z = rng.standard_normal(n)
        draws[name] = c.value * np.exp(math.hypot(own, s_move) * z) if carried else c.value + s * z
    out = model.evaluate(params, prof, constants={**prof.values(), **draws}, outputs=outs)
    return {o: tuple(np.quantile(np.asarray(out[o], dtype=float), (0.05, 0.95))) for o in outs}


def main(profiles=("epyc-9684x", "xeon-gold-6140", "derived-zen4-genoa")) -> int:
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
    s_old = derive._move_spread(())[0]
    carry = carry_unchanged_residuals()
    ce = np.array([r[3] for r in carry])
    s_new = float(np.sqrt(np.mean(ce ** 2)))
    print(f"\nsame-era page_pool costs carried unchanged as core cycles ({len(carry)} residuals, "
          f"{len({r[0] for r in carry})} profiles):")
    for to, frm, k, err in carry:
        print(f"  {to:20} <- {frm:20} {k:17} {err:+.3f}")
    print(f"rms ln error {s_new:.3f}; without the EPYC 9684X (booted without a return thunk) "
          f"{np.sqrt(np.mean([r[3] ** 2 for r in carry if 'epyc' not in r[0] + r[1]])):.3f}")
    print(f"\nmove as shipped {s_old:.3f} (linear); proposed {s_new:.3f} on log scale, one move per constant\n")
    print(f"{'profile':20} {'page':13} {'output':16} {'value':>7}  {'shipped (linear)':>18}  "
          f"{'0.69 on log scale':>18}  {'proposed':>18}")
    for pid in profiles:
        prof = load_profile(pid)
        for page, extra, outs in CASES:
            if extra.get("numa") == "cross" and prof.numa_nodes == 1:
                continue
            p = {**st.scenario(st.defaults(pid)), **extra}
            f0, iv0 = uncertainty.evaluate_with_intervals(p, prof, outs)
            iv1 = sampled_interval(prof, p, outs, s_old)
            iv2 = sampled_interval(prof, p, outs, s_new)
            for o in outs:
                cols = ["{:6.2f} to {:6.2f}".format(*(float(np.asarray(x)) for x in iv[o])) for iv in (iv0, iv1, iv2)]
                print(f"{pid:20} {page + ('/cross' if extra else ''):13} {o:16} {float(np.asarray(f0[o])):7.3f}  "
                      + "  ".join(f"{c:>18}" for c in cols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(tuple(sys.argv[1:]) or ("epyc-9684x", "xeon-gold-6140", "derived-zen4-genoa")))
