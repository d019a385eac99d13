"""A user's measurements on their way to a fit: the steps the Calibrate page takes between the pasted
text and :func:`skbmodel.evidence.userfit.fit` (the page only draws them).

Parse every source into one set, find runs that cannot be fitted together, read the conditions and
outputs the user edited in the mapping table, choose the clock, and tabulate a fitted profile.
"""
from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from ..machine import cpuinfo, custom
from .. import model
from . import parsers, userfit
from ..links import state as sk_state
from ..machine.profile import Profile


@dataclasses.dataclass
class Parsed:
    """Every source parsed: measurements, problems (one text each), notes and runs, in source order."""
    sig: str                                   # changes with any source's name or content
    measurements: list
    errors: list[str]
    notes: list[str]
    runs: list
    repairs: list[str] = dataclasses.field(default_factory=list)   # one line per source: mail damage undone
    cpu: str | None = None    # the CPU the input names (cpuinfo "model name", lscpu, arm64 "CPU part")
    setup: dict = dataclasses.field(default_factory=dict)  # its kernel and SRSO mode (cpuinfo.boot_setup)
    #: each run's own kernel and SRSO mode, read in its lines and heading (aligned with ``runs``)
    run_setups: tuple = ()


def signature(sources) -> str:
    """12 hex digits of ``[(name, text or bytes), ...]``: a new input gives a new signature."""
    return hashlib.sha1(b"".join((n.encode() + b"\0" + (d.encode("utf-8", "replace") if isinstance(d, str) else d))
                                 for n, d in sources)).hexdigest()[:12]


def parse_sources(sources) -> Parsed:
    """Parse ``[(name, text or bytes), ...]`` (a paste is text, an upload bytes)."""
    ms, errs, notes, runs, repairs = [], [], [], [], []
    for name, data in sources:
        res = parsers.parse_text(data, name) if isinstance(data, str) else parsers.parse_bytes(data, name)
        ms += res.measurements
        errs += [str(e) for e in res.errors]
        notes += res.notes
        runs += res.runs
        repairs += res.repairs
    # an input over the parsers' limit is refused whole: nothing of it, its CPU line neither, is read
    texts = {name: t for name, t in ((n, _text_of(d)) for n, d in sources) if len(t) <= parsers.MAX_TEXT_CHARS}
    cpu = next((found for found in map(cpuinfo.cpuinfo_text, texts.values()) if found), None)
    setup = cpuinfo.boot_setup(list(texts.values()))
    run_setups = tuple(cpuinfo.boot_setup([r.label, *texts.get(r.origin, "").split("\n")[r.first - 1:r.last]])
                       for r in runs)
    return Parsed(signature(sources), ms, errs, notes, runs, repairs, cpu, setup, run_setups)


def setup_of(parsed: Parsed, run_pick) -> dict:
    """The kernel and SRSO mode of what is fitted: the chosen run's own (its lines and heading) where they say,
    else the whole input's; ``run_pick`` is a 1-based run or ``"all"``."""
    if run_pick == "all" or not parsed.run_setups:
        return parsed.setup
    return {**parsed.setup, **parsed.run_setups[run_pick - 1]}


def _text_of(data) -> str:
    return data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")


def run_repeats(measurements, run) -> str:
    """What a run repeated: ``7 tests × 3 repeats, spread 0.0755 ns`` (empty without repeats)."""
    ms = [m for m in of_run(measurements, run) if len(m.repeats) > 1 and m.unit in ("ns", "cycles", "Mpps", "pps")]
    tests = {(m.test, tuple(sorted(m.conditions.items()))): len(m.repeats) for m in ms}
    if not tests:
        return ""
    counts = sorted(set(tests.values()))
    nz = parsers.noise(of_run(measurements, run))
    return (f"{len(tests)} test{'s' if len(tests) != 1 else ''} × {'/'.join(map(str, counts))} repeats"
            + (f", spread {nz.ns:.3g} ns" if nz.ns is not None else ""))


def runs_in_conflict(measurements, runs=None) -> tuple | None:
    """``(key, m1, m2)`` for two runs (of ``runs``, a set of ``(origin, index)``; None: every run) that
    measure the same output at the same conditions (so they cannot be fitted together), else ``None``."""
    seen: dict[tuple, object] = {}
    for m in userfit.usable(measurements):
        r = (m.origin, m.run)
        if runs is not None and r not in runs:
            continue
        k = m.key()
        if k in seen and (seen[k].origin, seen[k].run) != r:
            return k, seen[k], m
        seen.setdefault(k, m)
    return None


