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
"""
from __future__ import annotations

import csv
import dataclasses
import io
import math
import re

from . import model, state, validation
from .observations import COLUMNS

MAX_TEXT_CHARS = 2_000_000
MAX_LINES = 5_000
MAX_LINE_CHARS = 20_000
MAX_MEASUREMENTS = 2_000
BINARY_SAMPLE = 8_192

#: units a measurement may carry, and the model output units they compare with
UNITS = ("cycles", "ns", "pps", "Kpps", "Mpps", "Krps", "bytes", "objects", "packets")
_COMPATIBLE = {"cycles": {"cycles", "ns"}, "ns": {"cycles", "ns"}, "Mpps": {"pps", "Kpps", "Mpps"},
               "Krps": {"Krps"}, "objects": {"objects"}, "1": set(), "runs": set(), "%": set()}

#: model state keys a measurement condition may set
CONDITION_KEYS = tuple(k for k in state.MODEL_KEYS if k not in ("cpu", "ghz", "path"))

#: outputs a user may map a measurement to (what the fit can compare)
MAPPABLE_OUTPUTS = tuple(k for k, u in model.OUTPUT_UNITS.items()
                         if u in ("cycles", "ns", "Mpps", "Krps") and not k.startswith(("budget.", "path.", "noise.")))


@dataclasses.dataclass(frozen=True)
class Measurement:
    origin: str                    # file name (or "pasted text")
    line: int                      # 1-based line number in origin
    raw: str                       # the line as given (truncated to 300 chars)
    test: str                      # test name, e.g. "kmem-in-loop"
    value: float
    unit: str                      # one of UNITS
    conditions: dict               # model state keys, e.g. {"bulk": 16}
    output: str | None             # model output name, None = not identified (user maps it)
    kind: str                      # "time_bench" | "bulk_table" | "pktgen" | "xdp" | "csv" | "generic"
    tol: float = 0.05              # relative tolerance used by the fit
    note: str = ""                 # why it is (not) mapped, etc.
    run: int = 1                   # the run of its origin it belongs to (see :func:`find_runs`)

    def key(self) -> tuple:
        return (self.output, self.unit, tuple(sorted(self.conditions.items())))

    def where(self) -> str:
        return f"{self.origin}, line {self.line}"


@dataclasses.dataclass(frozen=True)
class ParseError:
    origin: str
    line: int                      # 0 = the whole input
    message: str
    raw: str = ""

    def __str__(self) -> str:
        loc = f"{self.origin}, line {self.line}" if self.line else self.origin
        return f"{loc}: {self.message}"


@dataclasses.dataclass(frozen=True)
class Run:
    """One benchmark run of an input: a kernel, a repeat, a section of lab notes (see :func:`find_runs`)."""
    origin: str
    index: int                     # 1-based within its origin
    first: int                     # first line (the heading / module load that opened it, else its first measurement)
    last: int                      # end of the block of its last measurement
    label: str = ""                # the heading(s) it sits under, if any
    n_lines: int = 0               # lines with measurements

    def describe(self, number: int | None = None, with_origin: bool = False) -> str:
        where = f"{self.origin}, " if with_origin else ""
        text = f"run {self.index if number is None else number}: {where}lines {self.first}-{self.last}"
        return text + (f" \"{self.label}\"" if self.label else "")


@dataclasses.dataclass
class ParseResult:
    measurements: list[Measurement]
    errors: list[ParseError]
    notes: list[str] = dataclasses.field(default_factory=list)
    runs: list[Run] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.measurements)

    def extend(self, other: "ParseResult") -> "ParseResult":
        self.measurements += other.measurements
        self.errors += other.errors
        self.notes += other.notes
        self.runs += other.runs
        return self


# --------------------------------------------------------------------------- helpers
_QUOTE = re.compile(r"^(?:\s*[>|])+\s?")
_DMESG = re.compile(r"^\s*\[\s*\d+\.\d+\]\s*")
_MODPREFIX = re.compile(r"^\s*time_bench:\s*")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?=\S)")
_NUM = r"(\d+(?:\.\d+)?)"


def _clean(line: str) -> str:
    s = _QUOTE.sub("", line)
    s = _DMESG.sub("", s)
    s = _MODPREFIX.sub("", s)
    s = _BULLET.sub("", s)
    return s.strip()


def _short(s: str, n: int = 300) -> str:
    s = s.rstrip("\n")
    return s if len(s) <= n else s[: n - 3] + "..."


def _intnum(s: str) -> float:
    """'9,018,604' -> 9018604.0 (xdp-bench prints thousands separators)."""
    return float(s.replace(",", ""))


def _check_condition(cond: dict) -> str | None:
    """A problem text when a condition is outside the model's range, else None."""
    for k, v in cond.items():
        p = state.PARAMS[k]
        val, problem = p.parse(str(v))
        if val is None or problem:
            return f"{k}={v} is outside the model's range ({p.allowed()})"
    return None


