"""A perf report in, its shares per stage beside the model's out: ``python -m skbmodel perf FILE|-``.

The reviewer's evidence is a ``perf report`` (or folded stacks) pasted from a mail; the model's is a breakdown of
the path's per-packet time.  This module reads the one (:mod:`skbmodel.evidence.parsers.perf`), maps each symbol
to a stage (:mod:`skbmodel.evidence.kstages`) and sets it beside the other
(:func:`skbmodel.evidence.perfprofile.compare`): the model's components, the stages of its rest as the path's
published profile names them, the disagreements ranked with a reason, and the symbols the map does not place.
"""
from __future__ import annotations

import textwrap

from .evidence import kstages, perfprofile
from .evidence.parsers import perf
from .plaintext import WIDTH, ascii_text

PerfError = perf.PerfError


def answer(text: str, path: str | None = None, cpu: str | None = None, on_cpu: str | None = None) -> dict:
    """The document ``perf`` prints: ``text`` read (only the entries of the CPU column ``on_cpu`` where given),
    on ``path`` (default: the saved profile's header, else guessed from the symbols) and ``cpu`` (default: the
    default profile).  Raises :class:`PerfError` for an input with no perf lines (on that CPU)."""
    prof = perf.parse(text)
    if on_cpu is not None:
        prof = prof.on_cpu(on_cpu)
        if not prof.entries:
            raise PerfError(f"no entry of CPU {on_cpu} (the report's CPU column, perf report --sort cpu,...)")
    how = "given"
    if path is None:
        meta_path = prof.meta.get("path")
        if meta_path in perfprofile.PATHS:
            path, how = meta_path, "the profile's header"
        else:
            path, how = perfprofile.guess_path(prof), "guessed from the symbols"
    doc = perfprofile.compare(prof, path, cpu)
    doc["path_from"] = how
    doc["stages"] = [{"stage": s, "name": kstages.stage_name(None if s == "unmapped" else s), "share_pct": p}
                     for s, p in perfprofile.stage_shares(prof).items()]
    doc["meta"] = dict(prof.meta)
    return doc


def _fill(text: str, indent: str = "  ") -> str:
    return textwrap.fill(ascii_text(text), WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")


def _pct(v) -> str:
    return "    -" if v is None else f"{v:5.1f}"


def text_block(doc: dict) -> str:
    """The answer in :data:`~skbmodel.plaintext.WIDTH` columns, ASCII: the stages of the run, the run beside
    the model, the disagreements ranked and the unmapped symbols."""
    side = f", {doc['side']} CPU" if doc["side"] else ""
    lines = [_fill(f"skbmodel perf: {doc['format']}, {len(doc['symbols'])} symbols holding "
                   f"{doc['listed_pct']:.1f} % of the samples; path {doc['path']} ({doc['path_from']}){side}, "
                   f"profile {doc['cpu']}", ""),
             "Stages of the run (% of its samples):"]
    for s in doc["stages"]:
        lines.append(ascii_text(f"  {s['share_pct']:5.1f}  {s['name']}")[:WIDTH])
    named_by = doc["rest_named_by"] or "no published profile: the rest is one unnamed stage"
    lines.append(_fill(f"Run beside the model ({doc['model_total_ns']:.1f} ns/packet; the rest named by "
                       f"{named_by}):", ""))
    lines.append("    run  model  row (% of the samples / of the model's time)")
    for r in doc["rows"]:
        lines.append(ascii_text(f"  {_pct(r['run_pct'])}  {_pct(r['model_pct'])}  {r['row']}")[:WIDTH])
    lines.append("Disagreements, largest first (run - model, points):")
    for d in doc["disagreements"]:
        lines.append(_fill(f"{d['diff_pct']:+5.1f}  {d['row']}: {d['why']}"))
    if doc["unmapped"]:
        lines.append("Symbols the map does not place (% of the samples):")
        for u in doc["unmapped"]:
            lines.append(ascii_text(f"  {u['share_pct']:5.2f}  {u['symbol']}")[:WIDTH])
    else:
        lines.append("Every symbol is placed in a stage.")
    return "\n".join(lines) + "\n"
