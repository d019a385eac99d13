"""The scenario state and its one codec to and from a URL query string.

The dashboard's share link, ``python -m skbmodel eval QUERY`` and the exports all use this module.
Keys are whitelisted, typed and clamped; nothing is ever evaluated or unpickled.

* :func:`decode` is lenient (for links pasted by anyone): bad parts fall back to defaults or are
  clamped, and every such decision is reported as a warning naming the parameter.
* :func:`decode_strict` is for the CLI: the first bad key raises :class:`StateError` whose message
  names the key and its allowed range.
* :func:`encode` writes *every* parameter plus the format version ``v``, so a link keeps its
  meaning when a default or a profile changes.

Scenario B of the A/B comparison uses the same keys with the prefix ``b_``.

Versions (keys written by :func:`encode` after ``v``; see :data:`VERSION_KEYS`)::

    v=1&mv=0.1.0&pv=8896fc54&b_pv=8896fc54&h=3.05381&cpu=...

* ``mv``: the model version (``skbmodel.__version__``) the link was made with.
* ``pv`` / ``b_pv``: the version of scenario A's / B's CPU profile (8 hex digits of the hash of its
  constant values, :func:`skbmodel.profile.profile_version`; for a custom profile ``prof``, the
  version of its base).  A link whose ``pv`` is archived opens with that archived profile, so it
  shows the numbers it was made with after a recalibration.
* ``h``: the page's headline output (:data:`HEADLINES`) as the link's maker saw
  it (6 significant digits); absent on pages without one (validation).

In a decoded state ``pv``/``b_pv`` are present only when they name an archived, non-current
version, and ``mv``/``h`` (the link's *provenance*) only when they differ from what this code
computes (an older/newer model, or a number that moved under the same version); :func:`encode`
writes them back unchanged, otherwise the current versions and headline.  A link without ``mv``
was made before versions were recorded; it decodes as today's versions
(:func:`skbmodel.versions.link_notice` says so).
"""
from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode

from . import __version__ as MODEL_VERSION
from . import custom as _custom
from . import model
from . import profile as _profile
from .pages import BY_SLUG as _PAGE_BY_SLUG
from .pages import DEFAULT_PAGE, SLUGS
# the schema is re-exported: callers keep reading it as state.Param, state.MODEL_PARAMS, ...
from .params import MAX_VALUE_CHARS, MODEL_KEYS, MODEL_PARAMS, PATHS, Param, _fmt, _show  # noqa: F401

FORMAT_VERSION = 1
B_PREFIX = "b_"
MAX_QUERY_CHARS = 16_384


class StateError(ValueError):
    """An invalid parameter; ``str()`` is one line naming the key and what is allowed."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key = key


#: The scenario pages' slugs (:mod:`skbmodel.pages` describes each).
PAGES = SLUGS
VIEW_PARAMS: tuple[Param, ...] = (
    Param("page", "Page", "choice", DEFAULT_PAGE, choices=PAGES),
)
PARAMS: dict[str, Param] = {p.key: p for p in MODEL_PARAMS + VIEW_PARAMS}
PARAMS.update({B_PREFIX + p.key: dataclasses.replace(p, key=B_PREFIX + p.key) for p in MODEL_PARAMS})


#: Optional keys: a custom CPU profile in compact form (see :mod:`skbmodel.custom`),
#: ``prof=1~<base>~name:value,...``.  Absent from :func:`defaults`; present in a decoded state only
#: when the link carries one.  When valid it sets the scenario's ``cpu`` to the base profile and,
#: unless the link gives ``ghz``, the clock to the custom profile's.
PROFILE_KEYS = ("prof", B_PREFIX + "prof")


#: Version keys (see the module docstring): model version, profile versions of A and B, headline value.
VERSION_KEYS = ("mv", "pv", B_PREFIX + "pv", "h")
PV_KEYS = ("pv", B_PREFIX + "pv")
_MV_RE = r"[0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}"
_H_RE = r"-?[0-9]{1,16}(?:\.[0-9]{1,16})?(?:[eE][-+]?[0-9]{1,3})?"
H_LIMIT = 1e15


def _parse_mv(raw: str):
    raw = raw.strip()
    if re.fullmatch(_MV_RE, raw):
        return raw, None
    return None, f"{_show(raw)} is not a model version (major.minor.patch, e.g. {MODEL_VERSION})"


def _parse_h(raw: str):
    raw = raw.strip()
    if re.fullmatch(_H_RE, raw):
        x = float(raw)
        if math.isfinite(x) and abs(x) <= H_LIMIT:
            return x, None
    return None, f"{_show(raw)} is not a headline value (a plain decimal number)"


def _link_cpu(state: Mapping, pre: str, prof_text) -> str:
    """The shipped profile a scenario's ``pv`` refers to: the base of its custom profile, else ``cpu``."""
    if prof_text:
        parts = str(prof_text).strip().split("~")
        if len(parts) >= 2 and parts[1] in _profile.available_profiles():
            return parts[1]
    return state[pre + "cpu"]


