"""A kernel patch in, its predicted per-packet difference out: ``python -m skbmodel patch FILE|-``.

The reviewer's medium is a patch mail or a series; the model's is a Compare question (A before, B after).  This
module translates one into the other and answers it with the one answer engine (:mod:`skbmodel.answers`):

1. **Mails** (:mod:`skbmodel.patchmail`): every mail of a paste, an mbox or a series copied from an archive
   (split on header blocks), each decoded by the standard library's ``email`` parser; a reply's quoted hunk.
2. **Hunks** (:func:`hunks`): each mail's diff parsed with ``unidiff`` (file, git's heading, the lines in order).
3. **Net changes** (:mod:`skbmodel.patchcode`): what each touched function calls, names, defines or assigns
   after the patch that it did not before, and the reverse, over the whole series.
4. **Mechanisms** (:func:`map_changes`): every row of ``skbmodel/data/patch-mechanisms.toml`` that a function's
   net change satisfies; rows that change the same stage are decided by the more specific row.
5. **The question** (:func:`question`): one Compare state of the path the files and functions run on (the
   ``[[path]]`` rows), A before and B after with every mapped row applied; a path borrowed from another says so
   and its interval becomes the envelope over the modelled paths.  A change per batch is priced per flush and
   amortised; work moved between two CPUs is answered for each CPU.
6. **The answer** (:func:`answer`): Compare's difference, interval, verdict and runs, the hunk table (mapped,
   touched with no net change, not modelled with its reason) and what the mails measured (:mod:`skbmodel.
   patchnumbers`), whatever the verdict.
"""
from __future__ import annotations

import dataclasses
import re
import textwrap
import tomllib
from collections.abc import Mapping
from functools import lru_cache

import unidiff

from . import answers, folders, patchcode, patchmail, patchnumbers
from .evidence import kstages
from . import question as sk_question
from .links import shortlink, state as sk_state
from .physics import noise
from .plaintext import WIDTH, ascii_text

TABLE = folders.DATA_DIR / "patch-mechanisms.toml"


class PatchError(ValueError):
    """A patch that cannot be read: one line for the user."""


class NothingPriced(PatchError):
    """A patch that touches no mechanism the model prices; ``doc`` still holds its hunk table."""

    def __init__(self, message: str, doc: dict):
        super().__init__(message)
        self.doc = doc


@dataclasses.dataclass(frozen=True)
class Hunk:
    mail: int          # index of the mail it came from
    file: str          # path in the tree ("" for a quoted fragment without headers)
    function: str      # git's hunk heading (the definition before the hunk)
    rows: tuple[tuple[str, str], ...]   # (" " | "-" | "+", text) in the hunk's order


# ---------------------------------------------------------------- hunks
def hunks(mails: list[patchmail.Mail]) -> list[Hunk]:
    """Every hunk of every mail: its own diff, else (a reply) the fragment it quotes."""
    out = []
    for mail in mails:
        diff = mail.diff or mail.quoted_diff
        if not diff:
            continue
        try:
            patch = unidiff.PatchSet(diff)
        except unidiff.UnidiffParseError as e:
            raise PatchError(f"mail {mail.index + 1} ({mail.subject[:60]}): its diff does not parse ({e})") from None
        for f in patch:
            path = f.path if f.path not in ("", "/dev/null") else ""
            for h in f:
                rows = tuple((x.line_type if x.line_type in "+-" else " ", str(x.value).rstrip("\n"))
                             for x in h if x.line_type in (" ", "+", "-"))
                out.append(Hunk(mail.index, path, str(h.section_header or "").strip(), rows))
    return out


# ---------------------------------------------------------------- the table
@dataclasses.dataclass(frozen=True)
class Mechanism:
    id: str
    what: str
    stage: str
    files: tuple[str, ...]
    functions: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    added_or_removed: tuple[str, ...]
    not_removed: tuple[str, ...]
    macro: str
    path: str
    a: Mapping
    b: Mapping
    number: Mapping
    reference: str
    per: str = "packet"
    cpus: str = "one"
    flush_cycles: tuple[float, float] = (0.0, 0.0)
    batch: int = 1
    reason: str = ""

    @property
    def specificity(self) -> int:
        """How many conditions the row states: the more, the more specific (ties between rows of one stage).  A
        macro counts twice (its name and its value), a file list that names single files once."""
        return (len(self.added) + len(self.removed) + len(self.added_or_removed) + 2 * bool(self.macro)
                + bool(self.functions) + bool(self.files and all(f.endswith("$") for f in self.files)))

    @property
    def priced(self) -> bool:
        return not self.reason


