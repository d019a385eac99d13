"""Machine descriptions: what the physics needs of one CPU, each figure with its public source.

A description (``skbmodel/data/uarch/<name>.toml``, in the spirit of Kerncraft's machine files)
holds clocks (TSC, base, turbo) [GHz], cache sizes [bytes] and latencies [core cycles], the cost of a
locked add and of ``lock cmpxchg16b`` [core cycles], the rename width [uops per cycle], ``rep stos``
throughput [bytes per cycle], store-buffer size [entries] -- each figure with its public source and
``uncertain = true`` where the figure is not documented for that part.  ``profiles`` names the shipped
profiles measured on that CPU; :func:`measured_on` says which CPU a shipped profile was measured on.

This module reads the files (:func:`descriptions`, :func:`load`) so that nothing else parses them; the
profiles derived from them are :mod:`skbmodel.evidence.derive`, the user's CPU read from pasted text is
:mod:`skbmodel.machine.cpuinfo`.  Figures: Intel Optimization Reference Manual, AMD and Arm software
optimization guides, Agner Fog's instruction tables, uops.info (each file cites its own).
"""
from __future__ import annotations

from pathlib import Path

import dataclasses
import functools
import math
import re
import tomllib

from .. import folders

UARCH_DIR = folders.DATA_DIR / "uarch"
#: figures the derivation reads (a description without one cannot be derived)
NEEDED = ("tsc_ghz", "turbo_ghz", "l1d_bytes", "l2_bytes", "issue_width", "lock_add_cycles")


class UarchError(ValueError):
    """Bad input to a derivation: one line naming the problem."""


@dataclasses.dataclass(frozen=True)
class Figure:
    name: str
    value: float
    unit: str
    source: str
    uncertain: bool = False
    #: the range a figure that is not published for the part is bracketed by (``low``, ``high`` in its file),
    #: or None: the derivation widens its interval by it (:func:`skbmodel.evidence.pp_counts.percpu_rmw_price`)
    bracket: tuple[float, float] | None = None


@dataclasses.dataclass(frozen=True)
class Description:
    name: str
    cpu: str
    uarch: str
    vendor: str
    year: int
    profiles: tuple[str, ...]
    figures: dict[str, Figure]
    #: regular expressions (case ignored) for the CPU's names: a cpuinfo ``model name``, lscpu, a user's text
    match: tuple[str, ...] = ()
    #: arm64 ``"0x41:0xd0c"`` (``CPU implementer`` : ``CPU part`` of /proc/cpuinfo)
    cpu_parts: tuple[str, ...] = ()
    #: the string-operation CPUID flags the kernel's memset reads (``erms``, ``fsrm``), lower case, and
    #: their source; ``None``: the description does not say (priced as ERMS, see :attr:`has_erms`)
    features: tuple[str, ...] | None = None
    features_source: str = ""
    #: per-SKU figures that differ from the part the description names (``{SKU name: {figure: Figure}}``):
    #: a row measured on another SKU of the same die uses its own clocks (:meth:`for_cpu`)
    skus: dict[str, dict[str, Figure]] = dataclasses.field(default_factory=dict)

    @property
    def has_erms(self) -> bool:
        """Whether ``memset`` runs ``memset_erms`` (``rep stosb``): X86_FEATURE_ERMS set.

        The 5.x-6.1 ``arch/x86/lib/memset_64.S`` picks with ``ALTERNATIVE_2``: ``memset_erms`` with
        ERMS, else the ``rep stosq`` + ``rep stosb`` body with X86_FEATURE_REP_GOOD (which
        ``init_amd`` sets for every AMD family >= 0x10), else ``memset_orig``.  A description that does
        not list its features is priced as ERMS (every Intel core since Ivy Bridge).
        """
        return self.features is None or "erms" in self.features

    def for_cpu(self, text) -> "Description":
        """This description with the figures of the SKU that ``text`` (a corpus row's CPU) names, if any."""
        for sku, figs in self.skus.items():
            if re.search(rf"\b{re.escape(sku)}\b", str(text or ""), re.I):
                return dataclasses.replace(self, figures={**self.figures, **figs}, skus={},
                                           cpu=f"{self.cpu.split()[0]} {sku}")
        return self

    @property
    def isa(self) -> str:
        """``x86`` or ``arm64``: the derivation carries core cycles between cores of one instruction set."""
        return "x86" if self.vendor in ("Intel", "AMD") else "arm64"

    def value(self, name: str) -> float:
        if name not in self.figures:
            raise UarchError(f"description {self.name} lacks the figure {name}, which the derivation needs")
        return self.figures[name].value


