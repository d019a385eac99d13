"""Copy the rows of the shared core-to-core table that the machine descriptions cite into the project.

    python scripts/core_to_core_levels.py [--shared ../shared/data/core-to-core/levels.csv]

Each description's ``[topology.line_ns.<level>]`` names its row (``row = "cpu|level|sublevel|line_home"``);
this script writes those rows, with their source columns, to ``skbmodel/data/core-to-core-levels.csv``
(the numbers the model reads; ``tests/test_topology.py`` checks them against the shared table where it exists).
Data: nviennot/core-to-core-latency and KCORES/core-to-core-latency-plus (MIT), extracted per level by the
shared folder's ``extract.py``.
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path

sys.path.insert(0, os.getcwd())

from skbmodel.machine import description  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "core-to-core" / "levels.csv"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=SHARED)
    args = ap.parse_args(argv)
    wanted = {fig.row for d in description.descriptions().values() if d.topology
              for fig in d.topology.line_ns.values()}
    with args.shared.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if description.row_key(r) in wanted]
    missing = wanted - {description.row_key(r) for r in rows}
    if missing:
        print("rows not in the shared table: " + "; ".join(sorted(missing)), file=sys.stderr)
        return 1
    with description.LEVELS_CSV.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=description.LEVELS_COLUMNS, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"{description.LEVELS_CSV}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