@dataclasses.dataclass(frozen=True)
class PathRow:
    files: tuple[str, ...]
    functions: tuple[str, ...]
    path: str
    why: str
    borrowed: str
    #: what the code this row places always runs with (Compare keys set on A and B alike), and why
    state: tuple[tuple[str, str], ...] = ()
    state_why: str = ""


@lru_cache(maxsize=1)
def _loaded() -> dict:
    return tomllib.loads(TABLE.read_text(encoding="utf-8"))


def table() -> list[Mechanism]:
    """The mechanism rows of :data:`TABLE` (their order decides nothing)."""
    return [Mechanism(r["id"], r["what"], r["stage"], tuple(r.get("files", ())), tuple(r.get("functions", ())),
                      tuple(r.get("added", ())), tuple(r.get("removed", ())), tuple(r.get("added_or_removed", ())),
                      tuple(r.get("not_removed", ())), r.get("macro", ""), r.get("path", ""), dict(r.get("a", {})),
                      dict(r.get("b", {})),
                      dict(r.get("number", {})), r["reference"], r.get("per", "packet"), r.get("cpus", "one"),
                      tuple(float(x) for x in r.get("flush_cycles", (0, 0))), int(r.get("batch", 1)),
                      r.get("reason", "")) for r in _loaded()["mechanism"]]


def callees() -> dict[str, tuple[str, ...]]:
    """``{kernel function: the facts of its body}`` (the ``[[callee]]`` rows)."""
    return {r["name"]: tuple(r["facts"]) for r in _loaded().get("callee", ())}


def path_rows() -> list[PathRow]:
    return [PathRow(tuple(r["files"]), tuple(r.get("functions", ())), r["path"], r["why"], r.get("borrowed", ""),
                    tuple((str(k), str(v)) for k, v in r.get("state", {}).items()), r.get("state_why", ""))
            for r in _loaded()["path"]]


def _any(patterns, text: str) -> bool:
    return any(re.search(p, text) for p in patterns)


def _facts_match(patterns, facts) -> str | None:
    """The first fact matching each pattern (all must match), or None."""
    hit = None
    for p in patterns:
        f = next((f for f in sorted(facts) if re.search(p, f)), None)
        if f is None:
            return None
        hit = hit or f
    return hit


def match(m: Mechanism, ch: patchcode.FunctionChange) -> str | None:
    """The fact that tells ``ch`` is mechanism ``m``, or None."""
    if ch.file and m.files and not _any(m.files, ch.file):
        return None
    if m.functions and not _any(m.functions, ch.function):
        return None
    told = None
    if m.macro:
        if m.macro not in ch.macros():
            return None
        told = next(f for f in sorted(set(ch.added) | set(ch.removed)) if f.startswith(f"define:{m.macro}="))
    for pats, facts in ((m.added, ch.added), (m.removed, ch.removed)):
        if pats:
            hit = _facts_match(pats, facts)
            if hit is None:
                return None
            told = told or hit
    if m.added_or_removed:
        hit = _facts_match(m.added_or_removed, set(ch.added) | set(ch.removed))
        if hit is None:
            return None
        told = told or hit
    if any(re.search(p, f) for p in m.not_removed for f in ch.removed):
        return None
    return told


# ---------------------------------------------------------------- the hunk table
_DOCS = re.compile(r"^(Documentation/|tools/testing/|samples/|MAINTAINERS$|scripts/)|\.(rst|txt|md|sh|py|json|yaml)$")
_TCP = re.compile(r"(^net/ipv[46]/tcp|^tcp_|^sk_stream|^sock_|^sk_)")


