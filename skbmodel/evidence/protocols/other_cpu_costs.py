"""Other CPU, SLUB, zeroing and the page allocator: each described CPU's published points [TSC cycles]
predicted by the constants derived without its own data.

A thin protocol over :func:`skbmodel.evidence.derivation.leave_one_out.leave_one_cpu_out_costs`: operation counts of
each constant's kernel code path times the description's per-operation costs, residuals fitted on the
other CPUs (:data:`skbmodel.evidence.derivation.opcounts.COST_MODEL`); an accuracy is claimed only with
:data:`skbmodel.evidence.derivation.leave_one_out.MIN_CPUS_FOR_CLAIM` CPUs of one kernel era.
"""
from __future__ import annotations

from ..derivation import leave_one_out
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs

NAME = "other-cpu-costs"
TITLE = "each described CPU's SLUB, zeroing and page-allocator points, derived without its own data"


def run(inputs: Inputs) -> dict:
    costs = leave_one_out.leave_one_cpu_out_costs(inputs.df)
    return dict(summary=leave_one_out.summarise_costs(costs), other_cpu_costs=costs)


def format(rep: dict) -> list[str]:
    lines = ["", "SLUB, zeroing and the page allocator, each CPU derived without its own data (operation counts x the "
             "description's costs, residuals fitted on the other CPUs; "
             "`skbmodel.evidence.derivation.opcounts.COST_MODEL`); "
             "rows marked * "
             "are of a CPU the corpus does not name (`skbmodel.evidence.derivation.opcounts.INFERRED_CPU`); "
             "zeroing's start-ups "
             "are "
             "measured on two CPUs (the E5-1650 v4 and the EPYC 7351), its per-line costs on the E5 alone, so "
             "these carry the single-CPU rule of `skbmodel.evidence.derivation.opcounts.derive_costs`, and the "
             "E5's zeroing "
             "rows are not "
             "predicted (they would read its own per-line costs through the base profile, "
             "`skbmodel.evidence.derivation.leave_one_out._own_through_base`)", ""]
    return lines + leave_one_out.format_cost_points(rep.get("other_cpu_costs", []))
