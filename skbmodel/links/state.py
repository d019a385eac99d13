"""The scenario state and its one codec to and from a URL query string.

The dashboard's share link, ``python -m skbmodel eval QUERY`` and the exports all use this module.
Keys are whitelisted, typed and clamped; nothing is ever evaluated or unpickled.

* :func:`decode` is lenient (for links pasted by anyone): bad parts fall back to defaults or are
  clamped, and every such decision is reported as a warning naming the parameter.
* :func:`decode_strict` is for the CLI: the first bad key raises :class:`StateError` whose message
  names the key and its allowed range.
* :func:`encode` writes *every* parameter plus the format version ``v``, so a link keeps its
  meaning when a default or a profile changes.

Scenario B of the A/B comparison is A plus what it overrides: a ``b_<key>`` is present only where B
differs from A, and every other parameter of B follows A (its CPU profile too: ``cpu``, ``prof``,
``pv`` and the clock, unless B names its own).  A link is read that way whatever its format: a full
``v=1`` link's ``b_`` keys that equal A's are not overrides and are dropped, so it opens as it always
did; a partial one is A plus the ``b_`` keys it gives.  The prefix (:mod:`skbmodel.links.keys`) is read
and written in this codec alone: :func:`scenario` and :func:`profile_for` give B's parameters and profile
as a whole, :func:`b_overrides` what B overrides; everything else asks them or ``key_of``/``side_of``.

Versions (keys written by :func:`encode` after ``v``; see :data:`VERSION_KEYS`)::

    v=1&mv=0.1.0&pv=8896fc54&b_pv=8896fc54&h=3.05381&cpu=...

* ``mv``: the model version (``skbmodel.__version__``) the link was made with.
* ``pv`` / ``b_pv``: the version of scenario A's / B's CPU profile (8 hex digits of the hash of its
  constant values, :func:`skbmodel.machine.profile.profile_version`; for a custom profile ``prof``, the
  version of its base).  A link whose ``pv`` is archived opens with that archived profile, so it
  shows the numbers it was made with after a recalibration.
* ``h``: the page's headline output (:data:`skbmodel.links.versions.HEADLINES`) as the link's maker saw
  it (6 significant digits); absent on pages without one (validation).

The codec reads and writes these keys; it never evaluates the model.  In a decoded state ``pv``/``b_pv``
are present only when they name an archived, non-current version; ``mv`` and ``h`` (the link's
*provenance*) only when the link was made with another model version.  Whether a link made with this
version shows its author's headline needs the model: :func:`skbmodel.provenance.read_link` decodes a
link and keeps its ``h`` when it does not, :func:`skbmodel.provenance.notice` says what moved, and
:func:`skbmodel.answers.stamped` gives a state today's headline before it becomes a share link.  A link
without ``mv`` was made before versions were recorded; it decodes as today's versions
(:func:`skbmodel.provenance.link_notice` says so).
"""
from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode

from .. import __version__ as MODEL_VERSION
from ..machine import custom as _custom
from ..machine import profile as _profile
from ..machine.description import cross_node_placement
from . import shortlink as _shortlink
from .keys import B_PREFIX, key_of, side_of  # noqa: F401 - key_of, side_of: the codec's, for its callers
from .pages import DEFAULT_PAGE, SLUGS
# the schema is re-exported: callers keep reading it as state.Param, state.MODEL_PARAMS, ...
from ..schema import GRID_OUTPUTS
from ..params import (AXIS_CHOICES, DISPLAY_KEYS, DISPLAY_PARAMS, MAX_VALUE_CHARS, MODEL_KEYS,  # noqa: F401
    MODEL_PARAMS, PATHS, RETIRED, RETIRED_AXES, Param, fmt_value, scenario_defaults, placement_of, _show)

FORMAT_VERSION = 1
MAX_QUERY_CHARS = 16_384