def _reason(ch: patchcode.FunctionChange) -> str:
    """Why a net change the table does not price is not modelled, as specific as the facts allow."""
    if ch.defined:
        return "a function the patch defines: priced where it is called"
    facts = set(ch.added) | set(ch.removed)
    if any(f.startswith("lock:") for f in facts):
        return "locking (a lock, bottom-half or RCU section per call): the model has no lock term on this function"
    if _TCP.search(ch.file) or _TCP.search(ch.function):
        return "the TCP / socket path, which the model does not have"
    if ch.file.endswith(".h") and all(f.startswith(("name:", "define:")) for f in facts):
        return "declarations or struct layout: the model prices no layout"
    if any(f.startswith("spec:") for f in facts):
        return "code layout (inlining, storage class): the model has no term for it"
    calls = sorted(ch.names("added", "call") | ch.names("removed", "call"))
    if calls:
        return "calls the model does not price: " + ", ".join(calls[:6]) + ("..." if len(calls) > 6 else "")
    return "a change of names, fields or flow the model does not price"


def _priced_function(name: str, rows: list[Mechanism]) -> Mechanism | None:
    """The row that prices calls to the function ``name`` (its own code changed, not its callers'), or None."""
    for m in rows:
        if m.priced and any(re.search(p, f"call:{name}") for p in (*m.added, *m.removed)):
            return m
    return None


def map_changes(changes: Mapping, hs: list[Hunk]) -> list[dict]:
    """The hunk table: one row per touched function (and per file that holds no C), with its status:
    ``mapped`` (its mechanisms and the facts that told them), ``no net change`` (comments, strings, reflowed
    or moved code), ``not modelled`` (with the reason), ``not code`` (documentation, selftests, scripts)."""
    rows = table()
    out = []
    for (file, fn), ch in changes.items():
        if not ch.touched and not ch.net:
            continue
        # the kernel stage the function runs in (the symbol map perf profiles are read with)
        base = dict(file=file, function=fn, mails=sorted({hs[i].mail + 1 for i in ch.hunks}),
                    added=sorted(set(ch.added)), removed=sorted(set(ch.removed)),
                    stage=kstages.stage_name(kstages.stage_of(fn)) if kstages.stage_of(fn) else "")
        hits = [(m, t) for m in rows for t in [match(m, ch)] if t is not None]
        priced = [(m, t) for m, t in hits if m.priced]
        if ch.defined:
            out.append(dict(base, status="helper", reason=_reason(ch) + (
                ": " + ", ".join(sorted({m.id for m, _ in priced})) if priced else ""), mechanisms=[]))
        elif priced:
            out.append(dict(base, status="mapped", mechanisms=[
                dict(id=m.id, what=m.what, stage=m.stage, told=t, line=ch.lines.get(t, ""), reference=m.reference,
                     specificity=m.specificity) for m, t in priced], reason=""))
        elif hits:
            m, t = hits[0]
            out.append(dict(base, status="not modelled", reason=m.reason, mechanisms=[], priced_code=m.id,
                            line=ch.lines.get(t, "")))
        elif ch.net and _priced_function(ch.function, rows):
            m = _priced_function(ch.function, rows)
            out.append(dict(base, status="not modelled", priced_code=m.id, mechanisms=[],
                            reason=f"{ch.function} is priced ({m.id}), but this change of it is not: " + _reason(ch)))
        elif not ch.net:
            out.append(dict(base, status="no net change", reason="comments, strings, reflowed or moved code: "
                            "what it calls, names and assigns is the same before and after", mechanisms=[]))
        else:
            out.append(dict(base, status="not modelled", reason=_reason(ch), mechanisms=[]))
    for f in sorted({h.file for h in hs if h.file and not patchcode.is_code(h.file)}):
        out.append(dict(file=f, function="", mails=sorted({h.mail + 1 for h in hs if h.file == f}), added=[],
                        removed=[], status="not code",
                        reason="documentation, selftests or scripts only" if _DOCS.search(f)
                        else "not C: no code the model prices", mechanisms=[]))
    return out


# ---------------------------------------------------------------- the question
def _path_of(file: str, function: str) -> PathRow | None:
    """The most specific ``[[path]]`` row for a file and function, or None."""
    best = None
    for r in path_rows():
        if _any(r.files, file) and (not r.functions or _any(r.functions, function)):
            if best is None or len(r.functions) > len(best.functions):
                best = r
    return best


