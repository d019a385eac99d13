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
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode

from . import custom as _custom
from . import profile as _profile

FORMAT_VERSION = 1
B_PREFIX = "b_"
MAX_QUERY_CHARS = 16_384
MAX_VALUE_CHARS = 200


class StateError(ValueError):
    """An invalid parameter; ``str()`` is one line naming the key and what is allowed."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key = key


@dataclasses.dataclass(frozen=True)
class Param:
    key: str
    label: str
    kind: str  # "int" | "float" | "choice"
    default: object
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""
    step: float | None = None

    def allowed(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        kind = "an integer" if self.kind == "int" else "a number"
        return f"{kind} in [{_fmt(self.lo)}, {_fmt(self.hi)}]" + (f" {self.unit}" if self.unit else "")

    def parse(self, raw: str):
        """Parse a raw string: returns ``(value, problem)``; ``problem`` is None when valid.

        Out-of-range numbers come back clamped with a problem text; unusable input comes back as
        ``(None, problem)``.
        """
        raw = raw.strip()
        if len(raw) > MAX_VALUE_CHARS:
            return None, f"value too long; expected {self.allowed()}"
        if self.kind == "choice":
            if raw in self.choices:
                return raw, None
            return None, f"{_show(raw)} is not {self.allowed()}"
        try:
            x = float(raw)
        except ValueError:
            return None, f"{_show(raw)} is not {self.allowed()}"
        if not math.isfinite(x):
            return None, f"{_show(raw)} is not {self.allowed()}"
        if self.kind == "int":
            if x != int(x):
                xi = int(round(x))
                return self._clamp(xi, f"{_show(raw)} rounded to {xi}", raw)
            x = int(x)
        return self._clamp(x, None, raw)

    def _clamp(self, x, problem, raw=None):
        lo, hi = self.lo, self.hi
        if x < lo or x > hi:
            y = min(max(x, lo), hi)
            y = int(y) if self.kind == "int" else float(y)
            # quote what the link said ('1e9'), not the parsed number ('1000000000')
            return y, f"{_show(str(x) if raw is None else raw)} outside {self.allowed()}, clamped to {_fmt(y)}"
        return (int(x) if self.kind == "int" else float(x)), problem


def _fmt(x) -> str:
    """Shortest text that parses back to exactly ``x`` (``repr``; ``%g`` kept only 6 digits)."""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return repr(float(x)) if isinstance(x, float) else str(x)


def _show(raw: str) -> str:
    raw = raw if len(raw) <= 40 else raw[:37] + "..."
    return repr(raw)


PATHS = ("veth", "cpumap", "xdp_pass", "kfree_skb_list")
PAGES = ("overview", "slub", "zeroing", "veth", "cpumap", "kfree", "compare", "validation")

#: Parameters of one scenario (A; B uses the same with the ``b_`` prefix).
MODEL_PARAMS: tuple[Param, ...] = (
    Param("cpu", "CPU profile", "choice", _profile.DEFAULT_PROFILE, choices=tuple(_profile.available_profiles())),
    Param("ghz", "Clock (GHz)", "float", None, 0.5, 6.0, unit="GHz", step=0.05),
    Param("bulk", "kmem_cache bulk size (objects)", "int", 16, 1, 256, unit="objects", step=1),
    Param("zero", "Zeroing method", "choice", "gfp_zero", choices=("memset", "gfp_zero")),
    Param("zero_bytes", "Bytes zeroed by memset (bytes)", "int", 184, 8, 1024, unit="bytes", step=8),
    Param("xdp_batch", "VETH_XDP_BATCH (skbs)", "int", 16, 1, 64, unit="skbs", step=1),
    Param("kfl_bulk", "KFREE_SKB_BULK_SIZE (skbs, 1 = no bulk)", "int", 16, 1, 64, unit="skbs", step=1),
    Param("drop_batch", "fq_codel drop_batch (packets)", "int", 64, 1, 1024, unit="packets", step=1),
    Param("clone_frac", "Cloned skbs in drop list (fraction)", "float", 0.0, 0.0, 1.0, step=0.05),
    Param("pp_recycle", "page_pool recycle ratio (fraction)", "float", 1.0, 0.0, 1.0, step=0.05),
    Param("numa", "cpumap destination node", "choice", "same", choices=("same", "cross")),
    Param("defer_cache", "Same-CPU defer free to NAPI cache (0/1)", "int", 1, 0, 1, step=1),
    Param("link_gbps", "Link speed (Gbit/s)", "float", 10.0, 1.0, 800.0, unit="Gbit/s", step=1.0),
    Param("frame_bytes", "Frame size (bytes, incl. FCS)", "int", 64, 64, 9216, unit="bytes", step=1),
    Param("noise_ns", "Benchmark noise per run (ns/packet)", "float", 2.0, 0.1, 50.0, unit="ns", step=0.1),
    Param("path", "Path shown in the overview", "choice", "veth", choices=PATHS),
)
MODEL_KEYS = tuple(p.key for p in MODEL_PARAMS)
VIEW_PARAMS: tuple[Param, ...] = (
    Param("page", "Page", "choice", "overview", choices=PAGES),
)
PARAMS: dict[str, Param] = {p.key: p for p in MODEL_PARAMS + VIEW_PARAMS}
PARAMS.update({B_PREFIX + p.key: dataclasses.replace(p, key=B_PREFIX + p.key) for p in MODEL_PARAMS})


#: Optional keys: a custom CPU profile in compact form (see :mod:`skbmodel.custom`),
#: ``prof=1~<base>~name:value,...``.  Absent from :func:`defaults`; present in a decoded state only
#: when the link carries one.  When valid it sets the scenario's ``cpu`` to the base profile and,
#: unless the link gives ``ghz``, the clock to the custom profile's.
PROFILE_KEYS = ("prof", B_PREFIX + "prof")


def _apply_profile(state: dict, key: str, raw: str, given: set) -> str | None:
    """Set ``state[key]`` (and cpu/ghz) from link text; returns a problem text or None."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        prof = _custom.decode_cached(raw)
    except _custom.ProfileLinkError as e:
        return str(e)
    cpu_key, ghz_key = key.replace("prof", "cpu"), key.replace("prof", "ghz")
    state[cpu_key] = prof.inherits
    state[key] = raw
    if ghz_key not in given:
        state[ghz_key] = prof.ghz
    return None


