"""Out-of-sample validation: the combined report of every protocol, its text, and the record no figure may get
worse against.

A fit that reproduces the rows it was fitted to says little about a prediction.  Each protocol of
:mod:`skbmodel.evidence.protocols` predicts measurements no fit saw (one published curve's other points,
a seed row with its source left out, a CPU from the other CPUs' data, a difference B - A); this module runs
them (:func:`report`: one dict, the CLI's ``--json``), prints them (:func:`format_report`: the CLI's text
and the tables of ``docs/validation.md``), and keeps the committed report (``skbmodel/data/outofsample.json``,
rounded to :data:`~skbmodel.evidence.protocols.base.SIG_FIGS` significant figures, :func:`rounded`) and the
figures last recorded on purpose (:data:`RECORDED_JSON`, :func:`worse_than_recorded`).  Errors are relative,
``(predicted - measured) / measured``; the intervals are 90 % (:data:`skbmodel.uncertainty.LEVEL`).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .. import folders, uncertainty
from ..machine.profile import Profile
from .protocols.base import SIG_FIGS, Inputs, pct

#: the report's keys in the order of its JSON (a protocol's new key follows them)
REPORT_KEYS = ("differences", "summary", "coverage", "points", "eras", "other_cpu", "other_cpu_unpriced", "srso",
               "other_cpu_costs", "other_isa", "object_size", "rates", "structural_rel_sd", "curves", "loso", "loro",
               "in_sample")


def report(df, protocols, profiles: dict[str, Profile] | None = None, args=None) -> dict:
    """Every protocol's part (``protocols``: :data:`skbmodel.evidence.protocols.PROTOCOLS` or some), as plain
    data: the summary rows of all of them sorted by subsystem and protocol, their coverage groups merged,
    each protocol's own keys (``args``: the ``validate`` command's options, for a protocol's own)."""
    inputs = Inputs(df, profiles, args)
    parts, summary, cover = {}, [], {}
    for p in protocols:
        part = p.run(inputs)
        summary += part.pop("summary", [])
        cover.update(part.pop("coverage", {}))
        parts.update(part)
    parts.update(summary=sorted(summary, key=lambda s: (s["subsystem"], s["protocol"])), coverage=cover)
    return {k: parts[k] for k in (*REPORT_KEYS, *parts) if k in parts}


def load_report(path: Path | str | None = None) -> dict:
    """The committed report (written by ``scripts/validation_report.py``; a test checks it is current)."""
    return json.loads(Path(path or folders.REPORT_JSON).read_text())


#: every out-of-sample figure, as last recorded on purpose (``scripts/validation_report.py --record``)
RECORDED_JSON = folders.DATA_DIR / "outofsample-recorded.json"


#: relative slack of a recorded figure: the report's rounding to 3 significant figures (at most half a
#: unit of the third digit, 0.5 %) and another machine's last digits; counts have none
_SLACK = 5e-3


def recorded_figures(rep: dict) -> dict:
    """``{figure name: {"value": v, "better": "lower" | "higher" | "nearer 0.9"}}`` of every figure the
    report states: per subsystem and protocol the MAPE, the max error, the points predicted and, where
    the protocol states one (other CPU), the coverage of its intervals; the coverage per group and the
    points and sources it is judged on; the seed rows left out that were predicted and not; the
    differences' sign agreement, MAPE and coverage, overall and per group."""
    near = f"nearer {uncertainty.LEVEL:g}"
    out = {}
    for s in rep["summary"]:
        k = f"{s['subsystem']} / {s['protocol']}"
        out[f"{k}: MAPE"] = dict(value=s["mape"], better="lower")
        out[f"{k}: max error"] = dict(value=s["max_error"], better="lower")
        out[f"{k}: points"] = dict(value=s["points"], better="higher")
        if s.get("coverage") is not None:
            out[f"{k}: coverage"] = dict(value=s["coverage"], better=near)
    for g, c in rep["coverage"].items():
        out[f"coverage {g}"] = dict(value=c["coverage"], better=near)
        out[f"coverage {g}: points"] = dict(value=c["points"], better="higher")
        out[f"coverage {g}: sources"] = dict(value=c["sources"], better="higher")
    for key, name in (("loso", "source left out"), ("loro", "row left out")):
        for status, better in (("predicted", "higher"), ("not predictable", "lower")):
            out[f"seed rows, {name}: {status}"] = dict(value=sum(r["status"] == status for r in rep[key]),
                                                       better=better)
    d = rep.get("differences")
    if d:
        for g in [dict(group="all pairs of predicted evidence", **{k: d[k] for k in d if k != "groups"})] + d["groups"]:
            for k, better in (("sign_agreement", "higher"), ("mape", "lower"),
                              ("coverage", near), ("n_pairs", "higher")):
                if g.get(k) is not None and g[k] == g[k]:
                    out[f"differences {g['group']}: {k}"] = dict(value=g[k], better=better)
    return out