def _mapped(output: str | None, cond: dict, note: str = "") -> tuple[str | None, dict, str]:
    if output is None:
        return None, cond, note
    problem = _check_condition(cond)
    if problem:
        return None, cond, f"not mapped: {problem}"
    return output, cond, note


# ------------------------------------------------------------------ time_bench names
# slab_bulk_test01 (prototype-kernel kernel/mm): "kmem fastpath reuse" (step 0), per bulk size
# "kmem bulk_fallback" (a loop of single alloc/free) and "kmem bulk_quick_reuse" (bulk API); the
# names quoted in the kfree_skb_list patch (seed 004) are "kmem-in-loop" and "kmem-bulk".
_SLUB_LOOP = {"kmem-in-loop", "kmem bulk_fallback", "kmem-bulk_fallback", "kmem_bulk_fallback"}
_SLUB_BULK = {"kmem-bulk", "kmem bulk_quick_reuse", "kmem-bulk_quick_reuse", "kmem_bulk_quick_reuse"}
_SLUB_FAST = {"kmem fastpath reuse", "kmem-fastpath-reuse", "kmem_fastpath_reuse"}
# bench_page_pool_simple: only the tasklet (softirq) variants use the fast path.
_PP = {"tasklet_page_pool01_fast_path": "page_pool.fast_cycles",
       "tasklet_page_pool02_ptr_ring": "page_pool.ring_cycles",
       "tasklet_page_pool03_slow": "page_pool.slow_cycles"}
# baselines that every time_bench module prints first: recognised, no model output
_BASELINES = {"for_loop", "atomic_inc", "lock", "funcion_call_cost", "function_call_cost",
              "func_ptr_call_cost", "mem_zero_hacks", "page_pool01", "tasklet_page_pool01",
              "tasklet_page_pool02"}
# time_bench_memset: offsetof(struct sk_buff, tail) of the build measured in seed 002
SKB_TAIL_BYTES = 184


def map_time_bench(test: str, step: int | None) -> tuple[str | None, dict, str]:
    """Model output and conditions for a time_bench test name (``(None, {}, why)`` if none)."""
    t = test.strip()
    low = t.lower()
    m = re.fullmatch(r"memset_variable_step\((\d+)\)", low)
    if m:
        return _mapped("zero.erms_cycles", {"zero_bytes": int(m.group(1))})
    if low == "memset_variable_step":
        if step is None:
            return None, {}, "memset_variable_step without (step:N): size unknown"
        return _mapped("zero.erms_cycles", {"zero_bytes": step})
    m = re.fullmatch(r"memset_(\d+)", low)
    if m:
        return _mapped("zero.memset_cycles", {"zero_bytes": int(m.group(1))})
    if low == "memset_skb_tail":
        return _mapped("zero.memset_cycles", {"zero_bytes": SKB_TAIL_BYTES},
                       f"offsetof(struct sk_buff, tail) = {SKB_TAIL_BYTES} B assumed (seed 002 build)")
    if low == "memset_skb_tail_roundup":
        return _mapped("zero.memset_cycles", {"zero_bytes": 192}, "184 B rounded up to 3 cachelines")
    if low in _SLUB_LOOP or low in _SLUB_BULK:
        if not step:
            return None, {}, f"{t} without (step:N): bulk size unknown"
        return _mapped("slub.loop_cycles" if low in _SLUB_LOOP else "slub.bulk_cycles", {"bulk": step})
    if low in _SLUB_FAST:
        return _mapped("slub.loop_cycles", {"bulk": 1}, "one alloc+free at a time")
    if low in _PP:
        return _mapped(_PP[low], {})
    if low.startswith("no-softirq-page_pool"):
        return None, {}, "not in softirq: page_pool cannot use its fast path (no model output)"
    if low in _BASELINES:
        return None, {}, "baseline of the benchmark module (no model output)"
    return None, {}, "test name not recognised: map it by hand"


_TB = re.compile(
    r"^(?:Type:)?(?P<name>.*?)\s*Per elem:\s*(?P<rest>.*)$")
_TB_VALUES = re.compile(
    r"^(?P<cyc>\d+)\s+cycles\(tsc\)\s+(?P<ns>\d+(?:\.\d+)?)\s+ns"
    r"(?:\s*\(step:(?P<step>-?\d+)\))?(?:\s*-\s*\(measurement period.*)?\s*[.,;)]*$")
_GENERIC = re.compile(
    r"(?P<cyc>\d+)\s*cycles(?:\(tsc\))?\s*-?\s*(?P<ns>\d+\.\d+)\s*(?P<unit>ns|us|µs|ms|s)\b")
