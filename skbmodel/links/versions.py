"""Model and profile versions of share links: each page's headline output and the notice an old link gets.

A share link records the model version (``mv``), the version of each scenario's CPU profile
(``pv``, ``b_pv``) and the page's headline output (``h``) it was made with (keys and their
validation: :mod:`skbmodel.links.state`).  Opening it:

* its profile version is archived (``skbmodel/profiles/archive/``): the page is evaluated with that
  archived profile, i.e. shows the numbers the link was made with, and the notice says what the
  current profile version gives instead;
* its model version differs from :data:`skbmodel.__version__`: the page shows the current model's
  numbers (old code is not kept) and the notice says how far the headline moved from ``h``;
* same model version but the headline is not ``h``: the parameters are not the ones the author
  saw (the link was cut, e.g. by a mail client, or edited by hand); the notice says so in one line
  with the author's value (``model["edited"]``).  A model changed without a version bump would look
  the same: the golden links' test catches that before a release;
* no ``mv`` at all: the link was made before versions were recorded and shows today's numbers.

Model version rule (``skbmodel/__init__.py``): bump the **minor** version whenever a model formula,
a mechanism or an output's definition changes (anything that can move a number for the same
profile values); bump the patch for changes that cannot move a number.  Refitting a profile is
not a model change: it gives the profile a new version by itself (hash of its values), and
``scripts/archive_profiles.py`` must be run before it so old links keep their numbers.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from urllib.parse import parse_qsl

from .. import __version__ as MODEL_VERSION
from .. import model
from ..machine import profile as _profile
from . import shortlink
from . import state as sk_state
from .pages import BY_SLUG as _PAGE_BY_SLUG
from .pages import DEFAULT_PAGE
from ..schema import OUTPUT_UNITS

#: The headline output of each page (``(output, label)``, :attr:`skbmodel.links.pages.Page.headline`); the
#: value is in ``OUTPUT_UNITS[output]``.  Pages without one (validation) show no scenario output, so
#: their links carry no ``h``.
HEADLINES: dict[str, tuple[str, str]] = {s: p.headline for s, p in _PAGE_BY_SLUG.items() if p.headline}

#: ``h`` travels with 6 significant digits: values within this relative distance are the same number.
REL_TOL = 1e-5


def same_value(a: float, b: float) -> bool:
    return math.isclose(float(a), float(b), rel_tol=REL_TOL, abs_tol=1e-12)


def headline(page: str) -> dict | None:
    """``{page, output, label, unit}`` of a page's headline output, or None."""
    spec = HEADLINES.get(page)
    if spec is None:
        return None
    return {"page": page, "output": spec[0], "label": spec[1], "unit": OUTPUT_UNITS[spec[0]]}


@functools.lru_cache(maxsize=1024)
def _value(output: str, items: tuple, prof: str, pv: str) -> float:
    st = {**dict(items), "pv": pv}
    if prof:
        st["prof"] = prof
    return float(model.evaluate(sk_state.scenario(st), sk_state.profile_for(st))[output])


def headline_value(state: Mapping, which: str = "a", version: str | None = None) -> float | None:
    """The page's headline output for scenario ``which`` of ``state`` (None for a page without one).

    ``version``: the profile version to use (default: the state's ``pv``/``b_pv``, else the current).
    Never raises (None when the state cannot be evaluated).
    """
    spec = HEADLINES.get(state.get("page", DEFAULT_PAGE))
    if spec is None:
        return None
    try:
        own = "b" if which != "a" and sk_state.own_profile(state) else "a"
        st = dict(state)
        if version:
            st[sk_state.key_of("pv", own)] = version
        params = sk_state.scenario(st, which)
        pv = st.get(sk_state.key_of("pv", own)) or _profile.profile_version(params["cpu"])
        items = tuple((k, v) for k, v in params.items() if k != "prof")
        return _value(spec[0], items, str(params.get("prof") or ""), str(pv))
    except Exception:  # noqa: BLE001 - a link's state that cannot be evaluated has no headline
        return None


def _provenance_differs(state: Mapping, now: float | None) -> bool:
    """Whether the link's ``mv``/``h`` in ``state`` say something today's code does not: another model
    version, or under this version a headline other than ``now``."""
    mv, h = state.get("mv"), state.get("h")
    if mv and mv != MODEL_VERSION:
        return True
    return h is not None and now is not None and not same_value(h, now)


