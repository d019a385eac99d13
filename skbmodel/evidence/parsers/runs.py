"""Splitting an input into runs (kernels, repeats, sections of lab notes): :func:`find_runs`."""
from __future__ import annotations

import dataclasses
import re

from .common import _DMESG, _QUOTE, Run, _short

_MD_HEAD = re.compile(r"^(#{1,6})\s+(?P<title>\S.*?)\s*#*\s*$")
_ORG_HEAD = re.compile(r"^(\*+)\s+(?P<title>\S.*?)\s*$")
_EQ_HEAD = re.compile(r"^(=+)\s+(?P<title>\S.*?)\s*=*\s*$")
_SETEXT = re.compile(r"^={3,}\s*$")
_LOADED = re.compile(r"^(?P<mod>[A-Za-z][\w.-]*):\s+(?:module\s+)?loaded\b", re.I)
_INSMOD = re.compile(r"^(?:\S*[$#]\s*)?(?:sudo\s+)?(?:/\S*/)?(?:insmod|modprobe)\s+(?:-\S+\s+)*(?P<mod>[\w./-]+)")
#: a name seen loaded counts again later only when it looks like a module name (``bench_page_pool_simple``)
_MODNAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+$")
_UNLOAD = re.compile(r"\b(?:unload|rmmod|removed)|modprobe\s+-r\b", re.I)
#: a kernel module's own log line (``pr_fmt``: ``<module>: <function>(): ...``), no load
_MODLOG = re.compile(r"^(?P<mod>[A-Za-z][\w.-]*):(?:\s|$)")
_COMMAND = re.compile(r"^(?:\S*[$#]\s|\$|(?:sudo\s+)?(?:taskset|insmod|modprobe|rmmod|echo|cat|dmesg)\b)")
_FUNC = re.compile(r"\w+\(\):")
_WORD = re.compile(r"[A-Za-z]{2,}")
MAX_CAPTION_CHARS = 200
_LEAD_IN = re.compile(r"^[A-Za-z][\w.+-]*:$")    # one word that introduces what follows: "after:"


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
    own = _MODLOG.match(s)
    if own and own.group("mod") in known:
        return None  # the module's own log line: it is running, not loaded again
    m = _INSMOD.search(s)
    if m:
        mod = m.group("mod").rsplit("/", 1)[-1]
        return mod[:-3] if mod.endswith(".ko") else mod
    for mod in (k for k in known if _MODNAME.match(k)):  # its name again, in prose or a heading-less title
        if re.search(rf"(?<![\w-]){re.escape(mod)}(?![\w-])", s):
            return mod
    return None


def _caption(line: str) -> str | None:
    """The text of a prose line that says what the block below it measures (``After this patchset:``,
    ``2. raw performance data after this patchset``), or None for a command, a log line, a table
    row or a line without words."""
    if len(line) > MAX_CAPTION_CHARS:  # a caption is a short line (and a long one would cost the regexes time)
        return None
    s = _DMESG.sub("", _QUOTE.sub("", line)).strip()
    log = _MODLOG.match(s)
    if not s or line.lstrip().startswith("[") or s.startswith(("#+", "|", "-" * 3)) or _COMMAND.match(s) \
            or (log and _MODNAME.match(log.group("mod"))) or _FUNC.search(s) \
            or not (len(_WORD.findall(s)) >= 2 or _LEAD_IN.match(s)):
        return None
    return _short(s.rstrip(":").strip(), 80)


def find_runs(lines: list[str], measurements, origin: str = "pasted text") -> tuple[list[Run], dict[int, int]]:
    """Split an input into runs; returns ``(runs, {line: run index})`` for the measurement lines.

    Lab notes often hold several runs: a baseline and a patched kernel, or repeats.  A new run
    starts, once the current one has a measurement, at

    * a heading: markdown ``#``, org ``*`` (at column 0, on a line without a measurement),
      ``== title ==`` or a title underlined with ``===``; the run's label is the path of the
      headings it sits under (``kernel 6.15 / page_pool``);
    * a module load of another module than the run's: a dmesg ``<module>: Loaded`` line, an
      ``insmod`` / ``modprobe`` command, or the name of a module loaded before appearing again
      after its tests (the module's own log lines, ``<module>: <function>(): ...``, are no load);
    * a blank-line separated block that measures a test the current run already measured, with a
      different value, under a caption of its own: a prose line between the run's last measurement
      and the block (``After this patchset:``, ``2. raw performance data after this patchset``)
      that differs from the run's.

    Blocks that measure the same tests again with no heading, caption or other module between them
    (the same module loaded again, a blank line, a shell prompt) are repeats: they stay in the run,
    and :func:`skbmodel.evidence.parsers.repeats.collapse` makes one measurement of each repeated test.

    A run spans from the line that opened it (or its first measurement) to the end of the
    blank-line separated block of its last measurement; text around runs belongs to none.  Its
    label is its heading path, or, without headings, its caption.
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
    # the caption of each block: the last prose line between the previous measurement and the block's first one
    block_cap: dict[int, str | None] = {}
    cap_line: dict[int, int] = {}           # ... and its line
    cap, cap_at = None, 0
    for i, raw in enumerate(lines, start=1):
        if i in by_line:
            if block_of[i] not in block_cap:
                block_cap[block_of[i]] = cap
                cap_line[block_of[i]] = cap_at
            cap = None
        elif raw.strip():
            c = _caption(raw)
            if c:
                cap, cap_at = c, i
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
    cur_mods: set[str] = set()              # modules loaded in the current run (or just before it)
    cur_cap: str | None = None              # the caption the current run started under
    caps: list[str] = []                    # caption of each run

    def close(last_line: int) -> None:
        nonlocal cur_keys, cur_lines, cur_first, cur_mods
        if cur_lines:
            last = cur_lines[-1]  # the end of the block of its last measurement
            while last < min(last_line, len(lines)) and lines[last].strip():
                last += 1
            runs.append(Run(origin, len(runs) + 1, cur_first, last, "", len(cur_lines)))
            labels.append(tuple(t for _, t in heads_at_start))
            caps.append(cur_cap or "")
        cur_keys, cur_lines, cur_first, cur_mods = {}, [], None, set()

    for i, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        has_m = i in by_line
        boundary = False
        mod = None if has_m else _module_load(raw, known)  # before headings: "# modprobe x" is a root prompt
        h = None if (has_m or mod) else _heading(lines, i - 1)
        if h:
            boundary = True
        elif mod and mod not in cur_mods:
            boundary = True
        if not boundary and block_of.get(i) == i and cur_lines:
            keys = block_keys.get(i, {})
            again = any(k in cur_keys and cur_keys[k] != v for k, v in keys.items())
            boundary = again and block_cap.get(i) is not None and block_cap.get(i) != cur_cap
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
            cur_mods.add(mod)
        if has_m:
            if not cur_lines:
                cur_first = pending_head or pending_mod or cap_line.get(block_of[i]) or i
                heads_at_start = list(heads)
                cur_cap = block_cap.get(block_of[i])
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
    runs = [dataclasses.replace(r, label=" / ".join(x[common:]) or c) for r, x, c in zip(runs, labels, caps)]
    return runs, run_of