def profile_for(state: Mapping, which: str = "a") -> _profile.Profile:
    """The CPU profile of scenario ``"a"``/``"b"``: the custom profile (key ``prof``) or the shipped ``cpu``.

    Raises :class:`skbmodel.custom.ProfileLinkError` for an invalid ``prof`` value.
    """
    pre = "" if which == "a" else B_PREFIX
    raw = state.get(pre + "prof")
    if raw:
        return _custom.decode_cached(str(raw))
    return _profile.load_profile(state.get(pre + "cpu") or _profile.DEFAULT_PROFILE)


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
    for pk in PROFILE_KEYS:
        if pk in seen:
            cpu_key = pk.replace("prof", "cpu")
            before = state[cpu_key]
            problem = _apply_profile(state, pk, seen[pk], set(seen))
            if problem:
                warnings.append(f"{pk}: custom profile ignored ({problem}); using {state[cpu_key]}")
            elif cpu_key in seen and state[cpu_key] != before:
                warnings.append(f"{cpu_key}: {before} replaced by {state[cpu_key]}, the base of the custom profile")
    for k, raw in seen.items():
        if k in ("cpu", B_PREFIX + "cpu") or k in PROFILE_KEYS:
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
    return state, warnings


def decode_strict(query) -> dict:
    """Strict decode for scripts: raises :class:`StateError` on the first bad parameter."""
    pairs = [(k.strip(), v) for k, v in _pairs(query)]
    seen = set()
    state = defaults()
    cpu_pairs = [(k, v) for k, v in pairs if k in ("cpu", B_PREFIX + "cpu")]
    for k, v in cpu_pairs + [(k, v) for k, v in pairs if k not in ("cpu", B_PREFIX + "cpu")]:
        if k in seen:
            raise StateError(k, "given more than once")
        seen.add(k)
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
            raise StateError(k, "unknown parameter; allowed: " + ", ".join(["v"] + list(PARAMS) + list(PROFILE_KEYS)))
        val, problem = p.parse(v)
        if val is None or (problem and "clamped" in problem):
            raise StateError(k, f"{_show(v)} is not allowed; expected {p.allowed()}")
        if problem:  # rounding of an integer
            raise StateError(k, f"{_show(v)} is not allowed; expected {p.allowed()}")
        state[k] = val
        if k in ("cpu", B_PREFIX + "cpu") and k.replace("cpu", "ghz") not in {kk for kk, _ in pairs}:
            state[k.replace("cpu", "ghz")] = _profile.load_profile(val).ghz
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
    keys = list(PARAMS) if keys is None else [k for k in keys if k not in PROFILE_KEYS]
    items = [("v", str(FORMAT_VERSION))] + [(k, _fmt(full[k])) for k in keys]
    # an optional custom profile travels too (compact, see skbmodel.custom)
    items += [(pk, str(state[pk]).strip()) for pk in PROFILE_KEYS
              if state.get(pk) and (keys_given is None or pk in keys_given)]
    return urlencode(items, safe=":,~")


def scenario(state: Mapping, which: str = "a") -> dict:
    """The model parameters of scenario ``"a"`` or ``"b"`` as plain ``{key: value}``."""
    pre = "" if which == "a" else B_PREFIX
    out = {p.key: state[pre + p.key] for p in MODEL_PARAMS}
    if state.get(pre + "prof"):
        out["prof"] = state[pre + "prof"]
    return out
