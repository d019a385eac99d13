"""Write the profile derived from each machine description: skbmodel/profiles/derived-<name>.toml.

    python scripts/derived_profiles.py           # (re)write them (and remove those of deleted descriptions)
    python scripts/derived_profiles.py --check   # exit 1 if a written profile differs from what this gives

Each is :func:`skbmodel.uarch.shipped_derived`: the description's clock and cache sizes, the page_pool
costs derived from the measured CPUs' core cycles for the latest kernel
(:data:`skbmodel.uarch.LATEST_KERNEL`), everything else inherited from the era's base profile.  They are
shipped files so that the sidebar offers every described CPU and a share link pins their version like
any other profile's.  Run it after a change to a description or to a measured CPU's profile
(``scripts/corpus_profiles.py`` first: a derivation reads the measured profiles), then
``python scripts/archive_profiles.py`` and ``python scripts/constants_table.py``.
"""
from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.corpus_profiles import same_profile  # noqa: E402  (after the path set-up)
from skbmodel import uarch  # noqa: E402
from skbmodel.profile import PROFILE_DIR  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    want = {uarch.derived_id(name): uarch.shipped_derived(name).to_toml() for name in uarch.descriptions()}
    stale = []
    for path in sorted(PROFILE_DIR.glob(f"{uarch.DERIVED_PREFIX}*.toml")):
        if path.stem not in want:
            if args.check:
                stale.append(path.name)
            else:
                path.unlink()
                print(f"removed {path.relative_to(ROOT)}")
    for pid, text in want.items():
        path = PROFILE_DIR / f"{pid}.toml"
        if args.check:
            if not path.is_file() or not same_profile(tomllib.loads(path.read_text()), tomllib.loads(text)):
                stale.append(path.name)
            continue
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"out of date: {', '.join(stale)}; run python scripts/derived_profiles.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