def stamped(state: Mapping) -> dict:
    """``state`` with the versions its share link records.

    A link's provenance that differs from this code (:func:`_provenance_differs`) is kept, so that the
    link still says what its author saw; otherwise the state gets today's model version and headline
    (none on a page without one).
    """
    out = dict(state)
    now = headline_value(out)
    if _provenance_differs(out, now):
        return out
    out.pop("mv", None)
    out.pop("h", None)
    if now is not None:
        out["h"] = now
    return out


def with_link_headline(query, state: Mapping) -> dict:
    """``state`` (decoded from ``query``) with its author's headline ``h`` kept when the link was made with
    this model version but its parameters give another number (cut or edited by hand)."""
    out = dict(state)
    try:
        pairs = sk_state.query_pairs(shortlink.expand(query))
    except Exception:  # noqa: BLE001 - a query the decoder ignored has no headline either
        return out
    raw: dict[str, str] = {}
    for k, v in pairs:
        raw.setdefault(k.strip(), v)
    if "mv" in out or raw.get("mv", "").strip() != MODEL_VERSION or "h" not in raw:
        return out
    h, problem = sk_state.parse_h(raw["h"])
    if problem is None and _provenance_differs({**out, "h": h}, headline_value(out)):
        out["h"] = h
    return out


def read_link(query) -> tuple[dict, list[str]]:
    """:func:`skbmodel.links.state.decode` of a link (lenient), then :func:`with_link_headline`."""
    state, warnings = sk_state.decode(query)
    return with_link_headline(query, state), warnings


def share_query(state: Mapping, keys=None) -> str:
    """The long query of a share link: :func:`skbmodel.links.state.encode` of the :func:`stamped` state; a page
    without scenario B writes none of B's overrides (they stay in the session for the pages that show B)."""
    if not _PAGE_BY_SLUG[state.get("page") or DEFAULT_PAGE].has_b:
        state = sk_state.without_b(state)
    return sk_state.encode(stamped(state), keys)

def _num(x: float, other: float | None = None) -> str:
    """4 significant digits, more when that is needed to tell ``x`` from ``other``."""
    for digits in (4, 6, 9):
        s = f"{x:.{digits}g}"
        if other is None or s != f"{other:.{digits}g}":
            return s
    return f"{x:.9g}"


def _pct(new: float | None, old: float | None) -> float | None:
    if new is None or old is None or old == 0:
        return None
    return (new / old - 1.0) * 100.0


def _pct_text(p: float | None) -> str:
    if p is None:
        return ""
    return f" ({p:+.2g} %)" if abs(p) < 0.1 else f" ({p:+.1f} %)"


def _link_keys(query) -> set[str]:
    try:
        pairs = sk_state.query_pairs(query)
    except Exception:  # noqa: BLE001
        return set()
    return {k.strip() for k, _ in pairs}


def link_notice(query, state: Mapping) -> dict | None:
    """The version notice for a link (``query`` as given to :func:`skbmodel.links.state.decode`) decoded to
    ``state``."""
    keys = _link_keys(query)
    state = with_link_headline(query, state)
    known = set(sk_state.PARAMS) | set(sk_state.PROFILE_KEYS) | set(sk_state.VERSION_KEYS)
    unversioned = bool(keys & known) and not keys & {"mv", *sk_state.PV_KEYS}
    return notice(state, unversioned=unversioned)


