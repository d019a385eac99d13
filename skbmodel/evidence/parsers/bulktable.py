"""SLUB bulk tables (slab_bulk_test01 results posted with the patches): a header ``Bulk - Fallback
bulking - fastpath-bulking`` / ``bulk- Fallback - Bulk API`` / ``Bulk- fallback - this-patch``, then one
row per bulk size: ``  16 -  44 cycles(tsc) 11.221 ns  -  17 cycles(tsc)  4.423 ns   improved 61.4%``."""
from __future__ import annotations

import re

from .common import LineFormat, Measurement, _clock_problem, _mapped, _short

_BULK_HEAD = re.compile(r"^bulk\s*-\s*(?P<cols>.+)$", re.I)
_BULK_ROW = re.compile(r"^(?P<n>\d+)\s*-\s*(?P<rest>\d.*)$")
_BULK_CELL = re.compile(r"^(?P<cyc>\d+)\s*cycles(?:\(tsc\))?\s+(?P<ns>\d+\.\d+)(?:\s*ns)?\s*$")


def _bulk_column(name: str) -> str | None:
    n = name.strip().lower()
    if "fallback" in n:
        return "slub.loop_cycles"
    if n in ("fastpath-bulking", "this-patch", "bulk api", "kmem_cache_free_bulk", "bulk-api"):
        return "slub.bulk_cycles"
    return None


class BulkTable(LineFormat):
    """The header sets the columns; rows follow until a line that is not a row."""

    def __init__(self, res, origin):
        super().__init__(res, origin)
        self.cols: list[str] | None = None
        self.header_line = 0

    def feed(self, i: int, raw: str, s: str) -> bool:
        h = _BULK_HEAD.match(s)
        if h and "cycles" not in s:
            cols = [c.strip() for c in re.split(r"\s+-\s+|\s*-\s+|\s+-\s*", h.group("cols")) if c.strip()]
            if cols:
                self.cols, self.header_line = cols, i
                return True
        if self.cols is None:
            return False
        r = _BULK_ROW.match(s)
        if r and "cycles" in s:
            self._row(i, raw, int(r.group("n")), r.group("rest"))
            return True
        if not r:
            self.cols = None
        return False

    def _row(self, i: int, raw: str, n: int, rest: str) -> None:
        bulk_cols = self.cols
        rest = re.sub(r"\s*(?:-\s*)?improved\s+-?\d+(?:\.\d+)?%\s*$", "", rest)
        cells = [c.strip() for c in re.split(r"\s+-\s+", rest) if c.strip()]
        if len(cells) != len(bulk_cols):
            self.err(i, f"bulk table row has {len(cells)} columns; the header on line {self.header_line} has "
                        f"{len(bulk_cols)} ({' - '.join(bulk_cols)})", raw)
            return
        for col, cell in zip(bulk_cols, cells):
            c = _BULK_CELL.match(cell)
            if not c:
                self.err(i, f"bulk table cell {cell!r}: expected '<n> cycles(tsc) <x.xxx> ns'", raw)
                continue
            cyc, ns = float(c.group("cyc")), float(c.group("ns"))
            prob = _clock_problem(cyc, ns)
            if prob:
                self.err(i, prob, raw)
                continue
            out, cond, note = _mapped(_bulk_column(col), {"bulk": n})
            if _bulk_column(col) is None:
                note = f"column {col!r} not recognised: map it by hand"
            test = f"bulk table: {col}"
            origin = self.origin
            self.add(Measurement(origin, i, _short(raw), test, cyc, "cycles", cond, out, "bulk_table", 0.05, note))
            self.add(Measurement(origin, i, _short(raw), test, ns, "ns", cond, out, "bulk_table", 0.05, note))
