"""What a share link records of its answer, and what opening an old link says: the link's provenance.

A share link records the model version (``mv``), each scenario's profile version (``pv``, ``b_pv``) and
the page's headline output (``h``, :data:`skbmodel.links.versions.HEADLINES`) it was made with
(:func:`skbmodel.answers.share_query`).  The headline is the answer's (:func:`skbmodel.answers.headline`): the
number the page shows first, never evaluated again on the side.  Opening a link:

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
"""
from __future__ import annotations

from collections.abc import Mapping

from . import answers
from .links import shortlink, state as sk_state
from .links.pages import DEFAULT_PAGE
from .links import versions
from .links.versions import headline, provenance_differs, same_value
from .machine import profile as _profile
from .question import scenario_of


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
    if "mv" in out or raw.get("mv", "").strip() != versions.MODEL_VERSION or "h" not in raw:
        return out
    h, problem = sk_state.parse_h(raw["h"])
    if problem is None and provenance_differs({**out, "h": h}, answers.headline_value(out)):
        out["h"] = h
    return out


def read_link(query) -> tuple[dict, list[str]]:
    """:func:`skbmodel.links.state.decode` of a link (lenient), then :func:`with_link_headline`."""
    state, warnings = sk_state.decode(query)
    return with_link_headline(query, state), warnings


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
            shown = answers.headline_value(state, which)
            now = answers.headline_value(state, which, version=current)
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
    shown = answers.headline_value(state) if head and (mv or h is not None) else None
    if provenance_differs(state, shown):
        now_mv = versions.MODEL_VERSION
        mv = mv or now_mv
        model_part = {"link_version": mv, "current_version": now_mv, "output": head and head["output"],
                      "at_link": h, "now": shown, "change_pct": _pct(shown, h)}
        if mv != now_mv:
            if h is not None and shown is not None and same_value(h, shown):
                model_part["change_pct"] = 0.0
                text = (f"This link was made with model {mv}; this is model {now_mv}: {head['label']} is "
                        f"unchanged ({_num(shown)}).")
            elif h is not None and shown is not None:
                text = (f"This link was made with model {mv}; this is model {now_mv}: {head['label']} is "
                        f"{_num(shown, h)} now, {_num(h, shown)} when the link was made"
                        f"{_pct_text(model_part['change_pct'])}.")
            else:
                text = (f"This link was made with model {mv}; this is model {now_mv}: the numbers may differ "
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
                f"with model {versions.MODEL_VERSION} and profile {cpu} version {_profile.profile_version(cpu)}.")
        messages.append(text)
    if not messages:
        return None
    return {"text": " ".join(messages), "messages": messages, "model_version": versions.MODEL_VERSION, "headline": head,
            "profile": profiles, "model": model_part, "unversioned": bool(unversioned and not mv),
            "edited": bool(model_part and model_part.get("edited"))}


def link_numbers(query) -> dict:
    """What a link evaluates to, as the golden links record it (strict decode: raises ``StateError``).

    ``{"headline": {"output", "value"} | None, "path.ns_per_packet": A's, ["b.path.ns_per_packet": B's on
    the compare page]}``; values are plain floats, exactly as the model computes them.
    """
    st = sk_state.decode_strict(query)
    head = headline(st["page"])
    out_a = scenario_of(st, "a").evaluate()
    res: dict = {"headline": None if head is None else
                 {"output": head["output"], "value": float(out_a[head["output"]])},
                 "path.ns_per_packet": float(out_a["path.ns_per_packet"])}
    if st["page"] == "compare":
        out_b = scenario_of(st, "b").evaluate()
        res["b.path.ns_per_packet"] = float(out_b["path.ns_per_packet"])
    return res
