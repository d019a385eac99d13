"""Parsers for measurements pasted or uploaded by a user ("bring your own measurements").

:func:`parse_text` (and :func:`parse_bytes` for uploads) turn tool output into
:class:`Measurement` records, each naming its origin file and line, the raw line, the test, the
value with its unit, the conditions under which it was measured (as model state keys, e.g.
``{"bulk": 16}``) and the model output it measures (``None`` when the test name does not identify
one: the user maps it).  Problems never raise: they come back as :class:`ParseError` records that
name the line and what was expected.

Recognised formats (from the public prototype-kernel sources and the results posted with them):

* ``time_bench`` lines: ``[dmesg ts] time_bench: Type:<name> Per elem: <int> cycles(tsc) <int>.<3>
  ns (step:<int>) - (measurement period ...)`` (``time_bench_loop`` in prototype-kernel
  kernel/lib/time_bench.c), and the short form quoted in mails: ``<name> Per elem: 109 cycles(tsc)
  30.532 ns (step:16)`` or ``memset_variable_step(256) Per elem: 31 cycles(tsc) 8.803 ns``;
* SLUB bulk tables (one line per bulk size) under a header ``Bulk - Fallback bulking -
  fastpath-bulking`` / ``bulk- Fallback - Bulk API`` / ``Bulk- fallback - this-patch``:
  ``  16 -  44 cycles(tsc) 11.221 ns  -  17 cycles(tsc)  4.423 ns   improved 61.4%``;
* pktgen results: ``Result: OK: <usec>(c..+d..) usec, <count> (<size>byte,<frags>frags)`` followed
  by ``<pps>pps <Mb>Mb/sec (<bps>bps) errors: <n>`` (the bps must equal pps x size x 8);
* xdp-bench (xdp-tools) summaries: ``Summary  <n> rx/s  <n> err,drop/s`` and redirect-cpu blocks
  (``receive total`` / ``enqueue to cpu N`` / ``kthread total`` lines, ``pkt/s`` and ``drop/s``);
  the older samples/bpf ``xdp_redirect_cpu`` table (``XDP-RX total``, ``cpumap-enqueue sum:N``,
  ``cpumap_kthread total``); and the ``src cpu Rx  drops  dst cpu Rx`` summary with ``Mpps`` values;
* a CSV with the columns of the seed measurement file (``id,system,quantity,value,unit,...``).

Mail quoting (``>``, ``|``), dmesg timestamps and list bullets are stripped first.  Repeated
identical measurements (a quoted reply) are kept once per run; the repeats are reported as notes.
:func:`find_runs` splits an input that holds several runs (kernels, repeats) and
:func:`infer_clock` gives the TSC clock from the lines that print both cycles and ns.

One module per format (:mod:`.timebench`, :mod:`.bulktable`, :mod:`.pktgen`, :mod:`.xdpbench`,
:mod:`.csvfmt`); this module dispatches: a CSV as a whole, any other text line by line through
:data:`LINE_FORMATS` (the first format that takes a line wins).  To add a line format, write a
:class:`~.common.LineFormat` in its own module and put it in :data:`LINE_FORMATS`.
"""
from __future__ import annotations

import dataclasses

from .bulktable import BulkTable
from .clock import CLOCK_SPREAD, Clock, clock_pairs, infer_clock
from .common import (_COMPATIBLE, _DMESG, _QUOTE, BINARY_SAMPLE, CONDITION_KEYS, MAPPABLE_OUTPUTS, MAX_LINE_CHARS,
                     MAX_LINES, MAX_MEASUREMENTS, MAX_TEXT_CHARS, UNITS, LineFormat, Measurement, ParseError,
                     ParseResult, Run, check_condition, _clean, _short, compatible)
from .csvfmt import parse_csv
from .mail import repair as repair_mail
from .pktgen import Pktgen
from . import repeats
from .repeats import Noise, collapse, noise
from .runs import _module_load, find_runs
from .timebench import SKB_TAIL_BYTES, TimeBench, Unlabelled, map_time_bench
from .xdpbench import XdpBench

