"""The derived constants' sd on log scale: 90 % intervals of the outputs they enter, before and after.

    git worktree add --detach /tmp/skb-before <commit before the change>
    python benchmarks/derived_spread.py --before /tmp/skb-before [--markdown] [profile ...]

For each profile asked for (default :data:`PROFILES`) at its default state (the veth path), the linearised
90 % intervals (as the pages show them, structural term included) of :data:`OUTPUTS`: before, with the
model of the checkout at ``--before`` (its ``skbmodel`` imported in a child process: the derived SLUB,
zeroing and page-allocator constants' ``stderr`` read as a linear sd), and after, with this checkout's
(the same ``stderr`` as the sd of ``ln``, ``scale = "log"``,
:func:`skbmodel.evidence.derivation.opcounts.derive_costs`).  The point values of both must be equal (the change moves
no value): the script says so, or exits 1.  ``--markdown``: the table of docs/intervals.md.  Without
``--before``: this checkout's intervals alone.  ``--json``: the rows of this checkout (or of ``--model
PATH``) as JSON, what the child process prints.  Nothing is written.
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: profiles whose SLUB, zeroing and page-allocator constants are derived: two boots of one measured Zen 4,
#: the derived Zen 4 and Neoverse V2 (an arm64 core, the x86 counts) and a measured Skylake-SP
PROFILES = ("epyc-9684x-srso", "epyc-9684x", "derived-zen4-genoa", "derived-neoverse-v2", "xeon-gold-6140")
#: cost outputs that derived constants enter, and the veth path's cost
OUTPUTS = ("slub.bulk_cycles", "slub.loop_cycles", "zero.memset_ns", "kfree_skb_list.free_cycles_per_drop",
           "path.ns_per_packet")


def rows(profiles) -> list[list]:
    """``[[profile, output, value, lo, hi]]``: linearised 90 % intervals at each profile's default state."""
    import numpy as np
    from skbmodel import model, uncertainty
    from skbmodel.machine.profile import load_profile
    out = []
    for pid in profiles:
        f, iv = uncertainty.evaluate_with_intervals(model.default_params(pid), load_profile(pid),
                                                    OUTPUTS)
        out += [[pid, o, float(np.asarray(f[o])), *(float(np.asarray(x)) for x in iv[o])] for o in OUTPUTS]
    return out


def _before(path: str, profiles) -> list[list]:
    """:func:`rows` of the model checked out at ``path`` (a child process importing its ``skbmodel``)."""
    done = subprocess.run([sys.executable, __file__, "--json", "--model", path, *profiles], check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def _iv(lo: float, hi: float, d: int) -> str:
    return f"{lo:.{d}f} to {hi:.{d}f}"


def _same_values(old: list[list], new: list[list]) -> bool:
    """Both lists name the same (profile, output) rows with the same point values (to rounding)."""
    return len(old) == len(new) and all(a[:2] == b[:2] and math.isclose(a[2], b[2], rel_tol=1e-9)
                                        for a, b in zip(old, new))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profiles", nargs="*", default=list(PROFILES))
    ap.add_argument("--before", help="a checkout of the model before the change")
    ap.add_argument("--model", help="(child process) the checkout whose skbmodel to import")
    ap.add_argument("--markdown", action="store_true", help="the table of docs/intervals.md")
    ap.add_argument("--json", action="store_true", help="this checkout's (or --model's) rows as JSON")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(Path(a.model).resolve() if a.model else ROOT))
    after = rows(a.profiles)
    if a.json:
        print(json.dumps(after))
        return 0
    import skbmodel
    old = _before(a.before, a.profiles) if a.before else None
    if old is not None and not _same_values(old, after):
        moved = [(o[:3], n[:3]) for o, n in zip(old, after) if o[:3] != n[:3]]
        print(f"point values moved: {moved}", file=sys.stderr)
        return 1
    old = old or [[None] * 5] * len(after)
    if a.markdown:
        print(f"| profile | output | value | before | after ({skbmodel.__version__}) |\n|---|---|---|---|---|")
    for (pid, o, f, lo, hi), (_, _, _, lo0, hi0) in zip(after, old):
        d = 0 if o.startswith("path.") else 1
        was = _iv(lo0, hi0, d) if lo0 is not None else "-"
        if a.markdown:
            print(f"| {pid} | {o} | {f:.{d}f} | {was} | {_iv(lo, hi, d)} |")
        else:
            print(f"{pid:20} {o:36} {f:9.{d}f}  {was:>18}  {_iv(lo, hi, d):>18}")
    if a.before:
        print(f"\nno point value moved ({len(after)} outputs compared with {a.before})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
