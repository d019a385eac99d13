"""Patch mails and series as reviewers paste them: split, decode, and each mail's own diff.

A reviewer pastes an mbox (``git format-patch`` output, split at its ``From <sha> <date>`` lines), one mail,
or a series copied from an archive page: mails one after the other, each with its own header block
(``From:``, ``Subject:``, ``Date:`` in any order) and no mbox separator.  :func:`read_mails` splits all
three, parses each mail with the standard library's :mod:`email` parser (quoted-printable, base64,
charsets, multipart with the patch attached) and gives every mail its own diff, from its first
``diff --git`` (or ``--- a/`` + ``+++ b/``) line to the end of its last hunk, hunk line counts read from
the ``@@`` headers so that a ``-- `` signature ends a diff only where no hunk still expects lines.

A header block starts a new mail where it stands at the start of the text, after a blank line, or right
after a signature (the ``-- `` line and the short lines under it, such as git's version ``2.48.1``), and
holds two or more of ``From:``, ``Subject:``, ``Date:``.  A single in-body ``From:`` (git's author line
under the headers) or a block right under a mail's own headers is not a new mail.

Two repairs are made and said: a hunk cut short (an archive or a mail client dropped its trailing context
lines) is completed with blank context lines, and a reply that quotes hunk lines without their headers
gives them as a fragment of an unknown file.  Everything left out is named in the mail's ``skipped``.

The whole split is one pass over the lines (no regular expression spans lines), so a 5 MB paste splits in
a fraction of a second.
"""
from __future__ import annotations

import dataclasses
import email
import email.message
import email.policy
import hashlib
import re

# ---------------------------------------------------------------- line classes
# mbox separator: "From <sender> <asctime date>" alone on its line (git: "From <sha> Mon Sep 17 00:00:00 2001");
# a line of prose that starts with "From " never ends in an asctime date
_MBOX_FROM = re.compile(r"^From \S+\s+(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) "
                        r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
                        r" +\d{1,2} \d\d:\d\d(?::\d\d)?(?: [+-]\d{4}| [A-Z]{3,4})? \d{4}\s*$")
_HEADER = re.compile(r"^([A-Za-z][A-Za-z0-9-]{0,76}):(?:[ \t]|$)")
_CONT = re.compile(r"^[ \t]+\S")
_KEY_HEADERS = frozenset({"from", "subject", "date"})
_SIGNATURE = ("-- ", "--")
SIGNATURE_LINES = 6          # lines under a "-- " that may still be the signature (name, version, company)

_HUNK_HEAD = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_HUNK_COUNTS = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_FILE_EXTRA = re.compile(r"^(?:index \S+|old mode |new mode |deleted file mode |new file mode |similarity index |"
                         r"dissimilarity index |rename from |rename to |copy from |copy to |Binary files )")
_QUOTE = re.compile(r"^(?:>\s?)+")
_CODE_LINE = re.compile(r"^[+-](?:\t|[}{#]|$)")
_COVER = re.compile(r"\b0+/\d+\]")
_SUBJECT_IN_TEXT = re.compile(r"^(?:Subject:\s*)?((?:Re: )?\[PATCH[^\n]*)$", re.M)


@dataclasses.dataclass(frozen=True)
class Mail:
    """One mail of a paste.  ``is_cover``: a mail without a diff of its own that is a ``0/N`` mail or quotes
    no diff either.  ``diff`` is the mail's own unified diff (LF line ends, hunks cut short
    completed, blank context lines as one space), "" when it has none; ``quoted_diff`` the diff its quoted
    lines (``> +...``) hold, as a diff of its own (file "" where the quote has no headers); ``prose`` the body
    without its diff; ``repairs`` what was completed to parse the diff; ``skipped`` what was left out."""
    index: int
    subject: str
    sender: str
    date: str
    message_id: str
    in_reply_to: str
    body: str
    diff: str
    quoted_diff: str
    prose: str
    is_cover: bool
    skipped: tuple[str, ...] = ()
    repairs: tuple[str, ...] = ()

    @property
    def hunk_count(self) -> int:
        return hunk_count(self.diff)

    @property
    def quoted_hunk_count(self) -> int:
        return hunk_count(self.quoted_diff)


def hunk_count(diff: str) -> int:
    """How many ``@@`` hunk headers ``diff`` holds."""
    return sum(1 for line in diff.split("\n") if _HUNK_HEAD.match(line))


# ---------------------------------------------------------------- splitting
def _as_bytes(text: str | bytes) -> bytes:
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: bytes a decoder escaped, given back as they were
        return text.encode("utf-8", errors="surrogateescape") if _escaped(text) else text.encode("utf-8", "replace")


def _escaped(text: str) -> bool:
    try:
        text.encode("utf-8", errors="surrogateescape")
        return True
    except UnicodeEncodeError:
        return False


