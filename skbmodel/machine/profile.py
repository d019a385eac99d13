"""CPU profiles: the clock and the calibration constants of one machine.

A profile is a small, versioned, human-editable TOML file (in the spirit of
Kerncraft's machine files).  Every constant is a record with value, unit, kind
and source: ``kind`` is one of

* ``fitted``    -- refitted by ``python -m skbmodel calibrate`` from the seed rows named in ``source``;
* ``published`` -- a measurement from a public source (named in ``source``);
* ``kernel``    -- a kernel constant or data-structure size;
* ``assumed``   -- an engineering assumption, stated in ``source``.

A profile may ``inherit`` another one: constants it does not list come from the parent.

Clocks: a constant in ``cycles`` says which clock counts them (``clock``): ``tsc``, the time-stamp
counter at the profile's ``ghz`` (what ``time_bench`` reports on x86, ``cycles(tsc)``), or ``core``, the
core's own clock (an arm64 profile, whose ``ghz`` is then that core clock: there is no TSC).  All the
cycles of one profile count one clock, the one ``ghz`` gives, so every conversion to ns is
``cycles / ghz``; a cost measured in another clock (a core under load at its turbo clock, a constant
carried from another CPU) is converted before it enters a profile, and its source says how
(:func:`skbmodel.evidence.derivation.carry.carried_constants`).  A file that does not state ``clock`` counts the TSC.
Such a carried constant names the profile that measured it (``origin``), so that carrying it on adds
no second move.

Uncertainty (optional; files without it load unchanged, missing ``stderr`` = 0): each constant may
carry ``stderr``, one standard deviation in the constant's own unit, and the profile may carry a
``[fit]`` table, ``names = [...]`` and ``correlation = [[...]]``, the correlation matrix of those
(fitted) constants.  How each number was obtained is stated in the constant's ``source``.  An
inheriting profile keeps the parent's correlations; a ``[fit]`` table of its own overrides the
entries among the names it lists.  ``scale`` (optional, default ``linear``) says how ``stderr`` spreads:
``linear``, a normal ``value +- stderr``; ``log``, a relative error, log-normal with ``s = stderr / value``
in ``ln`` (a constant carried from another CPU: its error is a factor, not an addend).
:mod:`skbmodel.uncertainty` propagates all of it to every output.

Kernel era (optional): ``kernels = ["6.13", "6.16"]``, the first and last mainline kernel the
profile's constants describe (an inheriting profile keeps its parent's range unless it states its
own).  Costs move between kernels as much as between CPUs, so a CPU may have one profile per era
(:mod:`skbmodel.machine.era`); the range is metadata, not a constant, so it does not enter the version.

Machine topology (optional): ``sockets`` and ``numa_nodes``, whole numbers, 0 or missing = not stated.
Metadata of the machine the constants were measured on, not of the CPU: an inheriting profile (another
machine) does not take its parent's.  A profile with one node refuses a cross-node placement
(:func:`skbmodel.physics.cpumap.placement_problem`).

Kernel configuration (optional): ``[config]`` with the fields of :data:`skbmodel.machine.kconfig.FIELDS`
(:mod:`skbmodel.machine.kconfig`), each ``not stated`` unless the profile says; an inheriting profile keeps its
parent's fields unless it states its own.  Metadata too: a term it implies is applied to the constants
(:func:`skbmodel.machine.kconfig.with_config`), which carry it into the version.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import re
import tomllib

import numpy as np

from .. import folders
from . import kconfig

FORMAT_VERSION = 1
PROFILE_DIR = folders.PROFILE_DIR
KINDS = ("fitted", "published", "kernel", "assumed")
#: the clocks a constant in cycles may count (see the module text)
CLOCKS = ("tsc", "core")
#: how a constant's ``stderr`` spreads (see the module text): ``linear`` (normal, ``value +- stderr``) or
#: ``log`` (log-normal, ``value x exp(+-s)`` with ``s = stderr / value``)
SCALES = ("linear", "log")


@dataclasses.dataclass(frozen=True)
class Constant:
    name: str
    value: float
    unit: str
    kind: str
    source: str
    #: only for kind == "fitted": allowed range during the fit [unit]
    bounds: tuple[float, float] | None = None
    #: one standard deviation of ``value`` [unit]; 0 = exact (kernel constants) or not stated
    stderr: float = 0.0
    #: the clock its cycles count (:data:`CLOCKS`); "" for a constant in another unit
    clock: str = ""
    #: how ``stderr`` spreads (:data:`SCALES`): ``log`` for a relative error, ``s = stderr / value`` in ``ln``
    scale: str = "linear"
    #: the profile that measured it when it was carried here from another CPU; "" = measured (or inherited) here
    origin: str = ""

    def __post_init__(self):
        if self.unit == "cycles" and not self.clock:
            object.__setattr__(self, "clock", "tsc")
        if self.clock and (self.unit != "cycles" or self.clock not in CLOCKS):
            raise ValueError(f"constant {self.name}: clock {self.clock!r} needs unit cycles and one of {CLOCKS}")
        if self.kind not in KINDS:
            raise ValueError(f"constant {self.name}: kind {self.kind!r} not in {KINDS}")
        if self.scale not in SCALES or (self.scale == "log" and self.stderr and self.value <= 0):
            raise ValueError(f"constant {self.name}: scale {self.scale!r} must be one of {SCALES} (log: a positive "
                             "value)")
        if not self.source.strip():
            raise ValueError(f"constant {self.name}: empty source")
        if not math.isfinite(self.value):
            raise ValueError(f"constant {self.name}: value {self.value!r} is not finite")
        if not (math.isfinite(self.stderr) and self.stderr >= 0):
            raise ValueError(f"constant {self.name}: stderr {self.stderr!r} must be finite and >= 0")

    @property
    def log_sd(self) -> float:
        """The sd of ``ln value`` [1]: ``stderr / value`` on log scale; on linear scale that of the log-normal
        with the same mean and sd, ``sqrt(ln(1 + (stderr / value)^2))`` (``~ stderr / value`` when small)."""
        if not self.stderr or not self.value:
            return 0.0
        rel = self.stderr / abs(self.value)
        return rel if self.scale == "log" else math.sqrt(math.log1p(rel * rel))


@dataclasses.dataclass(frozen=True)
class Profile:
    id: str
    name: str
    constants: dict[str, Constant]
    inherits: str | None = None
    notes: str = ""
    format_version: int = FORMAT_VERSION
    #: correlations among fitted constants: ``fit_names[i]`` x ``fit_names[j]`` -> ``fit_correlation[i][j]``
    fit_names: tuple[str, ...] = ()
    fit_correlation: tuple[tuple[float, ...], ...] = ()
    #: first and last mainline kernel ("6.13", "6.16") the constants describe; () = not stated
    kernels: tuple[str, ...] = ()
    #: kernel configuration the constants were measured under (:mod:`skbmodel.machine.kconfig`); {} = not stated
    config: dict = dataclasses.field(default_factory=dict)
    #: the machine's CPU sockets and NUMA nodes; 0 = not stated
    sockets: int = 0
    numa_nodes: int = 0
    #: where the topology is stated
    topology_source: str = ""

    @property
    def ghz(self) -> float:
        return self.constants["ghz"].value

    @property
    def kernel_label(self) -> str:
        """``kernel 6.13`` / ``kernels 5.11-6.7`` / ``kernel not stated``: the kernels the constants describe."""
        return kernels_text(self.kernels)

    @property
    def mitigation_label(self) -> str:
        """What a kernel function return executes on the measured machine, in words (:data:`kconfig.FIELDS`
        ``return_thunk``): ``SRSO safe-RET (the Zen 1-4 default)``, ``spec_rstack_overflow=ibpb``, ..."""
        return kconfig.RETURN_THUNK_LABELS[kconfig.resolved(self.config)["return_thunk"]]

    @property
    def configuration_label(self) -> str:
        """The kernel and its mitigation mode, one phrase: what the picker, footer and report show."""
        return f"{self.kernel_label}, {self.mitigation_label}"

    @property
    def clock(self) -> str:
        """The clock every constant in cycles of this profile counts, at :attr:`ghz` (:data:`CLOCKS`)."""
        return next((c.clock for c in self.constants.values() if c.clock), "tsc")

    def value(self, name: str) -> float:
        return self.constants[name].value

    def values(self) -> dict[str, float]:
        """All constants as ``{name: value}``."""
        return {k: c.value for k, c in self.constants.items()}

    def stderr(self, name: str) -> float:
        """One standard deviation of constant ``name`` [its unit]; 0 when exact or not stated."""
        return self.constants[name].stderr

    def correlation(self, names) -> np.ndarray:
        """Correlation matrix of ``names`` (identity where the profile states no correlation)."""
        names = list(names)
        out = np.eye(len(names))
        pos = {n: i for i, n in enumerate(self.fit_names)}
        idx = [(i, pos[n]) for i, n in enumerate(names) if n in pos]
        for i, a in idx:
            for j, b in idx:
                if i != j:
                    out[i, j] = self.fit_correlation[a][b]
        return out

    def with_correlation(self, names, corr) -> "Profile":
        """A copy whose correlations among ``names`` are ``corr``; other stated pairs are kept."""
        return dataclasses.replace(self, **_merge_correlation(self.fit_names, self.fit_correlation, names, corr))

    def fitted_names(self) -> list[str]:
        return [k for k, c in self.constants.items() if c.kind == "fitted"]

    def with_values(self, values: dict[str, float], source: str | None = None) -> "Profile":
        """A copy with some constant values replaced (and optionally their source)."""
        new = dict(self.constants)
        for k, v in values.items():
            c = new[k]
            new[k] = dataclasses.replace(c, value=float(v), source=source or c.source)
        return dataclasses.replace(self, constants=new)

    # ---- serialisation -------------------------------------------------
    def to_toml(self) -> str:
        """Render the profile as TOML text (round-trips through :func:`parse_profile`)."""
        lines = [
            "# skbmodel CPU profile: clock and calibration constants of one machine.",
            "# Edit by hand or regenerate with `python -m skbmodel calibrate`.",
            f"format_version = {self.format_version}",
            f"id = {_q(self.id)}",
            f"name = {_q(self.name)}",
        ]
        if self.inherits:
            lines.append(f"inherits = {_q(self.inherits)}")
        if self.notes:
            lines.append(f"notes = {_q(self.notes)}")
        if self.kernels:
            lines.append("kernels = [" + ", ".join(_q(k) for k in self.kernels) + "]")
        lines += _config_lines(self.config) + _topology_lines(self)
        for c in self.constants.values():
            lines += ["", f"[constants.{c.name}]", f"value = {_num(c.value)}", f"unit = {_q(c.unit)}",
                      f"kind = {_q(c.kind)}", f"source = {_q(c.source)}"]
            if c.clock:
                lines.append(f"clock = {_q(c.clock)}")
            if c.bounds is not None:
                lines.append(f"bounds = [{_num(c.bounds[0])}, {_num(c.bounds[1])}]")
            if c.stderr:
                lines.append(f"stderr = {_num(c.stderr)}")
            if c.scale != "linear":
                lines.append(f"scale = {_q(c.scale)}")
            if c.origin:
                lines.append(f"origin = {_q(c.origin)}")
        # only the correlations among constants this file lists (an inheriting file: its own block)
        names = [n for n in self.fit_names if n in self.constants]
        if len(names) > 1:
            corr = self.correlation(names)
            lines += ["", "[fit]", "names = [" + ", ".join(_q(n) for n in names) + "]", "correlation = ["]
            lines += ["  [" + ", ".join(_num(x) for x in row) + "]," for row in corr]
            lines.append("]")
        return "\n".join(lines) + "\n"


def kernels_text(kernels) -> str:
    """``kernel 6.13`` / ``kernels 5.11-6.7`` / ``kernel not stated`` of a ``(first, last)`` kernel range."""
    if not kernels:
        return "kernel not stated"
    lo, hi = kernels
    return f"kernel {lo}" if lo == hi else f"kernels {lo}-{hi}"


def _merge_correlation(old_names, old_corr, names, corr) -> dict:
    """``fit_names``/``fit_correlation`` with the entries among ``names`` replaced by ``corr``."""
    names = [str(n) for n in names]
    merged = list(old_names) + [n for n in names if n not in old_names]
    pos_old = {n: i for i, n in enumerate(old_names)}
    pos_new = {n: i for i, n in enumerate(names)}
    rows = []
    for a in merged:
        row = []
        for b in merged:
            if a == b:
                v = 1.0
            elif a in pos_new and b in pos_new:
                v = float(corr[pos_new[a]][pos_new[b]])
            elif a in pos_old and b in pos_old:
                v = float(old_corr[pos_old[a]][pos_old[b]])
            else:
                v = 0.0
            row.append(v)
        rows.append(tuple(row))
    return dict(fit_names=tuple(merged), fit_correlation=tuple(rows))


def _config_lines(config: dict) -> list[str]:
    """The ``[config]`` table (inline, so it stays before the constants' tables)."""
    if not config:
        return []
    return ["config = {" + ", ".join(f"{k} = {_q(v)}" for k, v in config.items()) + "}"]


def _topology_lines(profile: "Profile") -> list[str]:
    out = [f"{k} = {getattr(profile, k)}" for k in TOPOLOGY if getattr(profile, k)]
    return out + ([f"topology_source = {_q(profile.topology_source)}"] if out and profile.topology_source else [])


#: the machine topology fields of a profile (whole numbers, 0 = not stated)
TOPOLOGY = ("sockets", "numa_nodes")


def _parse_topology(doc: dict, origin: str) -> dict:
    out = {}
    for k in TOPOLOGY:
        v = doc.get(k, 0)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 64:
            raise ProfileError(f"{origin}: {k} must be a whole number from 1 to 64 (or left out: not stated); "
                               f"got {v!r}")
        out[k] = v
    if (out["sockets"] or out["numa_nodes"]) and not str(doc.get("topology_source", "")).strip():
        raise ProfileError(f"{origin}: sockets / numa_nodes need a topology_source (where they are stated)")
    out["topology_source"] = str(doc.get("topology_source", ""))
    if out["sockets"] and out["numa_nodes"] and out["numa_nodes"] < out["sockets"]:
        raise ProfileError(f"{origin}: numa_nodes {out['numa_nodes']} < sockets {out['sockets']}: each socket "
                           "is at least one node")
    return out


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _num(x: float) -> str:
    return repr(float(round(x, 6)))


class ProfileError(ValueError):
    """A profile file that cannot be used (names the file and the field)."""


def parse_profile(text: str, origin: str = "<profile>", resolve_parent=None, default_clock: str = "") -> Profile:
    """Parse TOML text into a :class:`Profile`, resolving ``inherits`` through ``resolve_parent``
    (``default_clock``: the clock of a cycles constant that does not state one; "" = the TSC)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{origin}: not valid TOML ({e})") from None
    version = doc.get("format_version")
    if version != FORMAT_VERSION:
        raise ProfileError(f"{origin}: format_version must be {FORMAT_VERSION}, got {version!r}")
    for field in ("id", "name"):
        if not isinstance(doc.get(field), str) or not doc[field]:
            raise ProfileError(f"{origin}: missing required string field {field!r}")
    constants: dict[str, Constant] = {}
    fit = dict(fit_names=(), fit_correlation=())
    kernels: tuple[str, ...] = ()
    config: dict = {}
    parent_id = doc.get("inherits")
    if parent_id:
        if resolve_parent is None:
            raise ProfileError(f"{origin}: inherits {parent_id!r} but no parent can be loaded")
        parent = resolve_parent(parent_id)
        constants.update(parent.constants)
        fit = dict(fit_names=parent.fit_names, fit_correlation=parent.fit_correlation)
        kernels = tuple(parent.kernels)
        config = dict(parent.config)
    if "config" in doc:
        try:
            config = {**config, **kconfig.parse(doc["config"], origin)}
        except kconfig.ConfigError as e:
            raise ProfileError(str(e)) from None
    if "kernels" in doc:
        kernels = _parse_kernels(doc["kernels"], origin)
    raw = doc.get("constants", {})
    if not isinstance(raw, dict):
        raise ProfileError(f"{origin}: [constants] must be a table")
    for name, rec in raw.items():
        if not isinstance(rec, dict):
            raise ProfileError(f"{origin}: constants.{name} must be a table")
        try:
            bounds = rec.get("bounds")
            constants[name] = Constant(
                name=name, value=float(rec["value"]), unit=str(rec["unit"]), kind=str(rec["kind"]),
                source=str(rec["source"]), bounds=tuple(float(b) for b in bounds) if bounds else None,
                stderr=float(rec.get("stderr", 0.0)), clock=str(rec.get("clock", default_clock if
                                                                     rec.get("unit") == "cycles" else "")),
                scale=str(rec.get("scale", "linear")), origin=str(rec.get("origin", "")))
        except KeyError as e:
            raise ProfileError(f"{origin}: constants.{name} lacks field {e.args[0]!r}") from None
        except (TypeError, ValueError) as e:
            raise ProfileError(f"{origin}: constants.{name}: {e}") from None
    missing = sorted(set(REQUIRED_CONSTANTS) - set(constants))
    if missing:
        raise ProfileError(f"{origin}: missing constants {', '.join(missing)}")
    clocks = {c.clock for c in constants.values() if c.clock}
    if len(clocks) > 1:
        by = {k: sorted(n for n, c in constants.items() if c.clock == k)[0] for k in clocks}
        which = ", ".join(f"{n}: {k}" for k, n in sorted(by.items()))
        raise ProfileError(f"{origin}: its cycles count two clocks ({which}); "
                           "convert them to the one ghz gives (a cost in core cycles x ghz / core clock)")
    if "fit" in doc:
        fit = _parse_fit(doc["fit"], constants, fit, origin)
    return Profile(id=doc["id"], name=doc["name"], constants=constants, inherits=parent_id,
                   notes=doc.get("notes", ""), kernels=kernels, config=config, **fit,
                   **_parse_topology(doc, origin))


_KERNEL_RE = re.compile(r"^[2-9]\.[0-9]{1,2}$")


def _parse_kernels(raw, origin: str) -> tuple[str, str]:
    """``kernels = ["first", "last"]``: two mainline versions ``major.minor``, first <= last."""
    ok = isinstance(raw, list) and len(raw) == 2 and all(isinstance(k, str) and _KERNEL_RE.match(k) for k in raw)
    if not ok:
        raise ProfileError(f"{origin}: kernels must be two mainline versions, e.g. [\"6.13\", \"6.16\"]; "
                           f"got {raw!r}")
    lo, hi = (tuple(int(p) for p in k.split(".")) for k in raw)
    if lo > hi:
        raise ProfileError(f"{origin}: kernels {raw[0]} .. {raw[1]}: the first is after the last")
    return (raw[0], raw[1])


def _parse_fit(raw, constants: dict, inherited: dict, origin: str) -> dict:
    """The ``[fit]`` table: ``names`` (known constants) and a symmetric ``correlation`` in [-1, 1]."""
    if not isinstance(raw, dict):
        raise ProfileError(f"{origin}: [fit] must be a table")
    names, corr = raw.get("names"), raw.get("correlation")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise ProfileError(f"{origin}: fit.names must be a list of distinct constant names")
    unknown = [n for n in names if n not in constants]
    if unknown:
        raise ProfileError(f"{origin}: fit.names: unknown constants {', '.join(unknown)}")
    n = len(names)
    try:
        ok = (isinstance(corr, list) and len(corr) == n and all(isinstance(r, list) and len(r) == n for r in corr))
        m = [[float(x) for x in r] for r in corr] if ok else None
    except (TypeError, ValueError):
        m = None
    if m is None:
        raise ProfileError(f"{origin}: fit.correlation must be a {n} x {n} list of numbers")
    for i in range(n):
        for j in range(n):
            x = m[i][j]
            if not (math.isfinite(x) and -1.0 <= x <= 1.0) or (i == j and x != 1.0) or abs(x - m[j][i]) > 1e-6:
                raise ProfileError(f"{origin}: fit.correlation must be symmetric, within [-1, 1], with a unit "
                                   f"diagonal (entry {names[i]}, {names[j]})")
    return _merge_correlation(inherited["fit_names"], inherited["fit_correlation"], names, m)


_CACHE: dict[str, Profile] = {}


available_profiles = folders.shipped_profiles


def own_names(profile_id: str) -> list[str]:
    """Constants a shipped profile's own file lists (its parent gives the others)."""
    return list(listed_constants((PROFILE_DIR / f"{profile_id}.toml").read_text()))


@functools.lru_cache(maxsize=128)
def listed_constants(toml_text: str) -> tuple[str, ...]:
    """The constant names a profile file's text lists, in order (parsed once per content: the derivation
    and the constants table ask for every profile many times)."""
    return tuple(tomllib.loads(toml_text).get("constants", {}))


def load_profile(profile_id: str) -> Profile:
    """Load a shipped profile by id, or an archived version by ``<id>@<version>`` (cached)."""
    if "@" in str(profile_id):
        return load_archived(profile_id)
    if profile_id not in _CACHE:
        path = PROFILE_DIR / f"{profile_id}.toml"
        if not path.is_file():
            raise ProfileError(f"unknown CPU profile {profile_id!r}; available: {', '.join(available_profiles())}")
        _CACHE[profile_id] = parse_profile(path.read_text(), origin=str(path), resolve_parent=load_profile)
    return _CACHE[profile_id]


def clear_cache() -> None:
    _CACHE.clear()
    _VERSIONS.clear()


DEFAULT_PROFILE = folders.DEFAULT_PROFILE

#: Every profile must define these (directly or through ``inherits``).
REQUIRED_CONSTANTS = (
    "ghz",
    # SLUB
    "slub_object_bytes", "slub_slab_bytes", "slub_fast_pair_cycles", "slub_free_share",
    "slub_bulk_obj_pair_cycles", "slub_free_slow_extra_cycles", "slub_refill_cycles",
    "l1d_bytes", "l1_miss_cycles", "slab_locality", "slub_loop_call_cycles", "slab_fill_fraction",
    "l1_usable_fraction", "l2_bytes", "l2_miss_cycles",
    # zeroing
    "cacheline_bytes", "stos_setup_cycles", "stos_line_cycles", "stos_drain_line_cycles",
    "store_buffer_bytes", "erms_setup_cycles", "erms_line_cycles",
    # page allocator / page_pool
    "pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles", "page_alloc_share",
    "page_single_cycles", "page_bulk_page_cycles", "page_bulk_call_cycles", "pcp_high_pages",
    "page_buddy_extra_cycles",
    "xcpu_line_cycles", "numa_remote_factor",
    # scenario bases and conditions
    "kfl_base_cycles", "kfl_wire_kpps",
    "veth_base_cycles",
    "cpumap_src_base_cycles", "cpumap_dst_stack_cycles", "cpumap_redirect_cycles",
    "cpumap_batch", "cpumap_xfer_lines", "offered_mpps",
    "cpumap_flush_packets", "cpumap_wake_cycles", "cpumap_wake_lines", "cpumap_sleep_cycles",
    "cpumap_drop_dst_cycles", "cpumap_return_lines",
    "napi_base_cycles", "napi_cache_pair_cycles",
    "noise_floor_ns",
)


# ---------------------------------------------------------------- versions and the archive
#: Superseded (and current) profile versions, one self-contained file ``<id>@<version>.toml`` each,
#: written by ``scripts/archive_profiles.py`` before a recalibration changes a shipped profile.
ARCHIVE_DIR = PROFILE_DIR / "archive"
VERSION_CHARS = 8
_VERSION_RE = re.compile(r"^[0-9a-f]{%d}$" % VERSION_CHARS)
_ARCHIVED_ID_RE = re.compile(r"^([A-Za-z0-9._-]{1,64})@([0-9a-f]{%d})$" % VERSION_CHARS)
_VERSIONS: dict[str, str] = {}


def values_version(values: dict[str, float]) -> str:
    """Version of a set of constant values: 8 hex of sha256 over the sorted ``name=repr(float(value))`` lines.

    Computed from the values only (not sources, units, bounds or notes): a refit that changes any
    number gives a new version by itself, and editing a source text does not invent one.
    """
    text = "\n".join(f"{k}={float(v)!r}" for k, v in sorted(values.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:VERSION_CHARS]


def profile_version(profile: Profile | str) -> str:
    """The version of a profile (its resolved constant values), or of the shipped profile with this id.

    An archived profile (id ``<id>@<version>``) has the version in its id.
    """
    if isinstance(profile, str):
        if profile not in _VERSIONS:
            _VERSIONS[profile] = profile_version(load_profile(profile))
        return _VERSIONS[profile]
    m = _ARCHIVED_ID_RE.match(profile.id)
    if m and profile.inherits is None:
        return m.group(2)
    return values_version(profile.values())


def is_version(text: str) -> bool:
    """True for a well-formed profile version (8 lowercase hex digits)."""
    return isinstance(text, str) and bool(_VERSION_RE.match(text))


def archived_versions(profile_id: str) -> list[str]:
    """Versions of ``profile_id`` in the archive (sorted)."""
    if not re.match(r"^[A-Za-z0-9._-]{1,64}$", str(profile_id)):
        return []
    return sorted(p.stem.split("@", 1)[1] for p in ARCHIVE_DIR.glob(f"{profile_id}@*.toml")
                  if _ARCHIVED_ID_RE.match(p.stem) and p.stem.split("@", 1)[0] == profile_id)


def is_archived(profile_id: str, version: str) -> bool:
    return is_version(version) and (ARCHIVE_DIR / f"{profile_id}@{version}.toml").is_file() \
        and bool(_ARCHIVED_ID_RE.match(f"{profile_id}@{version}"))


def load_archived(archived_id: str) -> Profile:
    """Load ``<id>@<version>`` from the archive (cached); its values hash to ``<version>`` or it is refused.

    The file is self-contained (every constant resolved).  A constant the model requires that did
    not exist when the version was archived (a mechanism added later) takes the value of the current
    shipped profile ``<id>``; the model-version notice covers such a change.
    """
    m = _ARCHIVED_ID_RE.match(str(archived_id))
    if not m:
        raise ProfileError(f"{str(archived_id)[:80]!r} is not '<profile id>@<8 hex digit version>'")
    if archived_id in _CACHE:
        return _CACHE[archived_id]
    base_id, version = m.groups()
    path = ARCHIVE_DIR / f"{archived_id}.toml"
    if not path.is_file():
        have = ", ".join(archived_versions(base_id)) or "none"
        raise ProfileError(f"profile {base_id} version {version} is not archived (archived versions: {have})")
    text = path.read_text()
    try:
        own = tomllib.loads(text).get("constants", {})
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{path}: not valid TOML ({e})") from None
    if "inherits" in tomllib.loads(text):
        raise ProfileError(f"{path}: an archived profile must be self-contained (no inherits)")

    class _Current:  # supplies only the constants the archived file lacks
        constants: dict = {}
        fit_names: tuple = ()
        fit_correlation: tuple = ()
        kernels: tuple = ()
        config: dict = {}

    def fill(_pid):
        try:
            return load_profile(base_id)
        except ProfileError:
            return _Current
    # parse as if it inherited the current profile: every constant it lists wins; only missing ones are filled
    # a file archived before constants stated their clock counts the clock its machine's profile counts
    clock = getattr(fill(base_id), "clock", "") if "\nclock = " not in text else ""
    prof = parse_profile(f"inherits = {_q(base_id)}\n" + text, origin=str(path), resolve_parent=fill,
                         default_clock=clock)
    got = values_version({k: prof.constants[k].value for k in own})
    if got != version or prof.id != archived_id:
        raise ProfileError(f"{path}: its values have version {got} and id {prof.id!r}; expected {archived_id}")
    prof = dataclasses.replace(prof, inherits=None)
    if not (prof.sockets or prof.numa_nodes):  # archived before profiles stated their machine: the same machine
        cur = fill(base_id)
        prof = dataclasses.replace(prof, **{k: getattr(cur, k, 0) for k in TOPOLOGY},
                                   topology_source=getattr(cur, "topology_source", ""))
    _CACHE[archived_id] = prof
    return prof


def _archive_note(profile: Profile, version: str) -> str:
    inherited = f" (inherited from {profile.inherits}, resolved)" if profile.inherits else ""
    return f"version {version} of profile {profile.id}{inherited}" + (f": {profile.notes}" if profile.notes else "")


def archive_toml(profile: Profile) -> str:
    """Self-contained TOML of ``profile`` as the archive keeps it: id ``<id>@<version>``, no ``inherits``,
    every resolved constant with its value at full precision (``repr``), so that it loads back to the
    same values and the same version whatever happens to the shipped file or its parent later."""
    version = profile_version(profile)
    lines = [
        "# skbmodel archived CPU profile version: every constant resolved, values at full precision.",
        "# Written by scripts/archive_profiles.py; do not edit (the values must hash to the version in the id).",
        f"format_version = {profile.format_version}",
        f"id = {_q(profile.id + '@' + version)}",
        f"name = {_q(profile.name)}",
        f"notes = {_q(_archive_note(profile, version))}",
    ]
    if profile.kernels:
        lines.append("kernels = [" + ", ".join(_q(k) for k in profile.kernels) + "]")
    lines += _config_lines(profile.config) + _topology_lines(profile)
    for c in profile.constants.values():
        lines += ["", f"[constants.{c.name}]", f"value = {float(c.value)!r}"]
        for f in dataclasses.fields(c):
            if f.name in ("name", "value"):
                continue
            v = getattr(c, f.name)
            if v is None:
                continue
            if isinstance(v, str):
                lines.append(f"{f.name} = {_q(v)}")
            elif isinstance(v, bool):
                lines.append(f"{f.name} = {'true' if v else 'false'}")
            elif isinstance(v, int):
                lines.append(f"{f.name} = {v}")
            elif isinstance(v, float):
                lines.append(f"{f.name} = {v!r}")
            elif isinstance(v, (tuple, list)) and all(isinstance(x, (int, float)) for x in v):
                lines.append(f"{f.name} = [{', '.join(repr(float(x)) for x in v)}]")
    return "\n".join(lines) + "\n"


def archive_current(check_only: bool = False) -> list[tuple[str, str, str]]:
    """Put the current version of every shipped profile into the archive (idempotent).

    Returns ``[(profile id, version, "archived" | "present" | "missing")]``; ``check_only`` writes nothing.
    An existing archive file is verified (its values must equal the shipped profile's), never rewritten.
    """
    clear_cache()
    out = []
    for pid in available_profiles():
        prof = load_profile(pid)
        version = profile_version(prof)
        path = ARCHIVE_DIR / f"{pid}@{version}.toml"
        if path.is_file():
            if load_archived(f"{pid}@{version}").values() != prof.values():
                raise ProfileError(f"{path}: does not hold the values of profile {pid}")
            out.append((pid, version, "present"))
            continue
        if check_only:
            out.append((pid, version, "missing"))
            continue
        ARCHIVE_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(archive_toml(prof), encoding="utf-8")
        _CACHE.pop(f"{pid}@{version}", None)
        if load_archived(f"{pid}@{version}").values() != prof.values():
            path.unlink()
            raise ProfileError(f"{path}: did not load back to the values of profile {pid}; removed")
        out.append((pid, version, "archived"))
    return out
