"""Repeats within a run: one measurement per test with its typical value, and the spread between
the repeats as the machine's measured noise.

A run (:func:`~.runs.find_runs`) often measures the same tests several times: the module loaded
three times, a table of three runs.  :func:`collapse` keeps one :class:`~.common.Measurement` per
test, unit and conditions, whose value is the typical one and whose ``repeats`` hold every value:

* time_bench cycle counts (``time_bench`` and unlabelled ``<n> cycles(tsc) <x> ns`` lines): the
  **minimum**, as time_bench's users read repeated runs (interrupts and other tasks only ever add
  cycles, so the lowest run is the least disturbed).  The line with the smallest ns value is kept
  whole, so its cycles and ns stay a pair;
* anything else (pktgen and xdp-bench rates, CSV rows): the **median** of the values.

:func:`noise` turns the spread into the noise of one run in ns: the pooled sample standard deviation
of the ns-per-element (or ns-per-packet, from a rate) values over every repeated test,
``sqrt(sum((n_i - 1) s_i^2) / sum(n_i - 1))``.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

MINIMUM = "minimum"
MEDIAN = "median"
#: kinds whose repeats are reduced to their minimum (time_bench cycle counts)
MIN_KINDS = ("time_bench", "generic")
#: ns per unit of a rate: a packet rate's noise in ns per packet is the spread of 1e9 / rate
_NS_PER = {"pps": 1e9, "Kpps": 1e6, "Mpps": 1e3}


def rule(kind: str) -> str:
    """How repeats of a measurement kind are reduced: :data:`MINIMUM` or :data:`MEDIAN`."""
    return MINIMUM if kind in MIN_KINDS else MEDIAN


def _key(m) -> tuple:
    return (m.origin, m.run, m.test, m.output, m.kind, tuple(sorted(m.conditions.items())))


def collapse(measurements) -> tuple[list, list[str]]:
    """``(measurements, notes)``: one measurement per repeated test of a run (the typical value, with
    ``repeats``, ``repeat_lines`` and ``typical`` set), in the order of first appearance; a note per
    run that had repeats."""
    groups: dict[tuple, dict[int, dict[str, object]]] = {}
    crowded: set[tuple] = set()  # one line that gives a test twice (two conditions side by side): no repeats
    for m in measurements:
        g = groups.setdefault(_key(m), {}).setdefault(m.line, {})
        if m.unit in g:
            crowded.add(_key(m))
        g[m.unit] = m
    chosen_of: dict[tuple, list] = {}
    per_run: dict[tuple, list[int]] = {}
    for key, by_line in groups.items():
        lines = list(by_line)
        if key in crowded or len(lines) == 1:
            continue
        units = list(dict.fromkeys(u for g in by_line.values() for u in g))
        how = rule(next(iter(by_line[lines[0]].values())).kind)
        if how == MINIMUM:
            # the line with the smallest ns (cycles are whole numbers and tie), kept whole
            pick = min(lines, key=lambda ln: tuple(
                float(by_line[ln][u].value) if u in by_line[ln] else math.inf for u in ("ns", "cycles")))
            chosen = {u: by_line[pick][u] for u in units if u in by_line[pick]}
        else:
            chosen = {}
            for u in units:
                ms = [by_line[ln][u] for ln in lines if u in by_line[ln]]
                med = float(np.median([m.value for m in ms]))
                chosen[u] = dataclasses.replace(min(ms, key=lambda m: abs(m.value - med)), value=med)
        chosen_of[key] = [
            dataclasses.replace(m, repeats=tuple(float(by_line[ln][u].value) for ln in lines if u in by_line[ln]),
                                repeat_lines=tuple(ln for ln in lines if u in by_line[ln]), typical=how)
            for u, m in chosen.items()]
        per_run.setdefault(key[:2], []).append(len(lines))
    out = []
    for m in measurements:  # in the order given, each repeated test where it first appears
        k = _key(m)
        if k not in chosen_of:
            out.append(m)
        elif chosen_of[k]:
            out += chosen_of[k]
            chosen_of[k] = []
    notes = [f"{origin}, run {run}: {len(ns)} test{'s' if len(ns) != 1 else ''} repeated "
             f"{'/'.join(str(n) for n in sorted(set(ns)))} times; the fit uses each test's typical value "
             "(minimum for time_bench cycle counts, median otherwise)"
             for (origin, run), ns in per_run.items()]
    return out, notes


def spread_ns(m) -> tuple[float, int] | None:
    """``(sample standard deviation in ns, repeats)`` of one repeated measurement in ns (or a rate,
    as ns per packet); ``None`` for one value or another unit."""
    if len(m.repeats) < 2:
        return None
    vals = np.asarray(m.repeats, dtype=float)
    if m.unit in _NS_PER:
        if np.any(vals <= 0):
            return None
        vals = _NS_PER[m.unit] / vals
    elif m.unit != "ns":
        return None
    return float(np.std(vals, ddof=1)), len(vals)


@dataclasses.dataclass(frozen=True)
class Noise:
    """The spread between repeats, as the noise of one run [ns]."""
    ns: float | None               # pooled standard deviation, None without repeats
    tests: int = 0                 # repeated tests it pools
    values: int = 0                # values in all
    where: str = ""                # e.g. "lab.txt, run 2"

    def describe(self) -> str:
        if self.ns is None:
            return "no repeated measurements"
        return (f"{self.ns:.3g} ns: pooled standard deviation of {self.values} repeated values of {self.tests} "
                f"test{'s' if self.tests != 1 else ''}" + (f" ({self.where})" if self.where else ""))


#: the noise is kept to this many significant digits (what a handful of repeats can tell)
NOISE_DIGITS = 3
#: ns values are printed with 3 decimals: no spread is known below that
NS_RESOLUTION = 0.001


def noise(measurements) -> Noise:
    """The pooled spread of every repeated ns (or rate) measurement of ``measurements``."""
    ss = dof = values = tests = 0.0
    where = []
    for m in measurements:
        sp = spread_ns(m)
        if sp is None:
            continue
        s, n = sp
        ss += (n - 1) * s * s
        dof += n - 1
        values += n
        tests += 1
        w = f"{m.origin}, run {m.run}"
        if w not in where:
            where.append(w)
    if not dof:
        return Noise(None)
    pooled = max(math.sqrt(ss / dof), NS_RESOLUTION)
    return Noise(float(f"{pooled:.{NOISE_DIGITS}g}"), int(tests), int(values), "; ".join(where[:3]))
