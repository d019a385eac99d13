"""The measured before and after a patch mail states, read from its own lines: :func:`measured`.

Mails state a measurement in many shapes; each is read where it is written as a before and an after:

* one line: ``80 Mpps -> 120 Mpps``, ``from 1110 Kpps to 2128 Kpps``, ``(392.2 -> 396.4 Krps)``,
  ``__GFP_ZERO (3.79Mpps) -> memset (3.765Mpps)``, ``unpatched/patched: 3.2/3.9 Mpps``;
* two labelled lines: ``Unpatched kernel: 2396594pps`` / ``Patched kernel: 2479970pps``,
  ``bpf-next master: ~3.64Mpps`` / ``bpf-next + skb bulking allocation: ~3.79Mpps``, ``w/o ...`` / ``with
  ...``, or a ``Before:`` line over the value it labels;
* a table whose columns are before and after (a header ``fallback - this-patch`` over rows
  ``16 - 45 cycles(tsc) 11.451 ns - 32 cycles(tsc) 8.148 ns``);
* a table whose rows are (``Baseline ... 3,771,046`` / ``Array ... 4,249,224`` under a ``pps`` header;
  ``threaded GRO 2.3 4 Mpps`` / ``thr bulk GRO 2.4 4.7 Mpps`` over a ``diff +4 +17 %`` row);
* ``without X: N`` over ``with X: M`` (or ``X: M``) under the line naming the test; a list of ``label: value
  (note)`` rows whose note says baseline; sections headed ``--- Non X ---`` and ``--- X ---`` (the last value
  of each, iperf's total); ``from X to Y`` across a paragraph, its unit named before (``the pps number goes
  from``);
* weaker, and ranked after those: a ``Before:`` value whose after is the one other line of the same shape
  (``implied``), two adjacent lines of the same shape and no label (``order``: the first taken as before);
* a relative change in words: ``~50% improvement``, ``+22%``.

Units are kept as written and converted: packet rates (Mpps, Kpps, pps) to ns per packet; bit rates
(Gbit/s, Mbit/s, Mb/sec) to packets with the packet size the mail states nearest the numbers, else 64-byte
packets, an assumption the result states; request rates to ns per request; cycles stay cycles and ns stay
ns, per whatever the line says (element, object, page, packet); numbers printed without a unit are read as
written and not converted.  A quoted line (``> ``) of a reply is the quoted mail's measurement, not the
reply's: read after everything the mails' own lines state, and marked quoted.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from .patchmail import SIGNATURE_LINES, Mail
from .physics import units

#: lines of a mail's own text read for measurements, and pairs kept per mail: a mail states its numbers in
#: a few dozen lines; these bound the time a pasted log of hundreds of thousands of lines can take
MAX_LINES = 50_000
MAX_RESULTS = 1_000

#: added to the rank of what a reply's quoted lines state: after everything the mail's own lines state
QUOTED_RANK = 10.0

#: packet size taken for a bit rate when the mail states none [bytes] (the minimum Ethernet frame, the
#: size small-packet benchmarks use)
ASSUMED_PACKET_BYTES = 64

# ---------------------------------------------------------------- values and units
_UNIT = (r"[MmKkGg]?(?:pps|PPS)|[MmKk]?pkts?/s(?:ec)?|[MmKk]?packets/s(?:ec)?|[GgMmKk]bits?/s(?:ec)?|"
         r"[GgMm]bits?(?![\w/])|[GgMmKk]bps|"
         r"[GgMmKk]b/s(?:ec)?|bps|[MmKk]?rps|[MmKk]?req/s|cycles\(tsc\)|cycles|cyc|nsec|nanosec(?:ond)?s?|ns|"
         r"usec|us|µs|%")
_VALUE = re.compile(r"(?<![\w.,:=\-+])(?P<sign>[-+]|[~≈]\s?)?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
                    r"(?:(?P<space>\s?)(?P<unit>" + _UNIT + r"))?(?!\w)(?!\.\d)")
_ALONE_UNIT = re.compile(r"^(?:" + _UNIT + r")$")
_NA = re.compile(r"^(?:n/?a|N/?A|-|--)$")

# unit as written -> (canonical, dimension, factor to the dimension's base)
_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9}


@functools.lru_cache(maxsize=256)
def _canon(written: str) -> tuple[str, str, float]:
    """``(canonical unit, dimension, factor)``: dimension ``packets`` (per s), ``bits`` (per s),
    ``requests`` (per s), ``cycles``, ``ns`` or ``%``; factor to packets/s, bits/s, requests/s or ns."""
    w = written
    if not w:  # a number the mail prints without a unit
        return "", "", 1.0
    if w == "%":
        return "%", "%", 1.0
    if w.startswith("cyc"):
        return "cycles", "cycles", 1.0
    if w in ("ns", "nsec") or w.startswith("nanosec"):
        return "ns", "ns", 1.0
    if w in ("usec", "us", "µs"):
        return "us", "ns", 1e3
    low = w.lower()
    if re.match(r"^[mkg]?(?:pps|pkts?/s|packets/s)", low):
        p = low[0] if low[0] in "mkg" and not low.startswith(("pkt", "packets")) else ""
        return {"": "pps", "k": "Kpps", "m": "Mpps", "g": "Gpps"}[p], "packets", _PREFIX[p]
    if re.match(r"^[mk]?(?:rps|req/s)", low):
        p = low[0] if low[0] in "mk" else ""
        return {"": "rps", "k": "Krps", "m": "Mrps"}[p], "requests", _PREFIX[p]
    p = low[0] if low[0] in "gmk" and low != "bps" else ""
    return {"": "bit/s", "k": "Kbit/s", "m": "Mbit/s", "g": "Gbit/s"}[p], "bits", _PREFIX[p]


class _V:
    """One number of a line: as written, its value, its unit (written and canonical) and where it stands."""
    __slots__ = ("text", "number", "value", "signed", "unit", "canon", "dim", "factor", "start", "end")

    def __init__(self, m: re.Match, unit: str | None = None):
        self.text = m.group(0).strip()
        self.number = ((m.group("sign") or "").strip() + m.group("num"))
        self.value = float(m.group("num").replace(",", ""))
        sign = (m.group("sign") or "").strip()
        self.signed = sign in ("+", "-")
        if sign == "-":
            self.value = -self.value
        self.unit = unit if unit is not None else (m.group("unit") or "")
        self.canon, self.dim, self.factor = _canon(self.unit) if self.unit else ("", "", 1.0)
        self.start, self.end = m.start(), m.end()


_DIGIT = re.compile(r"\d")


def values(line: str) -> list[_V]:
    """The numbers of ``line`` with their units (a number without one has unit "")."""
    return [_V(m) for m in _VALUE.finditer(line)] if _DIGIT.search(line) else []


# ---------------------------------------------------------------- words
_BEFORE_STRONG = (r"before|baseline|unpatched|un-patched|without(?:\s+(?:the|this|these|my))?\s+(?:patch|series|"
                  r"change|fix)\w*|w/o|vanilla|current|curr|in-kernel|pre-patch|prior|reverted")
_BEFORE_WEAK = r"base|master|original|orig|old|stock|upstream|fallback|reference"
_AFTER_WORDS = (r"after|patched|with(?:\s+(?:the|this|these|my))?\s+(?:patch|series|change|fix)\w*|"
                r"this[- ]patch|this[- ]series|new|applied|post-patch|optimi[sz]ed")
_BEFORE = re.compile(r"(?<![\w-])(?:" + _BEFORE_STRONG + "|" + _BEFORE_WEAK + r")(?![\w-])", re.I)
_STRONG = re.compile(r"(?<![\w-])(?:" + _BEFORE_STRONG + r")(?![\w-])", re.I)
_AFTER = re.compile(r"(?<![\w-])(?:" + _AFTER_WORDS + r")(?![\w-])|(?:^|\s)\+\s", re.I)
_ARROW = re.compile(r"^\s*\)?\s*(?:->|-->|=>|→|⟶|to)\s*\(?\s*$|^[^\d]{0,40}(?:->|-->|=>|→)[^\d]{0,40}$")
_SLASH = re.compile(r"^\s*/\s*$")
_FROM = re.compile(r"\bfrom\s*[~≈]?\s*$", re.I)
_DIFF_ROW = re.compile(r"^\s*(?:diff|delta|change|gain|improvement|speed-?up|Δ)\b", re.I)
_BETTER = re.compile(r"improve\w*|faster|better|gain\w*|increase\w*|speed-?up|more|higher|win", re.I)
_WORSE = re.compile(r"slower|worse|regress\w*|loss|los[ei]\w*|decrease\w*|drop\w*|lower|reduc\w*", re.I)
_PCT_WORDS = re.compile(r"improve\w*|faster|slower|better|worse|gain\w*|regress\w*|increase\w*|decrease\w*|"
                        r"reduc\w*|speed-?up|throughput|drop|loss", re.I)
_PER = [(re.compile(r"per\s+(?:elem|element)\b|/elem", re.I), "element"),
        (re.compile(r"per\s+(?:packet|pkt)s?\b|/pkt|/packet|ns/p\b", re.I), "packet"),
        (re.compile(r"per\s+(?:object|obj)\b|/object|/obj", re.I), "object"),
        (re.compile(r"per\s+page\b|/page", re.I), "page"),
        (re.compile(r"per\s+(?:op|operation)\b|/op\b", re.I), "operation")]
_PACKET_SIZE = [re.compile(r"\b(\d{2,5})\s?-?\s?(?:bytes?|B)\b(?=[^\n]{0,25}?\b(?:packets?|frames?|pkts?|UDP|TCP|"
                           r"IPv[46]|payload|sized?)\b)", re.I),
                re.compile(r"\(\s*(\d{2,5})\s?byte", re.I),
                re.compile(r"\b(?:packet|pkt|frame)[ _-]?size\s*[:=]?\s*(\d{2,5})\b", re.I),
                re.compile(r"(?:^|\s)(?:-s|pkt_size)\s+(\d{2,5})\b")]
_WROTE = re.compile(r"wrote:\s*$|^\s*On .{0,120}$")
#: a line's label ``without X:`` / ``with X:`` (before / after of the same X)
_WITH_LABEL = re.compile(r"^\s*(?:[-*]\s*)?(?:(?P<neg>without|w/o)|with|w/)\s+"
                         r"(?P<what>[A-Za-z][^:=\d]{0,60}?)\s*[:=]?\s*$", re.I)
_PLAIN_LABEL = re.compile(r"^\s*(?:[-*]\s*)?(?P<what>[A-Za-z][^:=\d]{0,60}?)\s*[:=]\s*$")
#: a ``label: value (note)`` row of a list, and the note that makes it the baseline
_LIST_ROW = re.compile(r"^\s*(?P<label>[A-Za-z][^:\d]{0,40}?)\s*:\s*[~≈]?\d[\d,.]*\s?\S*\s*"
                       r"(?:\((?P<note>[^)]*)\))?\s*$")
_BASELINE_NOTE = re.compile(r"^\s*(?:baseline|base|before|reference|unpatched)\s*$", re.I)
#: a decorated section heading (``--- title ---``, ``=== title ===``) and a title that negates another
_SECTION = re.compile(r"^\s*[-=#*]{2,}\s*(?P<title>[A-Za-z][^-=#*]*?)\s*[-=#*]{2,}\s*$")
_NEGATED = re.compile(r"^(?:non|no|without|w/o)[- ]+(?P<what>\S.*)$", re.I)
#: ``from X [unit] to Y [unit]`` across a paragraph, and a unit written as a word (``the pps number``)
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_FROM_TO = re.compile(r"\bfrom\s+[~≈]?\s?(?P<b>(?P<bn>" + _NUM + r"))\s?(?P<bu>" + _UNIT + r")?(?!\w)\s+to\s+[~≈]?\s?"
                      r"(?P<a>(?P<an>" + _NUM + r"))\s?(?P<au>" + _UNIT + r")?(?![\w.]\d)", re.I)
_UNIT_WORD = re.compile(r"(?<![\w/])([MmKkGg]?pps|[MmKk]rps|[GgMm]bits?/s(?:ec)?|[GgMmKk]bps)(?![\w/])")


def _quoted(line: str) -> bool:
    return line.lstrip().startswith(">")


def _label_side(label: str) -> str | None:
    """``"before"``, ``"after"`` or None (neither, or both) for a row or line label."""
    b, a = bool(_BEFORE.search(label)), bool(_AFTER.search(label))
    return "before" if b and not a else "after" if a and not b else None


def _per(line: str) -> str | None:
    return next((what for pat, what in _PER if pat.search(line)), None)


_HEADING_PHRASE = re.compile(r"(?:before|after|without|with|w/o|w/)\s+(?:this|the|my|these)?\s*(?:patch|series|"
                             r"change|fix)\w*", re.I)


_SIDE_COLON = re.compile(r"(?<![\w-])(?:before|after|baseline|unpatched|patched)\s*:\s*$", re.I)


def _heading_side(line: str) -> str | None:
    """For a line without a value that heads a block: ``"before"``, ``"after"``, ``""`` (a heading that
    says neither, ending the block above), or None (prose, no heading).  A heading ends in ``before:`` or
    ``after:``, or is short (at most ten words) and ends in a colon or names the patch (``... before this
    patchset``)."""
    words = re.sub(r"[\W\d_]+", " ", line).split()
    if _SIDE_COLON.search(line):
        return _label_side(line) or ""
    if not words or len(words) > 10:
        return None
    if not (line.rstrip().endswith(":") or _HEADING_PHRASE.search(line) or len(words) <= 2):
        return None
    return _label_side(line) or ""


def _shape(line: str) -> str:
    """A line with its numbers and its label word taken out: two lines of one benchmark's output share it."""
    s = re.sub(r"(?<![A-Za-z_])\d+(?:[.,]\d+)*", "#", line)
    s = re.sub(r"^[\s>*-]*", "", s)
    s = re.sub(r"^[^#:]*?:", ":", s) if ":" in s.split("#")[0] else s
    return " ".join(s.split())


