"""CPU profiles: the clock and the calibration constants of one machine.

A profile is a small, versioned, human-editable TOML file (in the spirit of
Kerncraft's machine files).  Every constant is a record with value, unit, kind
and source: ``kind`` is one of

* ``fitted``    -- refitted by ``python -m skbmodel calibrate`` from the seed rows named in ``source``;
* ``published`` -- a measurement from a public source (named in ``source``);
* ``kernel``    -- a kernel constant or data-structure size;
* ``assumed``   -- an engineering assumption, stated in ``source``.

A profile may ``inherit`` another one: constants it does not list come from the parent.
"""
from __future__ import annotations

import dataclasses
import math
import tomllib
from pathlib import Path

FORMAT_VERSION = 1
PROFILE_DIR = Path(__file__).with_name("profiles")
KINDS = ("fitted", "published", "kernel", "assumed")


@dataclasses.dataclass(frozen=True)
class Constant:
    name: str
    value: float
    unit: str
    kind: str
    source: str
    #: only for kind == "fitted": allowed range during the fit [unit]
    bounds: tuple[float, float] | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"constant {self.name}: kind {self.kind!r} not in {KINDS}")
        if not self.source.strip():
            raise ValueError(f"constant {self.name}: empty source")
        if not math.isfinite(self.value):
            raise ValueError(f"constant {self.name}: value {self.value!r} is not finite")


@dataclasses.dataclass(frozen=True)
class Profile:
    id: str
    name: str
    constants: dict[str, Constant]
    inherits: str | None = None
    notes: str = ""
    format_version: int = FORMAT_VERSION

    @property
    def ghz(self) -> float:
        return self.constants["ghz"].value

    def value(self, name: str) -> float:
        return self.constants[name].value

    def values(self) -> dict[str, float]:
        """All constants as ``{name: value}``."""
        return {k: c.value for k, c in self.constants.items()}

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
        for c in self.constants.values():
            lines += ["", f"[constants.{c.name}]", f"value = {_num(c.value)}", f"unit = {_q(c.unit)}",
                      f"kind = {_q(c.kind)}", f"source = {_q(c.source)}"]
            if c.bounds is not None:
                lines.append(f"bounds = [{_num(c.bounds[0])}, {_num(c.bounds[1])}]")
        return "\n".join(lines) + "\n"


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _num(x: float) -> str:
    return repr(float(round(x, 6)))


class ProfileError(ValueError):
    """A profile file that cannot be used (names the file and the field)."""


def parse_profile(text: str, origin: str = "<profile>", resolve_parent=None) -> Profile:
    """Parse TOML text into a :class:`Profile`, resolving ``inherits`` through ``resolve_parent``."""
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
    parent_id = doc.get("inherits")
    if parent_id:
        if resolve_parent is None:
            raise ProfileError(f"{origin}: inherits {parent_id!r} but no parent can be loaded")
        constants.update(resolve_parent(parent_id).constants)
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
                source=str(rec["source"]), bounds=tuple(float(b) for b in bounds) if bounds else None)
        except KeyError as e:
            raise ProfileError(f"{origin}: constants.{name} lacks field {e.args[0]!r}") from None
        except (TypeError, ValueError) as e:
            raise ProfileError(f"{origin}: constants.{name}: {e}") from None
    missing = sorted(set(REQUIRED_CONSTANTS) - set(constants))
    if missing:
        raise ProfileError(f"{origin}: missing constants {', '.join(missing)}")
    return Profile(id=doc["id"], name=doc["name"], constants=constants, inherits=parent_id,
                   notes=doc.get("notes", ""))


_CACHE: dict[str, Profile] = {}


def available_profiles() -> list[str]:
    """Ids of the profiles shipped in ``skbmodel/profiles``."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.toml"))


def load_profile(profile_id: str) -> Profile:
    """Load a shipped profile by id (cached)."""
    if profile_id not in _CACHE:
        path = PROFILE_DIR / f"{profile_id}.toml"
        if not path.is_file():
            raise ProfileError(f"unknown CPU profile {profile_id!r}; available: {', '.join(available_profiles())}")
        _CACHE[profile_id] = parse_profile(path.read_text(), origin=str(path), resolve_parent=load_profile)
    return _CACHE[profile_id]


def clear_cache() -> None:
    _CACHE.clear()


DEFAULT_PROFILE = "e5-1650v4"

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
    "xcpu_line_cycles", "numa_remote_factor",
    # scenario bases and conditions
    "kfl_base_cycles", "kfl_wire_kpps",
    "veth_base_cycles",
    "cpumap_src_base_cycles", "cpumap_dst_stack_cycles", "cpumap_redirect_cycles",
    "cpumap_batch", "cpumap_xfer_lines", "offered_mpps",
    "napi_base_cycles", "napi_cache_pair_cycles",
    "noise_floor_ns",
)
