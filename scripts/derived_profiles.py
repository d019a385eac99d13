"""Write the profile derived from each machine description: skbmodel/profiles/derived-<name>.toml.

    python scripts/derived_profiles.py           # (re)write them (and remove those of deleted descriptions)
    python scripts/derived_profiles.py --check   # exit 1 if a written profile differs from what this gives

Each is :func:`skbmodel.evidence.derivation.leave_one_out.shipped_derived`: the description's clock and cache
sizes, the page_pool
costs derived from the measured CPUs' core cycles for the latest kernel
(:data:`skbmodel.evidence.derivation.pp_counts.LATEST_KERNEL`), everything else inherited from the era's base
profile.  They are
shipped files so that the sidebar offers every described CPU and a share link pins their version like
any other profile's.  Run it after a change to a description or to a measured CPU's profile
(``scripts/corpus_profiles.py`` first: a derivation reads the measured profiles), then
``python scripts/archive_profiles.py`` and ``python scripts/constants_table.py``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.corpus_profiles import write_profiles  # noqa: E402  (after the path set-up)
from skbmodel.machine import description  # noqa: E402
from skbmodel.evidence.derivation import leave_one_out  # noqa: E402
from skbmodel.machine.profile import PROFILE_DIR  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    want = {description.derived_id(name): leave_one_out.shipped_derived(name).to_toml()
            for name in description.descriptions()}
    stale = []
    for path in sorted(PROFILE_DIR.glob(f"{description.DERIVED_PREFIX}*.toml")):
        if path.stem not in want:
            if args.check:
                stale.append(path.name)
            else:
                path.unlink()
                print(f"removed {path.relative_to(ROOT)}")
    return write_profiles(want, args.check, "scripts/derived_profiles.py", stale)


if __name__ == "__main__":
    raise SystemExit(main())
