"""Undo what a mailer and a list archive did to tool output before the line formats read it.

A time_bench block copied from a list archive arrives

* **quoted-printable** (RFC 2045 section 6.7): lines longer than 76 characters end in a soft break
  ``=`` and continue on the next line (``...9.526 ns=`` / `` (step:0)``), ``=20`` stands for a trailing
  space and ``=3D`` for ``=``;
* **wrapped** by the sender's mailer at 72-78 columns, in the middle of a record
  (``...Type:no-softirq-page_pool01 Per elem:`` / ``11 cycles(tsc) 4.177 ns (step:0) - (measurement``);
* **quoted** with ``> ``, ``> > `` or ``| `` prefixes (stripped later, per line, by
  :func:`.common._clean`), also combined with the two forms above.

:func:`repair` joins soft breaks and decodes ``=XX`` codes (only in text that is quoted-printable),
rejoins time_bench records that a mailer wrapped, and says in one line what it repaired.  Each
repaired line remembers the first and last original line it came from, so measurements and runs
still name the lines of the text as given.
"""
from __future__ import annotations

import re

from .common import _DMESG, _QUOTE

_QP_HEADER = re.compile(r"^content-transfer-encoding:\s*quoted-printable\s*$", re.I)
_QP_ESCAPES = re.compile(r"(?:=[0-9A-F]{2})+")
#: a soft line break: one ``=`` at the end (``==`` at the end is text, e.g. a setext rule)
_SOFT = re.compile(r"(?<!=)=$")

#: a time_bench record begins here (a mailer wraps after it)
_TB_START = re.compile(r"(?:^|\s)(?:time_bench:\s*)?Type:\S|Per elem:")
#: the values of a record: once these are there the record is readable
_TB_VALUES = re.compile(r"Per elem:\s*\d+\s+cycles\(tsc\)\s+\d+(?:\.\d+)?\s+ns\b")
#: what a wrapped record's next line continues with
_TS = re.compile(r"^\s*\[\s*\d+\.\d+\]")
MAX_JOIN = 6


def _prefix(line: str) -> tuple[str, str]:
    """``(quote prefix, rest)`` of a line."""
    q = _QUOTE.match(line)
    return (q.group(0), line[q.end():]) if q else ("", line)


def _depth(prefix: str) -> str:
    return re.sub(r"\s+", "", prefix)


def is_quoted_printable(lines: list[str]) -> bool:
    """Whether the text is still quoted-printable: soft breaks, with ``=XX`` codes, a second soft break,
    a time_bench record cut by one, or a ``Content-Transfer-Encoding`` header.  A header alone is not
    enough: a decoded body keeps it, and decoding again would turn ``loops=600000000`` into
    ``loops`0000000``."""
    broken = [ln for ln in lines if _SOFT.search(ln)]
    codes = sum(1 for ln in lines if _QP_ESCAPES.search(ln))
    header = any(_QP_HEADER.match(ln.strip()) for ln in lines[:200])
    # a time_bench record never ends in "=" of its own
    record = any("Per elem:" in ln or "cycles(tsc)" in ln for ln in broken)
    return bool(broken) and (codes >= 1 or len(broken) >= 2 or header or record)


def _decode_escapes(s: str) -> tuple[str, int]:
    n = 0

    def sub(m: re.Match) -> str:
        nonlocal n
        data = bytes(int(m.group(0)[i + 1:i + 3], 16) for i in range(0, len(m.group(0)), 3))
        n += len(data)
        return data.decode("utf-8", "replace")
    return _QP_ESCAPES.sub(sub, s), n


def _undo_qp(lines, first, last) -> tuple[list[str], list[int], list[int], int, int]:
    out, f_out, l_out = [], [], []
    soft = codes = 0
    i = 0
    while i < len(lines):
        cur, f, l_ = lines[i], first[i], last[i]
        pre, _ = _prefix(cur)
        while _SOFT.search(cur) and i + 1 < len(lines):
            i += 1
            nxt = lines[i]
            # a reply that quoted the encoded text puts its prefix on the continuation too
            if pre and _prefix(nxt)[0] and _depth(_prefix(nxt)[0]) == _depth(pre):
                nxt = _prefix(nxt)[1]
            cur = cur[:-1] + nxt
            l_ = last[i]
            soft += 1
        cur, n = _decode_escapes(cur)
        codes += n
        out.append(cur)
        f_out.append(f)
        l_out.append(l_)
        i += 1
    return out, f_out, l_out, soft, codes


def _open(body: str) -> bool:
    """A time_bench record that a mailer cut: values missing, or a parenthesis or ``-`` left open."""
    if not _TB_VALUES.search(body):
        return True
    s = body.rstrip()
    return s.count("(") > s.count(")") or s.endswith("-")


def _rejoin(lines, first, last) -> tuple[list[str], list[int], list[int], int]:
    out, f_out, l_out = [], [], []
    joined = 0
    i = 0
    while i < len(lines):
        cur, f, l_ = lines[i], first[i], last[i]
        pre, body = _prefix(cur)
        j, cand = i, body.rstrip()
        if _TB_START.search(_DMESG.sub("", body)):
            while j + 1 < len(lines) and j - i < MAX_JOIN:
                npre, nbody = _prefix(lines[j + 1])
                nb = nbody.strip()
                # a reply wrapped after quoting leaves the continuation without the prefix
                if not nb or (npre and _depth(npre) != _depth(pre)) or _TS.match(nbody) \
                        or nb.startswith(("time_bench:", "Type:")) or ("Per elem:" in nb and "Per elem:" in cand):
                    break  # the next record, a blank line or another quote level
                if not (_open(cand) or nb.startswith(("(step:", "- ("))):
                    break
                cand, j = cand + " " + nb, j + 1
        if j > i and _TB_VALUES.search(cand):
            out.append(pre + cand)
            l_ = last[j]
            joined += 1
        else:
            out.append(cur)
            j = i
        f_out.append(f)
        l_out.append(l_)
        i = j + 1
    return out, f_out, l_out, joined


def repair(lines: list[str]) -> tuple[list[str], list[int], list[int], str]:
    """``(lines, first, last, what)``: the lines with mail damage undone, the first and last original
    line (1-based) of each, and one line saying what was repaired (empty when nothing was)."""
    first = list(range(1, len(lines) + 1))
    last = list(first)
    done = []
    if is_quoted_printable(lines):
        lines, first, last, soft, codes = _undo_qp(lines, first, last)
        if soft or codes:
            parts = ([f"{soft} soft line break{'s' if soft != 1 else ''} joined"] if soft else []) + \
                ([f"{codes} =XX code{'s' if codes != 1 else ''} decoded"] if codes else [])
            done.append("quoted-printable undone (" + ", ".join(parts) + ")")
    lines, first, last, joined = _rejoin(lines, first, last)
    if joined:
        done.append(f"{joined} time_bench record{'s' if joined != 1 else ''} that a mailer wrapped rejoined")
    quoted = sorted({_prefix(ln)[0].strip() for ln in lines if _prefix(ln)[0] and _TB_START.search(ln)})
    if quoted:
        done.append("quote prefixes " + ", ".join(f"'{q}'" for q in quoted) + " stripped")
    return lines, first, last, "; ".join(done)