__all__ = [
    "parse_text", "parse_bytes", "Measurement", "ParseError", "ParseResult", "Run", "Clock", "find_runs",
    "infer_clock", "clock_pairs", "compatible", "map_time_bench", "LineFormat", "LINE_FORMATS", "UNITS",
    "CONDITION_KEYS", "MAPPABLE_OUTPUTS", "MAX_TEXT_CHARS", "MAX_LINES", "MAX_LINE_CHARS", "MAX_MEASUREMENTS",
    "BINARY_SAMPLE", "CLOCK_SPREAD", "SKB_TAIL_BYTES", "Noise", "noise", "repair_mail", "repeats",
    # used by skbmodel.evidence.userfit and the tests
    "_COMPATIBLE", "check_condition", "_module_load",
]

#: The line formats, in the order they are offered each line.  The bulk table comes first (its rows
#: would otherwise read as unlabelled cycles/ns numbers), the unlabelled "<n> cycles <x> ns" catch-all last.
LINE_FORMATS: tuple[type[LineFormat], ...] = (BulkTable, TimeBench, Pktgen, XdpBench, Unlabelled)


# --------------------------------------------------------------------------- parse
def parse_bytes(data: bytes, origin: str = "upload") -> ParseResult:
    """Decode an uploaded file (UTF-8 text) and parse it; binary data is refused with a message."""
    if not isinstance(data, (bytes, bytearray)):
        return ParseResult([], [ParseError(origin, 0, "expected bytes")])
    if len(data) == 0:
        return ParseResult([], [ParseError(origin, 0, "the file is empty; expected tool output text or a CSV")])
    if len(data) > MAX_TEXT_CHARS * 2:
        return ParseResult([], [ParseError(origin, 0, f"the file is {len(data) / 1e6:.1f} MB; the limit is "
                                                      f"{MAX_TEXT_CHARS / 1e6:.0f} MB of text")])
    sample = bytes(data[:BINARY_SAMPLE])
    if b"\x00" in sample:
        return ParseResult([], [ParseError(origin, 0, "this is a binary file (it contains NUL bytes); "
                                                      "expected text such as dmesg or pktgen output")])
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return ParseResult([], [ParseError(origin, 0, f"not UTF-8 text (byte {e.start}); expected plain "
                                                      "text tool output or a CSV")])
    return parse_text(text, origin)


def parse_text(text: str, origin: str = "pasted text") -> ParseResult:
    """Parse tool output text: ``ParseResult(measurements, errors)``; never raises."""
    try:
        return _parse_text(text, origin)
    except Exception as e:  # noqa: BLE001 - a parser bug must not crash the page; say so instead
        return ParseResult([], [ParseError(origin, 0, f"internal parser error ({type(e).__name__}); "
                                                      "please report this input")])


