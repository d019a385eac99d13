"""Other CPU, page_pool: each described CPU's published page_pool points [TSC cycles] predicted by a profile
derived from its machine description and the *other* CPUs' data only.

A thin protocol over :func:`skbmodel.evidence.derivation.leave_one_out.leave_one_cpu_out` (the derivation:
:mod:`skbmodel.evidence.derivation.derive`); naive: the other CPUs' mean ns, the same on every CPU.  Runs under a boot
option the derivation does not price are listed, not predicted
(:data:`skbmodel.evidence.derivation.leave_one_out.UNPRICED_CONDITIONS`).  It also reports the coverage of every
family's leave-one-CPU-out intervals before and after the derivation error is carried into the derived
constants (:func:`skbmodel.evidence.derivation.leave_one_out.derivation_coverage`).  Its text also states the
"other CPU" rows
of SLUB, zeroing and the page allocator (:mod:`skbmodel.evidence.protocols.other_cpu_costs`).
"""
from __future__ import annotations

from ..derivation import leave_one_out
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs, pct

NAME = "other-cpu"
TITLE = "each described CPU's page_pool points, derived from its description and the other CPUs' data"


def run(inputs: Inputs) -> dict:
    other_cpu = leave_one_out.leave_one_cpu_out(inputs.df)
    return dict(summary=leave_one_out.summarise(other_cpu), other_cpu=other_cpu,
                other_cpu_unpriced=leave_one_out.unpriced_points(inputs.df),
                derivation_coverage=leave_one_out.derivation_coverage(inputs.df))


def format(rep: dict) -> list[str]:
    lines = ["", "Leave one CPU out (protocol \"other CPU\"): each described CPU's points predicted by a "
             "profile derived from its machine description and the other CPUs' data "
             "(`skbmodel.evidence.derivation.derive`); "
             "naive: the other CPUs' mean ns, the same on every CPU", ""]
    for s in rep["summary"]:
        if s["protocol"] == leave_one_out.PROTOCOL:
            claim = ("" if s.get("claim", True) else
                     f" No accuracy claim: fewer than {leave_one_out.MIN_CPUS_FOR_CLAIM} CPUs of one kernel era.")
            lines.append(f"{s['subsystem']}: {s['points']} points on {', '.join(s['cpus'])}: MAPE {pct(s['mape'])} "
                         f"(naive {pct(s['baseline_mape'])}); 90 % intervals hold {pct(s['coverage'])} of the "
                         f"points, median relative half-width {pct(s['median_rel_half_width'])}.{claim}")
    lines += ["", "Derivation error in the derived constants' spread (`skbmodel.evidence.derivation.leave_one_out."
              "with_derivation_error`): each leave-one-CPU-out point's 90 % interval as the pages show it, on the "
              "profile derived without its CPU; before: the derived constants' own spread; after: each raised to "
              "the rms of ln(derived / measured) of its family's points on the other CPUs (the shipped derived "
              "profiles: of every CPU) and uncorrelated with the base profile's fitted constants. Goal 80–95 %; "
              "the point values are the same both ways", "",
              "| family | points | MAPE | coverage before | median half-width before | coverage after | "
              "median half-width after | intervals narrowed |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['family']} | {r['points']} | {pct(r['mape'])} | {pct(r['coverage_before'])} | "
              f"±{pct(r['median_rel_half_width_before'])} | {pct(r['coverage_after'])} | "
              f"±{pct(r['median_rel_half_width_after'])} | {r['narrowed']} |"
              for r in rep.get("derivation_coverage", [])]
    lines += [""] + leave_one_out.format_points(rep["other_cpu"])
    return lines + [""] + leave_one_out.format_unpriced(rep["other_cpu_unpriced"])
