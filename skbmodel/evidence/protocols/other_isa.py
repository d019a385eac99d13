"""Other instruction set: the arm64 server's published page_pool points [ns] predicted from the x86 CPUs'
instruction counts alone, priced with what the kernel does differently on arm64.

A thin protocol over :func:`skbmodel.evidence.derivation.leave_one_out.leave_one_isa_out`, run twice: blind (the
description's figures) and with the run's own time_bench ``atomic_inc`` and ``spin_lock`` baselines
(``in-run``); the translation: :func:`skbmodel.evidence.derivation.pp_counts.isa_cost_cycles`.  One CPU: no accuracy is
claimed.
"""
from __future__ import annotations

from ..derivation import leave_one_out
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs, pct

NAME = "other-isa"
TITLE = "the arm64 server's page_pool points, predicted from the x86 CPUs' instruction counts"


def run(inputs: Inputs) -> dict:
    other_isa = {"blind": leave_one_out.leave_one_isa_out(inputs.df),
                 "in-run": leave_one_out.leave_one_isa_out(inputs.df, inrun=True)}
    return dict(summary=leave_one_out.summarise_isa(other_isa["blind"], leave_one_out.ISA_PROTOCOL)
                + leave_one_out.summarise_isa(other_isa["in-run"], leave_one_out.ISA_INRUN_PROTOCOL),
                other_isa=other_isa)


def format(rep: dict) -> list[str]:
    lines = ["", f"Leave one instruction set out (protocols \"{leave_one_out.ISA_PROTOCOL}\" and "
             f"\"{leave_one_out.ISA_INRUN_PROTOCOL}\"): the arm64 server's page_pool points (ns) predicted from the "
             "x86 CPUs' instruction counts, priced with what differs on arm64 "
             "(`skbmodel.evidence.derivation.pp_counts.isa_cost_cycles`: the per-CPU statistics' atomics and "
             "preempt-count "
             "toggles); "
             "no arm64 profile or page_pool row is read. The in-run variant also reads the run's own "
             "time_bench atomic_inc and spin_lock baselines (the same machine and kernel). Untranslated: the "
             "x86 counts at the core's width and locked-op latency alone (the derivation before the "
             "translation); naive: the x86 CPUs' mean ns", ""]
    for s in rep["summary"]:
        if s["protocol"] in (leave_one_out.ISA_PROTOCOL, leave_one_out.ISA_INRUN_PROTOCOL):
            lines.append(f"{s['protocol']}: {s['points']} points on {', '.join(s['cpus'])}: MAPE {pct(s['mape'])} "
                         f"(untranslated {pct(s['untranslated_mape'])}, naive {pct(s['baseline_mape'])}); 90 % "
                         f"intervals hold {pct(s['coverage'])} of the points, median relative half-width "
                         f"{pct(s['median_rel_half_width'])}. One CPU: no accuracy is claimed.")
    for name, pts in rep.get("other_isa", {}).items():
        lines += ["", f"{name}:", ""] + leave_one_out.format_isa_points(pts)
    return lines