# ---------------------------------------------------------------- one mail
class _Reader:
    def __init__(self, mail: Mail, lines: list[str], quoted: bool, rank_offset: float = 0.0):
        self.mail, self.lines, self.quoted = mail, lines, quoted
        #: added to every result's rank: a reply's quotes rank after its own lines
        self.rank_offset = rank_offset
        self.used: set[int] = set()
        self.found: list[dict] = []
        self.full = False
        self.vals = [values(line) for line in lines]
        # a line's measurements: numbers with a unit other than %, not a signed difference
        self.meas = [[v for v in vs if v.unit and v.dim != "%" and not v.signed] for vs in self.vals]
        self.sizes = [(i, int(m.group(1)), line.strip()) for i, line in enumerate(lines) for pat in _PACKET_SIZE
                      for m in [pat.search(line)] if m]

    # -- results
    def _packet_bytes(self, rows: Sequence[int]) -> tuple[int, str]:
        if not self.sizes:
            return ASSUMED_PACKET_BYTES, (f"{ASSUMED_PACKET_BYTES}-byte packets ASSUMED: the mail states no packet "
                                          f"size")
        i, size, _ = min(self.sizes, key=lambda s: (min(abs(s[0] - r) for r in rows), s[0] > min(rows)))
        return size, ""

    def add(self, how: str, b: _V, a: _V, rows: Sequence[int], label: str = "", rank: float = 0.0,
            also: Sequence[tuple[_V, _V]] = (), stated_pct: str | None = None, strong: bool = False) -> None:
        if len(self.found) >= MAX_RESULTS:
            self.full = True
            return
        unit = b.unit if b.unit else a.unit
        canon, dim, factor = _canon(unit)
        bv, av = b.value, a.value
        per, assumed, size, note = _per(" ".join(self.lines[r] for r in rows)), "", None, ""
        conv_unit, bc, ac = None, None, None
        if dim == "packets":
            conv_unit, per = "ns/packet", "packet"
            bc, ac = (float(units.mpps_to_ns(v * factor / 1e6)) for v in (bv, av))
        elif dim == "bits":
            size, why = self._packet_bytes(rows)
            assumed = why
            conv_unit, per = "ns/packet", "packet"
            bc, ac = (float(units.mpps_to_ns(units.gbps_to_mpps(v * factor / 1e9, size))) for v in (bv, av))
            note = f"bits counted as {size}-byte packets (the packets' own bytes, no preamble or inter-frame gap)"
        elif dim == "requests":
            conv_unit, per = "ns/request", "request"
            bc, ac = (float(units.mpps_to_ns(v * factor / 1e6)) for v in (bv, av))
        elif dim == "ns":
            conv_unit = "ns/packet" if per == "packet" else "ns"
            bc, ac = bv * factor, av * factor
        elif dim == "cycles":
            conv_unit, bc, ac = "cycles", bv, av
            note = (f"cycles kept as cycles, per {per}" if per else
                    "cycles kept as cycles, per packet or per object: the mail does not say which")
        elif not dim:
            note = "the mail prints no unit: read as written, not converted"
        rate = dim in ("packets", "bits", "requests")
        relative = (av / bv - 1.0) if bv else None
        self.found.append({
            "mail": self.mail.index, "how": how, "kind": "rate" if rate else "cost" if dim else "count",
            "label": " ".join(label.split()),
            "text": f"{b.number} -> {a.number} {unit or '(no unit printed)'}", "before": b.number,
            "after": a.number, "unit": unit,
            "before_value": bv, "after_value": av,
            "per": per, "converted_unit": conv_unit, "before_converted": bc, "after_converted": ac,
            "delta": (ac - bc) if bc is not None else None,
            "delta_ns_per_packet": (ac - bc) if conv_unit == "ns/packet" else None,
            "relative": relative, "better": (av > bv if rate else av < bv) if av != bv and dim else None,
            "packet_bytes": size, "assumed": assumed, "note": note,
            "stated_pct": stated_pct if not stated_pct or stated_pct.endswith("%") else stated_pct + "%",
            "also": [{"unit": x.unit, "before": x.number, "after": y.number} for x, y in also],
            "lines": [self.lines[r].strip() for r in rows], "quoted": self.quoted,
            "_rank": (rank + self.rank_offset, 0 if strong else 1, 0 if rate else 1, len(self.found))})
        self.used.update(rows)

    def add_relative(self, v: _V, row: int) -> None:
        if len(self.found) >= MAX_RESULTS:
            self.full = True
            return
        line = self.lines[row]
        words = line[max(0, v.start - 40):v.end + 40]
        better = True if _BETTER.search(words) and not _WORSE.search(words) else (
            False if _WORSE.search(words) and not _BETTER.search(words) else None)
        self.found.append({
            "mail": self.mail.index, "how": "percentage", "kind": "relative", "label": "",
            "text": " ".join(line[max(0, v.start - 30):v.end + 30].split()), "before": None,
            "after": None, "unit": "%", "before_value": None, "after_value": None, "per": None, "converted_unit": None,
            "before_converted": None, "after_converted": None, "delta": None, "delta_ns_per_packet": None,
            "relative": v.value / 100.0, "better": better, "packet_bytes": None, "assumed": "",
            "note": "a relative change: its sign is the words' (improvement, slower) where the number has none",
            "stated_pct": v.text, "also": [], "lines": [line.strip()], "quoted": self.quoted,
            "_rank": (9 + self.rank_offset, 1, 1, len(self.found))})

    # -- shapes
    def one_line(self) -> None:
        """``X -> Y``, ``from X to Y``, ``before X, after Y``, ``unpatched/patched: X/Y``."""
        for i, line in enumerate(self.lines):
            if i in self.used:
                continue
            vs = [v for v in self.vals[i] if v.dim != "%" and not v.signed]
            for x, y in zip(vs, vs[1:]):
                if not y.unit or (x.unit and x.dim != y.dim):
                    continue
                between, pre = line[x.end:y.start], line[max(0, x.start - 40):x.start]
                if len(between) > 60:
                    continue
                arrow = bool(_ARROW.match(between)) and (between.strip() != "to" or x.unit == y.unit
                                                          or bool(_FROM.search(pre)))
                post = line[y.end:y.end + 30]
                labelled = (_label_side(pre) == "before" and _label_side(between) == "after") or (
                    _label_side(between) == "before" and _label_side(post) == "after")
                slash = bool(_SLASH.match(between)) and _BEFORE.search(pre) and _AFTER.search(pre)
                if arrow or labelled or slash:
                    xx = x if x.unit else _V(_VALUE.match(line, x.start), y.unit)
                    self.add("one line" if arrow else "labelled", xx, y, [i], label=pre.strip(" :-(~"), rank=0,
                             strong=bool(_STRONG.search(pre)))
                    break
            else:
                self._wrapped_from_to(i, vs)

    def _wrapped_from_to(self, i: int, vs: list) -> None:
        """``... from X`` at a line's end and ``to Y`` opening the next: the pair a mail's line wrap split."""
        if not vs or i + 1 >= len(self.lines) or i + 1 in self.used:
            return
        x, line, nxt = vs[-1], self.lines[i], self.lines[i + 1]
        ys = [v for v in self.vals[i + 1] if v.dim != "%" and not v.signed and v.unit]
        if not x.unit or line[x.end:].strip() or not _FROM.search(line[max(0, x.start - 40):x.start]) or not ys:
            return
        y = ys[0]
        if x.dim == y.dim and re.fullmatch(r"\s*to\s*", nxt[:y.start]):
            pre = line[max(0, x.start - 40):x.start]
            self.add("one line", x, y, [i, i + 1], label=pre.strip(" :-(~"), rank=0,
                     strong=bool(_STRONG.search(pre)))

    def column_tables(self) -> None:
        """Rows of two equal groups of values under a header whose columns say before and after."""
        i, n = 0, len(self.lines)
        while i < n:
            row = self._two_groups(i)
            if row is None:
                i += 1
                continue
            head_i = next((k for k in range(i - 1, max(-1, i - 4), -1) if self.lines[k].strip()), None)
            if head_i is None or self._two_groups(head_i) is not None:
                i += 1
                continue
            cols = [c for c in re.split(r"\s+-\s+|-\s+|\s{2,}|\t|\|", self.lines[head_i].strip()) if c.strip()]
            sides = [_label_side(c) for c in cols]
            if "before" not in sides or "after" not in sides:
                i += 1
                continue
            flip = sides.index("after") < sides.index("before")
            strong = bool(_STRONG.search(cols[sides.index("before")]))
            first = cols[0] if sides[0] is None and len(cols) > 2 else ""
            while i < n and (row := self._two_groups(i)) is not None:
                b, a = (row[1], row[0]) if flip else row
                label = " ".join(x for x in (first, self.lines[i][:b[0].start].strip(" -:|")) if x)
                pct = [v.text for v in self.vals[i] if v.dim == "%"]
                self.add("table columns", b[0], a[0], [i, head_i], label=label, rank=1, strong=strong,
                         also=list(zip(b[1:], a[1:])), stated_pct=pct[-1] if pct else None)
                i += 1

    def _two_groups(self, i: int):
        vs = self.meas[i]
        if len(vs) < 2 or len(vs) % 2:
            return None
        h = len(vs) // 2
        if [v.canon for v in vs[:h]] != [v.canon for v in vs[h:]]:
            return None
        return vs[:h], vs[h:]

    def row_tables(self) -> None:
        """Blocks of rows (a label, then cells) where a row's label says before (baseline) or two rows stand
        over a ``diff`` row: each column a before and an after."""
        for i, j in self._blocks():
            self._row_block(i, j)

    def _cells(self, line: str):
        """``(label, cells, trailing unit)`` of a table row, or None: cells are numbers or N/A."""
        toks = line.split()
        unit = toks[-1] if toks and _ALONE_UNIT.match(toks[-1]) else ""
        if unit:
            toks = toks[:-1]
        k = 0
        while k < len(toks) and not (_VALUE.fullmatch(toks[k]) or _NA.match(toks[k])):
            k += 1
        label, cells = " ".join(toks[:k]), toks[k:]
        if not cells or not re.search(r"[A-Za-z]", label) or not all(_VALUE.fullmatch(c) or _NA.match(c)
                                                                      for c in cells):
            return None
        return label, [_V(m) if (m := _VALUE.fullmatch(c)) else None for c in cells], unit

    def _row_block(self, i: int, j: int) -> None:
        rows = [(k, c) for k in range(i, j)
                if k not in self.used and self.vals[k] and (c := self._cells(self.lines[k]))]
        if len(rows) < 2:
            return
        head = self.lines[i] if rows[0][0] != i else ""
        head_units = [t for t in head.split() if _ALONE_UNIT.match(t) and t != "%"]
        head_cols = [c for c in re.split(r"\s{2,}|\t", head.strip()) if c and not _ALONE_UNIT.match(c)]

        def cols(row):
            label, cells, unit = row
            out = []
            for c in cells:
                if c is None:
                    out.append(None)
                    continue
                u = c.unit or unit or (head_units[0] if len(head_units) == 1 else "")
                out.append(_V(_VALUE.fullmatch(c.text), u) if u and not c.unit else c)
            return [c for c in out if c is None or c.dim != "%"], [c for c in out if c is not None and c.dim == "%"]

        diff_rows = [k for k, (label, _, _) in rows if _DIFF_ROW.match(label)]
        diff_pct = [cols(c)[1] or cols(c)[0] for k, c in rows if k in set(diff_rows)][:1]
        value_rows = [(k, c) for k, c in rows if k not in set(diff_rows) and any(x and x.unit for x in cols(c)[0])]
        sides = [_label_side(c[0]) for _, c in value_rows]
        if "before" in sides:
            b_k, b_c = value_rows[sides.index("before")]
            afters = [(k, c) for (k, c), s in zip(value_rows, sides) if s != "before" and k > b_k]
            afters.reverse()   # the last row is the variant the mail ends on: ranked first
        elif len(value_rows) == 2 and diff_rows and diff_rows[0] > value_rows[1][0]:
            (b_k, b_c), afters = value_rows[0], [value_rows[1]]
        else:
            return
        # a row table's "baseline" is often a reference outside the patch (the tree before the series): its
        # rows keep the mail's order, whatever their words
        strong = False
        labelled = len(value_rows) == 2 and sorted(s or "" for s in sides) == ["after", "before"]
        how, rank = ("labelled lines", 0) if labelled else ("table rows", 1)
        b_cols = cols(b_c)[0]
        for rank_k, (a_k, a_c) in enumerate(afters):
            a_cols, a_pct = cols(a_c)
            for col, (b, a) in enumerate(zip(b_cols, a_cols)):
                if b is None or a is None or not b.unit or b.dim != a.dim:
                    continue
                name = head_cols[col] if len(head_cols) == len(b_cols) else ""
                pct = a_pct[col].text if col < len(a_pct) else (
                    diff_pct[0][col].text if diff_pct and col < len(diff_pct[0]) and diff_pct[0][col] else None)
                self.add(how, b, a, [b_k, a_k], label=f"{b_c[0]} -> {a_c[0]}" + (f" ({name})" if name else ""),
                         rank=rank + rank_k / 10, strong=strong, stated_pct=pct)
        self.used.update(range(i, j))

    def labelled_lines(self) -> None:
        """Lines labelled before and after: by their own text before the first value, or by a heading over
        their block (``Before:``, ``1. raw performance data after this patchset``; the block runs to the
        first blank line after a value).  A before pairs with the after of the same shape (the same
        benchmark line: ``Type:page_pool01 Per elem``), in order; else with the nearest after of the same
        kind.  A before or after left alone pairs with the one other unlabelled line of its shape."""
        sides: dict[int, str] = {}
        self.headings: dict[int, str] = {}
        block, block_left, seen_value, head = None, 0, False, ""
        for i, line in enumerate(self.lines):
            vs = self.meas[i]
            if not vs:
                heading = _heading_side(line)
                if heading is not None:
                    block, block_left, seen_value, head = heading or None, 60, False, line.strip(" :")
                elif not line.strip() and seen_value:
                    block = None
                block_left -= 1
                if block_left <= 0:
                    block = None
                continue
            seen_value = True
            side = _label_side(line[:vs[0].start]) or block
            if side and i not in self.used:
                sides[i] = side
                if block and not _label_side(line[:vs[0].start]):
                    self.headings[i] = head
        shapes = {i: _shape(self.lines[i]) for i in sides}
        afters_by_shape: dict[str, list[int]] = {}
        for i, side in sides.items():
            if side == "after":
                afters_by_shape.setdefault(shapes[i], []).append(i)
        for b in [i for i, side in sides.items() if side == "before"]:
            same = [a for a in afters_by_shape.get(shapes[b], []) if a not in self.used]
            if same:
                self._pair(b, same[0], "labelled lines", 0)
        afters = [i for i, side in sides.items() if side == "after"]
        for b in [i for i, side in sides.items() if side == "before" and i not in self.used]:
            bv = self.meas[b][0]
            cands = [a for a in afters if a not in self.used and abs(a - b) <= 12
                     and any(v.dim == bv.dim for v in self.meas[a])]
            if cands:
                a = min(cands, key=lambda a: (a < b, abs(a - b)))
                self._pair(b, a, "labelled lines", 0)
        lones = [(i, s) for i, s in sides.items() if i not in self.used]
        by_shape: dict[str, list[int]] = {}
        if lones:
            for k, line in enumerate(self.lines):
                if k not in sides and self.meas[k]:
                    by_shape.setdefault(_shape(line), []).append(k)
        for lone, side in lones:
            same = [k for k in by_shape.get(shapes[lone], []) if k not in self.used]
            if len(same) == 1:
                b, a = (lone, same[0]) if side == "before" else (same[0], lone)
                self._pair(b, a, "implied", 2)

    def _pair(self, b: int, a: int, how: str, rank: float) -> None:
        bvs, avs = self.meas[b], self.meas[a]
        pairs = [(x, next(y for y in avs if y.canon == x.canon)) for x in bvs if any(y.canon == x.canon for y in avs)]
        if not pairs:
            pairs = [(bvs[0], next(y for y in avs if y.dim == bvs[0].dim))]
        label = self.lines[b][:bvs[0].start].strip(" -:*|") or getattr(self, "headings", {}).get(b, "")
        self.add(how, pairs[0][0], pairs[0][1], [b, a], label=label, rank=rank,
                 strong=bool(_STRONG.search(self.lines[b][:bvs[0].start])), also=pairs[1:])

    def adjacent_pairs(self) -> None:
        """Exactly two adjacent lines of one shape, no label either way: the first taken as the before."""
        n = len(self.lines)
        for i in range(n - 1):
            if i in self.used or i + 1 in self.used:
                continue
            x, y = self.meas[i], self.meas[i + 1]
            if not x or not y or [v.canon for v in x] != [v.canon for v in y]:
                continue
            if (i > 0 and self.meas[i - 1]) or (i + 2 < n and self.meas[i + 2]):
                continue
            if _shape(self.lines[i]) != _shape(self.lines[i + 1]):
                continue
            self._pair(i, i + 1, "order", 3)

    def _blocks(self):
        """``(first, end)`` of each run of non-blank lines."""
        i, n = 0, len(self.lines)
        while i < n:
            if not self.lines[i].strip():
                i += 1
                continue
            j = i
            while j < n and self.lines[j].strip():
                j += 1
            yield i, j
            i = j

    def with_without(self) -> None:
        """``without PP recycle: 1,855,069`` over ``with PP recycle: 2,033,439`` (or ``reusing skb: ...`` under
        ``without reusing skb: ...``): a line labelled ``without X`` and one labelled ``with X`` or ``X`` (the
        same X) in one block, a unit or none (then read as written); the line over them names the test."""
        for i, j in self._blocks():
            sides: dict[str, dict[str, int]] = {"before": {}, "after": {}, "plain": {}}
            heads: dict[int, str] = {}
            head = ""
            for k in range(i, j):
                vs = [v for v in self.vals[k] if v.dim != "%" and not v.signed]
                if not vs:
                    head = self.lines[k].strip()
                    continue
                heads[k] = head
                label = self.lines[k][:vs[0].start]
                m = _WITH_LABEL.match(label)
                plain = _PLAIN_LABEL.match(label)
                if k in self.used:
                    continue
                if m:
                    sides["before" if m.group("neg") else "after"].setdefault(" ".join(m.group("what").lower().split()),
                                                                              k)
                elif plain:
                    sides["plain"].setdefault(" ".join(plain.group("what").lower().split()), k)
            for what, b in sides["before"].items():
                a = sides["after"].get(what, sides["plain"].get(what))
                if a is None or abs(a - b) > 6:
                    continue
                head = heads.get(b, "")
                x = next(v for v in self.vals[b] if v.dim != "%" and not v.signed)
                y = next(v for v in self.vals[a] if v.dim != "%" and not v.signed)
                if x.unit and y.unit and x.dim != y.dim:
                    continue
                x, y = (x if x.unit or not y.unit else _V(_VALUE.match(self.lines[b], x.start), y.unit),
                        y if y.unit or not x.unit else _V(_VALUE.match(self.lines[a], y.start), x.unit))
                said = [self.lines[r][:v.start].strip(" -*:=") for r, v in ((b, x), (a, y))]
                label = (f"{head}: " if head else "") + " -> ".join(said)
                self.add("labelled lines", x, y, [b, a], label=label, rank=0, strong=True)

    def baseline_list(self) -> None:
        """``copy mode: 1,861,347 pps (baseline)`` over ``batch mode: 2,344,052 pps (+25.9%)``: in a block of
        ``label: value (note)`` lines, the one noted as the baseline is the before of each other line."""
        for i, j in self._blocks():
            rows = [(k, m) for k in range(i, j) if k not in self.used and (m := _LIST_ROW.match(self.lines[k]))
                    and self.meas[k]]
            base = [(k, m) for k, m in rows if _BASELINE_NOTE.match(m.group("note") or "")]
            if len(base) != 1 or len(rows) < 2:
                continue
            b_k, b_m = base[0]
            x = self.meas[b_k][0]
            for rank_k, (a_k, a_m) in enumerate([r for r in rows if r[0] != b_k]):
                y = self.meas[a_k][0]
                if y.dim != x.dim:
                    continue
                pct = [v.text for v in self.vals[a_k] if v.dim == "%"]
                self.add("table rows", x, y, [b_k, a_k], label=f"{b_m.group('label')} -> {a_m.group('label')}",
                         rank=1 + rank_k / 10, stated_pct=pct[-1] if pct else None)

    def sections(self) -> None:
        """Sections headed ``--- Non Page Pool implementation on i.MX8 ----`` and ``--- Page Pool implementation
        on i.MX8 ----`` (a benchmark's output under each, iperf's total last): the negated heading's last value
        is the before, the other's the after."""
        heads = [(k, m) for k, line in enumerate(self.lines) if not self.meas[k] and (m := _SECTION.match(line))]
        last: dict[int, int] = {}
        for (k, _), nxt in zip(heads, [h[0] for h in heads[1:]] + [len(self.lines)]):
            vals = [r for r in range(k + 1, min(nxt, k + 60)) if self.meas[r]]
            if vals:
                last[k] = vals[-1]
        named = {}
        for k, m in heads:
            neg = _NEGATED.match(m.group("title"))
            what = " ".join((neg.group("what") if neg else m.group("title")).lower().split())
            named.setdefault(what, {})["before" if neg else "after"] = (k, m.group("title"))
        for what, pair in named.items():
            if len(pair) != 2 or pair["before"][0] not in last or pair["after"][0] not in last:
                continue
            b, a = last[pair["before"][0]], last[pair["after"][0]]
            if b in self.used or a in self.used:
                continue
            x, y = self.meas[b][-1], self.meas[a][-1]
            if x.dim == y.dim:
                self.add("labelled lines", x, y, [b, a], label=f"{pair['before'][1]} -> {pair['after'][1]}", rank=1,
                         strong=True)

    def prose_from_to(self) -> None:
        """``The pps number goes from`` / ``1,458,644 to 1,647,235 by running [2].``: a ``from X to Y`` of one
        paragraph, the unit written after the numbers or as a word earlier in the paragraph; with none, only
        numbers written with thousands separators are taken (read as written, not converted)."""
        for i, j in self._blocks():
            text, starts = "", []
            for k in range(i, j):
                starts.append(len(text))
                text += self.lines[k] + " "
            for m in _FROM_TO.finditer(text):
                rows = sorted({max(r for r, st in enumerate(starts) if st <= pos) + i
                               for pos in (m.start(), m.start("b"), m.start("a"))})
                if any(r in self.used for r in rows):
                    continue
                unit = m.group("au") or m.group("bu")
                if not unit:
                    words = _UNIT_WORD.findall(text[:m.start()])
                    unit = words[-1] if words else ""
                if not unit and not ("," in m.group("bn") and "," in m.group("an")):
                    continue
                bm, am = _VALUE.match(text, m.start("b")), _VALUE.match(text, m.start("a"))
                if bm is None or am is None:
                    continue
                x, y = _V(bm, m.group("bu") or unit), _V(am, m.group("au") or unit)
                if (x.unit and y.unit and x.dim != y.dim) or "%" in (x.dim, y.dim):
                    continue
                self.add("one line", x, y, rows, label=text[max(0, m.start() - 40):m.start()].strip(" :-(~"),
                         rank=0.5)

    def percentages(self) -> None:
        for i, line in enumerate(self.lines):
            if i in self.used:
                continue
            for v in self.vals[i]:
                if v.dim == "%" and v.value and (v.signed or _PCT_WORDS.search(line[max(0, v.start - 40):v.end + 40])):
                    self.add_relative(v, i)