_BULK_HEAD = re.compile(r"^bulk\s*-\s*(?P<cols>.+)$", re.I)
_BULK_ROW = re.compile(r"^(?P<n>\d+)\s*-\s*(?P<rest>\d.*)$")
_BULK_CELL = re.compile(r"^(?P<cyc>\d+)\s*cycles(?:\(tsc\))?\s+(?P<ns>\d+\.\d+)(?:\s*ns)?\s*$")
_CONST_MEMSET = re.compile(r"(?:memset|rep[- ]stos).*?const(?:ant)?\s+(\d+)"
                           r"|const(?:ant)?\s+(\d+).*?(?:memset|rep[- ]stos)", re.I)


def _bulk_column(name: str) -> str | None:
    n = name.strip().lower()
    if "fallback" in n:
        return "slub.loop_cycles"
    if n in ("fastpath-bulking", "this-patch", "bulk api", "kmem_cache_free_bulk", "bulk-api"):
        return "slub.bulk_cycles"
    return None


def _clock_problem(cyc: float, ns: float) -> str | None:
    if ns <= 0:
        return None if cyc == 0 else "0 ns for a non-zero cycle count"
    if cyc < 10:  # integer cycles: the ratio is too coarse to judge
        return None
    ghz = cyc / ns
    if not 0.2 <= ghz <= 10:
        return (f"{cyc:g} cycles in {ns:g} ns implies a {ghz:.3g} GHz clock; expected ns per element "
                f"(a clock between 0.2 and 10 GHz)")
    return None


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
        res = _parse_csv(text, origin)
        if res.measurements:
            res.runs = [Run(origin, 1, min(m.line for m in res.measurements), max(m.line for m in res.measurements),
                            "", len({m.line for m in res.measurements}))]
    else:
        res = _parse_lines(lines, origin)
        res.runs, run_of = find_runs(lines, res.measurements, origin)
        res.measurements = [dataclasses.replace(m, run=run_of[m.line]) for m in res.measurements]
    res = _dedupe(res)
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
    seen: dict[tuple, Measurement] = {}
    out = []
    dups: dict[tuple, list[int]] = {}
    for m in res.measurements:
        k = (m.test, m.value, m.unit, m.output, tuple(sorted(m.conditions.items())), m.origin, m.run)
        if k in seen:
            dups.setdefault(k, []).append(m.line)
            continue
        seen[k] = m
        out.append(m)
    for k, lines in dups.items():
        m = seen[k]
        res.notes.append(f"{m.origin}: {m.test} = {m.value:g} {m.unit} repeated on line(s) "
                         f"{', '.join(map(str, lines[:10]))}{' ...' if len(lines) > 10 else ''}; "
                         f"kept line {m.line} only")
    res.measurements = out
    return res