def _figures(path: Path, table: dict, where: str = "") -> dict[str, Figure]:
    figs = {}
    for k, rec in table.items():
        if not isinstance(rec, dict) or "value" not in rec or not str(rec.get("source", "")).strip():
            raise UarchError(f"{path.name}: figure {where}{k} needs a value and a source")
        v = float(rec["value"])
        if not (math.isfinite(v) and v > 0):
            raise UarchError(f"{path.name}: figure {where}{k} = {rec['value']!r} must be a positive number")
        bracket = None
        if "low" in rec or "high" in rec:
            try:
                lo, hi = float(rec["low"]), float(rec["high"])
            except (KeyError, TypeError, ValueError):
                raise UarchError(f"{path.name}: figure {where}{k} needs both low and high as numbers") from None
            if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo <= v <= hi):
                raise UarchError(f"{path.name}: figure {where}{k}: expected 0 < low <= value <= high")
            bracket = (lo, hi)
        figs[k] = Figure(k, v, str(rec.get("unit", "")), str(rec["source"]), bool(rec.get("uncertain", False)),
                         bracket)
    return figs


def _parse(path: Path) -> Description:
    return _parse_text(path.name, path.read_text())


#: a parse per file content: the derivation reads every description hundreds of times in one report
@functools.lru_cache(maxsize=256)
def _parse_text(file_name: str, text: str) -> Description:
    path = Path(file_name)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UarchError(f"{path.name}: not valid TOML ({e})") from None
    figs = _figures(path, doc.get("figures", {}))
    features = doc.get("features")
    if features is not None and not str(doc.get("features_source", "")).strip():
        raise UarchError(f"{path.name}: features needs a features_source")
    skus = {str(name): _figures(path, table, f"{name}.") for name, table in doc.get("sku", {}).items()}
    return Description(name=str(doc["name"]), cpu=str(doc["cpu"]), uarch=str(doc["uarch"]),
                       vendor=str(doc["vendor"]), year=int(doc["year"]),
                       profiles=tuple(doc.get("profiles", ())), figures=figs,
                       match=tuple(str(m) for m in doc.get("match", ())),
                       cpu_parts=tuple(str(c).lower() for c in doc.get("cpu_parts", ())),
                       features=None if features is None else tuple(str(f).lower() for f in features),
                       features_source=str(doc.get("features_source", "")), skus=skus)


def descriptions() -> dict[str, Description]:
    """Every shipped description by name (sorted)."""
    out = {}
    for p in sorted(UARCH_DIR.glob("*.toml")):
        d = _parse(p)
        out[d.name] = d
    return out


def load(name: str) -> Description:
    ds = descriptions()
    if name not in ds:
        raise UarchError(f"unknown uarch {str(name)[:40]!r}; known: {', '.join(ds)}")
    return ds[name]


DERIVED_PREFIX = "derived-"


def derived_id(name: str) -> str:
    """Id of the shipped profile derived from description ``name``."""
    return DERIVED_PREFIX + name


def list_lines() -> list[str]:
    """``python -m skbmodel profile list-uarch``: one line per description, name first."""
    out = []
    for d in descriptions().values():
        missing = [f for f in NEEDED if f not in d.figures]
        unc = sum(f.uncertain for f in d.figures.values())
        state = f"lacks {', '.join(missing)}" if missing else "derivable"
        meas = f"measured: {', '.join(d.profiles)}" if d.profiles else "not measured"
        out.append(f"{d.name}  {d.cpu} ({d.uarch}, {d.year}); {len(d.figures)} figures, {unc} uncertain; "
                   f"{state}; {meas}")
    return out


#: the CPU a profile measured on that no description lists in ``profiles``, and why it is taken to be
#: that one: seed 003's lab names only "Xeon Platinum" (its profile's clock is assumed the same way)
ASSUMED_MEASURED_ON = {  # not in zen4-genoa's ``profiles``: a boot option the derivation does not count
    "epyc-9684x-srso": ("zen4-genoa", "the EPYC 9684X of epyc-9684x under SRSO safe-RET")}
#: profiles measured on a CPU no source names, and why: their cycles are carried unchanged (the clocks that
#: would convert them are not known), with a move's uncertainty.  Seed 003 names "a Xeon Platinum" with
#: iavf, not its model or clocks (its profile's 2.3 GHz is assumed); taking it to be an Ice Lake-SP at its
#: 3.4 GHz turbo made the E5-1650 v4's out-of-sample cpumap rates (Jesper Brouer's 2019 runs) 36 % off
#: instead of 14 %, evidence against that guess, not for another one
UNKNOWN_CPU = {"xeon-platinum-iavf": "seed 003 names a Xeon Platinum with iavf, not its model or clocks"}


def measured_on(profile_id: str) -> tuple[Description | None, str]:
    """The description of the CPU profile ``profile_id`` measured on, and how that is known (None and why
    for a CPU no source names, :data:`UNKNOWN_CPU`)."""
    if profile_id in UNKNOWN_CPU:
        return None, UNKNOWN_CPU[profile_id]
    for d in descriptions().values():
        if profile_id in d.profiles:
            return d, f"description {d.name} lists profile {profile_id}"
    if profile_id in ASSUMED_MEASURED_ON:
        name, why = ASSUMED_MEASURED_ON[profile_id]
        return load(name), why
    raise UarchError(f"no description says which CPU profile {profile_id} measured on")
