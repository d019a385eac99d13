"""Short share links: only what differs from the defaults of the model version the link names.

A long link (format ``v=1``, :func:`skbmodel.links.state.encode`) carries every parameter.  A short link
(format ``v=2``) carries the versions (``mv``, ``pv``, ``h``; ``b_pv`` only when scenario B uses
another profile), the page, and only the parameters that differ:

* a parameter of scenario A is left out when it equals the default of the link's model version ``mv``
  (recorded per model version in ``skbmodel/data/link-defaults.json``, so a later change of a default
  does not change what an old link means); the clock ``ghz`` when it equals the clock of the CPU
  profile in the version ``pv`` names;
* a parameter of scenario B (``b_*``) is left out when it equals A's: B is read as "A, except".  B
  keeps A's CPU profile (``cpu``, ``prof``, ``pv``) unless the link gives ``b_cpu`` or ``b_prof``.

This module only translates between the two forms, as text: :func:`expand` turns a short link into
the long one (every key written out) that :func:`skbmodel.links.state.decode` reads, and :func:`shorten`
does the reverse for the output of :func:`skbmodel.links.state.encode`.  Any other query is passed through
unchanged, so links of format 1 keep their meaning; values are not checked here (the decoder checks
them and names every problem, in the short link's own keys).
"""
from __future__ import annotations

import functools
import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

from .. import folders
from .. import __version__ as MODEL_VERSION
from ..machine import profile as _profile
from ..params import DISPLAY_PARAMS, MODEL_PARAMS, RETIRED, fmt_value
from .keys import key_of

#: The dashboard's address when none is known (the CLI, a report made outside a browser session).
DEFAULT_BASE_URL = "http://localhost:8501/"
#: The environment variable naming the dashboard's public address, path included (behind a reverse
#: proxy: ``https://perf.example.org/skbmodel/``).  It wins over the file's ``public_url``.
PUBLIC_URL_ENV = "SKB_PUBLIC_URL"
#: ``public_url = "https://..."`` in ``.streamlit/skbmodel.toml`` of the working directory, else of the
#: home directory (the two places Streamlit reads its own config.toml from; a key of Streamlit's
#: config.toml that Streamlit does not know is logged as invalid on every start).
PUBLIC_URL_FILE = Path(".streamlit") / "skbmodel.toml"
FORMAT_VERSION = 2
LONG_FORMAT_VERSION = 1
DEFAULTS_FILE = folders.DATA_DIR / "link-defaults.json"
#: Keys whose default is not a fixed value: the clock follows the CPU profile.
_FOLLOWS_PROFILE = ("ghz",)
#: A scenario's CPU profile: B inherits all three of A's or gives its own.
_PROFILE_KEYS = ("cpu", "prof", "pv")
#: The longest query expanded (the decoder refuses longer ones itself, see skbmodel.links.state.MAX_QUERY_CHARS).
_MAX_CHARS = 16_384


@functools.lru_cache(maxsize=1)
def recorded_defaults() -> dict[str, dict[str, str]]:
    """``{model version: {key: default as link text}}`` from ``link-defaults.json``."""
    data = json.loads(DEFAULTS_FILE.read_text(encoding="utf-8"))
    return {mv: {k: str(v) for k, v in d.items()} for mv, d in data["defaults"].items()}


def current_defaults() -> dict[str, str]:
    """Today's defaults of the parameter schema as link text."""
    return {p.key: fmt_value(p.default) for p in MODEL_PARAMS + DISPLAY_PARAMS if p.key not in _FOLLOWS_PROFILE}


def _version_tuple(mv: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(x) for x in str(mv).strip().split("."))
    except ValueError:
        return None


def defaults_for(mv: str | None) -> dict[str, str]:
    """The defaults a short link made with model version ``mv`` left out.

    The newest recorded version at or before ``mv``; the oldest recorded one for an older or
    unreadable ``mv``; today's when the link names none.  Keys added after that version (none are
    recorded for it) take the first recorded default, which is the value every older link decoded to.
    """
    table = recorded_defaults()
    order = sorted(table, key=_version_tuple)
    want = _version_tuple(mv if mv else MODEL_VERSION)
    pick = order[0]
    if want is not None:
        for v in order:
            if _version_tuple(v) <= want:
                pick = v
    out: dict[str, str] = {}
    for v in order:  # a key first recorded later keeps its first default
        for k, d in table[v].items():
            out.setdefault(k, d)
    out.update(table[pick])
    return out


def _pairs(query) -> list[tuple[str, str]] | None:
    """The query's ``(key, value)`` pairs with stripped keys; None when it is not one this module reads."""
    try:
        if isinstance(query, Mapping):
            out = []
            for k, v in query.items():
                vals = v if isinstance(v, (list, tuple)) else [v]
                out += [(str(k).strip(), str(x)) for x in vals]
            return out
        q = str(query or "")
        q = q[1:] if q.startswith("?") else q
        if len(q) > _MAX_CHARS:
            return None
        return [(k.strip(), v) for k, v in parse_qsl(q, keep_blank_values=True)]
    except Exception:  # noqa: BLE001 - the decoder reports what is wrong with a query; here it is passed on
        return None