def _parse_lines(lines: list[str], origin: str) -> ParseResult:
    res = ParseResult([], [])
    add = res.measurements.append
    err = lambda i, msg, raw: res.errors.append(ParseError(origin, i, msg, _short(raw)))  # noqa: E731 - a one-line closure over res and origin, used many times below
    bulk_cols: list[str] | None = None
    bulk_line = 0
    pkt: dict | None = None          # pending pktgen "Result: OK:" context
    triple_hdr = 0                   # line of the last "src cpu Rx drops dst cpu Rx" header
    for i, raw in enumerate(lines, start=1):
        if len(raw) > MAX_LINE_CHARS:
            err(i, f"line is {len(raw)} characters long (limit {MAX_LINE_CHARS}); skipped", raw)
            continue
        s = _clean(raw)
        if not s:
            continue
        # ---- bulk table header / rows
        h = _BULK_HEAD.match(s)
        if h and "cycles" not in s:
            cols = [c.strip() for c in re.split(r"\s+-\s+|\s*-\s+|\s+-\s*", h.group("cols")) if c.strip()]
            if cols:
                bulk_cols, bulk_line = cols, i
                continue
        if bulk_cols is not None:
            r = _BULK_ROW.match(s)
            if r and "cycles" in s:
                n = int(r.group("n"))
                rest = re.sub(r"\s*(?:-\s*)?improved\s+-?\d+(?:\.\d+)?%\s*$", "", r.group("rest"))
                cells = [c.strip() for c in re.split(r"\s+-\s+", rest) if c.strip()]
                if len(cells) != len(bulk_cols):
                    err(i, f"bulk table row has {len(cells)} columns; the header on line {bulk_line} has "
                           f"{len(bulk_cols)} ({' - '.join(bulk_cols)})", raw)
                    continue
                for col, cell in zip(bulk_cols, cells):
                    c = _BULK_CELL.match(cell)
                    if not c:
                        err(i, f"bulk table cell {cell!r}: expected '<n> cycles(tsc) <x.xxx> ns'", raw)
                        continue
                    cyc, ns = float(c.group("cyc")), float(c.group("ns"))
                    prob = _clock_problem(cyc, ns)
                    if prob:
                        err(i, prob, raw)
                        continue
                    out, cond, note = _mapped(_bulk_column(col), {"bulk": n})
                    if _bulk_column(col) is None:
                        note = f"column {col!r} not recognised: map it by hand"
                    test = f"bulk table: {col}"
                    add(Measurement(origin, i, _short(raw), test, cyc, "cycles", cond, out, "bulk_table", 0.05, note))
                    add(Measurement(origin, i, _short(raw), test, ns, "ns", cond, out, "bulk_table", 0.05, note))
                continue
            if not r:
                bulk_cols = None
        # ---- time_bench "Per elem:" lines
        t = _TB.match(s)
        if t and "per elem:" in s.lower():
            name = t.group("name").strip().rstrip(":").strip()
            v = _TB_VALUES.match(t.group("rest").strip())
            if not v:
                err(i, "time_bench line: expected 'Per elem: <int> cycles(tsc) <x.xxx> ns (step:<n>)' after "
                       f"the test name, got {_short(t.group('rest'), 60)!r}", raw)
                continue
            if not name:
                err(i, "time_bench line without a test name (expected 'Type:<name> Per elem: ...')", raw)
                continue
            cyc, ns = float(v.group("cyc")), float(v.group("ns"))
            step = int(v.group("step")) if v.group("step") is not None else None
            prob = _clock_problem(cyc, ns)
            if prob:
                err(i, prob, raw)
                continue
            out, cond, note = map_time_bench(name, step)
            add(Measurement(origin, i, _short(raw), name, cyc, "cycles", cond, out, "time_bench", 0.05, note))
            add(Measurement(origin, i, _short(raw), name, ns, "ns", cond, out, "time_bench", 0.05, note))
            continue
        # ---- pktgen
        if s.startswith("Result:") or re.search(r"\(\d+byte,\d+frags\)", s):
            m = re.search(r"(\d+)\s*\((\d+)byte,(\d+)frags\)", s)
            if s.startswith("Result:") and not s.startswith("Result: OK:"):
                err(i, f"pktgen did not finish OK: {_short(s, 80)!r}", raw)
                pkt = None
                continue
            if m:
                pkt = dict(line=i, count=int(m.group(1)), size=int(m.group(2)))
            elif s.startswith("Result: OK:"):
                err(i, "pktgen 'Result: OK:' line: expected '<usec>(c..+d..) usec, <count> (<size>byte,<n>frags)'", raw)
                pkt = None
            if "pps" not in s:
                continue
        pm = re.search(r"(\d+)pps\s+(\d+)Mb/sec\s+\((\d+)bps\)\s+errors:\s*(\d+)", s)
        if pm:
            pps, mb, bps, errors = (float(g) for g in pm.groups())
            label = s[: pm.start()].strip(" :-") or "result"
            if pkt and i - pkt["line"] <= 3:
                want = pps * pkt["size"] * 8
                if abs(bps - want) > max(1.0, 1e-6 * want):
                    err(i, f"{bps:.0f}bps is not {pps:.0f}pps x {pkt['size']} bytes x 8 = {want:.0f}bps: "
                           "the numbers do not belong together", raw)
                    continue
            if pps <= 0 or abs(bps / 1e6 - mb) > 1.0 + 1e-3 * mb:
                err(i, f"{mb:.0f}Mb/sec does not match ({bps:.0f}bps); expected Mb/sec = bps / 1e6", raw)
                continue
            note = "pktgen into a qdisc that drops: set kfl_bulk (1 = before bulk free), drop_batch, clone_frac"
            if pkt and i - pkt["line"] <= 3:
                note += f"; {pkt['size']}-byte packets, count {pkt['count']}"
            add(Measurement(origin, i, _short(raw), f"pktgen: {_short(label, 60)}", pps, "pps", {},
                            "kfree_skb_list.mpps", "pktgen", 0.03, note))
            continue
        if re.search(r"\d\s*pps\b", s) and re.search(r"Mb/sec|bps\)", s):
            err(i, "pktgen result: expected '<n>pps <n>Mb/sec (<n>bps) errors: <n>'", raw)
            continue
        # ---- xdp-bench / xdp_redirect_cpu
        low = s.lower()
        if low.startswith("summary") and "rx/s" in low:
            mm = re.match(r"^summary\s+([\d,]+)\s+rx/s\s+([\d,]+)\s+(err,drop|err)/s", low)
            if not mm:
                err(i, "xdp-bench summary: expected 'Summary <n> rx/s <n> err,drop/s'", raw)
                continue
            add(Measurement(origin, i, _short(raw), "xdp-bench summary rx", _intnum(mm.group(1)), "pps", {},
                            None, "xdp", 0.03, "which XDP program (pass, drop, tx)? map it by hand, "
                                               "e.g. xdp_pass.mpps for 'xdp-bench pass'"))
            continue
        xm = None
        for pat, test, out in (
                (r"^receive total\s+([\d,]+)\s+pkt/s\s+([\d,]+)\s+drop/s", "xdp-bench receive total",
                 "cpumap.src_mpps"),
                (r"^enqueue to cpu\s+\d+\s+([\d,]+)\s+pkt/s\s+([\d,]+)\s+drop/s", "xdp-bench enqueue drops",
                 "cpumap.drop_mpps"),
                (r"^kthread total\s+([\d,]+)\s+pkt/s\s+([\d,]+)\s+drop/s", "xdp-bench kthread total",
                 "cpumap.dst_mpps"),
                (r"^xdp-rx\s+total\s+([\d,]+)\s+([\d,]+)", "xdp_redirect_cpu XDP-RX total", "cpumap.src_mpps"),
                (r"^cpumap-enqueue\s+sum:\d+\s+([\d,]+)\s+([\d,]+)", "xdp_redirect_cpu cpumap-enqueue drops",
                 "cpumap.drop_mpps"),
                (r"^cpumap[_-]kthread\s+total\s+([\d,]+)\s+([\d,]+)", "xdp_redirect_cpu cpumap_kthread total",
                 "cpumap.dst_mpps")):
            xm = re.match(pat, low)
            if xm:
                col = 2 if out == "cpumap.drop_mpps" else 1
                add(Measurement(origin, i, _short(raw), test, _intnum(xm.group(col)), "pps", {}, out, "xdp", 0.03,
                                "cpumap redirect: set pp_recycle and numa for your run"))
                break
        if xm:
            continue
        if re.match(r"^(receive total|enqueue to cpu|kthread total|xdp-rx|cpumap-enqueue|cpumap[_-]kthread)\b", low) \
                and re.search(r"\d", low) and not re.match(r"^(xdp-rx|cpumap[_-]kthread)\s+\d", low) \
                and not re.match(r"^cpumap-enqueue\s+\d+:\d+", low):
            err(i, "xdp-bench line: expected '<name> <n> pkt/s <n> drop/s ...'", raw)
            continue
        # "src cpu Rx  drops  dst cpu Rx" summaries with Mpps values (cpumap mails, seed 003)
        if re.search(r"src cpu rx\s+drops\s+dst cpu rx", low):
            triple_hdr = i
        if triple_hdr and i - triple_hdr <= 30:
            start = 0
            if i == triple_hdr:
                start = re.search(r"src cpu rx\s+drops\s+dst cpu rx", low).end()
            for tm in re.finditer(r"(\d+(?:\.\d+)?)\s*mpps\s+(n/a|\d+(?:\.\d+)?\s*mpps)\s+(\d+(?:\.\d+)?)\s*mpps",
                                  low[start:]):
                src, drop, dst = float(tm.group(1)), tm.group(2), float(tm.group(3))
                if drop == "n/a":
                    for v, what in ((src, "src cpu Rx"), (dst, "dst cpu Rx")):
                        add(Measurement(origin, i, _short(raw), f"{what} (drops N/A: one CPU, XDP_PASS)", v, "Mpps",
                                        {}, "xdp_pass.mpps", "xdp", 0.03, "no cpumap: one CPU does everything"))
                    continue
                dv = float(drop.replace("mpps", "").strip())
                if abs(src - dv - dst) > 0.05 * max(src, 1e-9) + 0.05:
                    err(i, f"src {src:g} Mpps - drops {dv:g} Mpps should equal dst {dst:g} Mpps "
                           "(every packet is received or dropped)", raw)
                    continue
                for v, what, out in ((src, "src cpu Rx", "cpumap.src_mpps"), (dv, "drops", "cpumap.drop_mpps"),
                                     (dst, "dst cpu Rx", "cpumap.dst_mpps")):
                    add(Measurement(origin, i, _short(raw), f"cpumap {what}", v, "Mpps", {}, out, "xdp", 0.03,
                                    "cpumap redirect: set pp_recycle and numa for your run"))
            continue
        # ---- anything else with "<n> cycles(tsc) <x> ns": unlabelled time_bench numbers
        g = _GENERIC.search(s)
        if g:
            unit = g.group("unit")
            if unit != "ns":
                err(i, f"'{g.group(0)}': time_bench prints ns per element, not {unit}", raw)
                continue
            cyc, ns = float(g.group("cyc")), float(g.group("ns"))
            prob = _clock_problem(cyc, ns)
            if prob:
                err(i, prob, raw)
                continue
            label = s[: g.start()].strip(" :-(") or "cycles"
            out, cond, note = None, {}, "no test name: map it by hand"
            cm = _CONST_MEMSET.search(s)
            if cm:
                size = int(cm.group(1) or cm.group(2))
                out, cond, note = _mapped("zero.memset_cycles", {"zero_bytes": size},
                                          f"constant-size memset of {size} B (from the text)")
            add(Measurement(origin, i, _short(raw), _short(label, 60), cyc, "cycles", cond, out, "generic", 0.05, note))
            add(Measurement(origin, i, _short(raw), _short(label, 60), ns, "ns", cond, out, "generic", 0.05, note))
            continue
    return res