def _parse_pv(raw: str, cpu: str):
    """``(value to keep in the state or None, problem or None)``: None when ``raw`` is the current version."""
    raw = raw.strip()
    current = _profile.profile_version(cpu)
    if not _profile.is_version(raw):
        return None, f"{_show(raw)} is not a profile version (8 hex digits, e.g. {current})"
    if raw == current:
        return None, None
    if _profile.is_archived(cpu, raw):
        return raw, None
    have = ", ".join(_profile.archived_versions(cpu)) or "none"
    return None, (f"profile {cpu} version {raw} is unknown: not the current version {current} and not archived "
                  f"(archived: {have})")


def _version_of(state: Mapping, pre: str) -> str | None:
    """The profile version the state asks for (None: the current one)."""
    pv = state.get(pre + "pv")
    return str(pv) if pv else None


def _apply_profile(state: dict, key: str, raw: str, given: set) -> str | None:
    """Set ``state[key]`` (and cpu/ghz) from link text; returns a problem text or None."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        prof = _custom.decode_cached(raw, _version_of(state, key[: -len("prof")]))
    except _custom.ProfileLinkError as e:
        return str(e)
    cpu_key, ghz_key = key.replace("prof", "cpu"), key.replace("prof", "ghz")
    state[cpu_key] = prof.inherits.split("@", 1)[0]  # the shipped id, also when built on an archived version
    state[key] = raw
    if ghz_key not in given:
        state[ghz_key] = prof.ghz
    noise_key = key.replace("prof", "noise_ns")
    if noise_key not in given and _custom.measured_noise_ns(prof) is not None:
        state[noise_key] = noise_floor_for(prof)
    return None


def noise_floor_for(prof: _profile.Profile) -> float | None:
    """The noise control's value for a profile that measured its noise (clamped to the control's range,
    0.1 ns resolution), None for one that did not."""
    ns = _custom.measured_noise_ns(prof)
    if ns is None:
        return None
    p = PARAMS["noise_ns"]
    return float(min(max(round(ns, 1), p.lo), p.hi))


def profile_for(state: Mapping, which: str = "a") -> _profile.Profile:
    """The CPU profile of scenario ``"a"``/``"b"``: the custom profile (key ``prof``) or the shipped ``cpu``,
    in the version ``pv``/``b_pv`` asks for (archived, ``<cpu>@<version>``) or else the current one.

    Raises :class:`skbmodel.custom.ProfileLinkError` for an invalid ``prof`` value.
    """
    pre = "" if which == "a" else B_PREFIX
    raw = state.get(pre + "prof")
    cpu = state.get(pre + "cpu") or _profile.DEFAULT_PROFILE
    pv = _version_of(state, pre)
    if pv and pv == _profile.profile_version(cpu):
        pv = None
    if raw:
        return _custom.decode_cached(str(raw), pv)
    # a link made with an older profile version evaluates with that archived version (key pv)
    return _profile.load_profile(f"{cpu}@{pv}" if pv else cpu)


def defaults(cpu: str | None = None) -> dict:
    """Default state (A and B identical); ``ghz`` follows the CPU profile."""
    cpu = cpu or _profile.DEFAULT_PROFILE
    ghz = _profile.load_profile(cpu).ghz
    base = {p.key: p.default for p in MODEL_PARAMS}
    base["cpu"] = cpu
    base["ghz"] = ghz
    state = dict(base)
    state.update({p.key: p.default for p in VIEW_PARAMS})
    state.update({B_PREFIX + k: v for k, v in base.items()})
    return state


def _pairs(query) -> list[tuple[str, str]]:
    if isinstance(query, Mapping):
        out = []
        for k, v in query.items():
            vals = v if isinstance(v, (list, tuple)) else [v]
            out += [(str(k), str(x)) for x in vals]
        return out
    q = str(query or "")
    if q.startswith("?"):
        q = q[1:]
    if len(q) > MAX_QUERY_CHARS:
        raise StateError("query", f"longer than {MAX_QUERY_CHARS} characters")
    return parse_qsl(q, keep_blank_values=True)


def decode(query) -> tuple[dict, list[str]]:
    """Lenient decode of a query string (or mapping of lists): ``(state, warnings)``.

    Never raises for any input: unknown keys are ignored, invalid values fall back to the
    default, out-of-range values are clamped, a repeated key keeps its first value; each such
    decision adds one warning that names the parameter.
    """
    warnings: list[str] = []
    try:
        pairs = _pairs(query)
    except StateError as e:
        return defaults(), [f"link ignored: {e}"]
    except Exception:  # noqa: BLE001 - any garbage must still give a working view
        return defaults(), ["link ignored: not a query string"]
    seen: dict[str, str] = {}
    for k, v in pairs:
        k = k.strip()
        if k in seen:
            warnings.append(f"{_show(k)}: repeated; the first value was used")
            continue
        seen[k] = v
    # CPU first: it decides the default clock.
    state = defaults()
    for cpu_key in ("cpu", B_PREFIX + "cpu"):
        if cpu_key in seen:
            val, problem = PARAMS[cpu_key].parse(seen[cpu_key])
            if val is None:
                warnings.append(f"{cpu_key}: {problem}; using {state[cpu_key]}")
            else:
                state[cpu_key] = val
                ghz_key = cpu_key.replace("cpu", "ghz")
                state[ghz_key] = _profile.load_profile(val).ghz
    # profile versions before the custom profiles: a custom profile applies to its base in that version
    for vk in PV_KEYS:
        if vk in seen:
            pre = vk[: -len("pv")]
            cpu = _link_cpu(state, pre, seen.get(pre + "prof"))
            val, problem = _parse_pv(seen[vk], cpu)
            if problem:
                warnings.append(f"{vk}: {problem}; using the current version {_profile.profile_version(cpu)}")
            elif val:
                state[vk] = val
    for pk in PROFILE_KEYS:
        if pk in seen:
            cpu_key = pk.replace("prof", "cpu")
            before = state[cpu_key]
            problem = _apply_profile(state, pk, seen[pk], set(seen))
            if problem:
                warnings.append(f"{pk}: custom profile ignored ({problem}); using {state[cpu_key]}")
            elif cpu_key in seen and state[cpu_key] != before:
                warnings.append(f"{cpu_key}: {before} replaced by {state[cpu_key]}, the base of the custom profile")
    for vk in PV_KEYS:  # a pv checked against a custom profile's base that was then refused
        pre = vk[: -len("pv")]
        if vk in state and not _profile.is_archived(state[pre + "cpu"], state[vk]):
            warnings.append(f"{vk}: version {state.pop(vk)} is not one of profile {state[pre + 'cpu']}; "
                            f"using the current version {_profile.profile_version(state[pre + 'cpu'])}")
    for k, raw in seen.items():
        if k in ("cpu", B_PREFIX + "cpu") or k in PROFILE_KEYS or k in VERSION_KEYS:
            continue
        if k == "v":
            if raw.strip() != str(FORMAT_VERSION):
                warnings.append(f"v: link format {_show(raw)} is not {FORMAT_VERSION}; "
                                f"read as version {FORMAT_VERSION}")
            continue
        p = PARAMS.get(k)
        if p is None:
            warnings.append(f"{_show(k)}: unknown parameter, ignored")
            continue
        val, problem = p.parse(raw)
        if val is None:
            warnings.append(f"{k}: {problem}; using default {_fmt(state[k])}")
            continue
        if problem:
            warnings.append(f"{k}: {problem}")
        state[k] = val
    mv = h = None
    if "mv" in seen:
        mv, problem = _parse_mv(seen["mv"])
        if problem:
            warnings.append(f"mv: {problem}; read as made before versions were recorded")
    if "h" in seen:
        h, problem = _parse_h(seen["h"])
        if problem:
            warnings.append(f"h: {problem}; ignored")
        elif mv is None:
            warnings.append("h: ignored: the link has no (valid) model version mv")
    _set_provenance(state, mv, h)
    return state, warnings


def _set_provenance(state: dict, mv: str | None, h: float | None) -> None:
    """Keep the link's ``mv``/``h`` in the state when they differ from what this code computes."""
    if mv is None:
        return
    if mv != MODEL_VERSION:
        state["mv"] = mv
        if h is not None:
            state["h"] = h
        return
    if h is None:
        return
    now = headline_value(state)
    if now is not None and not same_value(h, now):
        state["mv"], state["h"] = mv, h


