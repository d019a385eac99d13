"""Same CPU, other kernel: published single numbers measured on a shipped profile's CPU, predicted by that
profile as shipped.

Whether a profile's constants [cycles] carry over from the run they were taken from to another run of the
same CPU (another kernel, another benchmark build): each corpus row of the CPU (:data:`PROFILE_CPUS`) at
one point (no varied input) is predicted in its own unit; rows the profile's own constants cite (by
series) are left out, and whole-path rates are predicted in their own run's scenario by the ``rates``
protocol (:mod:`skbmodel.evidence.protocols.rates`).  The rows: the public corpus (docs/corpus.md).
"""
from __future__ import annotations

from ... import model
from ...machine.profile import load_profile
from .. import era_validation, parsers
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs, num, subsystem_of, summary_rows, unit_of
from .curves import predict_curve

NAME = "same-cpu"
TITLE = "published points on a shipped profile's CPU (other kernels), predicted by the profile as shipped"
PROTOCOL = "same CPU, other kernel"

#: the CPU a shipped profile describes, as corpus rows name it
PROFILE_CPUS = {"e5-1650v4": "E5-1650 v4"}


def profile_cpu_points(df) -> list[dict]:
    """Published single numbers measured on a shipped profile's CPU (another kernel, another run),
    predicted by that profile as shipped: whether its constants carry over from the run they
    were taken from.  Rows the profile's own constants cite (by series) are left out.
    """
    out = []
    for pid, cpu in PROFILE_CPUS.items():
        prof = load_profile(pid)
        cited = " ".join(c.source for c in prof.constants.values())
        # whole-path rates are predicted in their own run's scenario (era_validation.rate_points)
        rows = df[df["cpu"].str.contains(cpu, regex=False) & (df["x_name"] == "")
                  & df["output"].isin(list(model.OUTPUT_UNITS)) & ~df["subsystem"].isin(era_validation.RATE_SUBSYSTEMS)]
        for r in rows.itertuples(index=False):
            if r.series in cited:
                continue
            unit = unit_of(r.unit)
            if not parsers.compatible(r.output, unit):
                continue
            pred = float(predict_curve(prof, r.output, "bulk", [1.0], unit)[0])
            out.append(dict(id=r.id, subsystem=subsystem_of(r.output), profile=pid, output=r.output,
                            kernel=r.kernel, measured=float(r.value), predicted=pred, unit=unit,
                            rel_error=(pred - float(r.value)) / float(r.value), source=r.source))
    return out


def run(inputs: Inputs) -> dict:
    points = profile_cpu_points(inputs.df)
    acc: dict[tuple[str, str], list[float]] = {}
    for r in points:
        acc.setdefault((r["subsystem"], PROTOCOL), []).append(abs(r["rel_error"]))
    return dict(summary=summary_rows(acc), points=points)


def format(rep: dict) -> list[str]:
    lines = ["", "Published points on a shipped profile's CPU (other kernels), predicted by the profile as shipped",
             "",
             "| row | output | kernel | measured | predicted | unit | error |", "|---|---|---|---:|---:|---|---:|"]
    for r in rep["points"]:
        lines.append(f"| {r['id']} | {r['output']} | {r['kernel'][:40]} | {num(r['measured'])} | "
                     f"{num(r['predicted'])} | {r['unit']} | {r['rel_error'] * 100:+.1f} % |")
    return lines