def _is_blank(line: str) -> bool:
    return not line.strip()


def _header_block(lines: list[str], i: int) -> tuple[int, set[str]]:
    """``(end, names)``: the header block starting at line ``i`` (its header lines and their continuation
    lines) ends before line ``end``; ``names`` are its header names, lower case."""
    names, j, n = set(), i, len(lines)
    while j < n:
        m = _HEADER.match(lines[j])
        if m:
            names.add(m.group(1).lower())
        elif not (j > i and _CONT.match(lines[j])):
            break
        j += 1
    return j, names


def _split_points(lines: list[str]) -> list[tuple[int, bool]]:
    """``[(line, mbox), ...]``: where each mail starts (``mbox``: at an mbox ``From`` line)."""
    points: list[tuple[int, bool]] = []
    n = len(lines)
    under_headers = False         # only blank lines since the last mail's header block: a block here is in-body
    sig_left = 0                  # signature lines that may still follow a "-- " line
    prev_blank, prev_sig = True, False
    i = 0
    while i < n:
        line = lines[i]
        if _MBOX_FROM.match(line):
            points.append((i, True))
            end, _ = _header_block(lines, i + 1)
            under_headers = True
            i, prev_blank, prev_sig, sig_left = end, False, False, 0
            continue
        if (prev_blank or prev_sig) and _HEADER.match(line):
            end, names = _header_block(lines, i)
            closed = end == n or _is_blank(lines[end])
            if closed and len(names & _KEY_HEADERS) >= 2 and not under_headers:
                points.append((i, False))
                under_headers = True
            else:
                under_headers = False
            i, prev_blank, prev_sig, sig_left = end, False, False, 0
            continue
        blank = _is_blank(line)
        under_headers = under_headers and blank
        if line in _SIGNATURE:
            sig_left, prev_sig = SIGNATURE_LINES, True
        elif sig_left and not blank:
            sig_left -= 1
            prev_sig = True
        else:
            sig_left, prev_sig = 0, False
        prev_blank = blank
        i += 1
    return points


def read_mails(text: str | bytes) -> list[Mail]:
    """The mails of a paste or a file, in order: an mbox (split at its ``From`` lines), mails one after the
    other each with its header block (split at those blocks), one mail, or a text without headers (a bare
    diff, an archive page's text: one mail).  Each is parsed with :mod:`email` (quoted-printable, base64,
    charset, multipart) and carries its own diff (:class:`Mail`).  Text before the first mail that holds no
    diff (an archive page's navigation) is left out and named in the first mail's ``skipped``."""
    raw = _as_bytes(text)
    # latin-1 maps every byte to one character: the split works on any encoding and gives the bytes back
    lines = raw.decode("latin-1").replace("\r\n", "\n").split("\n")
    points = _split_points(lines)
    bounds = [p for p, _ in points]
    chunks: list[tuple[list[str], bool]] = []
    if not points or bounds[0] > 0:
        chunks.append((lines[:bounds[0] if points else len(lines)], False))
    for k, (start, mbox) in enumerate(points):
        end = bounds[k + 1] if k + 1 < len(bounds) else len(lines)
        chunks.append((lines[start:end], mbox))
    mails: list[Mail] = []
    lead_note = ""
    for k, (chunk, mbox) in enumerate(chunks):
        if not any(x.strip() for x in chunk):
            continue
        mail = _mail(len(mails), chunk, mbox, headed=bool(points) and (k > 0 or bounds[0] == 0))
        if k == 0 and points and bounds[0] > 0 and not (mail.diff or mail.quoted_diff):
            lead_note = (f"{sum(1 for x in chunk if x.strip())} line(s) before the first mail's headers "
                         f"(no diff in them) left out")
            continue
        mails.append(mail)
    if lead_note and mails:
        mails[0] = dataclasses.replace(mails[0], skipped=(lead_note,) + mails[0].skipped)
    return mails


# ---------------------------------------------------------------- one mail
def _decoded(payload: bytes, charset: str | None) -> str:
    for cs in ([charset] if charset else []) + ["utf-8"]:
        try:
            return payload.decode(cs)
        except (LookupError, UnicodeDecodeError):
            continue
    return payload.decode("cp1252", errors="replace")


def _header(msg: email.message.Message, name: str) -> str:
    try:
        value = msg.get(name)
    except (ValueError, TypeError, IndexError):  # a header the policy cannot parse: its raw text
        value = next((v for k, v in msg.raw_items() if k.lower() == name.lower()), None)
    return " ".join(str(value).split()) if value is not None else ""


