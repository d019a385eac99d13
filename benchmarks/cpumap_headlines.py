"""The cpumap headline of every shipped profile, both programs and both placements (across nodes only where its
machine has more than one NUMA node, or does not say), as JSON; with ``--before FILE`` (this script's JSON from another
checkout), a markdown table before -> after.

    python benchmarks/cpumap_headlines.py > after.json
    (cd <checkout> && python /path/to/benchmarks/cpumap_headlines.py) > before.json
    python benchmarks/cpumap_headlines.py --before before.json

Each cell: ``path.ns_per_packet`` [ns], the bottleneck and ``cpumap.sleep_fraction``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.getcwd())  # the checkout the script is run in, not the one it is stored in

from skbmodel import model  # noqa: E402
from skbmodel.links import state as sk_state  # noqa: E402
from skbmodel.machine.profile import available_profiles, load_profile  # noqa: E402

CODES = ("source", "destination", "offered")
CASES = [(prog, numa) for prog in ("pass", "drop") for numa in ("same", "cross")]


def headlines() -> dict:
    out = {}
    for pid in available_profiles():
        prof = load_profile(pid)
        row = {}
        for prog, numa in CASES:
            if numa == "cross" and prof.numa_nodes == 1:  # refused on a one-node machine
                continue
            st = {**sk_state.scenario(sk_state.defaults(pid)), "path": "cpumap", "numa": numa, "cpumap_prog": prog}
            o = model.evaluate(st, prof)
            row[f"{prog}/{numa}"] = [round(float(o["path.ns_per_packet"]), 1), CODES[int(o["cpumap.bottleneck"])],
                                     round(float(o["cpumap.sleep_fraction"]), 2)]
        out[pid] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="this script's JSON from the checkout before")
    args = ap.parse_args()
    now = headlines()
    if not args.before:
        print(json.dumps(now, indent=1))
        return
    with open(args.before, encoding="utf-8") as f:
        before = json.load(f)
    print("| profile | " + " | ".join(f"{p} / {n}" for p, n in CASES) + " |")
    print("|---" * (len(CASES) + 1) + "|")
    for pid, row in now.items():
        cells = []
        for case in (f"{p}/{n}" for p, n in CASES):
            if case not in row:
                cells.append("(refused: one NUMA node)")
                continue
            b, a = before.get(pid, {}).get(case), row[case]
            fmt = lambda v: f"{v[0]:g} ns, {v[1]}" + (f", sleeps {v[2]:g}" if v[2] else "")  # noqa: E731
            cells.append(f"{fmt(b)} → {fmt(a)}" if b else f"(new) {fmt(a)}")
        print(f"| `{pid}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