def of_run(measurements, run) -> list:
    """The measurements of one :class:`skbmodel.evidence.parsers.Run`."""
    return [m for m in measurements if (m.origin, m.run) == (run.origin, run.index)]


def conditions_text(c: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in c.items())


def parse_conditions(text: str) -> tuple[dict, str | None]:
    """``kfl_bulk=1, drop_batch=64`` -> ``({...}, None)``, or ``({}, problem)``."""
    cond = {}
    for part in filter(None, (p.strip() for p in str(text or "").split(","))):
        k, sep, v = part.partition("=")
        k = k.strip()
        if not sep or k not in parsers.CONDITION_KEYS:
            return {}, f"{part!r}: expected key=value with key one of {', '.join(parsers.CONDITION_KEYS)}"
        val, problem = sk_state.PARAMS[k].parse(v)
        if val is None or problem:
            return {}, f"{k}={v.strip()!r}: expected {sk_state.PARAMS[k].allowed()}"
        cond[k] = val
    return cond, None


def mapping_rows(measurements) -> list[dict]:
    """The editable mapping table: one row per measurement (``use`` ticked when it has an output)."""
    return [dict(use=bool(m.output), where=f"{m.origin}:{m.line}", test=m.test, value=m.value, unit=m.unit,
                 repeats=m.repeats_text(), output=m.output or "", conditions=conditions_text(m.conditions),
                 tol_pct=m.tol * 100, note=m.note)
            for m in measurements]


def apply_mapping(measurements, rows) -> tuple[list, list[str]]:
    """The measurements as edited in the table (``rows``, in the order of ``measurements``): those ticked
    and mapped to an output, and a problem text for each row that cannot be used."""
    edited, problems = [], []
    for m, row in zip(measurements, rows):
        if not row["use"]:
            continue
        out = row["output"] or None
        cond, problem = parse_conditions(row["conditions"])
        if problem:
            problems.append(f"{m.where()}: conditions {problem}")
            continue
        try:
            value, tol = float(row["value"]), float(row["tol_pct"]) / 100
        except (TypeError, ValueError):
            problems.append(f"{m.where()}: value and tolerance must be numbers")
            continue
        if out is None:
            continue
        if not parsers.compatible(out, m.unit):
            problems.append(f"{m.where()}: a value in {m.unit} cannot be compared with {out} "
                            f"({model.OUTPUT_UNITS[out]})")
            continue
        edited.append(dataclasses.replace(m, output=out, conditions=cond, value=value, tol=tol))
    return edited, problems


def default_ghz(clock: parsers.Clock, base: Profile) -> float:
    """The clock field's starting value: the inferred clock when a profile may have it, else the base's."""
    if clock.ghz and custom.GHZ_RANGE[0] <= clock.ghz <= custom.GHZ_RANGE[1]:
        return round(clock.ghz, 4)
    return base.ghz


def clock_for_fit(clock: parsers.Clock, ghz_value: float, base: Profile) -> tuple[float | None, str]:
    """``(ghz, source)`` for :func:`skbmodel.evidence.userfit.fit` from the clock field: the inferred clock (and
    how), None when the field still shows the base's clock and nothing was inferred, else the field's."""
    if clock.ghz and abs(ghz_value - round(clock.ghz, 4)) <= 5e-5:
        return ghz_value, clock.describe()
    if not clock.ghz and abs(ghz_value - base.ghz) <= 5e-5:
        return None, ""
    return ghz_value, "given on the Calibrate page"


def fitted_constants(res: userfit.FitResult, base: Profile) -> list[dict]:
    """One row per fitted constant (the clock first): value, standard error, unit, base value, change."""
    prof = res.profile
    shown = ["ghz", *[n for n in res.free if n != "ghz"]]
    return [dict(constant=n, value=prof.value(n), stderr=res.stderr.get(n, np.nan) if n in res.free else np.nan,
                 unit=prof.constants[n].unit, base=base.value(n),
                 change_pct=(prof.value(n) / base.value(n) - 1) * 100 if base.value(n) else np.nan,
                 source=prof.constants[n].source) for n in shown]
