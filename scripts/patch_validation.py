#!/usr/bin/env python3
"""Write docs/patches.md: every collected patch run through ``python -m skbmodel patch``, its prediction
against what its mail measured.

    python scripts/patch_validation.py          # rewrite docs/patches.md
    python scripts/patch_validation.py --check  # exit 1 if the committed file differs from what this gives

Each patch of :data:`PATCHES` (a file, where it was read, and which of its numbers a fit used): its path, the
mapped mechanisms, the hunks not modelled, the predicted B - A with its 90 % interval and verdict, and,
where its mail states a before and an after, the measured difference, whether the sign is right and whether
it lies inside the interval.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import csv  # noqa: E402
import tomllib  # noqa: E402

from skbmodel import answers, folders, patchin  # noqa: E402  (after the path set-up)
from skbmodel.machine.profile import DEFAULT_PROFILE, PROFILE_DIR  # noqa: E402

DOC = ROOT / "docs" / "patches.md"
SEEDS = ROOT / "tests" / "data" / "seeds"
#: ``(file, where it was read, which of its measured numbers a fit used)``
PATCHES = (
    (SEEDS / "000_062ad420d30618bd.txt", "seed 000: netdev thread '[PATCH net-next 0/2] net: use "
     "kmem_cache_free_bulk in kfree_skb_list' (2023-01), cover letter, both patches and the replies as one text",
     "fitted: the kfree_skb_list constants (slub_free_slow_extra_cycles, kfl_base_cycles) were fitted to its "
     "pktgen rates (seed rows kfl-06..08): in sample"),
    (SEEDS / "004_5b5bcd2261c19f35.txt", "seed 004: the archive page of '[PATCH net-next V2 2/2] net: "
     "kfree_skb_list use kmem_cache_free_bulk' (lists.openwall.net, 2023-01-13; its last context line cut)",
     "no measurement in this mail"),
    (SEEDS / "002_e998980d6ab8325f.txt", "seed 002: 'Re: [PATCH v2 bpf-next] net: veth: alloc skb in bulk for "
     "ndo_xdp_xmit' (2021-01), a reply quoting the hunk with the memset",
     "its veth rates are labelled by setting, not before/after: not read; the zeroing constants were fitted to "
     "its time_bench_memset rows"),
)


PUBLIC = folders.DATA_DIR / "public-patches.toml"
CORPUS = folders.DATA_DIR / "public-measurements.csv"
#: a measured difference smaller than this [ns/packet] says nothing of the sign: veth's seed thread names 2 ns
#: as the smallest difference measurable above the machine's noise (seed row veth-n1)
NOISE_NS = 2.0
_PER_SECOND = {"pps": 1.0, "Mpps": 1e6}


def _ns_per_packet(row: dict) -> float:
    unit = row["unit"].split(" (")[0].strip()
    return 1e9 / (float(row["value"]) * _PER_SECOND[unit])


def _fitted_on(ids: list[str]) -> list[str]:
    """The shipped profiles whose constants name any of the corpus rows ``ids`` (a fit or a carry used them)."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.toml") if any(i in p.read_text(encoding="utf-8") for i in ids))


def public_rows() -> list[dict]:
    """Every measurement of :data:`PUBLIC`: the patch, its measured ``B - A`` [ns/packet] and, for a mapped
    mechanism, Compare's prediction on the measurement's profile with its interval and verdict."""
    corpus = {r["id"]: r for r in csv.DictReader(CORPUS.open(encoding="utf-8"))}
    out = []
    for p in tomllib.loads(PUBLIC.read_text(encoding="utf-8"))["patch"]:
        for m in p["measurements"]:
            before, after = corpus[m["before"]], corpus[m["after"]]
            row = dict(patch=p, m=m, measured=_ns_per_packet(after) - _ns_per_packet(before),
                       rates=f"{before['value']} -> {after['value']} {after['unit'].split(' (')[0]}",
                       cpu=m["cpu"] or DEFAULT_PROFILE, fitted=_fitted_on([m["before"], m["after"]]),
                       source=after["source"].split(", Message-ID")[0])
            if p["mechanism"]:
                st = patchin.named_question(p["mechanism"], p.get("numbers"), m["cpu"] or None)
                diffs = answers.of_state(st).differences
                d = diffs[0] if diffs else None
                row.update(value=d.value if d else 0.0, lo=d.lo if d else 0.0, hi=d.hi if d else 0.0,
                           verdict=d.verdict if d else "no difference")
            out.append(row)
    return out


def _judged(r: dict) -> tuple[str, str]:
    """``(sign, inside)`` of a mapped measurement: the sign within the noise says nothing."""
    if abs(r["measured"]) < NOISE_NS and r["m"]["per_packet"]:
        sign = "within noise"
    else:
        sign = "right" if (r["measured"] > 0) == (r["value"] > 0) and r["value"] != 0 else "wrong"
    inside = ("yes" if r["lo"] <= r["measured"] <= r["hi"] else "no") if r["m"]["per_packet"] else "—"
    return sign, inside