def _number(m: Mechanism, ch: patchcode.FunctionChange, macros: Mapping[str, tuple]) -> dict[str, int]:
    """``{"N": after, "M": before}``: the macro's values (a macro the patch introduces: M = ``number.none``),
    else the first number or known macro passed to ``number.call``, else the row's default."""
    default = int(m.number.get("default", 0))
    name = m.number.get("macro")
    if name and name in macros:
        before, after = macros[name]
        num = lambda v, d: int(v) if v is not None and re.fullmatch(r"\d+", v) else d  # noqa: E731
        return {"N": num(after, default), "M": num(before, int(m.number.get("none", default)))}
    call = m.number.get("call")
    if call:
        for fact, line in ch.lines.items():
            if isinstance(fact, str) and fact.startswith(f"call:{call}") and isinstance(line, str):
                args = re.search(re.escape(fact.split(":", 1)[1]) + r"\s*\(([^;]*)", line)
                for arg in (args.group(1).split(",") if args else []):
                    arg = arg.strip().rstrip(")")
                    if re.fullmatch(r"\d+", arg):
                        return {"N": int(arg), "M": default}
                    if arg in macros and macros[arg][1] and re.fullmatch(r"\d+", macros[arg][1]):
                        return {"N": int(macros[arg][1]), "M": default}
    return {"N": default, "M": default}


@dataclasses.dataclass
class Plan:
    """What the patch asks of the model: the path, the rows chosen per stage, A and B, and what it says."""
    path: str
    start: str
    a: dict
    b: dict
    chosen: list          # (Mechanism, FunctionChange, told fact)
    flush: list           # per-flush rows
    two_cpu: list         # rows moving work between two CPUs
    borrowed: list[str]
    notes: list[str]
    why: str = ""         # what of the kernel the path stands for here (its [[path]] row)


def plan(changes: Mapping) -> Plan | None:
    """Every mapped row composed into one question, or None where no priced row matched."""
    rows = table()
    macros: dict[str, tuple] = {}
    for ch in changes.values():
        macros.update(ch.macros())
    hits = []
    for ch in changes.values():
        if ch.defined:
            continue  # a helper is priced where it is called
        for m in rows:
            t = match(m, ch) if m.priced else None
            if t is not None:
                hits.append((m, ch, t))
    if not hits:
        return None
    by_stage: dict[str, list] = {}
    for h in hits:
        by_stage.setdefault(h[0].stage, []).append(h)
    chosen, notes = [], []
    for stage, hs in by_stage.items():
        top = max(m.specificity for m, _, _ in hs)
        best = [h for h in hs if h[0].specificity == top]
        ids = sorted({m.id for m, _, _ in best})
        if len({(tuple(sorted(m.a.items())), tuple(sorted(m.b.items()))) for m, _, _ in best}) > 1:
            notes.append(f"stage {stage}: {', '.join(ids)} match equally; each is applied")
        lost = sorted({m.id for m, _, _ in hs if m.specificity < top} - set(ids))
        if lost:
            notes.append(f"stage {stage}: {', '.join(ids)} (more specific) decides over {', '.join(lost)}")
        seen = set()
        for h in best:
            settings = (tuple(sorted(h[0].a.items())), tuple(sorted(h[0].b.items())))
            if settings not in seen:  # rows that set the same keys alike are one change
                seen.add(settings)
                chosen.append(h)
    # the path: from the files and functions of the per-packet rows, else the first row's own
    placed = [(_path_of(ch.file, ch.function), m) for m, ch, _ in chosen if m.per == "packet"]
    placed = placed or [(_path_of(ch.file, ch.function), m) for m, ch, _ in chosen]
    by_file = [p for p, _ in placed if p is not None]
    borrowed, why = [], ""
    if by_file:
        start, why = by_file[0].path, by_file[0].why
        borrowed += [p.borrowed for p in by_file[:1] if p.borrowed]
    else:
        start = placed[0][1].path
        files = sorted({ch.file or "(quoted fragment)" for _, ch, _ in chosen})
        borrowed.append(f"{', '.join(files)} runs on no one modelled path: priced on the {start} path, the one "
                        f"{placed[0][1].id} names")
    a, b = {}, {}
    flush, two = [], []
    for m, ch, _ in chosen:
        if m.per == "flush":
            flush.append((m, ch))
            continue
        if m.cpus == "two":
            two.append((m, ch))
        nums = _number(m, ch, macros)
        a.update({k: str(v).format(**nums) for k, v in m.a.items()})
        b.update({k: str(v).format(**nums) for k, v in m.b.items()})
    if by_file and by_file[0].state:  # the placed code's own conditions, on both sides
        for k, v in by_file[0].state:
            a.setdefault(k, v)
        notes.append(by_file[0].state_why)
    design = any(k.startswith("d_") for k in (*a, *b))
    path = "design" if design else start
    if design:
        a["d_from"] = start
    return Plan(path, start, a, b, chosen, flush, two, borrowed, notes, why)