def decode_strict(query) -> dict:
    """Strict decode for scripts: raises :class:`StateError` on the first bad parameter."""
    pairs = [(k.strip(), v) for k, v in _pairs(query)]
    seen = set()
    state = defaults()
    cpu_pairs = [(k, v) for k, v in pairs if k in ("cpu", B_PREFIX + "cpu")]
    pv_pairs = [(k, v) for k, v in pairs if k in PV_KEYS]
    rest = [(k, v) for k, v in pairs if k not in ("cpu", B_PREFIX + "cpu") and k not in PV_KEYS]
    given_prof = {k: v for k, v in pairs if k in PROFILE_KEYS}
    mv = h = None
    for k, v in cpu_pairs + pv_pairs + rest:
        if k in seen:
            raise StateError(k, "given more than once")
        seen.add(k)
        if k in PV_KEYS:
            pre = k[: -len("pv")]
            val, problem = _parse_pv(v, _link_cpu(state, pre, given_prof.get(pre + "prof")))
            if problem:
                raise StateError(k, problem)
            if val:
                state[k] = val
            continue
        if k == "mv":
            mv, problem = _parse_mv(v)
            if problem:
                raise StateError(k, problem)
            continue
        if k == "h":
            h, problem = _parse_h(v)
            if problem:
                raise StateError(k, problem)
            continue
        if k == "v":
            if v.strip() != str(FORMAT_VERSION):
                raise StateError("v", f"link format {_show(v)} is not supported; expected {FORMAT_VERSION}")
            continue
        if k in PROFILE_KEYS:
            cpu_key = k.replace("prof", "cpu")
            given = {kk for kk, _ in pairs}
            before = state[cpu_key]
            problem = _apply_profile(state, k, v, given)
            if problem:
                raise StateError(k, f"custom profile: {problem}")
            if cpu_key in given and state[cpu_key] != before:
                raise StateError(cpu_key, f"{before} differs from {state[cpu_key]}, the base of the custom profile")
            continue
        p = PARAMS.get(k)
        if p is None:
            allowed = ", ".join(["v", *VERSION_KEYS, *PARAMS, *PROFILE_KEYS])
            raise StateError(k, f"unknown parameter; allowed: {allowed}")
        val, problem = p.parse(v)
        if val is None or (problem and "clamped" in problem):
            raise StateError(k, f"{_show(v)} is not allowed; expected {p.allowed()}")
        if problem:  # rounding of an integer
            raise StateError(k, f"{_show(v)} is not allowed; expected {p.allowed()}")
        state[k] = val
        if k in ("cpu", B_PREFIX + "cpu") and k.replace("cpu", "ghz") not in {kk for kk, _ in pairs}:
            state[k.replace("cpu", "ghz")] = _profile.load_profile(val).ghz
    for vk in PV_KEYS:
        pre = vk[: -len("pv")]
        if vk in state and not _profile.is_archived(state[pre + "cpu"], state[vk]):
            raise StateError(vk, f"version {state[vk]} is not one of profile {state[pre + 'cpu']}")
    if h is not None and mv is None:
        raise StateError("h", "given without a model version mv")
    _set_provenance(state, mv, h)
    return state


