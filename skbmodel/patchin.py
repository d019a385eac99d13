"""A kernel patch in, its predicted per-packet difference out: ``python -m skbmodel patch FILE|-``.

The reviewer's medium is a patch mail; the model's is a Compare question (A before, B after).  This module
translates one into the other and answers it with the one answer engine (:mod:`skbmodel.answers`):

1. **Mails** (:func:`read_mails`): a unified diff, one patch mail (headers, quoted-printable or base64
   bodies), a series of mails or an mbox (``git format-patch`` output), as pasted or saved.  A reply that
   quotes a hunk without its headers (``> +\tmemset(...)``) gives that fragment, its file unknown.
2. **Hunks** (:func:`hunks`): each mail's diff parsed with ``unidiff`` (file, the hunk header's function,
   added and removed lines).  A hunk an archive or a mail client cut short (its trailing context lines
   missing) is completed with blank context lines, and the repair is listed.
3. **Mechanisms** (:func:`map_hunks`): each hunk against the table of ``skbmodel/data/patch-mechanisms.toml``
   (one row per kernel mechanism the model prices, with the symbols that signal it and its kernel source);
   a hunk no row matches is listed as not modelled, with the reason.
4. **The question** (:func:`question`): the Compare state of the first mapped mechanism's path, A and B as
   the mapped rows say, on the chosen CPU profile; **the answer** (:func:`answer`): Compare's verdict,
   interval, drivers and runs of ``path.ns_per_packet`` (B - A), and beside it what the mail measured,
   where it states a before and an after (:func:`measured`).
"""
from __future__ import annotations

import dataclasses
import email
import email.policy
import hashlib
import re
import textwrap
import tomllib
from collections.abc import Mapping

import unidiff

from . import answers, folders
from . import question as sk_question
from .links import shortlink, state as sk_state, versions
from .physics import noise
from .plaintext import WIDTH, ascii_text

TABLE = folders.DATA_DIR / "patch-mechanisms.toml"


class PatchError(ValueError):
    """A patch that cannot be read or maps to nothing the model prices: one line for the user."""


@dataclasses.dataclass(frozen=True)
class Mail:
    subject: str
    body: str


@dataclasses.dataclass(frozen=True)
class Hunk:
    mail: int          # index of the mail it came from
    file: str          # path in the tree ("" for a quoted fragment without headers)
    function: str      # the hunk header's function (git's heading: the definition before the hunk)
    added: tuple[str, ...]
    removed: tuple[str, ...]
    context: tuple[str, ...]
    repaired: str = ""  # what was completed to parse it

    @property
    def where(self) -> str:
        return f"{self.file or '(quoted fragment)'}" + (f" {self.function}" if self.function else "")


# ---------------------------------------------------------------- mails
_MBOX_FROM = re.compile(r"^From (?:[0-9a-f]{40}|\S+@\S+) .*$", re.M)
_HEADER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*: ")


def read_mails(text: str | bytes) -> list[Mail]:
    """The mails of a paste or a file: an mbox (split at its ``From`` lines), one mail (headers first), or a
    plain text (a diff, or an archive page's text), each body decoded (quoted-printable, base64)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    text = text.replace("\r\n", "\n")
    starts = [m.start() for m in _MBOX_FROM.finditer(text)]
    chunks = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])] if starts else [text]
    if starts and text[:starts[0]].strip():
        chunks.insert(0, text[:starts[0]])
    return [_mail(chunk) for chunk in chunks if chunk.strip()]


def _mail(chunk: str) -> Mail:
    lines = chunk.split("\n", 1)
    head = lines[1] if _MBOX_FROM.match(lines[0]) else chunk
    if _HEADER.match(head.lstrip("\n")):
        msg = email.message_from_string(head.lstrip("\n"), policy=email.policy.default)
        if msg.get("subject") is not None:
            part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
            try:
                body = part.get_content() if part is not None else ""
            except (LookupError, ValueError):
                body = str(part.get_payload())
            return Mail(str(msg["subject"]).replace("\n", " ").strip(), body)
    subject = re.search(r"^(?:Subject:\s*)?((?:Re: )?\[PATCH[^\n]*)$", chunk, re.M)
    return Mail(subject.group(1).strip() if subject else "(a diff without a mail subject)", chunk)


# ---------------------------------------------------------------- hunks
_QUOTE = re.compile(r"^(?:>\s?)+")
_CODE_LINE = re.compile(r"^[+-](?:\t|[}{#]|$)")


def _diff_part(body: str) -> str:
    """The body's own diff: from its first ``diff --git`` or ``--- a/`` line to the signature (``-- ``)."""
    lines = body.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(("diff --git ", "--- a/", "--- "))
                  and (line.startswith("diff") or (i + 1 < len(lines) and lines[i + 1].startswith("+++ ")))), None)
    if start is None:
        return ""
    out = []
    for line in lines[start:]:
        if line == "-- ":
            break
        out.append(line)
    return "\n".join(out) + "\n"