@dataclasses.dataclass(frozen=True)
class Machine:
    """Where the patch is priced: a shipped profile (``cpu``, None for the default) or a profile file."""
    cpu: str | None = None
    profile_file: str | None = None


def _compare_state(path: str, a: Mapping, b: Mapping, on: Machine) -> dict:
    """The Compare page's state of A (``a`` set) against B (``b`` set) on ``path``, on the machine ``on``."""
    query = {"page": "compare", "path": path, **({"cpu": on.cpu} if on.cpu else {}), **a,
             **{sk_state.key_of(k, "b"): v for k, v in b.items() if a.get(k) != v or k not in a}}
    st = sk_state.decode_strict("&".join(f"{k}={v}" for k, v in query.items()))
    if on.profile_file:
        try:
            st = sk_question.with_profile_file(st, on.profile_file)
        except sk_question.ProfileFileError as e:
            raise PatchError(str(e)) from None
    return st


def question(p: Plan, on: Machine = Machine()) -> dict:
    """The Compare state of a plan: A before, B after, on its path and machine."""
    return _compare_state(p.path, p.a, p.b, on)


# ---------------------------------------------------------------- the answer
def _difference(st: Mapping) -> tuple[dict, answers.Answers]:
    res = answers.of_state(st)
    if res.problem or res.problem_b:
        raise PatchError(f"the mapped question has no numbers: {res.problem or res.problem_b}")
    d = next((x for x in res.differences if x.output == "path.ns_per_packet"), None)
    if d is None:
        a = res.value("path.ns_per_packet").value
        return {"output": "path.ns_per_packet", "unit": "ns", "value": 0.0, "interval": [0.0, 0.0],
                "verdict": noise.VERDICT_NOISE, "a": a, "b": a, "noise_ns": float(st["noise_ns"]),
                "drivers": None}, res
    return {"output": d.output, "unit": d.unit, "value": d.value, "interval": [d.lo, d.hi], "verdict": d.verdict,
            "a": d.a, "b": d.b, "noise_ns": d.noise_ns, "drivers": d.to_json().get("drivers")}, res


def _envelope(p: Plan, on: Machine, ans: dict) -> dict:
    """A borrowed path's answer: the same change on every modelled path its keys apply to, the interval the
    envelope of theirs (the change's cost on the path it really runs on is one of them, or between)."""
    lo, hi = ans["interval"]
    paths = []
    for start in ("veth", "cpumap", "xdp_pass"):
        if start == p.start:
            continue
        a = {**p.a, "d_from": start} if p.path == "design" else p.a
        try:
            other, _ = _difference(_compare_state(p.path, a, p.b, on))
        except (PatchError, ValueError):
            continue
        if other["interval"] == [0.0, 0.0]:  # the change moves no stage of that path
            continue
        lo, hi = min(lo, other["interval"][0]), max(hi, other["interval"][1])
        paths.append(f"{start} {other['value']:+.2f}")
    return {**ans, "interval": [lo, hi], "envelope": paths}


