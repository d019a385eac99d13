"""The TSC clock of a set of measurements, from the lines that give both cycles and ns."""
from __future__ import annotations

import dataclasses
import math
import re

#: pairs whose clock differs from the median by more than this (plus the cycle rounding) are named
CLOCK_SPREAD = 0.02
_TSC_TAIL = re.compile(r"time_interval:(\d+)\).*tsc_interval:(\d+)")


@dataclasses.dataclass
class Clock:
    """The TSC clock inferred from time_bench lines that give both cycles and ns."""
    ghz: float | None              # None: no cycles/ns pair
    pairs: int
    lo: float = math.nan           # smallest and largest clock of a single pair
    hi: float = math.nan
    warning: str = ""              # pairs that disagree by more than CLOCK_SPREAD

    def describe(self) -> str:
        if self.ghz is None:
            return "no cycles/ns pairs"
        return f"inferred from {self.pairs} cycles/ns pair{'s' if self.pairs != 1 else ''}"


def clock_pairs(measurements) -> list[tuple[float, float, str, bool]]:
    """``(ghz, cycles, where, exact)`` for each line that gives one test's cycles and ns.

    time_bench prints ``tsc_interval / loops`` rounded down to whole cycles and the ns with three
    decimals, so a pair gives ``(cycles + 0.5) / ns``; a full dmesg line that carries its
    ``time_interval`` and ``tsc_interval`` gives the clock exactly (``exact``).
    """
    groups: dict[tuple, dict] = {}
    for m in measurements:
        if m.kind in ("time_bench", "bulk_table", "generic") and m.unit in ("cycles", "ns"):
            groups.setdefault((m.origin, m.run, m.line, m.test), {})[m.unit] = m
    out = []
    for (origin, _run, line, _test), g in groups.items():
        if "cycles" not in g or "ns" not in g:
            continue
        cyc, ns = g["cycles"].value, g["ns"].value
        if not (math.isfinite(cyc) and math.isfinite(ns)) or ns <= 0 or cyc <= 0:
            continue
        tail = _TSC_TAIL.search(g["cycles"].raw)
        if tail and int(tail.group(1)) > 0:
            out.append((int(tail.group(2)) / int(tail.group(1)), cyc, f"{origin}, line {line}", True))
        else:
            out.append(((cyc + 0.5) / ns, cyc, f"{origin}, line {line}", False))
    return out


def infer_clock(measurements) -> Clock:
    """The TSC clock [GHz] of the measurements: the median over their cycles/ns pairs.

    Pairs under 10 cycles are used only when there is nothing else (the rounding to whole
    cycles makes their ratio coarse).  Pairs that differ from the median by more than 2 % (plus
    their rounding, 0.5 cycles) are named in :attr:`Clock.warning`: different machines or a clock
    that changed during the run.
    """
    pairs = clock_pairs(measurements)
    if not pairs:
        return Clock(None, 0)
    use = [p for p in pairs if p[1] >= 10 or p[3]] or pairs
    ghz = float(sorted(p[0] for p in use)[len(use) // 2]) if len(use) % 2 else \
        float(sum(sorted(p[0] for p in use)[len(use) // 2 - 1: len(use) // 2 + 1]) / 2)
    lo, hi = min(p[0] for p in use), max(p[0] for p in use)
    off = [p for p in use if abs(p[0] / ghz - 1) > CLOCK_SPREAD + (0 if p[3] else 0.5 / p[1])]
    warning = ""
    if off:
        shown = ", ".join(f"{w} ({g:.3f} GHz)" for g, _, w, _ in off[:4]) + (", ..." if len(off) > 4 else "")
        warning = (f"the cycles/ns pairs disagree: {len(off)} of {len(use)} differ from the median clock "
                   f"{ghz:.4g} GHz by more than {CLOCK_SPREAD * 100:g} %: {shown}; are these runs from different "
                   "machines or clock settings? choose one run, or give the clock with --ghz")
    return Clock(ghz, len(use), lo, hi, warning)
