"""The cpumap headline of every shipped profile, both programs, at every placement its machine has (the levels of
its description's topology), as JSON; with ``--before FILE`` (this script's JSON from another checkout), a markdown
table before -> after.

    python benchmarks/cpumap_headlines.py > after.json
    (cd <checkout> && python /path/to/benchmarks/cpumap_headlines.py) > before.json
    python benchmarks/cpumap_headlines.py --before before.json

Each cell: ``path.ns_per_packet`` [ns], the bottleneck and ``cpumap.sleep_fraction``.  A checkout from before the
placement levels (model 0.6.0 and older) writes ``same`` / ``cross`` NUMA node: the table sets ``same`` against
the same L3 and ``cross`` against the machine's nearest level on another node (what an old link's ``numa=cross``
reads as).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.getcwd())  # the checkout the script is run in, not the one it is stored in

from skbmodel import model  # noqa: E402
from skbmodel.machine.profile import available_profiles, load_profile  # noqa: E402

CODES = ("source", "destination", "offered")
PROGS = ("pass", "drop")


def _placements(prof) -> tuple[str, ...]:
    if hasattr(model, "available_placements"):
        return model.available_placements(prof)
    return ("same",) if prof.numa_nodes == 1 else ("same", "cross")  # a checkout before the levels


def headlines() -> dict:
    out = {}
    for pid in available_profiles():
        prof = load_profile(pid)
        key = "place" if hasattr(model, "available_placements") else "numa"
        row = {}
        for prog in PROGS:
            for place in _placements(prof):
                st = {**model.default_params(pid), "path": "cpumap", key: place, "cpumap_prog": prog}
                o = model.evaluate(st, prof)
                row[f"{prog}/{place}"] = [round(float(o["path.ns_per_packet"]), 1), CODES[int(o["cpumap.bottleneck"])],
                                          round(float(o["cpumap.sleep_fraction"]), 2)]
        out[pid] = row
    return out


def _fmt(v) -> str:
    return f"{v[0]:g} ns, {v[1]}" + (f", sleeps {v[2]:g}" if v[2] else "")


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
    places = ("same_l3", "other_l3", "other_l3_far", "other_socket")
    print("| profile | prog | " + " | ".join(places) + " |")
    print("|---" * (len(places) + 2) + "|")
    for pid, row in now.items():
        cross = model.cross_node_placement(load_profile(pid))
        for prog in PROGS:
            cells = []
            for place in places:
                a = row.get(f"{prog}/{place}")
                # a machine with no level on another node now: its old cross-node cell beside another socket
                far = cross or "other_socket"
                old = "same" if place == "same_l3" else ("cross" if place == far else None)
                b = before.get(pid, {}).get(f"{prog}/{place}")  # a checkout with the levels
                if b is None and old:
                    b = before.get(pid, {}).get(f"{prog}/{old}")
                if a is None:
                    cells.append("(lacks it: refused)" + (f"; cross node was {_fmt(b)}" if b else ""))
                else:
                    cells.append(f"{_fmt(b)} → {_fmt(a)}" if b else _fmt(a))
            print(f"| `{pid}` | {prog} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