def _two_cpus(p: Plan, on: Machine) -> dict:
    """Work moved between two CPUs (a deferred free): the freeing CPU sheds its free (A's free, B none), the
    allocating CPU takes it through its defer list (A none, B the row's B); each CPU's difference.  The one
    that limits a test is the allocating CPU, which runs the whole path (allocation, build, the stack or the
    transmit) while the freeing CPU runs the frees of its completions: the headline is its difference, with the
    interval of both, since a test whose completion CPU saturates (many queues freeing into one) limits on
    the other and measures the other sign."""
    a_free = {k: v for k, v in p.a.items() if k.startswith("d_free")}
    shed_st = _compare_state(p.path, p.a, {**{k: v for k, v in p.b.items() if not k.startswith("d_free")},
                                           "d_free": "none"}, on)
    gain_st = _compare_state(p.path, {**{k: v for k, v in p.a.items() if k not in a_free}, "d_free": "none"},
                             dict(p.b), on)
    shed, _ = _difference(shed_st)
    gain, _ = _difference(gain_st)
    # the freeing CPU still moves one line to the other's defer list (free.other_cpu_ns, at the placement)
    push, push_iv = sk_question.Question.of_state(gain_st).scenario("b").with_intervals(["free.other_cpu_ns"])
    f, (f_lo, f_hi) = (float(push["free.other_cpu_ns"]), (float(x) for x in push_iv["free.other_cpu_ns"]))
    shed = {**shed, "value": shed["value"] + f, "b": shed["b"] + f,
            "interval": [shed["interval"][0] + f_lo, shed["interval"][1] + f_hi], "line_ns": f}
    place = sk_state.PARAMS["place"].label_of(gain_st["place"])
    return {"shedding": {"cpu": f"the CPU that frees (TX completion, the consumer; {place})", **shed,
                         "state": shed_st},
            "gaining": {"cpu": f"the CPU that allocated the skb (its defer list; {place})", **gain,
                        "state": gain_st}}


def answer(text: str | bytes, cpu: str | None = None, base: str | None = None, profile_file: str | None = None) -> dict:
    """The whole answer of a patch (the ``--json`` document).  Raises :class:`NothingPriced` (holding the
    document with its hunk table) where nothing in the patch touches a mechanism the model prices."""
    mails = patchmail.read_mails(text)
    if not mails:
        raise PatchError("empty input: paste a patch mail, a series or a unified diff")
    hs = hunks(mails)
    if not hs:
        raise PatchError("no diff found: expected a unified diff (diff --git / --- a/ +++ b/ @@) or a reply quoting "
                         "one")
    changes = patchcode.net_changes(hs, callees())
    table_rows = map_changes(changes, hs)
    info = patchmail.series_info(mails)
    read_notes: list[str] = []
    meas = patchnumbers.measured(mails, read_notes)
    p = plan(changes)
    mapped_mails = [m for r in table_rows if r["status"] == "mapped" for m in r["mails"]]
    subject = mails[mapped_mails[0] - 1].subject if mapped_mails else info["subject"]
    digest = patchmail.diff_hash(mails)
    doc = {"ok": True, "subject": subject, "hash": digest, "series": info, "hunks": table_rows,
           "measured": meas, "notes": read_notes, "answer": None, "path": None, "start": None, "path_why": "",
           "link": None, "cpu_from_mail": None,
           "composed": []}
    if p is None:
        touched = [r for r in table_rows if r.get("priced_code")]
        if not touched:
            raise NothingPriced("the patch touches no mechanism the model prices: nothing to predict", doc)
        doc["notes"].append("the patch touches the code of a priced mechanism, but no change the model has a term "
                            "for: no number (see the table)")
        return _with_measured(doc, None)
    if cpu is None and profile_file is None:
        cpu, doc["cpu_from_mail"] = mail_cpu(mails, meas)
        if cpu is not None:
            doc["notes"].append(f"priced on {cpu}: the mails name {doc['cpu_from_mail']['said']!r} "
                                f"({doc['cpu_from_mail']['uarch']}); --cpu prices it on another")
    on = Machine(cpu, profile_file)
    st = question(p, on)
    ans, res = _difference(st)  # only per-flush rows: A = B, the path's own cost, unchanged per packet
    doc["profile"] = res.profile_a.to_json()
    if p.flush:
        ans = _with_flush(p, ans, float(doc["profile"]["ghz"]))
    if p.two_cpu:
        cpus = _two_cpus(p, on)
        st = cpus["gaining"].pop("state")  # the headline's question: the link opens it
        cpus["shedding"].pop("state")
        ans["cpus"] = cpus
        ans["interval"] = [min(ans["interval"][0], *(c["interval"][0] for c in ans["cpus"].values())),
                           max(ans["interval"][1], *(c["interval"][1] for c in ans["cpus"].values()))]
        ans.update({k: ans["cpus"]["gaining"][k] for k in ("value", "a", "b")})
        doc["notes"].append("work moved between two CPUs: the CPU that frees sheds its free, the CPU that allocated "
                            "takes it; the headline is the allocating CPU's, which runs the whole path and limits a "
                            "test unless its completion CPU saturates (then the sign is the other CPU's)")
    if p.borrowed:
        ans = _envelope(p, on, ans)
        doc["notes"] += [f"borrowed path: {b}; the interval is the envelope over the modelled paths"
                         for b in p.borrowed]
    ans["verdict"] = noise.verdict(ans["value"], ans["noise_ns"], *ans["interval"])
    ans["runs_needed"] = float(noise.runs_needed(ans["value"], ans["noise_ns"]))
    doc["notes"] += p.notes
    doc["composed"] = sorted({m.id for m, _, _ in p.chosen})
    doc["start"], doc["path_why"] = p.start, p.why
    doc["path"] = st["path"] if st["path"] != "design" else f"design (from {p.start})"
    doc["a"] = {k: st[k] for k in sk_state.b_overrides(st)}
    doc["b"] = sk_state.b_overrides(st)
    doc["answer"] = ans
    # the link names the patch (its subject as the codec keeps it, and the hash), never carries it
    shown, _ = sk_state.parse_patch("patch", subject)
    named = {**st, "phash": digest, **({"patch": shown} if shown else {})}
    doc["link"] = shortlink.share_link(answers.share_query(named), base, "compare")
    return _with_measured(doc, ans)