class StateError(ValueError):
    """An invalid parameter; ``str()`` is one line naming the key and what is allowed."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key = key


#: The scenario pages' slugs (:mod:`skbmodel.links.pages` describes each).
PAGES = SLUGS
#: The question grid's controls (skbmodel.grid): its axes and its output.  A link carries them when it
#: opens the grid page or they differ from their defaults (every other link stays as it was).
GRID_PARAMS: tuple[Param, ...] = (
    Param("g1", "Grid: first parameter", "choice", "xdp_batch", choices=AXIS_CHOICES),
    Param("g2", "Grid: second parameter", "choice", "zero", choices=AXIS_CHOICES),
    Param("g3", "Grid: third parameter", "choice", "d_free", choices=AXIS_CHOICES),
    Param("g_out", "Grid: output", "choice", "path.ns_per_packet", choices=GRID_OUTPUTS),
)
GRID_KEYS = tuple(p.key for p in GRID_PARAMS)
#: Where in the dashboard the view is, not the scenario: the page and its open chart tab (1 = the page's
#: first chart; a link carries it only when another tab is open).
NAV_PARAMS: tuple[Param, ...] = (
    Param("page", "Page", "choice", DEFAULT_PAGE, choices=PAGES),
    Param("chart", "Open chart of the page (1 = its first)", "int", 1, 1, 4, step=1),
)
NAV_KEYS = tuple(p.key for p in NAV_PARAMS)
VIEW_PARAMS: tuple[Param, ...] = NAV_PARAMS + GRID_PARAMS + DISPLAY_PARAMS
PARAMS: dict[str, Param] = {p.key: p for p in MODEL_PARAMS + VIEW_PARAMS}
PARAMS.update({B_PREFIX + p.key: dataclasses.replace(p, key=B_PREFIX + p.key) for p in MODEL_PARAMS})


#: Optional keys: a custom CPU profile in compact form (see :mod:`skbmodel.machine.custom`),
#: ``prof=1~<base>~name:value,...``.  Absent from :func:`defaults`; present in a decoded state only
#: when the link carries one.  When valid it sets the scenario's ``cpu`` to the base profile and,
#: unless the link gives ``ghz``, the clock to the custom profile's.
PROFILE_KEYS = ("prof", B_PREFIX + "prof")


#: The patch a Compare link was made from (:mod:`skbmodel.patchin`): its subject and 12 hex digits of the
#: sha256 of its text, so that a reader of the link knows which mail its A and B stand for.  Never the patch:
#: the subject is at most :data:`PATCH_SUBJECT_MAX` characters of printable text.  Neither moves a number.
PATCH_KEYS = ("patch", "phash")
PATCH_SUBJECT_MAX = 200
_PHASH_RE = r"[0-9a-f]{12}"


def parse_patch(key: str, raw: str) -> tuple[str | None, str | None]:
    """``(value, problem)`` of a ``patch`` subject (control characters and runs of spaces made one space,
    cut at :data:`PATCH_SUBJECT_MAX`) or a ``phash`` (12 lower-case hex digits)."""
    if key == "phash":
        raw = raw.strip().lower()
        return (raw, None) if re.fullmatch(_PHASH_RE, raw) else (None, f"{_show(raw)} is not 12 hex digits")
    text = " ".join("".join(c if c.isprintable() else " " for c in raw).split())
    if not text:
        return None, "an empty subject"
    if len(text) > PATCH_SUBJECT_MAX:
        return text[:PATCH_SUBJECT_MAX - 1] + "\u2026", f"cut to {PATCH_SUBJECT_MAX} characters"
    return text, None


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


def parse_h(raw: str):
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
    return _cpu_of(state, pre)


def _cpu_of(state: Mapping, pre: str) -> str:
    """The shipped CPU of a scenario: B's own ``b_cpu`` when it overrides A's, else A's ``cpu``."""
    return state.get(pre + "cpu") or state["cpu"]


def own_profile(state: Mapping) -> bool:
    """Whether scenario B runs on a CPU profile of its own (``b_cpu``, ``b_prof`` or ``b_pv``) rather than A's."""
    return any(B_PREFIX + k in state for k in ("cpu", "prof", "pv"))


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


