"""Reruns: another published run of the same benchmark on the same CPU, predicted by the run a constant was
taken from with the run-to-run spread of the other CPUs' repeats (:mod:`skbmodel.evidence.reruns`).

Whether a published constant's interval holds what another run shows: each pair of runs of a group, one
the constant and the other the rerun, judged with the spread estimated without that group (leave one group
out).  The MAPE is the naive prediction's (the rerun equals the run the constant came from).
"""
from __future__ import annotations

from .. import reruns
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs, num, pct, subsystem_of, summary_rows

NAME = "reruns"
TITLE = "other runs of one benchmark on one CPU, inside the interval of the run a constant came from"
PROTOCOL = "same CPU, another run"
#: the share of reruns inside their 90 % intervals that the spread is meant to give
COVERAGE_GOAL = (0.80, 0.95)


def run(inputs: Inputs) -> dict:
    cov = reruns.coverage(inputs.df)
    acc: dict[tuple[str, str], list[float]] = {}
    for p in cov["pairs"]:
        acc.setdefault((subsystem_of(p["output"]), PROTOCOL), []).append(abs(p["constant"] / p["measured"] - 1))
    spread = reruns.spread(reruns.repeats(inputs.df))
    return dict(summary=summary_rows(acc), reruns=dict(spread=spread, pairs=cov["pairs"]),
                coverage={"published constants, reruns": dict(points=cov["points"], inside=cov["inside"],
                                                              coverage=cov["coverage"], sources=cov["groups"])})


def format(rep: dict) -> list[str]:
    sp, pairs = rep["reruns"]["spread"], rep["reruns"]["pairs"]
    cov = rep["coverage"]["published constants, reruns"]
    lines = ["", f"Reruns (protocol \"{PROTOCOL}\"): the run-to-run spread of one benchmark on one CPU, sd of ln "
             f"{num(sp['s_rerun'])} between two runs ({sp['repeats']} repeats in {sp['groups']} groups, "
             f"{sp['dof']} degrees of freedom; skbmodel.evidence.reruns); each rerun judged with the spread of the "
             f"other groups: {cov['inside']} of {cov['points']} inside the 90 % interval of the other run, "
             f"{pct(cov['coverage'])} (goal 80-95 %)", "",
             "| group | output | constant (run) | rerun | measured | 90 % interval | inside |",
             "|---|---|---:|---|---:|---|---|"]
    for p in pairs:
        lines.append(f"| {p['group']} | {p['output']} | {num(p['constant'])} ({p['constant_from']}) | {p['rerun']} | "
                     f"{num(p['measured'])} | {num(p['lo'])}-{num(p['hi'])} | {'yes' if p['inside'] else 'no'} |")
    return lines
