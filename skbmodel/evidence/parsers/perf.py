"""``perf report`` and ``perf script`` folded stacks as text in, each symbol's share of the samples out.

Read (from perf's own output formats, tools/perf/Documentation/perf-report.txt, and the reports quoted in
patch mails and the xdp-project notes):

* ``perf report --stdio`` and the TUI's text: one line per entry, ``Overhead`` (one percentage) or
  ``Children      Self`` (two: the self share is the symbol's own), any of the columns ``CPU``, ``Command``,
  ``Shared Object`` before the symbol, the symbol after its ``[k]`` (kernel) or ``[.]`` (user) marker, and
  columns after it (``IPC   [IPC Coverage]``) ignored.  ``28,68%`` (a locale with a decimal comma) reads as
  28.68.  A symbol perf cut at the column's width ends in ``>`` and is marked truncated; `` (inlined)`` and
  the compiler's suffixes stay in the symbol as printed (:mod:`..kstages` reads through them).
* call-graph lines (``|``, ``---``, ``--9.69%--caller``), the TUI's expanded callers (``- 10.73% memcpy_orig``,
  ``+ 5.50% skb_store_bits`` without a marker) and ``#`` header lines are not entries: when any line has a
  ``[k]``/``[.]`` marker, only marked lines are entries; a report without markers (``--sort sym`` of an old
  perf) takes every ``percentage symbol`` line.
* ``perf script | stackcollapse-perf.pl`` folded stacks, ``a;b;c 123``: each line's count is its leaf's; the
  share is the count over all counts.  ``_[k]`` and ``_[j]`` annotations on frames are dropped.
* mail quoting (``>``, and ``|`` before an entry) is stripped; a ``CPU`` column is kept with each entry
  (:meth:`Profile.on_cpu` takes one CPU's, for a cpumap report of both CPUs); a header of ``key: value``
  lines closed by a ``---`` line (the saved profiles under tests/data/perf/) is read as the profile's
  description.

The same symbol on several lines (CPUs, commands, objects) is summed.  ``perf diff`` output (``Baseline`` and
``Delta`` columns) is not a profile: :class:`PerfError`.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

_PCT = r"(\d{1,3}[.,]\d+)%"
_ENTRY = re.compile(rf"^\s*(?:\|\s+)?[-+]?\s*{_PCT}(?:\s+{_PCT})?\s+(.*)$")
_MARKER = re.compile(r"\[(?:k|\.|g|u|H)\]\s+(\S+(?:\s\(inlined\))?)")
_FOLDED = re.compile(r"^(\S(?:.*\S)?)\s+(\d+)$")
_QUOTE = re.compile(r"^(?:\s*>)+ ?")
_META = re.compile(r"^([a-z_]+):\s?(.*)$")


class PerfError(ValueError):
    """An input that holds no perf lines, or a kind of perf output that is not a profile: one line for the user."""


@dataclasses.dataclass(frozen=True)
class Entry:
    symbol: str               # as printed (without the marker)
    share_pct: float          # the symbol's own share of the samples [%] (the self column with children)
    children_pct: float | None  # with children: the share with its callees [%]
    line: int                 # 1-based line of the input
    truncated: bool           # perf cut the symbol at the column's width (printed with a trailing '>')
    user: bool                # a user-space symbol ([.])
    cpu: str | None = None    # the CPU column (--sort cpu,...), as printed ("003")


@dataclasses.dataclass(frozen=True)
class Profile:
    format: str               # "report", "report-children", "folded"
    entries: tuple[Entry, ...]
    meta: Mapping[str, str]   # the saved profile's header (source, path, cpu, kernel, rate_pps, ...)

    @property
    def listed_pct(self) -> float:
        """The share of the samples the entries account for [%] (a quoted top list shows less than 100)."""
        return sum(e.share_pct for e in self.entries)

    def on_cpu(self, cpu: str) -> Profile:
        """The entries of one CPU (``"3"`` and ``"003"`` alike), their shares still of all the samples."""
        return dataclasses.replace(self, entries=tuple(e for e in self.entries
                                                       if e.cpu is not None and int(e.cpu) == int(cpu)))

    def shares(self) -> dict[str, float]:
        """``{symbol: share [%]}``, summed over the lines of one symbol, largest first."""
        out: dict[str, float] = {}
        for e in self.entries:
            out[e.symbol] = out.get(e.symbol, 0.0) + e.share_pct
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _num(s: str) -> float:
    return float(s.replace(",", "."))


def split_meta(text: str) -> tuple[dict[str, str], str]:
    """A saved profile's ``key: value`` header (closed by a line ``---``) and the text after it; text without
    such a header comes back whole, with no description."""
    lines = text.splitlines()
    meta: dict[str, str] = {}
    for i, line in enumerate(lines):
        if line.strip() == "---" and meta:
            return meta, "\n".join(lines[i + 1:])
        m = _META.match(line)
        if not m:
            break
        meta[m.group(1)] = m.group(2).strip()
    return {}, text


def _report_entries(lines: list[str]) -> tuple[list[Entry], bool]:
    marked = any(_ENTRY.match(x) and _MARKER.search(x) for x in lines)
    children = False
    out = []
    for n, raw in enumerate(lines, 1):
        if raw.lstrip().startswith("#"):
            children |= bool(re.search(r"\bChildren\s+Self\b", raw))
            continue
        if re.search(r"\bChildren\s+Self\b", raw):
            children = True
            continue
        m = _ENTRY.match(raw)
        if not m or "--" in raw.split("%", 1)[0]:
            continue
        first, second, rest = m.group(1), m.group(2), m.group(3)
        mk = _MARKER.search(rest)
        if marked and not mk:
            continue
        if mk:
            sym, user, before = mk.group(1), rest[mk.start() + 1] == ".", rest[:mk.start()].split()
        else:
            parts = rest.split()
            if not parts or ";" in parts[0]:
                continue
            sym, user, before = parts[0], False, []
        cpu = next((t for t in before if re.fullmatch(r"\d{3,4}", t)), None)
        if second is not None:
            children = True
        truncated = sym.endswith(">") or sym.endswith("=")
        sym = sym.rstrip(">=")
        self_pct = _num(second) if second is not None else _num(first)
        out.append(Entry(sym, self_pct, _num(first) if second is not None else None, n, truncated, user, cpu))
    return out, children


def _folded_entries(lines: list[str]) -> list[Entry]:
    counts: list[tuple[str, int, int]] = []
    for n, raw in enumerate(lines, 1):
        m = _FOLDED.match(raw.strip())
        if not m or "%" in m.group(1):
            continue
        leaf = m.group(1).split(";")[-1]
        leaf = re.sub(r"_\[[kjiw]\]$", "", leaf)
        counts.append((leaf, int(m.group(2)), n))
    total = sum(c for _, c, _ in counts)
    if not total:
        return []
    return [Entry(leaf, 100.0 * c / total, None, n, False, False) for leaf, c, n in counts]


def parse(text: str) -> Profile:
    """The profile in ``text``: a ``perf report`` (with or without children) or folded stacks.  Raises
    :class:`PerfError` when no line is a perf entry, or for ``perf diff`` output."""
    meta, body = split_meta(text)
    lines = [_QUOTE.sub("", x) for x in body.splitlines()]
    if any(re.search(r"#\s*Baseline\s+Delta", x) for x in lines):
        raise PerfError("this is perf diff output (Baseline and Delta columns): give one perf report")
    entries, children = _report_entries(lines)
    fmt = "report-children" if children else "report"
    if not entries:
        entries, fmt = _folded_entries(lines), "folded"
    if not entries:
        raise PerfError("no perf report line (a percentage and a symbol) and no folded stack (a;b;c 123) in the input")
    return Profile(fmt, tuple(entries), meta)
