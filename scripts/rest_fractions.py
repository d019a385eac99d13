"""Write ``skbmodel/data/rest-fractions.json``: each modelled path's rest in named stages, as fractions of the rest,
from the published perf profiles (:func:`skbmodel.evidence.perfprofile.computed_rest_fractions`).  The model (a
Design composition that re-prices one stage of its rest) and the charts read the file
(:func:`skbmodel.params.rest_stage_fractions`): the model does not evaluate itself to split its own rest.

    python scripts/rest_fractions.py          # rewrite the file
    python scripts/rest_fractions.py --check  # exit 1 if the file differs from what the profiles give

Run it after a change to skbmodel/data/rest-stages.toml, kernel-symbols.toml or a profile the fractions read
(the default CPU's rest constants); a test runs ``--check``.  Fractions are kept to 12 significant figures and
compared within 1e-9 of each other.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skbmodel import params  # noqa: E402 - after the path set-up above
from skbmodel.evidence import perfprofile  # noqa: E402

ABOUT = ("Each modelled path's rest of path in the named stages of its default published perf profile, as "
         "fractions of the rest (skbmodel/data/rest-stages.toml, kernel-symbols.toml). Written by "
         "scripts/rest_fractions.py; do not edit by hand.")


def computed() -> dict:
    return {"_about": ABOUT, "fractions": {path: {s: float(f"{f:.12g}") for s, f in
                                                  perfprofile.computed_rest_fractions(path).items()}
                                           for path in perfprofile.REST_KEYS}}


def _same(a: dict, b: dict) -> bool:
    fa, fb = a.get("fractions", {}), b.get("fractions", {})
    return set(fa) == set(fb) and all(
        set(fa[p]) == set(fb[p]) and all(abs(fa[p][s] - fb[p][s]) <= 1e-9 for s in fa[p]) for p in fa)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the file differs from the profiles")
    args = ap.parse_args(argv)
    want = computed()
    if args.check:
        have = json.loads(params.REST_FRACTIONS_FILE.read_text(encoding="utf-8"))
        if not _same(have, want):
            name = params.REST_FRACTIONS_FILE.relative_to(ROOT)
            print(f"{name} is out of date: run python scripts/rest_fractions.py", file=sys.stderr)
            return 1
        return 0
    params.REST_FRACTIONS_FILE.write_text(json.dumps(want, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {params.REST_FRACTIONS_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