def with_custom_profile(state: Mapping, prof: _profile.Profile, which: str = "a", keep=()) -> dict:
    """``state`` with scenario ``which`` on ``prof`` (an uploaded, fitted or derived profile on a shipped base):
    its link text as ``prof`` (on today's version of its base: no ``pv``), its base as ``cpu``, its clock as
    ``ghz`` and, where it measured one, its noise floor as ``noise_ns``; the keys of ``keep`` (what a user
    gave) keep their value.  Raises :class:`skbmodel.machine.custom.ProfileLinkError` when ``prof`` has no
    link text (too many changes for a link)."""
    out = {k: v for k, v in state.items() if k != key_of("pv", which)}
    out[key_of("prof", which)] = _custom.encode_profile(prof)
    out[key_of("cpu", which)] = prof.inherits.split("@", 1)[0]
    own = {"ghz": prof.ghz, "noise_ns": noise_floor_for(prof)}
    out.update({key_of(k, which): v for k, v in own.items() if v is not None and key_of(k, which) not in keep})
    return out


def profile_for(state: Mapping, which: str = "a") -> _profile.Profile:
    """The CPU profile of scenario ``"a"``/``"b"``: the custom profile (key ``prof``) or the shipped ``cpu``,
    in the version ``pv``/``b_pv`` asks for (archived, ``<cpu>@<version>``) or else the current one.

    Raises :class:`skbmodel.machine.custom.ProfileLinkError` for an invalid ``prof`` value.
    """
    if which != "a" and not own_profile(state):
        which = "a"  # B runs on A's profile unless it overrides it
    pre = "" if which == "a" else B_PREFIX
    raw = state.get(pre + "prof")
    cpu = state.get(pre + "cpu") or state.get("cpu") or _profile.DEFAULT_PROFILE
    pv = _version_of(state, pre)
    if pv and pv == _profile.profile_version(cpu):
        pv = None
    if raw:
        return _custom.decode_cached(str(raw), pv)
    # a link made with an older profile version evaluates with that archived version (key pv)
    return _profile.load_profile(f"{cpu}@{pv}" if pv else cpu)


def defaults(cpu: str | None = None) -> dict:
    """Default state: scenario A and the view; B overrides nothing (it is A).  ``ghz`` follows the CPU profile."""
    cpu = cpu or _profile.DEFAULT_PROFILE
    state = scenario_defaults(cpu, _profile.load_profile(cpu).ghz)
    state.update({p.key: p.default for p in VIEW_PARAMS})
    return state


def b_overrides(state: Mapping) -> dict:
    """``{key: value}`` of what scenario B overrides of A (keys without the prefix), in schema order."""
    return {p.key: state[B_PREFIX + p.key] for p in MODEL_PARAMS if B_PREFIX + p.key in state} | \
        {k: state[B_PREFIX + k] for k in ("prof", "pv") if B_PREFIX + k in state}


def with_b_overrides(state: Mapping, overrides: Mapping) -> dict:
    """``state`` with B's overrides replaced by ``overrides`` (keys without the prefix; {} makes B equal to A)."""
    out = {k: v for k, v in state.items() if not k.startswith(B_PREFIX)}
    out.update({B_PREFIX + k: v for k, v in overrides.items()})
    return out


def without_b(state: Mapping) -> dict:
    """``state`` with no scenario B (for a page that shows none: its link carries no ``b_`` key)."""
    return with_b_overrides(state, {})


def _b_clock(state: Mapping) -> float:
    """B's clock when it does not override ``ghz``: A's on A's profile, else that of B's own profile."""
    if not own_profile(state):
        return state["ghz"]
    return profile_for(state, "b").ghz


def normalised(state: Mapping) -> dict:
    """``state`` in the codec's form: every ``b_`` key that does not make B differ from A dropped."""
    out = dict(state)
    _normalise_b(out)
    return out


def _normalise_b(state: dict) -> None:
    """Drop every ``b_`` key that does not make B differ from A (a full link writes them all)."""
    pk = [B_PREFIX + k for k in ("cpu", "prof", "pv")]
    if own_profile(state):
        state.setdefault(B_PREFIX + "cpu", state["cpu"])
        if (state.get(pk[0]), state.get(pk[1]), state.get(pk[2])) == (state["cpu"], state.get("prof"), state.get("pv")):
            for k in pk:
                state.pop(k, None)
    if B_PREFIX + "ghz" in state and state[B_PREFIX + "ghz"] == _b_clock(state):
        state.pop(B_PREFIX + "ghz")
    for p in MODEL_PARAMS:
        k = B_PREFIX + p.key
        if p.key not in ("cpu", "ghz") and k in state and state[k] == state[p.key]:
            state.pop(k)