def notice(state: Mapping, unversioned: bool = False) -> dict | None:
    """What differs between the versions a state's link was made with and this code; None if nothing.

    ``{"text": one line, "messages": [...], "model_version", "headline": {...} | None,
    "profile": [per scenario with an archived version], "model": {...} | None, "unversioned": bool,
    "edited": bool}`` (``edited``: the link's ``h`` is not what its parameters give under this model).
    """
    page = state.get("page", DEFAULT_PAGE)
    head = headline(page)
    messages: list[str] = []
    profiles = []
    # scenario B only where it is shown (the compare page)
    for which in ("a", "b")[: 2 if page == "compare" else 1]:
        pv = state.get(sk_state.key_of("pv", which))
        cpu = state.get(sk_state.key_of("cpu", which))
        if not pv or not cpu:
            continue
        current = _profile.profile_version(cpu)
        if pv == current:
            continue
        item = {"scenario": which, "profile": cpu, "custom": bool(state.get(sk_state.key_of("prof", which))),
                "version": pv,
                "current_version": current, "archived": _profile.is_archived(cpu, pv)}
        who = f"profile {cpu}" if not item["custom"] else f"a custom profile on {cpu}"
        scen = " for scenario B" if which == "b" else ""
        text = f"This link was made with {who} version {pv} (archived){scen}"
        if head:
            shown = headline_value(state, which)
            now = headline_value(state, which, version=current)
            item.update(output=head["output"], value=shown, current_value=now, change_pct=_pct(now, shown))
            if shown is not None and now is not None:
                of_b = " of B" if scen else ""
                text += (f"; current version {current} gives {head['label']}{of_b} = {_num(now, shown)} instead of "
                         f"{_num(shown, now)}{_pct_text(item['change_pct'])}.")
            else:
                text += f"; current version {current}."
        else:
            text += f"; current version {current}."
        item["text"] = text
        profiles.append(item)
        messages.append(text)
    model_part = None
    mv, h = state.get("mv"), state.get("h")
    shown = headline_value(state) if head and (mv or h is not None) else None
    if _provenance_differs(state, shown):
        mv = mv or MODEL_VERSION
        model_part = {"link_version": mv, "current_version": MODEL_VERSION, "output": head and head["output"],
                      "at_link": h, "now": shown, "change_pct": _pct(shown, h)}
        if mv != MODEL_VERSION:
            if h is not None and shown is not None and same_value(h, shown):
                model_part["change_pct"] = 0.0
                text = (f"This link was made with model {mv}; this is model {MODEL_VERSION}: {head['label']} is "
                        f"unchanged ({_num(shown)}).")
            elif h is not None and shown is not None:
                text = (f"This link was made with model {mv}; this is model {MODEL_VERSION}: {head['label']} is "
                        f"{_num(shown, h)} now, {_num(h, shown)} when the link was made"
                        f"{_pct_text(model_part['change_pct'])}.")
            else:
                text = (f"This link was made with model {mv}; this is model {MODEL_VERSION}: the numbers may differ "
                        f"(the link records no headline value to compare).")
        else:  # same model, another headline: the parameters are not the author's (cut or changed by hand)
            model_part["edited"] = True
            label = head["label"] if head else "its headline"
            text = (f"This link appears truncated or edited; the author saw {label} = "
                    f"{_num(h, shown) if h is not None else '?'}, its parameters give "
                    f"{_num(shown, h) if shown is not None else '?'} (model {mv}).")
        model_part["text"] = text
        messages.append(text)
    if unversioned and not mv:
        cpu = state.get("cpu") or _profile.DEFAULT_PROFILE
        text = (f"This link carries no model or profile version (made before versions were recorded): it is shown "
                f"with model {MODEL_VERSION} and profile {cpu} version {_profile.profile_version(cpu)}.")
        messages.append(text)
    if not messages:
        return None
    return {"text": " ".join(messages), "messages": messages, "model_version": MODEL_VERSION, "headline": head,
            "profile": profiles, "model": model_part, "unversioned": bool(unversioned and not mv),
            "edited": bool(model_part and model_part.get("edited"))}


def current_versions(state: Mapping) -> dict:
    """``{"mv", "pv", B's "pv"}`` of this code for the state's CPU profiles."""
    return {"mv": MODEL_VERSION, "pv": _profile.profile_version(state["cpu"]),
            sk_state.key_of("pv", "b"): _profile.profile_version(sk_state.scenario(state, "b")["cpu"])}


def link_versions(query: str) -> dict:
    """The raw ``mv``/``pv``/``b_pv``/``h`` texts of a query string (first value of each; absent keys omitted)."""
    out: dict = {}
    for k, v in parse_qsl(str(query or "").lstrip("?"), keep_blank_values=True):
        k = k.strip()
        if k in sk_state.VERSION_KEYS and k not in out:
            out[k] = v
    return out


def link_numbers(query) -> dict:
    """What a link evaluates to, as the golden links record it (strict decode: raises ``StateError``).

    ``{"headline": {"output", "value"} | None, "path.ns_per_packet": A's, ["b.path.ns_per_packet": B's on
    the compare page]}``; values are plain floats, exactly as the model computes them.
    """
    st = sk_state.decode_strict(query)
    head = headline(st["page"])
    out_a = model.evaluate(sk_state.scenario(st, "a"), sk_state.profile_for(st, "a"))
    res: dict = {"headline": None if head is None else
                 {"output": head["output"], "value": float(out_a[head["output"]])},
                 "path.ns_per_packet": float(out_a["path.ns_per_packet"])}
    if st["page"] == "compare":
        out_b = model.evaluate(sk_state.scenario(st, "b"), sk_state.profile_for(st, "b"))
        res["b.path.ns_per_packet"] = float(out_b["path.ns_per_packet"])
    return res