def _lines_of(mail: Mail) -> tuple[list[str], list[str], bool]:
    """The lines a mail's measurement is read from: its own (its prose less quoted lines and signature) and its
    quoted ones (their ``>`` marks taken off), each list as long as the prose (a line of the other kind left
    blank, so that paragraphs stay apart); and whether the mail is nothing but quotes."""
    own, quoted = [], []
    sig_left = 0
    for line in mail.prose.split("\n"):
        if line in ("-- ", "--"):
            sig_left = SIGNATURE_LINES + 1
        if sig_left and line.strip():
            sig_left -= 1
            own.append("")
            continue
        sig_left = 0
        if _quoted(line):
            quoted.append(re.sub(r"^\s*(?:>\s?)+", "", line))
            own.append("")
        else:
            own.append(line)
            quoted.append("")
    return own, quoted, not any(line.strip() and not _WROTE.search(line) for line in own)


def measured(mails: Sequence[Mail], notes: list[str] | None = None) -> list[dict]:
    """Every before and after the mails state, best first (a pair written as one, then tables, then pairs
    implied by a line's shape or by order, then relative changes in words; a strong before word such as
    "unpatched" or "current" before a weak one such as "fallback"; packet rates before costs; then in the
    mails' order).  Each a dict:

    ``mail`` (index), ``how`` (one line, labelled lines, table columns, table rows, implied, order,
    percentage), ``kind`` (rate, cost, relative), ``label``, ``text`` (``"80 -> 120 Mpps"``; for a relative
    change the words around it), ``before``/``after`` (the numbers as written, ``~`` and thousands commas
    kept; None for a relative change), ``unit`` (as written), ``before_value``/``after_value`` (in that
    unit), ``per`` (packet, request, element, object, page, or None), ``converted_unit`` (ns/packet for
    packet and bit rates, ns/request, ns, cycles), ``before_converted``/``after_converted``, ``delta``
    (after - before, converted), ``delta_ns_per_packet`` (the delta where it is ns per packet, else None),
    ``relative`` (after/before - 1; a stated percentage / 100), ``better`` (faster or cheaper after; None if
    equal or unsaid), ``packet_bytes`` and ``assumed`` (for a bit rate: the size used and, when the mail
    states none, the assumption), ``note``, ``stated_pct`` (the percentage the row or line states), ``also``
    (the same pair in the line's other units), ``lines`` (the text it came from) and ``quoted`` (read from
    quotes of a mail that is nothing but quotes).

    At most :data:`MAX_LINES` lines of each mail's text are read and :data:`MAX_RESULTS` pairs kept; what
    is left out is said in ``notes`` (a list the caller passes).
    """
    found: list[dict] = []
    for mail in mails:
        own, quoted, only_quotes = _lines_of(mail)
        if len(own) > MAX_LINES and notes is not None:
            notes.append(f"mail {mail.index + 1}: only the first {MAX_LINES} of its {len(own)} lines of text "
                         f"read for measured numbers")
        # a reply's quotes are the quoted mail's measurements: read after its own lines, and marked quoted
        passes = [(quoted, True, 0.0)] if only_quotes else [(own, False, 0.0)] + (
            [(quoted, True, QUOTED_RANK)] if any(line.strip() for line in quoted) else [])
        for lines, is_quoted, offset in passes:
            r = _Reader(mail, lines[:MAX_LINES], is_quoted, offset)
            for read in (r.one_line, r.column_tables, r.row_tables, r.with_without, r.baseline_list, r.sections,
                         r.labelled_lines, r.prose_from_to, r.adjacent_pairs, r.percentages):
                read()
            if r.full and notes is not None:
                notes.append(f"mail {mail.index + 1}: more than {MAX_RESULTS} measured pairs; the first "
                             f"{MAX_RESULTS} kept")
            found += r.found
    seen, seen_pairs, out = set(), set(), []
    for d in sorted(found, key=lambda d: (d["_rank"][:3], d["mail"], d["_rank"][3])):
        key = (d["before"], d["after"], d["unit"], d["label"], d["relative"] if d["kind"] == "relative" else None)
        pair = (d["before"], d["after"], d["unit"]) if d["kind"] != "relative" else None
        if key in seen or (d["quoted"] and pair in seen_pairs):  # a quote of a pair already read is no other
            continue
        seen.add(key)
        seen_pairs.add(pair)
        out.append({k: v for k, v in d.items() if not k.startswith("_")})
    return out