def query_pairs(query) -> list[tuple[str, str]]:
    """``[(key, value), ...]`` of a query string or a mapping of lists, in order (raises :class:`StateError` when
    the query is too long)."""
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


class _Problems:
    """What the decoder does with a bad part of a link: a warning (lenient) or :class:`StateError` (strict)."""

    def __init__(self, strict: bool):
        self.strict = strict
        self.warnings: list[str] = []

    def __call__(self, key: str, warning: str, error: str | None = None) -> None:
        """``warning``: the lenient line (it names ``key`` itself); ``error``: the strict message, default the
        warning's text after ``key: ``."""
        if self.strict:
            raise StateError(key, error if error is not None else warning.split(": ", 1)[-1])
        self.warnings.append(warning)


def _read(query, strict: bool) -> tuple[dict, list[str]]:
    """The one decoder behind :func:`decode` and :func:`decode_strict`; ``strict`` raises at the first problem."""
    bad = _Problems(strict)
    query = _shortlink.expand(query)  # a short link (v=2) is read as its long form
    try:
        pairs = [(k.strip(), v) for k, v in query_pairs(query)]
    except StateError as e:
        if strict:
            raise
        return defaults(), [f"link ignored: {e}"]
    except Exception:  # noqa: BLE001 - any garbage must still give a working view
        if strict:
            raise StateError("query", "not a query string") from None
        return defaults(), ["link ignored: not a query string"]
    seen: dict[str, str] = {}
    for k, v in pairs:
        if k in seen:
            bad(k, f"{_show(k)}: repeated; the first value was used", "given more than once")
            continue
        seen[k] = v
    given = set(seen)
    # CPU first: it decides the default clock.
    state = defaults()
    for cpu_key in ("cpu", B_PREFIX + "cpu"):
        if cpu_key in seen:
            val, problem = PARAMS[cpu_key].parse(seen[cpu_key])
            if val is None:
                bad(cpu_key, f"{cpu_key}: {problem}; using {_cpu_of(state, cpu_key[:-len('cpu')])}",
                    f"{_show(seen[cpu_key])} is not allowed; expected {PARAMS[cpu_key].allowed()}")
            else:
                state[cpu_key] = val
                state[cpu_key.replace("cpu", "ghz")] = _profile.load_profile(val).ghz
    # profile versions before the custom profiles: a custom profile applies to its base in that version
    for vk in PV_KEYS:
        if vk in seen:
            pre = vk[: -len("pv")]
            cpu = _link_cpu(state, pre, seen.get(pre + "prof"))
            val, problem = _parse_pv(seen[vk], cpu)
            if problem:
                bad(vk, f"{vk}: {problem}; using the current version {_profile.profile_version(cpu)}", problem)
            elif val:
                state[vk] = val
    for pk in PROFILE_KEYS:
        if pk in seen:
            cpu_key = pk.replace("prof", "cpu")
            before = _cpu_of(state, pk[: -len("prof")])
            problem = _apply_profile(state, pk, seen[pk], given)
            if problem:
                bad(pk, f"{pk}: custom profile ignored ({problem}); using {_cpu_of(state, pk[: -len('prof')])}",
                    f"custom profile: {problem}")
            elif cpu_key in seen and state[cpu_key] != before:
                bad(cpu_key, f"{cpu_key}: {before} replaced by {state[cpu_key]}, the base of the custom profile",
                    f"{before} differs from {state[cpu_key]}, the base of the custom profile")
    for vk in PV_KEYS:  # a pv checked against a custom profile's base that was then refused
        pre = vk[: -len("pv")]
        if vk in state and not _profile.is_archived(_cpu_of(state, pre), state[vk]):
            bad(vk, f"{vk}: version {state[vk]} is not one of profile {_cpu_of(state, pre)}; "
                    f"using the current version {_profile.profile_version(_cpu_of(state, pre))}",
                f"version {state[vk]} is not one of profile {_cpu_of(state, pre)}")
            state.pop(vk)
    _read_retired(seen, state, bad)
    for k, raw in seen.items():
        if k in ("cpu", B_PREFIX + "cpu") or k in PROFILE_KEYS or k in VERSION_KEYS:
            continue
        if k in PATCH_KEYS:
            val, problem = parse_patch(k, raw)
            if problem:
                bad(k, f"{k}: {problem}" + ("" if val else "; ignored"), problem)
            if val:
                state[k] = val
            continue
        if k == "v":
            if raw.strip() != str(FORMAT_VERSION):
                bad("v", f"v: link format {_show(raw)} is not {FORMAT_VERSION}; read as version {FORMAT_VERSION}",
                    f"link format {_show(raw)} is not supported; expected {FORMAT_VERSION}")
            continue
        p = PARAMS.get(k)
        if p is None:
            bad(k, f"{_show(k)}: unknown parameter, ignored",
                "unknown parameter; allowed: " + ", ".join(["v", *VERSION_KEYS, *PARAMS, *PROFILE_KEYS,
                                                                  *PATCH_KEYS]))
            continue
        val, problem = p.parse(raw)
        if val is None:
            now = f"default {fmt_value(state[k])}" if k in state else f"A's value {fmt_value(state[k[len(B_PREFIX):]])}"
            bad(k, f"{k}: {problem}; using {now}",
                f"{_show(raw)} is not allowed; expected {p.allowed()}")
            continue
        if problem:  # clamped, or an integer rounded
            bad(k, f"{k}: {problem}", f"{_show(raw)} is not allowed; expected {p.allowed()}")
        state[k] = val
    _normalise_b(state)
    # the link's provenance, kept as given: skbmodel.links.versions compares it with what this code computes
    mv = h = None
    if "mv" in seen:
        mv, problem = _parse_mv(seen["mv"])
        if problem:
            bad("mv", f"mv: {problem}; read as made before versions were recorded", problem)
    if "h" in seen:
        h, problem = parse_h(seen["h"])
        if problem:
            bad("h", f"h: {problem}; ignored", problem)
        elif mv is None:
            bad("h", "h: ignored: the link has no (valid) model version mv", "given without a model version mv")
            h = None
    if mv is not None and mv != MODEL_VERSION:  # no ``mv`` in a state: made with this model version
        state["mv"] = mv
        if h is not None:
            state["h"] = h
    return state, bad.warnings