# --------------------------------------------------------------------------- CSV
def _parse_csv(text: str, origin: str) -> ParseResult:
    res = ParseResult([], [])
    try:
        reader = csv.DictReader(io.StringIO(text))
        fields = [f.strip() for f in (reader.fieldnames or [])]
    except csv.Error as e:
        return ParseResult([], [ParseError(origin, 1, f"not a readable CSV ({e})")])
    missing = [c for c in COLUMNS if c not in fields]
    if missing:
        return ParseResult([], [ParseError(origin, 1, f"CSV header lacks column(s) {', '.join(missing)}; expected "
                                                      f"{','.join(COLUMNS)}")])
    specs = {s.id: s for s in validation.ROWS}
    try:
        for r in reader:
            i = reader.line_num
            r = {(k or "").strip(): (v if isinstance(v, str) else "") for k, v in r.items()}
            raw = ",".join(r.get(c, "") for c in COLUMNS)
            rid, unit = r.get("id", "").strip(), r.get("unit", "").strip()
            try:
                value = float(r.get("value", "").strip())
            except ValueError:
                res.errors.append(ParseError(origin, i, f"value {_short(r.get('value', ''), 30)!r} is not a number",
                                             _short(raw)))
                continue
            if not math.isfinite(value):
                res.errors.append(ParseError(origin, i, "value is not finite", _short(raw)))
                continue
            if unit not in UNITS:
                res.errors.append(ParseError(origin, i, f"unit {_short(unit, 20)!r} is not one of {', '.join(UNITS)}",
                                             _short(raw)))
                continue
            spec = specs.get(rid)
            out, cond, tol, note = None, {}, 0.05, "map it by hand"
            if spec and not spec.output.startswith(("const:", "state:")) and spec.output in MAPPABLE_OUTPUTS:
                out, cond, note = spec.output, {k: v for k, v in spec.state.items() if k in CONDITION_KEYS}, \
                    f"seed row {rid}"
                tol = spec.tol if spec.tol_kind == "rel" else 0.03
                if unit not in _COMPATIBLE.get(model.OUTPUT_UNITS[out], set()):
                    res.errors.append(ParseError(origin, i, f"unit {unit} cannot be compared with {out} "
                                                            f"({model.OUTPUT_UNITS[out]})", _short(raw)))
                    continue
            elif spec:
                note = f"seed row {rid}: {spec.output} is not fitted"
            test = _short(r.get("quantity", "") or rid, 80)
            res.measurements.append(Measurement(origin, i, _short(raw), test, value, unit, cond, out, "csv", tol, note))
    except csv.Error as e:
        res.errors.append(ParseError(origin, reader.line_num, f"CSV error: {e}"))
    return res