def mail_cpu(mails, meas: list[dict]) -> tuple[str | None, dict | None]:
    """The shipped profile of the CPU the mails name, and what named it, or ``(None, None)``.

    The prose of the mails (never their diffs: a hunk may name any CPU) is read by
    :func:`skbmodel.machine.cpuinfo.named_cpu`, the mails that state measured numbers first, then the others in
    order; the first CPU a description knows wins and its profile is the one a fit starts from (measured on that
    CPU, else derived from its description).
    """
    from .machine import cpuinfo
    from .machine.profile import available_profiles
    first = list(dict.fromkeys(m["mail"] for m in meas))
    for i in first + [m.index for m in mails if m.index not in first]:
        found = cpuinfo.named_cpu(mails[i].prose)
        if found is not None and found.description is not None and found.profile in available_profiles():
            return found.profile, {"said": found.text, "uarch": found.description.uarch,
                                   "description": found.description.name, "profile": found.profile,
                                   "mail": i + 1}
    return None, None


def _with_flush(p: Plan, ans: dict, ghz: float) -> dict:
    """Per-flush rows beside the answer: their cost per flush [ns] and per packet, amortised over the row's
    batch.  The headline value stays the link's question's (the per-packet change Compare shows); the
    interval's bounds take the per-flush range, the most a batch's lock could add or save per packet."""
    lo_c = sum(m.flush_cycles[0] for m, _ in p.flush)
    hi_c = sum(m.flush_cycles[1] for m, _ in p.flush)
    batch = min(m.batch for m, _ in p.flush)
    lo_ns, hi_ns = lo_c / ghz / batch, hi_c / ghz / batch
    ans = {**ans, "interval": [ans["interval"][0] - hi_ns, ans["interval"][1] + hi_ns]}
    ans["per_flush"] = {"ns_per_flush": [lo_c / ghz, hi_c / ghz], "batch": batch,
                        "rows": sorted({m.id for m, _ in p.flush}), "ns_per_packet": [lo_ns, hi_ns]}
    return ans


def _with_measured(doc: dict, ans: dict | None) -> dict:
    """Each measured difference in ns/packet marked inside or outside the predicted interval."""
    for m in doc["measured"]:
        d = m.get("delta_ns_per_packet")
        m["inside"] = (None if ans is None or d is None
                       else bool(ans["interval"][0] <= d <= ans["interval"][1]))
    return doc


# ---------------------------------------------------------------- the text
def runs_text(ans: dict) -> str:
    """How many runs would show the difference, as a reviewer would quote it: where the interval holds 0 the
    count is that of the predicted value, not a promise."""
    n = ans["runs_needed"]
    if n >= noise.MAX_RUNS:
        return "no number of runs would show it"
    runs = f"{n:.0f} run{'' if round(n) == 1 else 's'} per variant"
    if ans["verdict"] == noise.VERDICT_UNSURE:
        return f"the interval holds 0, so no number of runs is sure to show it; at the predicted value, {runs}"
    return f"{runs} to see it"


