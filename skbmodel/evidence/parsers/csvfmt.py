"""A CSV with the columns of the seed measurement file (``id,system,quantity,value,unit,...``): rows
whose ``id`` is a seed row are mapped to that row's model output and conditions."""
from __future__ import annotations

import csv
import io
import math

from ... import schema
from .. import seed_checks
from ..observations import COLUMNS
from .common import _COMPATIBLE, CONDITION_KEYS, MAPPABLE_OUTPUTS, UNITS, Measurement, ParseError, ParseResult, _short


def parse_csv(text: str, origin: str) -> ParseResult:
    res = ParseResult([], [])
    try:
        reader = csv.DictReader(io.StringIO(text))
        fields = [f.strip() for f in (reader.fieldnames or [])]
    except csv.Error as e:
        return ParseResult([], [ParseError(origin, 1, f"not a readable CSV ({e})")])
    missing = [c for c in COLUMNS if c not in fields]
    if missing:
        return ParseResult([], [ParseError(origin, 1, f"CSV header lacks column(s) {', '.join(missing)}; expected "
                                                      f"{','.join(COLUMNS)}")])
    specs = {s.id: s for s in seed_checks.ROWS}
    try:
        for r in reader:
            i = reader.line_num
            r = {(k or "").strip(): (v if isinstance(v, str) else "") for k, v in r.items()}
            raw = ",".join(r.get(c, "") for c in COLUMNS)
            rid, unit = r.get("id", "").strip(), r.get("unit", "").strip()
            try:
                value = float(r.get("value", "").strip())
            except ValueError:
                res.errors.append(ParseError(origin, i, f"value {_short(r.get('value', ''), 30)!r} is not a number",
                                             _short(raw)))
                continue
            if not math.isfinite(value):
                res.errors.append(ParseError(origin, i, "value is not finite", _short(raw)))
                continue
            if unit not in UNITS:
                res.errors.append(ParseError(origin, i, f"unit {_short(unit, 20)!r} is not one of {', '.join(UNITS)}",
                                             _short(raw)))
                continue
            spec = specs.get(rid)
            out, cond, tol, note = None, {}, 0.05, "map it by hand"
            if spec and not spec.output.startswith(("const:", "state:")) and spec.output in MAPPABLE_OUTPUTS:
                out, cond, note = spec.output, {k: v for k, v in spec.state.items() if k in CONDITION_KEYS}, \
                    f"seed row {rid}"
                tol = spec.tol if spec.tol_kind == "rel" else 0.03
                if unit not in _COMPATIBLE.get(schema.OUTPUT_UNITS[out], set()):
                    res.errors.append(ParseError(origin, i, f"unit {unit} cannot be compared with {out} "
                                                            f"({schema.OUTPUT_UNITS[out]})", _short(raw)))
                    continue
            elif spec:
                note = f"seed row {rid}: {spec.output} is not fitted"
            test = _short(r.get("quantity", "") or rid, 80)
            res.measurements.append(Measurement(origin, i, _short(raw), test, value, unit, cond, out, "csv", tol, note))
    except csv.Error as e:
        res.errors.append(ParseError(origin, reader.line_num, f"CSV error: {e}"))
    return res