def _quoted_fragment(body: str) -> str:
    """Quoted diff lines without headers (a reply quoting the hunk it discusses), as a diff of one hunk of an
    unknown file, so that ``unidiff`` parses it like any other."""
    frag = []
    for line in body.split("\n"):
        q = _QUOTE.match(line)
        if not q:
            continue
        code = line[q.end():]
        if _CODE_LINE.match(code) and not code.startswith(("+++", "---")):
            frag.append(code)
    if not frag:
        return ""
    old = sum(1 for line in frag if line.startswith("-"))
    new = len(frag) - old
    return f"--- a/\n+++ b/\n@@ -1,{old} +1,{new} @@\n" + "\n".join(frag) + "\n"


_HUNK_HEAD = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def _completed(diff: str) -> tuple[str, list[str]]:
    """``diff`` with each hunk cut short completed by blank context lines (what an archive or a mail client
    trims); the repairs, one text each.  Counting lines against the header is all it does: the parse is
    ``unidiff``'s."""
    lines, out, notes = diff.rstrip("\n").split("\n"), [], []
    i = 0
    while i < len(lines):
        m = _HUNK_HEAD.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        want_old, want_new = int(m.group(1) or 1), int(m.group(2) or 1)
        old = new = 0
        while i < len(lines) and (old < want_old or new < want_new):
            line = lines[i]
            if line.startswith(("@@", "diff --git")) or (line.startswith("--- ") and i + 1 < len(lines)
                                                          and lines[i + 1].startswith("+++ ")):
                break
            if line.startswith("-"):
                old += 1
            elif line.startswith("+"):
                new += 1
            elif line.startswith("\\"):
                pass
            else:
                old, new = old + 1, new + 1
            out.append(line)
            i += 1
        missing = max(want_old - old, want_new - new, 0)
        if missing:
            out.extend([" "] * missing)
            notes.append(f"a hunk at '{m.group(0)}' was cut short: {missing} trailing context line(s) taken as blank")
    return "\n".join(out) + "\n", notes


def hunks(mails: list[Mail]) -> list[Hunk]:
    """Every hunk of every mail: its own diff, else (a reply) the fragment it quotes."""
    out = []
    for i, mail in enumerate(mails):
        diff = _diff_part(mail.body) or _quoted_fragment(mail.body)
        if not diff:
            continue
        diff, notes = _completed(diff)
        try:
            patch = unidiff.PatchSet(diff)
        except unidiff.UnidiffParseError as e:
            raise PatchError(f"mail {i + 1} ({mail.subject[:60]}): its diff does not parse ({e})") from None
        for f in patch:
            path = f.path if f.path not in ("", "/dev/null") else ""
            for h in f:
                out.append(Hunk(i, path, str(h.section_header or "").strip(),
                                tuple(str(x.value).rstrip("\n") for x in h if x.is_added),
                                tuple(str(x.value).rstrip("\n") for x in h if x.is_removed),
                                tuple(str(x.value).rstrip("\n") for x in h if x.is_context),
                                "; ".join(notes)))
    return out


# ---------------------------------------------------------------- mechanisms
@dataclasses.dataclass(frozen=True)
class Mechanism:
    id: str
    what: str
    files: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    either: tuple[str, ...]
    anywhere: tuple[str, ...]
    path: str
    stage: str
    a: Mapping
    b: Mapping
    number: Mapping
    reference: str


def table() -> list[Mechanism]:
    """The rows of :data:`TABLE`, in order (the first match wins)."""
    rows = tomllib.loads(TABLE.read_text(encoding="utf-8"))["mechanism"]
    return [Mechanism(r["id"], r["what"], tuple(r["files"]), tuple(r.get("added", ())), tuple(r.get("removed", ())),
                      tuple(r.get("either", ())), tuple(r.get("anywhere", ())), r["path"], r["stage"],
                      dict(r["a"]), dict(r["b"]), dict(r.get("number", {})), r["reference"]) for r in rows]