def render_public() -> list[str]:
    rows = public_rows()
    mapped = [r for r in rows if r["patch"]["mechanism"]]
    judged = [(r, *_judged(r)) for r in mapped]
    signed = [j for j in judged if j[1] != "within noise"]
    right = sum(j[1] == "right" for j in signed)
    per_packet = [j for j in judged if j[0]["m"]["per_packet"]]
    inside = sum(j[2] == "yes" for j in per_packet)
    patches = {r["patch"]["id"] for r in rows}
    lines = ["## Public patches", "",
             f"{len(patches)} public patches whose mail reports a measured before and after "
             f"({len(rows)} measurements), from the corpus (`skbmodel/data/public-measurements.csv`: each row names "
             "the mail and Message-ID it was read in) and listed in `skbmodel/data/public-patches.toml`.  Their "
             "diffs are not in this repository: each is named by the mechanism its mail says it changes (a row of "
             "`skbmodel/data/patch-mechanisms.toml`, as `patch` would map its hunk) and predicted by Compare's "
             "engine on the machine the mail names (a profile derived from its description where none was "
             "fitted on it; the default profile where the mail names no CPU).  A rate summed over many CPUs is "
             "compared by its sign only.", "",
             f"**Sign right on {right} of {len(signed)} mapped measurements "
             f"({100.0 * right / max(len(signed), 1):.0f} %)**, the goal being 80 %; the measured difference "
             f"inside the 90 % interval on {inside} of {len(per_packet)} measured per packet on one CPU.  No "
             "constant was fitted on these rows (the last column checks every shipped profile for their ids).", "",
             "| patch | measurement | profile | mechanism (not modelled) | predicted B - A (ns/packet, 90 %) | "
             "verdict | measured B - A (ns/packet) | sign | inside | fitted on |",
             "|---|---|---|---|---|---|---:|---|---|---|"]
    for r in rows:
        p, m = r["patch"], r["m"]
        what = p["subject"] + (f" ({p['commit']})" if p.get("commit") else "")
        measurement = f"{m['what']}; read in: {r['source']}"
        fitted = (", ".join(r["fitted"]) or "none") + (f"; {p['related_fit']}" if p.get("related_fit") else "")
        got = f"{r['measured']:+.2f}" if m["per_packet"] else f"{r['rates']} (the sign only)"
        if p["mechanism"]:
            sign, inside_ = _judged(r)
            extra = f" (not modelled: {'; '.join(p['not_modelled'])})" if p.get("not_modelled") else ""
            pred = f"{r['value']:+.2f} ({r['lo']:+.2f} to {r['hi']:+.2f})"
            lines.append(f"| {what} | {measurement} | {r['cpu']} | {p['mechanism']}{extra} | {pred} | {r['verdict']} | "
                         f"{got} | {sign} | {inside_} | {fitted} |")
        else:
            lines.append(f"| {what} | {measurement} | — | not modelled: {p['why']} | — | — | {got} | — | — "
                         f"| {fitted} |")
    return lines


def render() -> str:
    lines = ["# Patches in, predictions out", "",
             "Generated by `python scripts/patch_validation.py` (a test fails when it is out of date): each patch "
             "collected so far, run through `python -m skbmodel patch` on the default profile.  A measured "
             "difference is read only where the mail labels a before and an after; 'fitted' says when a fit "
             "used that very number (then the comparison is in sample, not a validation).", "",
             "## Seed patches", "",
             "| patch | path | mapped | not modelled | predicted B - A (ns/packet, 90 %) | verdict | measured "
             "B - A | sign | inside | fitted? |", "|---|---|---|---:|---|---|---:|---|---|---|"]
    for path, where, fitted in PATCHES:
        doc = patchin.answer(path.read_bytes())
        ans, meas = doc["answer"], doc["measured"]
        mapped = ", ".join(sorted({m["mechanism"] for m in doc["mapped"]}))
        pred = f"{ans['value']:+.2f} ({ans['interval'][0]:+.2f} to {ans['interval'][1]:+.2f})"
        if meas:
            m = meas["delta_ns_per_packet"]
            sign = "right" if (m > 0) == (ans["value"] > 0) else "wrong"
            got = (f"{m:+.2f}", sign, "yes" if meas["inside"] else "no")
        else:
            got = ("—", "—", "—")
        lines.append(f"| {where} | {doc['path']} | {mapped} | {len(doc['unmapped'])} | {pred} | {ans['verdict']} | "
                     + " | ".join(got) + f" | {fitted} |")
    return "\n".join([*lines, "", *render_public()]) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        if not DOC.is_file() or DOC.read_text(encoding="utf-8") != text:
            print(f"{DOC.relative_to(ROOT)} is out of date: run python scripts/patch_validation.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
