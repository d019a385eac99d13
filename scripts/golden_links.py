#!/usr/bin/env python3
"""Golden share links (tests/data/golden_links.json): links made with a given model version and the
numbers they must keep showing.  ``tests/test_golden_links.py`` checks every link against them.

* A recalibration changes no golden number: the links carry their profile version (``pv``) and
  open with the archived profile (run ``scripts/archive_profiles.py`` before recalibrating).
* A model change (new mechanism, changed formula) must bump the model's minor version
  (``skbmodel/__init__.py``); the test then fails until the new numbers are recorded, deliberately
  and with a reason, for the new version (the old versions' numbers stay in the file):

      python scripts/golden_links.py --record --reason "slub: remote-free term per slab, not per object"

* ``--create`` writes the file from scratch with links made by today's code (only when there is none).
* ``--add`` appends the links of ``LINKS`` the file does not have yet (a new page), made and recorded with
  the current model version only.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import skbmodel  # noqa: E402
from skbmodel import answers  # noqa: E402
from skbmodel import provenance  # noqa: E402
from skbmodel.machine import custom  # noqa: E402
from skbmodel.links import state as sk_state, versions as V  # noqa: E402
from skbmodel.machine.profile import load_profile  # noqa: E402

GOLDEN = ROOT / "tests" / "data" / "golden_links.json"

#: name -> state overrides of the links --create makes (one per page, A/B compare, a custom profile)
LINKS = {
    "overview-veth-default": dict(page="overview"),
    "overview-cpumap-xeon": dict(page="overview", cpu="xeon-platinum-iavf", path="cpumap", pp_recycle=1.0),
    "slub-bulk-32": dict(page="slub", bulk=32),
    "zeroing-memset-256": dict(page="zeroing", zero="memset", zero_bytes=256),
    "veth-batch-8-memset": dict(page="veth", xdp_batch=8, zero="memset"),
    # made with numa=cross (model 0.1.0); the link keeps that key, read as the machine's cross-node placement
    "cpumap-cross-numa-half-recycle": dict(page="cpumap", cpu="xeon-platinum-iavf", place="other_socket",
                                           pp_recycle=0.5),
    "kfree-bulk-8-drop-128-clones": dict(page="kfree", kfl_bulk=8, drop_batch=128, clone_frac=0.25,
                                         path="kfree_skb_list"),
    "compare-memset-vs-gfp-zero": dict(page="compare", zero="memset", b_zero="gfp_zero", path="veth", b_path="veth"),
    "compare-cpumap-recycle-vs-none": dict(page="compare", cpu="xeon-platinum-iavf", b_cpu="xeon-platinum-iavf",
                                           path="cpumap", b_path="cpumap", pp_recycle=1.0, b_pp_recycle=0.0),
    "custom-profile-slub": dict(page="slub", bulk=32, prof="CUSTOM"),
    "validation": dict(page="validation"),
    # added with model 0.2.0 (the Design page): its numbers are recorded for 0.2.0 on
    "design-cpumap-napi-cache": dict(page="design", path="design", d_from="cpumap", d_skb="napi_cache",
                                     d_free="napi_cache", b_path="cpumap"),
    # added with the Question grid page (model 0.2.0)
    "grid-batch-zero-free": dict(page="grid", g1="xdp_batch", g2="zero", g3="d_free"),
}


def _custom_text() -> str:
    p = custom.build(load_profile("e5-1650v4"), {"slub_fast_pair_cycles": 121.25, "ghz": 3.1}, "lab-A")
    return custom.encode_profile(p)


def make_query(overrides: dict) -> str:
    ov = dict(overrides)
    st = sk_state.defaults(ov.get("cpu"))
    if "b_cpu" in ov:
        st["b_cpu"] = ov["b_cpu"]
        st["b_ghz"] = load_profile(ov["b_cpu"]).ghz
    if ov.get("prof") == "CUSTOM":
        ov["prof"] = _custom_text()
        st["ghz"] = custom.decode_profile(ov["prof"]).ghz
    st.update(ov)
    return answers.share_query(st)


def _new_link(name: str, overrides: dict, mv: str) -> dict:
    q = make_query(overrides)
    st = sk_state.decode_strict(q)
    return {"name": name, "page": st["page"], "query": q,
            "made_with": {k: v for k, v in V.link_versions(q).items() if k != "h"},
            "expected": {mv: provenance.link_numbers(q)}}


def record_numbers(data: dict, version: str) -> None:
    for link in data["links"]:
        link.setdefault("expected", {})[version] = provenance.link_numbers(link["query"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--create", action="store_true", help="write the golden file from today's code (none may exist)")
    g.add_argument("--record", action="store_true", help="record the numbers of the current model version")
    g.add_argument("--add", action="store_true", help="append the links the file lacks, made with today's code")
    ap.add_argument("--reason", help="why the model's numbers changed (required with --record)")
    args = ap.parse_args(argv)
    mv = skbmodel.__version__
    if args.create:
        if GOLDEN.exists():
            print(f"{GOLDEN} exists; golden links are never remade (use --record for a new model version)",
                  file=sys.stderr)
            return 1
        data = {
            "about": "Share links made with the model version in made_with.mv and the numbers each model version "
                     "gives for them (expected.<model version>). Checked by tests/test_golden_links.py; update only "
                     "with scripts/golden_links.py --record --reason '...' after a model version bump.",
            "model_versions": {mv: "golden links made (numbers of the model when versions were first recorded)"},
            "links": [],
        }
        data["links"] = [_new_link(name, ov, mv) for name, ov in LINKS.items()]
    elif args.add:
        data = json.loads(GOLDEN.read_text())
        have = {link["name"] for link in data["links"]}
        data["links"] += [_new_link(name, ov, mv) for name, ov in LINKS.items() if name not in have]
    else:
        if not (args.reason or "").strip():
            print("--record needs --reason: say which model change moved the numbers", file=sys.stderr)
            return 2
        data = json.loads(GOLDEN.read_text())
        if mv in data["model_versions"]:
            print(f"model version {mv} is recorded already ({data['model_versions'][mv]!r}); numbers that moved "
                  f"under the same version mean the model changed without a version bump: bump the minor version "
                  f"in skbmodel/__init__.py", file=sys.stderr)
            return 1
        data["model_versions"][mv] = args.reason.strip()
        record_numbers(data, mv)
    GOLDEN.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN.relative_to(ROOT)}: {len(data['links'])} links, model version {mv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