def _first(pairs) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in pairs:
        out.setdefault(k, v)
    return out


def is_short(query) -> bool:
    pairs = _pairs(query)
    return pairs is not None and _first(pairs).get("v", "").strip() == str(FORMAT_VERSION)


def _profile_ghz(cpu: str, pv: str | None) -> str | None:
    """The clock of shipped profile ``cpu`` in version ``pv`` (archived, else the current), as link text."""
    try:
        if pv and pv != _profile.profile_version(cpu) and _profile.is_archived(cpu, pv):
            return fmt_value(float(_profile.load_profile(f"{cpu}@{pv}").ghz))
        return fmt_value(float(_profile.load_profile(cpu).ghz))
    except Exception:  # noqa: BLE001 - not a shipped profile: the decoder warns about the cpu and picks the clock
        return None


def _valid(key: str, raw: str) -> str | None:
    """``raw`` as the decoder will read it (clamped), or None when it falls back to the default."""
    for p in MODEL_PARAMS:
        if p.key == key:
            val, _ = p.parse(raw)
            return None if val is None else fmt_value(val)
    return None


def expand(query):
    """The long form (format 1, every key) of a short link; any other query is returned unchanged.

    A query string gives a query string, a mapping (``{key: [values]}``) a mapping.
    Never raises.  The link's own pairs come first, in their order (a repeated or unknown key stays for
    the decoder to report); the keys the link left out follow, filled as the module docstring says.
    """
    pairs = _pairs(query)
    if pairs is None:
        return query
    given = _first(pairs)
    if given.get("v", "").strip() != str(FORMAT_VERSION):
        return query
    dflt = defaults_for(given.get("mv"))
    out = [("v", str(LONG_FORMAT_VERSION)) if k == "v" else (k, v) for k, v in pairs]
    have = set(given)
    # a key a newer one replaced (numa -> place) stands for that key: its default is not added, and B follows
    # A's old key unless it gives its own (the decoder reads both, skbmodel.links.state)
    for old, r in RETIRED.items():
        for which in ("a", "b"):
            if key_of(old, which) in given:
                have.add(key_of(r.new_key, which))
        if old in given and key_of(old, "b") not in given and key_of(r.new_key, "b") not in given:
            out.append((key_of(old, "b"), given[old]))
            have.add(key_of(r.new_key, "b"))

    def add(key: str, value: str | None) -> None:
        if value is not None and key not in have:
            out.append((key, value))
            have.add(key)

    # scenario A: the defaults of its model version; the clock of its profile
    a_cpu = given.get("cpu", "").strip() or dflt.get("cpu")
    if "prof" not in given:  # a custom profile sets the CPU (its base) and the clock itself
        add("cpu", a_cpu)
        add("ghz", _profile_ghz(a_cpu, given.get("pv", "").strip()))
    a_value: dict[str, str | None] = {}
    for p in MODEL_PARAMS:
        if p.key in _FOLLOWS_PROFILE or p.key == "cpu":
            continue
        add(p.key, dflt.get(p.key))
        a_value[p.key] = _valid(p.key, given[p.key]) if p.key in given else dflt.get(p.key)
    for p in DISPLAY_PARAMS:
        add(p.key, dflt.get(p.key))
    # scenario B: A's values, except where the link gives its own
    own_profile = key_of("cpu", "b") in given or key_of("prof", "b") in given
    if own_profile:
        if key_of("prof", "b") not in given:
            b_cpu = given[key_of("cpu", "b")].strip()
            add(key_of("ghz", "b"), _profile_ghz(b_cpu, given.get(key_of("pv", "b"), "").strip()))
    else:
        for k in _PROFILE_KEYS:
            if k in given:
                add(key_of(k, "b"), given[k])
        if "cpu" not in given and "prof" not in given:
            add(key_of("cpu", "b"), a_cpu)
        if "ghz" in given:
            add(key_of("ghz", "b"), _valid("ghz", given["ghz"]))
        elif "prof" not in given:
            add(key_of("ghz", "b"), _profile_ghz(a_cpu, given.get("pv", "").strip()))
    for k, v in a_value.items():
        add(key_of(k, "b"), v)
    if isinstance(query, Mapping):  # as given: a mapping of lists (st.query_params), no length limit of its own
        expanded: dict[str, list[str]] = {}
        for k, v in out:
            expanded.setdefault(k, []).append(v)
        return expanded
    return urlencode(out, safe=":,~")


class PublicUrlError(ValueError):
    """The public address set is not an http(s) address (the message names where it was set)."""


