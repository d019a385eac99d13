"""The plain-text summary of a view, to paste into a reply on a mailing list.

``python -m skbmodel eval QUERY --text`` prints it and every page's "Copy as text" shows it: the page,
the scenario (only what differs from the defaults, and the CPU profile), the page's numbers with their
90 % intervals, B - A with its verdict where the page shows A and B, the model and profile versions,
and the share link on a line of its own.

ASCII only; every line but the link at most :data:`WIDTH` = 70 columns, so that quoted once ("> ")
it still fits the 72 columns of a plain-text mail.  The link is never wrapped.
"""
from __future__ import annotations

import textwrap
from collections.abc import Mapping
from urllib.parse import parse_qsl

import numpy as np

from . import __version__ as MODEL_VERSION
from . import answers, composer, schema
from .links import shortlink, versions
from .machine import profile as _profile
from .links import state as sk_state
from .links.pages import BY_SLUG
from .plaintext import WIDTH, ascii_text


def _num(x: float, decimals: int | None = None, sign: str = "") -> str:
    x = float(np.asarray(x))
    return f"{x:{sign}.{answers.decimals(x) if decimals is None else decimals}f}"


def _unit(output: str) -> str:
    return schema.BY_NAME[output].unit_text


def _wrap(text: str, indent: str = "  ", more: str = "    ") -> list[str]:
    return textwrap.wrap(ascii_text(text), WIDTH, initial_indent=indent, subsequent_indent=more,
                         break_on_hyphens=False, break_long_words=True)


def _short_pairs(state: Mapping) -> dict[str, str]:
    return dict(parse_qsl(shortlink.shorten(versions.link_query(state)), keep_blank_values=True))


def _setting(key: str, raw: str) -> str:
    p = sk_state.PARAMS[key]
    base = sk_state.side_of(key)[1]
    if p.kind == "choice":
        value = p.label_of(raw)
    else:
        value = f"{raw} {p.unit}".strip() if p.unit and p.unit not in p.label else raw
    label = sk_state.PARAMS[base].label
    return f"{label} = {value}"


def _profile_text(ident: answers.ProfileIdentity, who: str = "") -> str:
    kernels = f", {_profile.kernels_text(ident.kernels)}" if ident.kernels else ""
    if ident.custom:
        what = f"custom profile {ident.name} on {ident.base}"
    else:
        what = f"{ident.id} ({_profile.load_profile(ident.id).name})"
    return f"{who}CPU profile: {what}, clock {ident.ghz:g} GHz{kernels}"


def _versions_text(state: Mapping, res: answers.Answers) -> str:
    out = f"Model {state.get('mv') or MODEL_VERSION}, profile {res.profile_a.full_text()}"
    if res.profile_b is not None and res.profile_b.text() != res.profile_a.text():
        out += f", B: {res.profile_b.full_text()}"
    return out


def _unit_of(a: answers.Answer) -> str:
    return _unit(a.output)


def summary_text(state: Mapping, link: str, evidence: str | None = None) -> str:
    """The summary block of ``state`` (a decoded state) ending with ``link``, one string with a final newline:
    the answers of :func:`skbmodel.answers.of_state`, rendered.  ``evidence``: on the Validation page, its
    line on the seed rows (:func:`skbmodel.evidence.validation.seed_rows_line`), given by the caller."""
    page = state.get("page") or sk_state.PAGES[0]
    spec = BY_SLUG[page]
    pairs = _short_pairs(state)
    res = answers.of_state(state)
    lines = [ascii_text(f"skbmodel: {spec.title}")]
    if state.get("patch"):  # the patch a Compare link was made from (its subject and hash, never its text)
        lines += _wrap(f"Patch: {state['patch']}" + (f" (sha256 {state['phash']})" if state.get("phash") else ""),
                       indent="", more="  ")
    a_keys = [k for k in pairs if k in sk_state.PARAMS and k not in sk_state.NAV_KEYS and sk_state.side_of(k)[0] == "a"]
    if a_keys:
        lines.append("Scenario (what differs from the defaults):")
        for k in a_keys:
            if k != "cpu":
                lines += _wrap(_setting(k, pairs[k]))
    else:
        lines.append("Scenario: the defaults")
    if pairs.get("prof"):
        lines += _wrap("(custom CPU profile from the link)")
    lines += _wrap(_profile_text(res.profile_a), indent="", more="  ")
    if page == "validation":
        lines += _wrap(f"Seed rows: {evidence}", indent="", more="  ")
    elif res.problem:
        lines += _wrap(f"No numbers: {res.problem}", indent="")
    else:
        lines.append("Numbers (90 % prediction interval):")
        shown = {v.output for v in res.values}
        for d, a in list(zip(res.differences, res.a_values))[:1]:
            if d.output not in shown:  # the question's own number first (a kfree_skb_list change: its path's)
                lines += _wrap(f"{d.label}, A: {a.text(_unit_of(a))}")
        for v in res.values:
            text = f"{v.label}: {v.text(_unit_of(v))}"
            if v.verdict:
                text += f": {v.verdict}"
            lines += _wrap(text)
        if res.has_b:
            lines += _b_minus_a(state, page, res, pairs)
    for note in res.notes:
        lines += _wrap(f"Note: {note}", indent="", more="  ")
    lines += _wrap(_versions_text(state, res), indent="", more="  ")
    lines.append("Link:")
    lines.append(link)
    return "\n".join(lines) + "\n"


def _b_minus_a(state, page, res: answers.Answers, pairs) -> list[str]:
    overrides = sk_state.b_overrides(state)
    if page == "design":
        vb = overrides.get("path", composer.COMPARE_PATH)
        what = "a second composition" if vb == "design" else sk_state.PARAMS["path"].label_of(vb)
        head = f"B: {what}" + ("" if vb != "design" else ", " + ", ".join(
            _setting(sk_state.key_of(k, "b"), pairs[sk_state.key_of(k, "b")]) for k in overrides
            if k != "path" and sk_state.key_of(k, "b") in pairs))
    else:
        head = "B: " + (", ".join(_setting(sk_state.key_of(k, "b"), pairs[sk_state.key_of(k, "b")]) for k in overrides
                                  if sk_state.key_of(k, "b") in pairs) or "the same as A")
    lines = _wrap(head, indent="", more="  ")
    if res.profile_b is not None and res.profile_b.text() != res.profile_a.text():
        lines += _wrap(_profile_text(res.profile_b, "B: "))
    if res.problem_b:
        return lines + _wrap(f"No numbers for B ({res.problem_b})")
    if not res.differences:
        return lines + _wrap("B - A: 0 for every output (the change moves nothing)")
    for d, vb in list(zip(res.differences, res.b_values))[:1]:  # the verdict's difference; the rest is on the page
        unit = _unit(d.output)
        lines += _wrap(f"{d.label}: A {_num(d.a)}, B {vb.text(unit)}")
        verdict = f": {d.verdict} (noise {d.noise_ns:g} ns per run)" if d.verdict else ""
        runs = d.runs_text()
        lines += _wrap(f"B - A: {d.text(unit)}{verdict}{runs}")
    return lines