def _parts(msg: email.message.Message) -> tuple[list[str], list[str]]:
    """``(texts, skipped)``: the decoded text of each plain-text or patch part, and what was left out."""
    texts, skipped = [], []
    for part in msg.walk():
        if part.is_multipart():
            continue
        ctype = part.get_content_type()
        name = part.get_filename() or ""
        patchy = name.endswith((".patch", ".diff")) or ctype in ("text/x-patch", "text/x-diff", "text/x-diff-patch")
        if ctype == "text/plain" or patchy:
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                texts.append(_decoded(payload, part.get_content_charset()).replace("\r\n", "\n"))
        else:
            skipped.append(f"part {ctype}{f' ({name})' if name else ''} left out: only text/plain and patch "
                           f"parts are read")
    return texts, skipped


def _mail(index: int, chunk: list[str], mbox: bool, headed: bool) -> Mail:
    skipped: list[str] = []
    if mbox:
        chunk = [re.sub(r"^>(>*From )", r"\1", x) for x in chunk[1:]]
    sender = date = message_id = in_reply_to = ""
    if headed or mbox:
        msg = email.message_from_bytes("\n".join(chunk).encode("latin-1"), policy=email.policy.default)
        subject = _header(msg, "subject")
        sender, date = _header(msg, "from"), _header(msg, "date")
        message_id, in_reply_to = _header(msg, "message-id"), _header(msg, "in-reply-to")
        texts, skipped = _parts(msg)
        body = "\n".join(texts)
    else:
        body = _decoded("\n".join(chunk).encode("latin-1"), None)
        found = _SUBJECT_IN_TEXT.search(body)
        subject = found.group(1).strip() if found else ""
    body = body.replace("\r\n", "\n")
    blines = body.split("\n")
    diff, repairs, used = _diff_of(blines)
    prose = "\n".join(x for i, x in enumerate(blines) if i not in used)
    quoted, qrepairs = _quoted_diff(blines)
    repairs += [f"quoted: {r}" for r in qrepairs]
    subject = subject or "(a mail without a subject)"
    return Mail(index, subject, sender, date, message_id, in_reply_to, body, diff, quoted, prose,
                not diff and (bool(_COVER.search(subject)) or not quoted), tuple(skipped), tuple(repairs))


# ---------------------------------------------------------------- diffs
def _starts_file(lines: list[str], i: int) -> bool:
    line = lines[i]
    return line.startswith("diff --git ") or (line.startswith("--- ") and i + 1 < len(lines)
                                              and lines[i + 1].startswith("+++ "))


def _is_signature(lines: list[str], i: int) -> bool:
    """Whether the ``-- `` at line ``i`` is a signature rather than a removed line ``- ``: no hunk line
    follows it."""
    if lines[i] not in _SIGNATURE:
        return False
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    return not nxt.strip() or not (nxt[:1] in " +-\\" or nxt.startswith("diff --git "))


def _hunk(lines: list[str], i: int, out: list[str], repairs: list[str]) -> int:
    """Copy the hunk whose header is line ``i`` into ``out``; the line after it.  A hunk that ends before
    its header's line counts is completed with blank context lines (what an archive or a mail client trims)
    and the repair is said; where more than context is missing (a quote that cut lines out of the middle),
    its header is set to the lines it has, and a hunk with no line at all is left out."""
    m = _HUNK_HEAD.match(lines[i])
    head = lines[i].rstrip()
    want_old, want_new = int(m.group(1) or 1), int(m.group(2) or 1)
    body: list[str] = []
    old = new = 0
    i += 1
    n = len(lines)
    while i < n and (old < want_old or new < want_new):
        line = lines[i]
        if line.startswith(("@@", "diff --git ")) or (line.startswith("--- ") and i + 1 < n
                                                      and lines[i + 1].startswith("+++ ")):
            break
        if _is_signature(lines, i):
            break
        c = line[:1]
        if c == "-":
            old += 1
        elif c == "+":
            new += 1
        elif c == " " or line == "":
            old, new, line = old + 1, new + 1, line or " "   # a mailer strips the space of a blank line
        elif c != "\\":
            break
        body.append(line)
        i += 1
    miss_old, miss_new = want_old - old, want_new - new
    if not body:
        repairs.append(f"a hunk at '{m.group(0)}' has no lines (only its header was kept): left out")
        return i
    if miss_old == miss_new and miss_old > 0:
        body.extend([" "] * miss_old)
        repairs.append(f"a hunk at '{m.group(0)}' was cut short: {miss_old} trailing context line(s) taken as blank")
    elif miss_old or miss_new:
        head = _HUNK_COUNTS.sub(lambda k: f"@@ -{k.group(1)},{old} +{k.group(2)},{new} @@", head, count=1)
        repairs.append(f"a hunk at '{m.group(0)}' has {old} old and {new} new line(s), not {want_old} and "
                       f"{want_new}: lines were cut out of it, its header now counts the lines it has")
    out.append(head)
    out.extend(body)
    return i