def encode(state: Mapping, keys=None) -> str:
    """Query string carrying every parameter (or ``keys``) of ``state``, ``v`` first."""
    # Missing keys are filled exactly as decode() fills a partial link: each scenario's clock follows
    # its own CPU (B does not inherit A's CPU).
    full = defaults()
    for cpu_key in ("cpu", B_PREFIX + "cpu"):
        if state.get(cpu_key) is not None:
            full[cpu_key] = state[cpu_key]
            full[cpu_key.replace("cpu", "ghz")] = _profile.load_profile(state[cpu_key]).ghz
    full.update({k: v for k, v in state.items() if k in PARAMS})
    keys_given = None if keys is None else list(keys)
    keys = list(PARAMS) if keys is None else [k for k in keys if k not in PROFILE_KEYS and k not in VERSION_KEYS]
    items = [("v", str(FORMAT_VERSION))] + _version_items(state, full, keys_given) + [(k, _fmt(full[k])) for k in keys]
    # an optional custom profile travels too (compact, see skbmodel.custom)
    items += [(pk, str(state[pk]).strip()) for pk in PROFILE_KEYS
              if state.get(pk) and (keys_given is None or pk in keys_given)]
    return urlencode(items, safe=":,~")


def _version_items(state: Mapping, full: dict, keys_given) -> list[tuple[str, str]]:
    """``mv``, ``pv``, ``b_pv``, ``h``: the state's provenance if it has one, else today's versions and headline."""
    want = VERSION_KEYS if keys_given is None else [k for k in VERSION_KEYS if k in keys_given]
    if not want:
        return []
    full = dict(full)
    for k in PROFILE_KEYS + PV_KEYS:
        if state.get(k):
            full[k] = state[k]
    out = []
    for k in want:
        if k == "mv":
            out.append((k, str(state.get("mv") or MODEL_VERSION)))
        elif k in PV_KEYS:
            pre = k[: -len("pv")]
            out.append((k, str(full.get(k) or _profile.profile_version(full[pre + "cpu"]))))
        elif k == "h":
            if state.get("mv"):  # the link's provenance: its own headline value, or none
                h = state.get("h")
            else:
                h = headline_value(full)
            if h is not None:
                out.append((k, format(float(h), ".6g")))
    return out


