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
identical measurements (a quoted reply) are kept once; the repeats are reported as notes.
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


@dataclasses.dataclass
class ParseResult:
    measurements: list[Measurement]
    errors: list[ParseError]
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.measurements)

    def extend(self, other: "ParseResult") -> "ParseResult":
        self.measurements += other.measurements
        self.errors += other.errors
        self.notes += other.notes
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
    else:
        res = _parse_lines(lines, origin)
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
        k = (m.test, m.value, m.unit, m.output, tuple(sorted(m.conditions.items())), m.origin)
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
