#!/usr/bin/env python3
"""Add the current version of every shipped CPU profile to skbmodel/profiles/archive/ (idempotent).

Run this BEFORE a recalibration (``python -m skbmodel calibrate``, a refit or a hand edit of
``skbmodel/profiles/*.toml``): share links record the profile version they were made with (key
``pv``) and open with the archived version, so the version that is about to be replaced must be in
the archive (``python -m skbmodel calibrate`` into the shipped folder archives first by itself).
``tests/test_golden_links.py`` fails while a shipped profile's current version is not
archived.

Each file is ``<id>@<version>.toml``: self-contained (inherited constants resolved, no
``inherits``), values at full precision; ``<version>`` is the hash of its values
(:func:`skbmodel.machine.profile.values_version`).  An existing file is checked, never rewritten.

    python scripts/archive_profiles.py          # archive what is missing, list what is there
    python scripts/archive_profiles.py --check  # exit 1 if a current version is not archived
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skbmodel.machine import profile as P  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only check; exit 1 if a current version is missing")
    args = ap.parse_args(argv)
    try:
        rows = P.archive_current(check_only=args.check)
    except P.ProfileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for pid, version, status in rows:
        path = P.ARCHIVE_DIR / f"{pid}@{version}.toml"
        if status == "missing":
            print(f"{pid}: current version {version} is NOT archived; run scripts/archive_profiles.py", file=sys.stderr)
        else:
            print(f"{pid}: version {version} {'already archived' if status == 'present' else 'archived as'} {path}")
    return 1 if any(s == "missing" for *_, s in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