def _parse_text(text: str, origin: str) -> ParseResult:
    origin = _short(str(origin), 120) or "pasted text"
    if not isinstance(text, str):
        return ParseResult([], [ParseError(origin, 0, "expected text")])
    if len(text) > MAX_TEXT_CHARS:
        return ParseResult([], [ParseError(origin, 0, f"the text is {len(text) / 1e6:.1f} MB; the limit is "
                                                      f"{MAX_TEXT_CHARS / 1e6:.0f} MB ({MAX_LINES} lines)")])
    if not text.strip():
        return ParseResult([], [ParseError(origin, 0, "the input is empty; expected time_bench, pktgen or "
                                                      "xdp-bench output, or a seed-format CSV")])
    ctrl = sum(1 for ch in text[:BINARY_SAMPLE] if ord(ch) < 32 and ch not in "\t\n\r\f\v")
    if "\x00" in text[:BINARY_SAMPLE] or ctrl > 0.05 * min(len(text), BINARY_SAMPLE):
        return ParseResult([], [ParseError(origin, 0, "this looks like binary data (control characters); "
                                                      "expected text tool output")])
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        return ParseResult([], [ParseError(origin, 0, f"{len(lines)} lines; the limit is {MAX_LINES} lines")])
    first = next((ln for ln in lines if ln.strip()), "")
    if first.strip().lower().startswith("id,"):
        res = parse_csv(text, origin)
        if res.measurements:
            res.runs = [Run(origin, 1, min(m.line for m in res.measurements), max(m.line for m in res.measurements),
                            "", len({m.line for m in res.measurements}))]
    else:
        lines, first, last, repaired = repair_mail(lines)
        res = _parse_lines(lines, origin)
        res.runs, run_of = find_runs(lines, res.measurements, origin)
        # back to the lines of the text as given
        res.measurements = [dataclasses.replace(m, run=run_of[m.line], line=first[m.line - 1])
                            for m in res.measurements]
        res.errors = [dataclasses.replace(e, line=first[e.line - 1]) if e.line else e for e in res.errors]
        res.runs = [dataclasses.replace(r, first=first[r.first - 1], last=last[r.last - 1]) for r in res.runs]
        if repaired:
            res.repairs.append(f"{origin}: {repaired}")
    res = _dedupe(res)
    res.measurements, repeat_notes = collapse(res.measurements)
    res.notes += repeat_notes
    if len(res.measurements) > MAX_MEASUREMENTS:
        res.errors.append(ParseError(origin, 0, f"{len(res.measurements)} measurements; only the first "
                                                f"{MAX_MEASUREMENTS} are kept"))
        res.measurements = res.measurements[:MAX_MEASUREMENTS]
    if not res.measurements and not res.errors:
        res.errors.append(ParseError(origin, 0, "no measurement lines found; expected time_bench 'Per elem: "
                                                "<n> cycles(tsc) <x> ns' lines, pktgen '<n>pps <n>Mb/sec (<n>bps) "
                                                "errors: <n>' results, xdp-bench summaries or a seed-format CSV"))
    return res


def _dedupe(res: ParseResult) -> ParseResult:
    """A line that gives a test exactly the values an earlier line of the run gave it (a quoted reply,
    the same paste twice) counts once; a test measured again with other values (another cycles or
    ns figure) is a repeat (:func:`collapse`)."""
    lines_of: dict[tuple, dict[int, list[Measurement]]] = {}
    for m in res.measurements:
        k = (m.origin, m.run, m.test, m.output, tuple(sorted(m.conditions.items())))
        lines_of.setdefault(k, {}).setdefault(m.line, []).append(m)
    drop: set[int] = set()
    dups: dict[tuple, tuple[Measurement, list[int]]] = {}
    for k, by_line in lines_of.items():
        seen: dict[tuple, Measurement] = {}
        for line, ms in by_line.items():
            # a dmesg timestamp tells a repeat from a copy even when the values are the same
            ts = _DMESG.match(_QUOTE.sub("", ms[0].raw))
            sig = (ts.group(0).strip() if ts else "", *sorted((m.unit, m.value) for m in ms))
            if sig in seen:
                drop.update(id(m) for m in ms)
                dups.setdefault((k, sig), (seen[sig], []))[1].append(line)
            else:
                seen[sig] = ms[0]
    for first, lines in dups.values():
        res.notes.append(f"{first.origin}: {first.test} = {first.value:g} {first.unit} repeated on line(s) "
                         f"{', '.join(map(str, lines[:10]))}{' ...' if len(lines) > 10 else ''}; "
                         f"kept line {first.line} only")
    res.measurements = [m for m in res.measurements if id(m) not in drop]
    return res


def _parse_lines(lines: list[str], origin: str) -> ParseResult:
    res = ParseResult([], [])
    formats = [f(res, origin) for f in LINE_FORMATS]
    for i, raw in enumerate(lines, start=1):
        if len(raw) > MAX_LINE_CHARS:
            res.errors.append(ParseError(origin, i, f"line is {len(raw)} characters long (limit {MAX_LINE_CHARS}); "
                                                    "skipped", _short(raw)))
            continue
        s = _clean(raw)
        if not s:
            continue
        for f in formats:
            if f.feed(i, raw, s):
                break
    return res