def _version_key(mv: str) -> tuple[int, ...] | None:
    """``major.minor.patch`` as a tuple of ints (None for anything else)."""
    return tuple(int(x) for x in mv.strip().split(".")) if re.fullmatch(_MV_RE, mv.strip()) else None


def _read_retired(seen: dict, state: Mapping, bad) -> None:
    """Read the keys older links carry that a newer key replaced (:data:`skbmodel.params.RETIRED`), in place of
    ``seen``: ``numa=same`` is ``place=same_l3``, ``numa=cross`` the nearest placement on another NUMA node of
    the scenario's machine (:func:`skbmodel.params.placement_of`), so that such a link asks what it asked; a
    link that gives both keeps the new one, and a link made with a model after the key's last version
    (:attr:`skbmodel.params.Retired.until`) cannot carry it.  Grid axes named by a retired key take the new
    name."""
    for gk in GRID_KEYS:
        if seen.get(gk, "").strip() in RETIRED_AXES:
            seen[gk] = RETIRED_AXES[seen[gk].strip()]
    for old, r in RETIRED.items():
        for pre in ("", B_PREFIX):
            if pre + old not in seen:
                continue
            raw = seen.pop(pre + old).strip()
            if pre + r.new_key in seen:
                bad(pre + old, f"{pre}{old}: ignored, the link gives {pre}{r.new_key} (which replaced it)",
                    f"given with {pre}{r.new_key}, which replaced it")
                continue
            made = _version_key(seen.get("mv", ""))
            if made is not None and made > _version_key(r.until):  # no link of a later model writes it
                bad(pre + old, f"{pre}{old}: replaced by {pre}{r.new_key} after model {r.until}; ignored",
                    f"replaced by {pre}{r.new_key} after model {r.until}")
                continue
            if raw not in r.values:
                bad(pre + old, f"{pre}{old}: {_show(raw)} is not one of {', '.join(r.values)}; ignored",
                    f"{_show(raw)} is not allowed; expected {' or '.join(r.values)}")
                continue
            try:
                prof = profile_for(state, "b" if pre else "a")
            except _custom.ProfileLinkError:
                prof = _profile.load_profile(_cpu_of(state, pre))
            seen[pre + r.new_key] = placement_of(raw, cross_node_placement(prof))