def scenario(state: Mapping, which: str = "a") -> dict:
    """The model parameters of scenario ``"a"`` or ``"b"`` as plain ``{key: value}``."""
    pre = "" if which == "a" else B_PREFIX
    out = {p.key: state[pre + p.key] for p in MODEL_PARAMS}
    if state.get(pre + "prof"):
        out["prof"] = state[pre + "prof"]
    return out


# ---- the page's headline output (the h of a share link) ----------------------------------------
#: The headline output of each page (``(output, label)``, :attr:`skbmodel.pages.Page.headline`); the
#: value is in ``model.OUTPUT_UNITS[output]``.  Pages without one (validation) show no scenario output,
#: so their links carry no ``h``.
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
    return {"page": page, "output": spec[0], "label": spec[1], "unit": model.OUTPUT_UNITS[spec[0]]}


@functools.lru_cache(maxsize=1024)
def _value(output: str, which: str, items: tuple, prof: str, pv: str) -> float:
    pre = "" if which == "a" else B_PREFIX
    st = {pre + k: v for k, v in items}
    if prof:
        st[pre + "prof"] = prof
    st[pre + "pv"] = pv
    params = scenario(st, which)
    return float(model.evaluate(params, profile_for(st, which))[output])


def headline_value(state: Mapping, which: str = "a", version: str | None = None) -> float | None:
    """The page's headline output for scenario ``which`` of ``state`` (None for a page without one).

    ``version``: the profile version to use (default: the state's ``pv``/``b_pv``, else the current).
    Never raises (None when the state cannot be evaluated).
    """
    spec = HEADLINES.get(state.get("page", DEFAULT_PAGE))
    if spec is None:
        return None
    pre = "" if which == "a" else B_PREFIX
    try:
        cpu = state[pre + "cpu"]
        pv = version or state.get(pre + "pv") or _profile.profile_version(cpu)
        items = tuple((k, state[pre + k]) for k in MODEL_KEYS)
        return _value(spec[0], which, items, str(state.get(pre + "prof") or ""), str(pv))
    except Exception:  # noqa: BLE001 - decode() must never raise; a state that cannot be evaluated has no headline
        return None
