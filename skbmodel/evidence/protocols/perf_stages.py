"""Stage shares of a path's perf profile, predicted from another source's profiles of the same path.

A thin protocol over :func:`skbmodel.evidence.perfprofile.held_back`: the published profiles of each modelled
path (``skbmodel/data/rest-stages.toml``, their texts in tests/data/perf/) grouped by who published them; each
source's mean stage shares (of its listed samples) predict another's, and no share is fitted on the profile it
is scored on.  The score is half the sum of the absolute differences over the stages [points of %]: 0 when
the shares agree, 100 when no stage is shared.  For scale, two runs of one source (before and after a kernel
change) are set beside it.
"""
from __future__ import annotations

from .. import perfprofile
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs

NAME = "perf_stages"
TITLE = "each path's stage shares in a published perf profile, predicted from another source's profiles"


def _within() -> list[dict]:
    """Two runs of one source and one path (before and after a kernel change), as a scale for a distance."""
    out = []
    for path in perfprofile.PATHS:
        by_src: dict[tuple[str, str], list] = {}
        for p in perfprofile.published():
            if p.path == path and not p.derived:
                by_src.setdefault((p.side, perfprofile.source_of(p)), []).append(p)
        for src, ps in by_src.items():
            if len(ps) == 2:
                a, b = ({s: 100.0 * v / q.listed_pct for s, v in q.shares.items()} for q in ps)
                out.append({"path": path, "from": ps[0].id, "on": ps[1].id,
                            "distance": 0.5 * sum(abs(a.get(s, 0.0) - b.get(s, 0.0)) for s in set(a) | set(b))})
    return out


def run(inputs: Inputs) -> dict:
    rows = [r for path in perfprofile.PATHS for r in perfprofile.held_back(path)]
    # one direction per pair: the prediction of B from A is the prediction of A from B, mirrored
    seen, held = set(), []
    for r in rows:
        key = (r["path"], frozenset((r["from"], r["on"])))
        if key not in seen:
            seen.add(key)
            held.append({"path": r["path"], "from": r["from"], "on": r["on"], "distance": r["distance"],
                         "stages": [{"stage": s, "predicted": a, "measured": b} for s, (a, b) in r["stages"].items()]})
    return {"perf_stages": {"held_back": held, "within_source": _within(),
                            "composed": [p.id for p in perfprofile.published() if p.derived],
                            "paths_without_two_sources": [p for p in perfprofile.PATHS
                                                          if not any(h["path"] == p for h in held)]}}


def format(rep: dict) -> list[str]:
    part = rep.get("perf_stages")
    if not part:
        return []
    lines = ["", "Perf profiles, stage shares held back (protocol \"perf_stages\"): each modelled path's published "
             "perf profiles (`skbmodel/data/rest-stages.toml`, texts in `tests/data/perf/`), grouped by source; one "
             "source's mean stage shares (of its listed samples) predict the other's.  Distance: half the sum of "
             "|predicted - measured| over the stages, in points (0: the same shares, 100: none shared).  The sources "
             "differ in driver, CPU, kernel and in where the packet ends (see each profile's note): a distance is "
             "what one published setup tells of another, not the model's error.", ""]
    for h in part["held_back"]:
        lines += [f"{h['path']}: predicted from {h['from']}, scored on {h['on']}: distance {h['distance']:.1f} "
                  "points", "", "| stage | predicted % | measured % |", "|---|---:|---:|"]
        lines += [f"| {s['stage']} | {s['predicted']:.1f} | {s['measured']:.1f} |" for s in h["stages"]]
        lines.append("")
    for w in part["within_source"]:
        lines.append(f"For scale, two runs of one source ({w['path']}, before and after a kernel change): {w['from']} "
                     f"against {w['on']}: distance {w['distance']:.1f} points.")
    if part.get("composed"):
        lines.append("Not compared: " + ", ".join(part["composed"]) + " (composed from a profile and the same "
                     "page's rate with one more stage: that stage is a difference of two rates, not a perf reading).")
    if part["paths_without_two_sources"]:
        lines.append("No held-back comparison for " + ", ".join(part["paths_without_two_sources"]) + ": fewer than "
                     "two sources publish a perf profile of the path (for kfree_skb_list, pktgen into a qdisc that "
                     "drops, none was found, nor rates of one setup with and without one of its stages).")
    return lines