def compatible(output: str, unit: str) -> bool:
    """Whether a measurement in ``unit`` can be compared with model output ``output``."""
    return unit in _COMPATIBLE.get(model.OUTPUT_UNITS.get(output, ""), set())


# --------------------------------------------------------------------------- runs
_MD_HEAD = re.compile(r"^(#{1,6})\s+(?P<title>\S.*?)\s*#*\s*$")
_ORG_HEAD = re.compile(r"^(\*+)\s+(?P<title>\S.*?)\s*$")
_EQ_HEAD = re.compile(r"^(=+)\s+(?P<title>\S.*?)\s*=*\s*$")
_SETEXT = re.compile(r"^={3,}\s*$")
_LOADED = re.compile(r"^(?P<mod>[A-Za-z][\w.-]*):\s+(?:module\s+)?loaded\b", re.I)
_INSMOD = re.compile(r"^(?:\S*[$#]\s*)?(?:sudo\s+)?(?:/\S*/)?(?:insmod|modprobe)\s+(?:-\S+\s+)*(?P<mod>[\w./-]+)")
#: a name seen loaded counts again later only when it looks like a module name (``bench_page_pool_simple``)
_MODNAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+$")
_UNLOAD = re.compile(r"\b(?:unload|rmmod|removed)|modprobe\s+-r\b", re.I)