def _line_with(patterns, lines) -> str | None:
    """The first of ``lines`` on which every pattern finds itself somewhere (one line per pattern)."""
    found = None
    for pat in patterns:
        hit = next((line for line in lines if re.search(pat, line)), None)
        if hit is None:
            return None
        found = found or hit
    return found


def match(m: Mechanism, h: Hunk) -> str | None:
    """The line that tells ``h`` is mechanism ``m`` (an added line where it needs one), or None."""
    if h.file and not any(re.search(p, h.file) for p in m.files):
        return None
    every = h.added + h.removed + h.context
    if m.anywhere and _line_with(m.anywhere, every) is None:
        return None
    told = None
    if m.added:
        told = _line_with(m.added, h.added)
        if told is None:
            return None
    if m.removed:
        hit = _line_with(m.removed, h.removed)
        if hit is None:
            return None
        told = told or hit
    if m.either:
        hit = _line_with(m.either, h.added + h.removed)
        if hit is None:
            return None
        told = told or hit
    return told


def _numbers(m: Mechanism, hs: list[Hunk]) -> dict[str, int]:
    """``{"N": n, "M": m}``: the numbers the row's patterns find in the added and the removed lines."""
    out = {}
    for key, side in (("N", "added"), ("M", "removed")):
        pat = m.number.get(side)
        lines = [line for h in hs for line in getattr(h, side)]
        hit = next((re.search(pat, line) for line in lines if pat and re.search(pat, line)), None)
        out[key] = int(hit.group(1)) if hit else int(m.number.get("default", 0))
    return out


def map_hunks(hs: list[Hunk]) -> tuple[list[dict], list[dict]]:
    """``(mapped, unmapped)``: each hunk with the mechanism it is and the line that told it, or the reason it
    is not modelled."""
    rows = table()
    mapped, unmapped = [], []
    for h in hs:
        hit = next(((m, line) for m in rows for line in [match(m, h)] if line is not None), None)
        if hit is None:
            unmapped.append(dict(file=h.file, function=h.function, mail=h.mail,
                                 reason="no mechanism the model prices is signalled in it (skbmodel/data/"
                                        "patch-mechanisms.toml: allocation, zeroing, freeing, page_pool, batch "
                                        "sizes); a refactor or a change of code the model does not time"))
            continue
        m, line = hit
        mapped.append(dict(file=h.file, function=h.function, mail=h.mail, mechanism=m.id, change=m.what,
                           stage=m.stage, path=m.path, line=line.strip(), reference=m.reference,
                           repaired=h.repaired, _m=m, _h=h))
    return mapped, unmapped


# ---------------------------------------------------------------- the question and its answer
def question(mapped: list[dict], cpu: str | None = None) -> tuple[dict, list[str]]:
    """The Compare state of the patch (A before, B after, on the first mapped mechanism's path) and what of
    the other mechanisms moves no number of that path."""
    if not mapped:
        raise PatchError("the patch maps to no mechanism the model prices: nothing to predict")
    path = mapped[0]["path"]
    a, b, notes = {}, {}, []
    seen = []
    for r in mapped:
        m = r["_m"]
        if m.id in seen:
            continue
        seen.append(m.id)
        nums = _numbers(m, [x["_h"] for x in mapped if x["mechanism"] == m.id])
        fill = {k: str(v).format(**nums) for k, v in m.a.items()}, {k: str(v).format(**nums) for k, v in m.b.items()}
        a.update(fill[0])
        b.update(fill[1])
        if m.path != path:
            notes.append(f"{m.id} runs on the {m.path} path, not on {path}: set on both sides, it moves the "
                         f"{path} path only where they share a stage")
    return _compare_state(path, a, b, cpu), notes


def _compare_state(path: str, a: Mapping, b: Mapping, cpu: str | None) -> dict:
    """The Compare page's state of A (``a`` set) against B (``b`` set) on ``path``."""
    query = {"page": "compare", "path": path, **({"cpu": cpu} if cpu else {}), **a,
             **{sk_state.key_of(k, "b"): v for k, v in b.items()}}
    return sk_state.decode_strict("&".join(f"{k}={v}" for k, v in query.items()))