def decode(query) -> tuple[dict, list[str]]:
    """Lenient decode of a query string (or mapping of lists): ``(state, warnings)``.

    Never raises for any input: unknown keys are ignored, invalid values fall back to the
    default, out-of-range values are clamped, a repeated key keeps its first value; each such
    decision adds one warning that names the parameter.
    """
    return _read(query, strict=False)


def decode_strict(query) -> dict:
    """Strict decode for scripts: raises :class:`StateError` on the first bad parameter."""
    return _read(query, strict=True)[0]


def encode(state: Mapping, keys=None) -> str:
    """Query string carrying every parameter (or ``keys``) of ``state``, ``v`` first."""
    # Missing keys of A are filled exactly as decode() fills a partial link (the clock follows the CPU);
    # B is written as what it overrides, nothing more.
    full = defaults(state.get("cpu"))
    full.update({k: v for k, v in state.items() if k in PARAMS or k in PROFILE_KEYS or k in PV_KEYS})
    if keys is None:  # a link says what B changes (an override equal to A's value is none); a selection is as given
        _normalise_b(full)
    keys_given = None if keys is None else list(keys)
    if keys is None:
        keys = [k for k in PARAMS if k in full and ((k not in GRID_KEYS or full.get("page") == "grid") and k != "chart"
                                                    or full[k] != PARAMS[k].default)]
    else:
        keys = [k for k in keys if k in full and k not in PROFILE_KEYS and k not in VERSION_KEYS]
    items = [("v", str(FORMAT_VERSION))] + _version_items(state, full, keys_given)
    items += [(k, fmt_value(full[k])) for k in keys]
    # an optional custom profile travels too (compact, see skbmodel.machine.custom)
    items += [(pk, str(state[pk]).strip()) for pk in PROFILE_KEYS + PATCH_KEYS
              if state.get(pk) and (keys_given is None or pk in keys_given)]
    return urlencode(items, safe=":,~")


def _version_items(state: Mapping, full: dict, keys_given) -> list[tuple[str, str]]:
    """``mv``, ``pv``, ``b_pv``, ``h`` as the state has them; else today's model and profile versions, and no ``h``
    (:func:`skbmodel.answers.stamped` puts today's headline into a state before it becomes a share link)."""
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
            if pre and not own_profile(full):
                continue  # B on A's profile: A's pv says its version
            out.append((k, str(full.get(k) or _profile.profile_version(_cpu_of(full, pre)))))
        elif k == "h" and state.get("h") is not None:
            out.append((k, format(float(state["h"]), ".6g")))
    return out


def scenario(state: Mapping, which: str = "a") -> dict:
    """The model parameters of scenario ``"a"`` or ``"b"`` as plain ``{key: value}``: B is A with B's
    overrides; on a profile of its own B's clock follows that profile unless B sets ``ghz``."""
    out = {p.key: state[p.key] for p in MODEL_PARAMS}
    if state.get("prof"):
        out["prof"] = state["prof"]
    if which == "a":
        return out
    if own_profile(state):
        out.pop("prof", None)
        out["cpu"] = _cpu_of(state, B_PREFIX)
        out["ghz"] = _b_clock(state)
        if state.get(B_PREFIX + "prof"):
            out["prof"] = state[B_PREFIX + "prof"]
    out.update({p.key: state[B_PREFIX + p.key] for p in MODEL_PARAMS
                if B_PREFIX + p.key in state and p.key != "cpu"})
    return out
