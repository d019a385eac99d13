"""Other CPU, page_pool: each described CPU's published page_pool points [TSC cycles] predicted by a profile
derived from its machine description and the *other* CPUs' data only.

A thin protocol over :func:`skbmodel.evidence.leave_one_out.leave_one_cpu_out` (the derivation:
:mod:`skbmodel.evidence.derive`); naive: the other CPUs' mean ns, the same on every CPU.  Runs under a boot
option the derivation does not price are listed, not predicted
(:data:`skbmodel.evidence.leave_one_out.UNPRICED_CONDITIONS`).  Its text also states the "other CPU" rows
of SLUB, zeroing and the page allocator (:mod:`skbmodel.evidence.protocols.other_cpu_costs`).
"""
from __future__ import annotations

from .. import leave_one_out
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs, pct

NAME = "other-cpu"
TITLE = "each described CPU's page_pool points, derived from its description and the other CPUs' data"


def run(inputs: Inputs) -> dict:
    other_cpu = leave_one_out.leave_one_cpu_out(inputs.df)
    return dict(summary=leave_one_out.summarise(other_cpu), other_cpu=other_cpu,
                other_cpu_unpriced=leave_one_out.unpriced_points(inputs.df))


def format(rep: dict) -> list[str]:
    lines = ["", "Leave one CPU out (protocol \"other CPU\"): each described CPU's points predicted by a "
             "profile derived from its machine description and the other CPUs' data (`skbmodel.evidence.derive`); "
             "naive: the other CPUs' mean ns, the same on every CPU", ""]
    for s in rep["summary"]:
        if s["protocol"] == leave_one_out.PROTOCOL:
            claim = ("" if s.get("claim", True) else
                     f" No accuracy claim: fewer than {leave_one_out.MIN_CPUS_FOR_CLAIM} CPUs of one kernel era.")
            lines.append(f"{s['subsystem']}: {s['points']} points on {', '.join(s['cpus'])}: MAPE {pct(s['mape'])} "
                         f"(naive {pct(s['baseline_mape'])}); 90 % intervals hold {pct(s['coverage'])} of the "
                         f"points, median relative half-width {pct(s['median_rel_half_width'])}.{claim}")
    lines += [""] + leave_one_out.format_points(rep["other_cpu"])
    return lines + [""] + leave_one_out.format_unpriced(rep["other_cpu_unpriced"])