def _heading(lines: list[str], i: int) -> tuple[int, str] | None:
    """``(level, title)`` when line ``i`` (0-based) is a markdown / org / ``==`` heading (column 0)."""
    raw = lines[i]
    for pat in (_MD_HEAD, _ORG_HEAD, _EQ_HEAD):
        h = pat.match(raw)
        if h:
            return len(h.group(1)), h.group("title")
    if raw.strip() and not _SETEXT.match(raw) and i + 1 < len(lines) and _SETEXT.match(lines[i + 1]):
        return 1, raw.strip()
    return None


def _module_load(line: str, known: set[str]) -> str | None:
    """The benchmark module a line loads (``time_bench: Loaded``-style dmesg line, ``insmod`` /
    ``modprobe`` command) or names again (a module seen loaded before); ``None`` otherwise."""
    s = _DMESG.sub("", _QUOTE.sub("", line)).strip()
    if not s or _UNLOAD.search(s):
        return None
    m = _LOADED.match(s)
    if m:
        return m.group("mod")
    m = _INSMOD.search(s)
    if m:
        mod = m.group("mod").rsplit("/", 1)[-1]
        return mod[:-3] if mod.endswith(".ko") else mod
    for mod in (k for k in known if _MODNAME.match(k)):
        if re.search(rf"(?<![\w-]){re.escape(mod)}(?![\w-])", s):
            return mod
    return None


def find_runs(lines: list[str], measurements, origin: str = "pasted text") -> tuple[list[Run], dict[int, int]]:
    """Split an input into runs; returns ``(runs, {line: run index})`` for the measurement lines.

    Lab notes often hold several runs: a baseline and a patched kernel, or repeats.  A new run
    starts, once the current one has a measurement, at

    * a heading: markdown ``#``, org ``*`` (at column 0, on a line without a measurement),
      ``== title ==`` or a title underlined with ``===``; the run's label is the path of the
      headings it sits under (``kernel 6.15 / page_pool``);
    * a module load: a dmesg ``<module>: Loaded`` line, an ``insmod`` / ``modprobe`` command, or
      the name of a module loaded before appearing again after its tests;
    * a blank-line separated block that measures a test the current run already measured, with a
      different value (an identical value is a quoted repeat and stays in the run).

    A run spans from the line that opened it (or its first measurement) to the end of the
    blank-line separated block of its last measurement; text around runs belongs to none.
    """
    by_line: dict[int, list] = {}
    for m in measurements:
        by_line.setdefault(m.line, []).append(m)
    # blank-line separated blocks: the measurement keys of each, by its first line
    block_of: dict[int, int] = {}
    block_keys: dict[int, dict] = {}
    start = None
    for i, raw in enumerate(lines, start=1):
        if not raw.strip():
            start = None
            continue
        if start is None:
            start = i
        block_of[i] = start
        for m in by_line.get(i, []):
            block_keys.setdefault(start, {})[(m.test, m.unit, tuple(sorted(m.conditions.items())))] = m.value
    runs: list[Run] = []
    run_of: dict[int, int] = {}
    heads: list[tuple[int, str]] = []       # heading stack (level, title)
    known: set[str] = set()
    cur_keys: dict = {}                     # measurement keys of the current run -> value
    cur_first = None                        # line that opened the current run
    cur_lines: list[int] = []               # its measurement lines
    pending_head = pending_mod = None       # heading / module load seen while the current run is empty
    labels: list[tuple] = []                # heading path of each run
    heads_at_start: list[tuple[int, str]] = []

    def close(last_line: int) -> None:
        nonlocal cur_keys, cur_lines, cur_first
        if cur_lines:
            last = cur_lines[-1]  # the end of the block of its last measurement
            while last < min(last_line, len(lines)) and lines[last].strip():
                last += 1
            runs.append(Run(origin, len(runs) + 1, cur_first, last, "", len(cur_lines)))
            labels.append(tuple(t for _, t in heads_at_start))
        cur_keys, cur_lines, cur_first = {}, [], None

    for i, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        has_m = i in by_line
        boundary = False
        mod = None if has_m else _module_load(raw, known)  # before headings: "# modprobe x" is a root prompt
        h = None if (has_m or mod) else _heading(lines, i - 1)
        if h:
            boundary = True
        elif mod:
            boundary = True
        elif block_of.get(i) == i and cur_lines:
            keys = block_keys.get(i, {})
            boundary = any(k in cur_keys and cur_keys[k] != v for k, v in keys.items())
        if boundary:
            if cur_lines:
                close(i - 1)
                pending_head = pending_mod = None
            if h:
                pending_head = i  # the innermost heading above the run
            elif not h and pending_mod is None:
                pending_mod = i
        if h:
            level, title = h
            heads = [x for x in heads if x[0] < level] + [(level, _short(title.strip(), 80))]
        if mod:
            known.add(mod)
        if has_m:
            if not cur_lines:
                cur_first = pending_head or pending_mod or i
                heads_at_start = list(heads)
                pending_head = pending_mod = None
            cur_lines.append(i)
            run_of[i] = len(runs) + 1
            for m in by_line[i]:
                cur_keys[(m.test, m.unit, tuple(sorted(m.conditions.items())))] = m.value
    close(len(lines))
    # label: the heading path, less the headings every run shares (the document's title)
    common = 0
    while len(labels) > 1 and all(len(x) > common + 1 and x[common] == labels[0][common] for x in labels):
        common += 1
    runs = [dataclasses.replace(r, label=" / ".join(x[common:])) for r, x in zip(runs, labels)]
    return runs, run_of


