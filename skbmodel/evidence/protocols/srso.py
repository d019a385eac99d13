"""Kernel configuration, SRSO return thunk: the EPYC 9684X's runs booted with SRSO's safe-RET return thunk,
predicted from the same kernel's ``spec_rstack_overflow=ibpb`` run.

The study of the count of :mod:`skbmodel.machine.kconfig`: the ibpb run plus the kernel function returns of each
loop, counted in the v6.13 source (``skbmodel.machine.kconfig.RETURNS_V613``, bracketed over the compiler's
inlining choices), times the run's own price of one return [TSC cycles] (its time_bench_sample function
call, 14 - 3 cycles); naive: the ibpb run unchanged.
"""
from __future__ import annotations

import numpy as np

from ...machine import kconfig
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs

NAME = "srso"
TITLE = "runs under SRSO's safe-RET return thunk, predicted from the same kernel's ibpb run"

#: the safe-ret points the count predicts out of sample: corpus test suffix -> the count's table
_R = kconfig.RETURNS_V613
SRSO_TESTS = {"tasklet-fast": _R["pp_fast_cycles"], "nosoftirq-01": _R["pp_fast_cycles"],
              "tasklet-ring": _R["pp_ring_cycles"], "nosoftirq-02": kconfig.RETURNS_V613_RING_PROCESS,
              "tasklet-slow": _R["page_slow_cycles"], "nosoftirq-03": _R["page_slow_cycles"],
              "spinlock": kconfig.RETURNS_V613_SPINLOCK}
#: the DMA-fix kernel (v6.13-rc6 + the unmerged page_pool DMA-fix series v7) is not counted line by line;
#: its author's perf report found page_pool_alloc_netmem no longer inlined there: one more return on each
#: page_pool path (the locking baseline is untouched)
SRSO_DMAFIX_EXTRA_RETURNS = 1.0
SRSO_SERIES = "pp-epyc9684x-2025-02"


def srso_predictions(df) -> list[dict]:
    """The safe-ret rows of the EPYC 9684X runs predicted from the same kernel's ibpb-booted row plus the
    counted returns x the v6.13 run's own function-call pair; the naive prediction is the ibpb row."""
    v = df.set_index("id")["value"].astype(float)
    call = f"{SRSO_SERIES}-v613-%s-sample-function-call"
    thunk, plain = v[call % "srso"], v[call % "ibpb"]
    out = []
    for kernel in ("v613", "dmafix"):
        for test, rows in SRSO_TESTS.items():
            n, lo, hi = kconfig.n_returns(rows)
            if kernel == "dmafix" and test != "spinlock":
                n, lo, hi = (x + SRSO_DMAFIX_EXTRA_RETURNS for x in (n, lo, hi))
            ibpb, measured = v[f"{SRSO_SERIES}-{kernel}-ibpb-{test}"], v[f"{SRSO_SERIES}-{kernel}-srso-{test}"]
            pred, lo_c, hi_c = (ibpb + kconfig.return_thunk_cycles(np.array([n, lo, hi]), thunk, plain)).tolist()
            out.append({"kernel": kernel, "test": test, "returns": n, "returns_low": lo, "returns_high": hi,
                        "ibpb_cycles": ibpb, "predicted_cycles": pred, "low_cycles": lo_c, "high_cycles": hi_c,
                        "measured_cycles": measured, "error": pred / measured - 1, "naive_error": ibpb / measured - 1})
    return out


SRSO_PROTOCOL = "kernel config (SRSO return thunk)"


def summarise_srso(points: list[dict]) -> list[dict]:
    """The out-of-sample row of :func:`srso_predictions`' page_pool points (the spinlock baseline is a
    check of the count, not a page_pool cost): MAPE against the naive (the ibpb row unchanged), and how
    many measured costs fall inside the bracket of the count (``low_cycles``-``high_cycles``)."""
    pts = [p for p in points if p["test"] != "spinlock"]
    if not pts:
        return []
    e = np.abs([p["error"] for p in pts])
    inside = [p["low_cycles"] <= p["measured_cycles"] <= p["high_cycles"] for p in pts]
    half = [(p["high_cycles"] - p["low_cycles"]) / 2.0 / p["predicted_cycles"] for p in pts]
    return [dict(subsystem="page_pool", protocol=SRSO_PROTOCOL, points=len(pts), mape=float(np.mean(e)),
                 max_error=float(np.max(e)), baseline_mape=float(np.mean(np.abs([p["naive_error"] for p in pts]))),
                 coverage=float(np.mean(inside)), median_rel_half_width=float(np.median(half)))]


def format_srso(points: list[dict]) -> list[str]:
    """The table of :func:`srso_predictions` for docs/validation.md."""
    lines = ["| kernel | test | returns (bracket) | ibpb | predicted (bracket) | measured safe-ret | error "
             "| naive error |", "|---|---|---|---:|---|---:|---:|---:|"]
    for p in points:
        lines.append(f"| {p['kernel']} | {p['test']} | {p['returns']:.2f} ({p['returns_low']:.2f}-"
                     f"{p['returns_high']:.2f}) | {p['ibpb_cycles']:.0f} | {p['predicted_cycles']:.1f} "
                     f"({p['low_cycles']:.0f}-"
                     f"{p['high_cycles']:.0f}) | {p['measured_cycles']:.0f} | {p['error'] * 100:+.1f} % | "
                     f"{p['naive_error'] * 100:+.1f} % |")
    return lines


def run(inputs: Inputs) -> dict:
    srso = srso_predictions(inputs.df)
    return dict(summary=summarise_srso(srso), srso=srso)


def format(rep: dict) -> list[str]:
    lines = ["", "Kernel configuration (protocol \"kernel config (SRSO return thunk)\"): the EPYC 9684X's runs "
             "booted with SRSO's safe-RET return thunk, predicted as the same kernel's spec_rstack_overflow=ibpb run "
             "plus the kernel function returns of each loop, counted in the v6.13 source "
             "(`skbmodel.machine.kconfig.RETURNS_V613`, "
             "bracketed over the compiler's inlining choices), times the run's own price of one return (its "
             "time_bench_sample function call, 14 - 3 cycles); naive: the ibpb run unchanged.  The spinlock row "
             "checks the count and is not in the figures.", ""]
    return lines + format_srso(rep["srso"])