def _checked_public_url(text: str, where: str) -> str:
    url = text.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise PublicUrlError(f"{where}: {text[:200]!r} is not the dashboard's public address "
                             "(expected http(s)://host[:port]/path/, without a query)")
    return url if url.endswith("/") else url + "/"


def public_base_url() -> str | None:
    """The dashboard's public address, ending in ``/``: :data:`PUBLIC_URL_ENV`, else ``public_url`` of
    :data:`PUBLIC_URL_FILE` (working directory, then home); None when neither sets it.

    Read on every call (a file read of a few bytes), so a changed setting needs no restart of the CLI
    and a test can set it.  Raises :class:`PublicUrlError` for a value that is not an http(s) address.
    """
    env = os.environ.get(PUBLIC_URL_ENV, "").strip()
    if env:
        return _checked_public_url(env, PUBLIC_URL_ENV)
    for path in (Path.cwd() / PUBLIC_URL_FILE, Path.home() / PUBLIC_URL_FILE):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise PublicUrlError(f"{path}: cannot read it ({e.__class__.__name__}: {e})") from None
        value = data.get("public_url")
        if value is not None:
            if not isinstance(value, str):
                raise PublicUrlError(f"{path}: public_url must be a string")
            return _checked_public_url(value, f"{path}: public_url") if value.strip() else None
    return None


def page_address(page: str | None = None, seen_url: str | None = None) -> str:
    """The address a link to ``page`` starts with: the public address (:func:`public_base_url`) + ``page``
    when one is set; else ``seen_url`` (the address the browser shows the page at) without its query;
    else ``page`` at :data:`DEFAULT_BASE_URL`."""
    public = public_base_url()
    if public:
        return public + (page or "")
    if seen_url:
        return seen_url.split("?", 1)[0]
    return DEFAULT_BASE_URL + (page or "")


def share_link(long_query: str, base_url: str | None = None, page: str | None = None) -> str:
    """``base_url`` (default: :func:`page_address` of ``page``) + ``?`` + the short query."""
    base = (base_url or page_address(page)).split("?", 1)[0]
    return f"{base}?{shorten(long_query)}"


def shorten(long_query: str) -> str:
    """The short form of a long link written by :func:`skbmodel.links.state.encode` (every key present).

    ``expand(shorten(q))`` decodes to the same state as ``q``.
    """
    pairs = _pairs(long_query) or []
    full = _first(pairs)
    if full.get("v", "").strip() == str(FORMAT_VERSION):
        return str(long_query).lstrip("?")
    dflt = defaults_for(full.get("mv"))
    # B's own profile keys are written only where B overrides A's (skbmodel.links.state.encode)
    inherit = all(full.get(key_of(k, "b"), full.get(k, "")) == full.get(k, "") for k in _PROFILE_KEYS)
    out = [("v", str(FORMAT_VERSION))]
    for k in ("mv", "pv") + (() if inherit else (key_of("pv", "b"),)) + ("h",):
        if k in full:
            out.append((k, full[k]))
    if "page" in full:
        out.append(("page", full["page"]))
    # scenario A
    for p in MODEL_PARAMS:
        k = p.key
        if k not in full:
            continue
        if k == "cpu":
            keep = "prof" not in full and full[k] != dflt.get(k)
        elif k == "ghz":
            keep = "prof" in full or full[k] != _profile_ghz(full.get("cpu", ""), full.get("pv"))
        else:
            keep = full[k] != dflt.get(k)
        if keep:
            out.append((k, full[k]))
    if "prof" in full:
        out.append(("prof", full["prof"]))
    out += [(p.key, full[p.key]) for p in DISPLAY_PARAMS if p.key in full and full[p.key] != dflt.get(p.key)]
    # other view keys (the question grid's) are written by the encoder only where they matter: kept as given
    known = {"v", "mv", "pv", key_of("pv", "b"), "h", "page", "prof", key_of("prof", "b")} \
        | {p.key for p in DISPLAY_PARAMS} | {k for p in MODEL_PARAMS for k in (p.key, key_of(p.key, "b"))}
    out += [(k, v) for k, v in full.items() if k not in known]
    # scenario B: what differs from A
    if not inherit:
        if key_of("prof", "b") in full:
            out.append((key_of("prof", "b"), full[key_of("prof", "b")]))
        else:
            out.append((key_of("cpu", "b"), full.get(key_of("cpu", "b"), "")))
    for p in MODEL_PARAMS:
        k = key_of(p.key, "b")
        if k not in full or p.key == "cpu":
            continue
        if p.key == "ghz" and not inherit:
            keep = key_of("prof", "b") in full or full[k] != _profile_ghz(full.get(key_of("cpu", "b"), ""),
                                                                          full.get(key_of("pv", "b")))
        else:
            keep = full[k] != full.get(p.key)
        if keep:
            out.append((k, full[k]))
    return urlencode(out, safe=":,~")