# --------------------------------------------------------------------------- clock
#: pairs whose clock differs from the median by more than this (plus the cycle rounding) are named
CLOCK_SPREAD = 0.02
_TSC_TAIL = re.compile(r"time_interval:(\d+)\).*tsc_interval:(\d+)")


@dataclasses.dataclass
class Clock:
    """The TSC clock inferred from time_bench lines that give both cycles and ns."""
    ghz: float | None              # None: no cycles/ns pair
    pairs: int
    lo: float = math.nan           # smallest and largest clock of a single pair
    hi: float = math.nan
    warning: str = ""              # pairs that disagree by more than CLOCK_SPREAD

    def describe(self) -> str:
        if self.ghz is None:
            return "no cycles/ns pairs"
        return f"inferred from {self.pairs} cycles/ns pair{'s' if self.pairs != 1 else ''}"


def clock_pairs(measurements) -> list[tuple[float, float, str, bool]]:
    """``(ghz, cycles, where, exact)`` for each line that gives one test's cycles and ns.

    time_bench prints ``tsc_interval / loops`` rounded down to whole cycles and the ns with three
    decimals, so a pair gives ``(cycles + 0.5) / ns``; a full dmesg line that carries its
    ``time_interval`` and ``tsc_interval`` gives the clock exactly (``exact``).
    """
    groups: dict[tuple, dict] = {}
    for m in measurements:
        if m.kind in ("time_bench", "bulk_table", "generic") and m.unit in ("cycles", "ns"):
            groups.setdefault((m.origin, m.run, m.line, m.test), {})[m.unit] = m
    out = []
    for (origin, _run, line, _test), g in groups.items():
        if "cycles" not in g or "ns" not in g:
            continue
        cyc, ns = g["cycles"].value, g["ns"].value
        if not (math.isfinite(cyc) and math.isfinite(ns)) or ns <= 0 or cyc <= 0:
            continue
        tail = _TSC_TAIL.search(g["cycles"].raw)
        if tail and int(tail.group(1)) > 0:
            out.append((int(tail.group(2)) / int(tail.group(1)), cyc, f"{origin}, line {line}", True))
        else:
            out.append(((cyc + 0.5) / ns, cyc, f"{origin}, line {line}", False))
    return out


def infer_clock(measurements) -> Clock:
    """The TSC clock [GHz] of the measurements: the median over their cycles/ns pairs.

    Pairs under 10 cycles are used only when there is nothing else (the rounding to whole
    cycles makes their ratio coarse).  Pairs that differ from the median by more than 2 % (plus
    their rounding, 0.5 cycles) are named in :attr:`Clock.warning`: different machines or a clock
    that changed during the run.
    """
    pairs = clock_pairs(measurements)
    if not pairs:
        return Clock(None, 0)
    use = [p for p in pairs if p[1] >= 10 or p[3]] or pairs
    ghz = float(sorted(p[0] for p in use)[len(use) // 2]) if len(use) % 2 else \
        float(sum(sorted(p[0] for p in use)[len(use) // 2 - 1: len(use) // 2 + 1]) / 2)
    lo, hi = min(p[0] for p in use), max(p[0] for p in use)
    off = [p for p in use if abs(p[0] / ghz - 1) > CLOCK_SPREAD + (0 if p[3] else 0.5 / p[1])]
    warning = ""
    if off:
        shown = ", ".join(f"{w} ({g:.3f} GHz)" for g, _, w, _ in off[:4]) + (", ..." if len(off) > 4 else "")
        warning = (f"the cycles/ns pairs disagree: {len(off)} of {len(use)} differ from the median clock "
                   f"{ghz:.4g} GHz by more than {CLOCK_SPREAD * 100:g} %: {shown}; are these runs from different "
                   "machines or clock settings? choose one run, or give the clock with --ghz")
    return Clock(ghz, len(use), lo, hi, warning)