def named_question(mechanism: str, numbers: Mapping[str, int] | None = None, cpu: str | None = None) -> dict:
    """The Compare state of a change known by the mechanism it changes rather than by its diff (a public patch
    whose mail says what it does): the row's A and B with ``numbers`` (``{"N": .., "M": ..}``, else the row's
    default) on ``cpu``."""
    m = next((r for r in table() if r.id == mechanism), None)
    if m is None:
        raise PatchError(f"no mechanism {mechanism!r} in {TABLE.name}")
    nums = {"N": int(m.number.get("default", 0)), "M": int(m.number.get("default", 0)), **(numbers or {})}
    return _compare_state(m.path, {k: str(v).format(**nums) for k, v in m.a.items()},
                          {k: str(v).format(**nums) for k, v in m.b.items()}, cpu)


_RATE = r"~?\s*([\d][\d,.]*)\s*(Mpps|Kpps|pps|ns)\b"
_NOT_QUOTED = r"^(?!\s*>).*?\b"
_BEFORE = re.compile(_NOT_QUOTED + r"(?:unpatched|before|baseline|without(?: the)? patch)\b[^\n\d]*?" + _RATE,
                     re.I | re.M)
_AFTER = re.compile(_NOT_QUOTED + r"(?:patched|after|with(?: the)? patch)\b[^\n\d]*?" + _RATE, re.I | re.M)


def _ns_per_packet(value: str, unit: str) -> float:
    x = float(value.replace(",", ""))
    return {"Mpps": 1e3 / x, "Kpps": 1e6 / x, "pps": 1e9 / x, "ns": x}[unit]


def measured(mails: list[Mail]) -> dict | None:
    """What a mail measured before and after, where one of its own (unquoted) lines names a before
    (unpatched, baseline, without the patch) and another an after (patched, with the patch) in pps or ns per
    packet: ``{before, after, unit, delta_ns_per_packet, line_before, line_after}``, or None."""
    for mail in mails:
        b = next((m for m in _BEFORE.finditer(mail.body) if not re.search(r"\bpatched\b", m.group(0), re.I)
                  or re.search(r"\bunpatched\b", m.group(0), re.I)), None)
        a = next((m for m in _AFTER.finditer(mail.body) if not re.search(r"\bunpatched\b", m.group(0), re.I)), None)
        if b and a and b.group(2) == a.group(2):
            nb, na = _ns_per_packet(b.group(1), b.group(2)), _ns_per_packet(a.group(1), a.group(2))
            return dict(before=b.group(1), after=a.group(1), unit=b.group(2), delta_ns_per_packet=na - nb,
                        line_before=b.group(0).strip(), line_after=a.group(0).strip(), mail=mail.subject)
    return None


def answer(text: str | bytes, cpu: str | None = None, base: str | None = None, profile_file: str | None = None) -> dict:
    """The whole answer of a patch (the ``--json`` document): its subject and hash, the path and profile, the
    mapped and unmapped hunks, Compare's difference of ``path.ns_per_packet`` with its interval, verdict,
    runs and drivers, what the mail measured (inside the interval or not) and the Compare link.
    ``profile_file``: a profile file (``--profile``) the question runs on, at its clock, instead of ``cpu``."""
    raw = text.encode("utf-8", errors="replace") if isinstance(text, str) else bytes(text)
    mails = read_mails(text)
    if not mails:
        raise PatchError("empty input: paste a patch mail, a series or a unified diff")
    hs = hunks(mails)
    if not hs:
        raise PatchError("no diff found: expected a unified diff (diff --git / --- a/ +++ b/ @@) or a reply quoting "
                         "one")
    mapped, unmapped = map_hunks(hs)
    st, notes = question(mapped, cpu)
    if profile_file:
        try:
            st = sk_question.with_profile_file(st, profile_file)
        except sk_question.ProfileFileError as e:
            raise PatchError(str(e)) from None
    res = answers.of_state(st)
    if res.problem or res.problem_b:
        raise PatchError(f"the mapped question has no numbers: {res.problem or res.problem_b}")
    if not res.differences:  # the mapped change moves no stage of the path: a difference of exactly 0
        notes.append(f"the mapped change moves no stage of the {st['path']} path on this profile")
    d = res.differences[0] if res.differences else None
    meas = measured(mails)
    if meas is not None:
        lo, hi = (d.lo, d.hi) if d else (0.0, 0.0)
        meas["inside"] = bool(lo <= meas["delta_ns_per_packet"] <= hi)
    subject = next((m.subject for m in mails if "[PATCH" in m.subject and " 0/" not in m.subject),
                   mails[0].subject)
    digest = hashlib.sha256(raw).hexdigest()[:12]
    # the link names the patch (its subject as the codec keeps it, and the hash), never carries it
    shown, _ = sk_state.parse_patch("patch", subject)
    named = {**st, "phash": digest, **({"patch": shown} if shown else {})}
    link = shortlink.share_link(versions.share_query(named), base, "compare")
    return {"ok": True, "subject": subject, "hash": digest,
            "path": st["path"], "profile": res.profile_a.to_json(),
            "mapped": [{k: v for k, v in r.items() if not k.startswith("_")} for r in mapped],
            "unmapped": unmapped, "notes": notes,
            "a": {k: st[k] for k in sk_state.b_overrides(st)}, "b": sk_state.b_overrides(st),
            "answer": _answer_json(d, res, st),
            "measured": meas, "link": link}


