"""Model and profile versions of share links: each page's headline output and the versions a link records.

A share link records the model version (``mv``), the version of each scenario's CPU profile
(``pv``, ``b_pv``) and the page's headline output (``h``) it was made with (keys and their
validation: :mod:`skbmodel.links.state`).  This module names them; what a link's headline is, and the
notice an old link gets, are answers (:mod:`skbmodel.provenance`): the links compute no number.

Model version rule (``skbmodel/__init__.py``): bump the **minor** version whenever a model formula,
a mechanism or an output's definition changes (anything that can move a number for the same
profile values); bump the patch for changes that cannot move a number.  Refitting a profile is
not a model change: it gives the profile a new version by itself (hash of its values), and
``scripts/archive_profiles.py`` must be run before it so old links keep their numbers.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from urllib.parse import parse_qsl

from .. import __version__ as MODEL_VERSION
from ..machine import profile as _profile
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


def provenance_differs(state: Mapping, now: float | None) -> bool:
    """Whether the link's ``mv``/``h`` in ``state`` say something today's code does not: another model
    version, or under this version a headline other than ``now``."""
    mv, h = state.get("mv"), state.get("h")
    if mv and mv != MODEL_VERSION:
        return True
    return h is not None and now is not None and not same_value(h, now)


def link_query(state: Mapping, keys=None) -> str:
    """The long query of a link of ``state`` (:func:`skbmodel.links.state.encode`), as it stands (a share link's
    state is stamped with today's versions first, :func:`skbmodel.answers.share_query`); a page without
    scenario B writes none of B's overrides (they stay in the session for the pages that show B)."""
    if not _PAGE_BY_SLUG[state.get("page") or DEFAULT_PAGE].has_b:
        state = sk_state.without_b(state)
    return sk_state.encode(state, keys)


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