def _fill(s: str, indent: str = "  ") -> str:
    return textwrap.fill(ascii_text(s), WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")


def measured_text(m: dict) -> str:
    """One measured before/after as a reviewer would quote it (its label, where its line or block names the
    test), with what it was converted with; a pair read from a reply's quote says so."""
    named = m.get("label") and m["how"] in ("labelled lines", "table rows", "table columns")
    s = (f"{m['label']}: " if named else "") + m["text"]
    if m.get("quoted"):
        s += " [quoted from an earlier mail]"
    if m.get("delta_ns_per_packet") is not None:
        s += f" ({m['delta_ns_per_packet']:+.2f} ns/packet" + (f"; {m['assumed']}" if m.get("assumed") else "") + ")"
    elif m.get("relative") is not None and m["kind"] != "relative":
        s += f" ({m['relative']:+.1%})"
    if m.get("inside") is not None:
        s += ": " + ("inside" if m["inside"] else "outside") + " the predicted interval"
    return s


def hunk_text(r: dict) -> str:
    where = f"{r['file'] or '(quoted)'} {r['function']}".strip() + (f" [{r['stage']}]" if r.get("stage") else "")
    if r["status"] == "mapped":
        return f"{where}: " + "; ".join(f"{x['id']} ({x['what']}; told by {x['told']}: {x['line']})"
                                        for x in r["mechanisms"])
    return f"{where}: {r['status']}: {r['reason']}"


def text_block(doc: dict) -> str:
    """The answer in :data:`WIDTH` columns, ASCII: the verdict first, the hunk table, what the mails measured,
    the notes and the link."""
    info = doc["series"]
    lines = [textwrap.fill(ascii_text(f"skbmodel patch: {doc['subject']}"), WIDTH),
             _fill(f"read {info['mails']} mail{'s' * (info['mails'] != 1)} ({info['with_diff']} with a diff), "
                   f"{info['hunks']} hunks" + (f"; skipped: {'; '.join(info['skipped'])}" if info["skipped"] else "")
                   + (f"; repaired: {'; '.join(info['repairs'])}" if info["repairs"] else ""), "")]
    ans = doc["answer"]
    if ans is not None:
        prof = doc["profile"]
        why = f" ({doc['path_why']})" if doc["path_why"] else ""
        lines.append(_fill(f"path {doc['path']}{why}, profile {prof['id']} ({prof['configuration']}) at "
                           f"{prof['ghz']:g} GHz; priced: {', '.join(doc['composed'])}", ""))
        if ans.get("per_flush") and ans["a"] == ans["b"]:  # only changes per batch: nothing per packet to see
            lines.append(_fill(f"B - A: about 0 ns/packet (within {ans['interval'][0]:+.2f} to "
                               f"{ans['interval'][1]:+.2f}), not measurable: {ans['verdict']}", ""))
        else:
            lines.append(_fill(f"B - A: {ans['value']:+.2f} ns/packet (90 %: {ans['interval'][0]:+.2f} to "
                               f"{ans['interval'][1]:+.2f}): {ans['verdict']}; {runs_text(ans)} "
                               f"(A {ans['a']:.1f}, B {ans['b']:.1f} ns/packet)", ""))
        for c in (ans.get("cpus") or {}).values():
            lines.append(_fill(f"{c['cpu']}: {c['value']:+.2f} ns/packet (90 %: {c['interval'][0]:+.2f} to "
                               f"{c['interval'][1]:+.2f})"))
        if ans.get("per_flush"):
            f = ans["per_flush"]
            lines.append(_fill(f"per flush ({', '.join(f['rows'])}): {f['ns_per_flush'][0]:.1f} to "
                               f"{f['ns_per_flush'][1]:.1f} ns per batch of {f['batch']}, up to "
                               f"{f['ns_per_packet'][1]:.2f} ns/packet either way: in the interval, not in "
                               f"the value (the link's question has no lock term)"))
    else:
        lines.append(_fill("no number: nothing in the patch changes a term of the model", ""))
    lines.append("Hunks:")
    lines += [_fill(hunk_text(r)) for r in doc["hunks"]]
    lines.append("Measured in the mails:" if doc["measured"] else "Measured in the mails: nothing read")
    lines += [_fill(measured_text(m)) for m in doc["measured"]]
    lines += [_fill(n, "Note: ") for n in doc["notes"]]
    if doc["link"]:
        lines += ["Link:", doc["link"]]
    return "\n".join(lines) + "\n"
