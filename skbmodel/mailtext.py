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
from . import cpumap, design, model, noise, shortlink, uncertainty, validation, versions
from . import profile as _profile
from . import state as S
from .pages import BY_SLUG

WIDTH = 70
#: Unit texts of the summary (ASCII); an output's unit is :data:`skbmodel.model.OUTPUT_UNITS`.
_UNIT_TEXT = {"ns": "ns/packet", "1": "", "%": "%"}
_SPECIAL = {"zero.memset_ns": "ns", "zero.gfp_zero_ns": "ns", "zero.delta_ns": "ns/skb",
            "slub.loop_cycles": "cycles/object", "slub.bulk_cycles": "cycles/object",
            "slub.bulk_gain_cycles": "cycles/object"}
_ASCII = str.maketrans({"\u2212": "-", "\u00d7": "x", "\u2013": "-", "\u2014": "-", "\u2192": "->", "\u00b1": "+/-",
                        "\u0394": "d", "\u00b5": "u"})


def ascii_text(text: str) -> str:
    """``text`` in plain ASCII (the few typographic signs the labels use spelt out, anything else '?')."""
    return str(text).translate(_ASCII).encode("ascii", "replace").decode("ascii")


def _decimals(x: float, digits: int = 4) -> int:
    """Decimals that show ``x`` with ``digits`` significant digits (at least 0)."""
    x = abs(float(x))
    return max(0, digits - 1 - int(np.floor(np.log10(x)))) if x > 0 and np.isfinite(x) else 0


def _num(x: float, decimals: int | None = None, sign: str = "") -> str:
    x = float(np.asarray(x))
    return f"{x:{sign}.{_decimals(x) if decimals is None else decimals}f}"


def _with_interval(value, lo, hi, unit: str, sign: str = "") -> str:
    """``3.769 Mpps (90 %: 3.738 to 3.800)``: the interval to the decimals of the value."""
    value, lo, hi = (float(np.asarray(v)) for v in (value, lo, hi))
    d = _decimals(value if value else max(abs(lo), abs(hi)))
    unit = f" {unit}" if unit else ""
    return f"{_num(value, d, sign)}{unit} (90 %: {_num(lo, d, sign)} to {_num(hi, d, sign)})"


def _unit(output: str) -> str:
    return _SPECIAL.get(output) or _UNIT_TEXT.get(model.OUTPUT_UNITS[output], model.OUTPUT_UNITS[output])


def _wrap(text: str, indent: str = "  ", more: str = "    ") -> list[str]:
    return textwrap.wrap(ascii_text(text), WIDTH, initial_indent=indent, subsequent_indent=more,
                         break_on_hyphens=False, break_long_words=True)


def _short_pairs(state: Mapping) -> dict[str, str]:
    return dict(parse_qsl(shortlink.shorten(versions.share_query(state)), keep_blank_values=True))


def _setting(key: str, raw: str) -> str:
    p = S.PARAMS[key]
    base = key[len(S.B_PREFIX):] if key.startswith(S.B_PREFIX) else key
    if p.kind == "choice":
        value = p.label_of(raw)
    else:
        value = f"{raw} {p.unit}".strip() if p.unit and p.unit not in p.label else raw
    label = S.PARAMS[base].label
    return f"{label} = {value}"


def _profile_text(state: Mapping, which: str = "a") -> str:
    pre = "" if which == "a" else S.B_PREFIX
    cpu = state[pre + "cpu"]
    prof = S.profile_for(state, which)
    what = f"custom profile {prof.name or prof.id} on {cpu}" if state.get(pre + "prof") else \
        f"{cpu} ({_profile.load_profile(cpu).name})"
    kernels = f", kernels {'-'.join(prof.kernels)}" if prof.kernels else ""
    return f"CPU profile: {what}, clock {float(state[pre + 'ghz']):g} GHz{kernels}"


def _versions_text(state: Mapping, shows_b: bool) -> str:
    out = f"Model {state.get('mv') or MODEL_VERSION}, profile {state['cpu']} version " \
          f"{state.get('pv') or _profile.profile_version(state['cpu'])}"
    if shows_b and (state[S.B_PREFIX + "cpu"] != state["cpu"] or state.get(S.B_PREFIX + "pv") != state.get("pv")):
        b_cpu = state[S.B_PREFIX + "cpu"]
        out += f", B: {b_cpu} version {state.get(S.B_PREFIX + 'pv') or _profile.profile_version(b_cpu)}"
    return out


