"""The seed measurements (a copy of ``shared/seed-measurements.csv`` shipped in the package).

Numbers are read from the CSV, never retyped into code.
"""
from __future__ import annotations

from pathlib import Path

import csv
import dataclasses
from functools import lru_cache
from .. import folders

SEED_CSV = folders.DATA_DIR / "seed-measurements.csv"
COLUMNS = ("id", "system", "quantity", "value", "unit", "condition", "cpu", "seed")


@dataclasses.dataclass(frozen=True)
class Observation:
    id: str
    system: str
    quantity: str
    value: float
    unit: str
    condition: str
    cpu: str
    seed: str


def read_csv(path: Path | str) -> list[Observation]:
    """Read a CSV with the seed-measurement columns (raises ValueError naming the line)."""
    rows = []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = set(COLUMNS) - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: missing columns {', '.join(sorted(missing))}")
        for i, r in enumerate(reader, start=2):
            try:
                rows.append(Observation(**{k: (float(r[k]) if k == "value" else r[k]) for k in COLUMNS}))
            except ValueError:
                raise ValueError(f"{path}: line {i}: value {r['value']!r} is not a number") from None
    return rows


@lru_cache(maxsize=1)
def seed_observations() -> dict[str, Observation]:
    """``{row id: Observation}`` of the seed measurement file."""
    return {o.id: o for o in read_csv(SEED_CSV)}