def worse_than_recorded(rep: dict, recorded: dict) -> list[str]:
    """Figures of ``rep`` worse than ``recorded`` (beyond the report's rounding), and figures that
    appeared or vanished: each a line naming the figure, its recorded value and today's."""
    now = recorded_figures(rep)
    out = [f"{k}: recorded {recorded[k]['value']}, no longer reported" for k in recorded if k not in now]
    out += [f"{k}: {v['value']} is not recorded" for k, v in now.items() if k not in recorded]
    for k in now.keys() & recorded.keys():
        v, r, better = now[k]["value"], recorded[k]["value"], recorded[k]["better"]
        slack = 0.0 if isinstance(r, int) else _SLACK * abs(r) + 1e-12
        if better == "lower":
            worse = v > r + slack
        elif better == "higher":
            worse = v < r - slack
        else:
            level = float(better.split()[1])
            worse = abs(v - level) > abs(r - level) + slack
        if worse:
            out.append(f"{k}: {v} is worse than the recorded {r} ({better} is better)")
    return sorted(out)


#: report keys that hold inputs (a measurement, a curve's x, its clock): kept as given
AS_GIVEN = frozenset({"measured", "x", "fit_x", "ghz"})


def rounded(obj, digits: int = SIG_FIGS):
    """``obj`` with every computed float rounded to ``digits`` significant digits (NaN and inf become
    ``None``); the inputs under the keys :data:`AS_GIVEN` keep their value."""
    if isinstance(obj, float):
        return float(f"{obj:.{digits}g}") if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: (v if k in AS_GIVEN else rounded(v, digits)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [rounded(v, digits) for v in obj]
    if isinstance(obj, np.generic):
        return rounded(obj.item(), digits)
    return obj


def _last_digit(v: float, digits: int) -> float:
    """One unit in the last of ``digits`` significant digits of ``v``."""
    return 10.0 ** (math.floor(math.log10(abs(v))) - digits + 1) if v else 0.0


def report_differences(committed, fresh, digits: int = SIG_FIGS, where: str = "") -> list[str]:
    """Where the committed (rounded) report and a fresh computation disagree beyond its rounding.

    A number agrees when it is within one unit of its last kept digit of the fresh value (the
    rounding's half unit plus as much again for the last digits of another machine's arithmetic);
    integers, strings, keys and lengths must be equal.  Returns one line per disagreement.
    """
    if isinstance(fresh, np.generic):
        fresh = fresh.item()
    if isinstance(committed, dict) and isinstance(fresh, dict):
        if set(committed) != set(fresh):
            return [f"{where}: keys {sorted(set(committed) ^ set(fresh))} differ"]
        return [d for k in sorted(fresh) for d in report_differences(committed[k], fresh[k], digits, f"{where}/{k}")]
    if isinstance(committed, list) and isinstance(fresh, (list, tuple)):
        if len(committed) != len(fresh):
            return [f"{where}: {len(committed)} entries committed, {len(fresh)} computed"]
        return [d for i, (c, f) in enumerate(zip(committed, fresh))
                for d in report_differences(c, f, digits, f"{where}[{i}]")]
    if isinstance(fresh, float) and not isinstance(committed, bool):
        if not math.isfinite(fresh) or committed is None:
            return [] if committed is None and not math.isfinite(fresh) else [f"{where}: {committed} != {fresh}"]
        if isinstance(committed, (int, float)) and abs(committed - fresh) <= max(
                _last_digit(committed, digits), _last_digit(fresh, digits)) + 1e-12:
            return []
        return [f"{where}: {committed} committed, {fresh:.{digits + 3}g} computed"]
    return [] if committed == fresh else [f"{where}: {committed!r} committed, {fresh!r} computed"]



def format_report(rep: dict, protocols, lead=()) -> str:
    """The report as text tables (the CLI's output, and the tables of ``docs/validation.md``): the protocols of
    ``lead`` (:data:`skbmodel.evidence.protocols.LEAD`: what a design review reads), the summary and coverage
    tables, then every other protocol's section."""
    lines = [line for p in protocols if p in lead for line in p.format(rep)]
    lines += ["", "Out of sample, per subsystem (curves: fit on 3 points, predict the rest; seed rows: leave one "
              "source out)", "",
             f"| {'subsystem':<15} | {'protocol':<27} | {'points predicted':>16} | {'MAPE':>8} | {'max |error|':>11} |",
             f"|{'-' * 17}|{'-' * 29}|{'-' * 17}:|{'-' * 9}:|{'-' * 12}:|"]
    for s in rep["summary"]:
        lines.append(f"| {s['subsystem']:<15} | {s['protocol']:<27} | {s['points']:>16} | {pct(s['mape']):>8} | "
                     f"{pct(s['max_error']):>11} |")
    lines += ["", f"Coverage of the {uncertainty.LEVEL:.0%} prediction intervals on the curves' out-of-sample "
              "points, judged on held-out sources (constants' uncertainty, and the structural sd set without every "
              "curve of the source judged)", "",
              "| group | sources | points | inside | coverage | |", "|---|---:|---:|---:|---:|---|"]
    for g, c in sorted(rep["coverage"].items()):
        flag = ("outside 80-95 %" if c["points"] >= 10 and not 0.80 <= c["coverage"] <= 0.95 else "")
        lines.append(f"| {g} | {c['sources']} | {c['points']} | {c['inside']} | {pct(c['coverage'])} | {flag} |")
    lines += [line for p in protocols if p not in lead for line in p.format(rep)]
    return "\n".join(lines)


def load_recorded(path: Path | str | None = None) -> dict:
    """The recorded figures (:data:`RECORDED_JSON`), ``{}`` when there is no record yet."""
    p = Path(path or RECORDED_JSON)
    return json.loads(p.read_text()) if p.is_file() else {}