def _ab_params(state: Mapping, page: str):
    """Model parameters and profiles of the two sides the page compares: ``(pa, pb, prof_a, prof_b)``."""
    if page == "design":  # B: the comparison path of the Design page, in A's scenario
        pa, pb = design.compare_params(S.scenario(state, "a"), state, S.B_PREFIX)
        prof = S.profile_for(state, "a")
        return pa, pb, prof, prof
    return S.scenario(state, "a"), S.scenario(state, "b"), S.profile_for(state, "a"), S.profile_for(state, "b")


def summary_text(state: Mapping, link: str) -> str:
    """The summary block of ``state`` (a decoded state) ending with ``link``, one string with a final newline."""
    page = state.get("page") or S.PAGES[0]
    spec = BY_SLUG[page]
    pairs = _short_pairs(state)
    shows_b = page in ("compare", "design")
    lines = [ascii_text(f"skbmodel: {spec.title}")]
    a_keys = [k for k in pairs if k in S.PARAMS and k not in S.NAV_KEYS and not k.startswith(S.B_PREFIX)]
    b_keys = [k for k in pairs if k.startswith(S.B_PREFIX) and k in S.PARAMS]
    if page == "design":  # B of the Design page is the comparison path, not scenario B
        b_keys = [k for k in b_keys if k[len(S.B_PREFIX):] in ("path", *design.KEY_NAMES)]
    elif not shows_b:
        b_keys = []
    if a_keys:
        lines.append("Scenario (what differs from the defaults):")
        for k in a_keys:
            if k != "cpu":
                lines += _wrap(_setting(k, pairs[k]))
    else:
        lines.append("Scenario: the defaults")
    if pairs.get("prof"):
        lines += _wrap("(custom CPU profile from the link)")
    lines += _wrap(_profile_text(state), indent="", more="  ")
    if page == "validation":
        rows = validation.validate()
        n_ok = sum(r["ok"] for r in rows)
        lines.append(f"Seed rows within tolerance: {n_ok} of {len(rows)}")
    else:
        pa, pb, prof_a, prof_b = _ab_params(state, page)
        bad = design.problem_text(pa) if pa.get("path") == "design" else None
        if bad:
            lines += _wrap(f"No numbers: the composition makes no sense ({bad})", indent="")
        else:
            outs = [o for o, _ in spec.summary]
            val, iv = uncertainty.evaluate_with_intervals(pa, prof_a, outs)
            lines.append("Numbers (90 % prediction interval):")
            for out, label in spec.summary:
                lines += _wrap(f"{label}: {_with_interval(val[out], *iv[out], _unit(out))}")
            if page == "cpumap":
                lines += _wrap(cpumap.bottleneck_text(model.evaluate(
                    pa, prof_a, outputs=["cpumap.bottleneck", "cpumap.sleep_fraction"])))
            if shows_b and (b_keys or page == "design"):
                lines += _b_minus_a(state, page, pa, pb, prof_a, prof_b, b_keys, pairs)
    lines += _wrap(_versions_text(state, shows_b), indent="", more="  ")
    lines.append("Link:")
    lines.append(link)
    return "\n".join(lines) + "\n"


def _b_minus_a(state, page, pa, pb, prof_a, prof_b, b_keys, pairs) -> list[str]:
    out = "path.ns_per_packet"
    if page == "design":
        vb = pb["path"]
        what = "a second composition" if vb == "design" else S.PARAMS["path"].label_of(vb)
        head = f"B: {what}" + ("" if vb != "design" else ", " + ", ".join(
            _setting(k, pairs[k]) for k in b_keys if k != S.B_PREFIX + "path"))
    else:
        head = "B: " + (", ".join(_setting(k, pairs[k]) for k in b_keys) or "the same as A")
    lines = _wrap(head, indent="", more="  ")
    if page == "design" and vb == "design":
        bad = design.problem_text(pb)
        if bad:
            return lines + _wrap(f"No numbers for B ({bad})")
    vb_val, _ = uncertainty.evaluate_with_intervals(pb, prof_b, [out])
    delta, div = uncertainty.delta_intervals(pa, pb, prof_a, prof_b, [out])
    d = float(np.asarray(delta[out]))
    lo, hi = (float(np.asarray(x)) for x in div[out])
    verdict = noise.verdict(d, float(state["noise_ns"]), lo, hi)
    lines += _wrap(f"B: {_num(vb_val[out])} ns/packet")
    lines += _wrap(f"B - A: {_with_interval(d, lo, hi, 'ns/packet', '+')}: {verdict} "
                   f"(noise {float(state['noise_ns']):g} ns per run)")
    return lines