def _answer_json(d, res, st) -> dict:
    """Compare's difference of ``path.ns_per_packet`` (B - A): value, interval, verdict, runs and drivers;
    exactly 0 where the change moves no stage of the path."""
    if d is None:
        try:
            a = res.value("path.ns_per_packet").value
        except KeyError:
            a = float("nan")
        return {"output": "path.ns_per_packet", "unit": "ns", "value": 0.0, "interval": [0.0, 0.0],
                "verdict": noise.VERDICT_NOISE, "a": a, "b": a, "runs_needed": float(noise.MAX_RUNS),
                "drivers": None}
    return {"output": d.output, "unit": d.unit, "value": d.value, "interval": [d.lo, d.hi], "verdict": d.verdict,
            "a": d.a, "b": d.b, "runs_needed": float(noise.runs_needed(d.value, d.noise_ns)),
            "drivers": d.to_json().get("drivers")}


def _runs_text(n: float) -> str:
    return "no finite number of runs" if n >= noise.MAX_RUNS else f"{n:.0f} run{'' if n == 1 else 's'}"


def text_block(doc: dict) -> str:
    """The answer in :data:`WIDTH` columns, ASCII: the verdict first, then every hunk mapped or not modelled,
    what the mail measured and the link."""
    ans = doc["answer"]
    w = lambda s, indent="  ": textwrap.fill(ascii_text(s), WIDTH, initial_indent=indent,  # noqa: E731
                                             subsequent_indent=indent + "  ")
    lines = [textwrap.fill(ascii_text(f"skbmodel patch: {doc['subject']}"), WIDTH),
             w(f"path {doc['path']}, profile {doc['profile']['id']} ({doc['profile']['configuration']}) at "
               f"{doc['profile']['ghz']:g} GHz", ""),
             w(f"B - A: {ans['value']:+.2f} {ans['unit']}/packet (90 %: {ans['interval'][0]:+.2f} to "
               f"{ans['interval'][1]:+.2f}): {ans['verdict']}; {_runs_text(ans['runs_needed'])} per variant to "
               f"see it (A {ans['a']:.1f}, B {ans['b']:.1f} {ans['unit']}/packet)", ""),
             "Mapped:"]
    lines += [w(f"{r['file'] or '(quoted)'} {r['function']}: {r['change']} -> {r['stage']} (told by: "
                f"{r['line']})") for r in doc["mapped"]]
    lines.append("Not modelled:" if doc["unmapped"] else "Not modelled: none")
    lines += [w(f"{r['file'] or '(quoted)'} {r['function']}: {r['reason']}") for r in doc["unmapped"]]
    lines += [w(n, "Note: ") for n in doc["notes"]]
    meas = doc["measured"]
    if meas:
        lines.append(w(f"Measured in the mail: {meas['before']} -> {meas['after']} {meas['unit']}, "
                       f"{meas['delta_ns_per_packet']:+.2f} ns/packet: "
                       f"{'inside' if meas['inside'] else 'outside'} the predicted interval", ""))
    lines += ["Link:", doc["link"]]
    return "\n".join(lines) + "\n"