def _diff_of(lines: list[str]) -> tuple[str, list[str], set[int]]:
    """``(diff, repairs, used)``: the diff ``lines`` hold (every file and hunk, in order, whatever prose or
    signature stands between them), what was completed, and the indices of the lines it came from."""
    out: list[str] = []
    repairs: list[str] = []
    used: set[int] = set()
    i, n = 0, len(lines)
    while i < n:
        if not _starts_file(lines, i):
            i += 1
            continue
        start = i
        while i < n:
            line = lines[i]
            if line.startswith("diff --git ") or _FILE_EXTRA.match(line):
                out.append(line.rstrip())
                i += 1
            elif line.startswith("--- ") and i + 1 < n and lines[i + 1].startswith("+++ "):
                out += [line.rstrip(), lines[i + 1].rstrip()]
                i += 2
            elif _HUNK_HEAD.match(line):
                i = _hunk(lines, i, out, repairs)
            elif line.startswith("\\"):
                out.append(line)
                i += 1
            elif line.startswith("GIT binary patch"):
                while i < n and lines[i].strip():
                    i += 1
            else:
                break
        used.update(range(start, i))
    return ("\n".join(out) + "\n") if out else "", repairs, used


def _quoted_diff(lines: list[str]) -> tuple[str, list[str]]:
    """The diff a reply quotes: its quoted lines unquoted and read as a diff where they keep their headers;
    else its quoted hunk lines (``> +...``, ``> -...``) as one hunk of an unknown file, so that a diff parser
    reads it like any other."""
    unquoted = [line[q.end():] for line in lines for q in [_QUOTE.match(line)] if q]
    if not unquoted:
        return "", []
    diff, repairs, _ = _diff_of(unquoted)
    if hunk_count(diff):
        return diff, repairs
    frag = [c for c in unquoted if _CODE_LINE.match(c) and not c.startswith(("+++", "---"))]
    if not frag:
        return "", []
    old = sum(1 for line in frag if line.startswith("-"))
    return f"--- a/\n+++ b/\n@@ -1,{old} +1,{len(frag) - old} @@\n" + "\n".join(frag) + "\n", []


# ---------------------------------------------------------------- the series
def series_info(mails: list[Mail]) -> dict:
    """What was read: ``mails`` (how many), ``with_diff`` (how many carry a diff of their own), ``hunks``
    (their ``@@`` headers), ``quoted_hunks`` (hunks only quoted by replies), ``cover`` (the cover letter's
    subject, or None), ``subjects`` (every mail's), ``priced`` (indices of the mails whose diff is the patch:
    those with a diff, else those that quote one), ``subject`` (the patch's: the one priced mail's, or the
    first priced one's with how many more), ``skipped`` and ``repairs`` (each note with its mail's number,
    from 1)."""
    own = [m.index for m in mails if m.diff]
    priced = own or [m.index for m in mails if m.quoted_diff]
    cover = next((m for m in mails if m.is_cover and _COVER.search(m.subject)), None)
    by_index = {m.index: m for m in mails}
    if priced:
        subject = by_index[priced[0]].subject + (f" (and {len(priced) - 1} more)" if len(priced) > 1 else "")
    else:
        subject = mails[0].subject if mails else ""
    return {"mails": len(mails), "with_diff": len(own), "hunks": sum(m.hunk_count for m in mails),
            "quoted_hunks": sum(m.quoted_hunk_count for m in mails if not m.diff),
            "cover": cover.subject if cover else None, "subjects": [m.subject for m in mails],
            "priced": priced, "subject": subject,
            "skipped": [f"mail {m.index + 1}: {s}" for m in mails for s in m.skipped],
            "repairs": [f"mail {m.index + 1}: {r}" for m in mails for r in m.repairs]}


def normalised_diff(mails: list[Mail]) -> str:
    """The series' diff as hashed: every mail's own diff in order (else the quoted ones), LF line ends,
    ``index`` lines left out, header lines without trailing whitespace."""
    diffs = [m.diff for m in mails if m.diff] or [m.quoted_diff for m in mails if m.quoted_diff]
    out = []
    for line in "\n".join(diffs).split("\n"):
        if line.startswith("index "):
            continue
        out.append(line if line[:1] in (" ", "+", "-", "\\") and not line.startswith(("--- ", "+++ ")) else
                   line.rstrip())
    return "\n".join(x for x in out).strip("\n") + "\n"


def diff_hash(mails: list[Mail]) -> str:
    """sha256 (12 hex digits) of :func:`normalised_diff`: one patch has one hash whether it came plain,
    quoted-printable, base64 or with CRLF line ends."""
    return hashlib.sha256(normalised_diff(mails).encode("utf-8", errors="surrogatepass")).hexdigest()[:12]
