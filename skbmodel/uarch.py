"""Machine descriptions and the profiles derived from them: a CPU predicted before it is measured.

A description (``skbmodel/data/uarch/<name>.toml``, in the spirit of Kerncraft's machine files)
holds what the physics needs of one CPU -- clocks (TSC, base, turbo), cache sizes and latencies,
the cost of a locked add and of ``lock cmpxchg16b``, ``rep stos`` throughput, store-buffer size --
each figure with its public source and ``uncertain = true`` where the figure is not documented
for that part.  ``profiles`` names the shipped profiles measured on that CPU.

Derivation (:func:`derive`), ECM style: a per-page page_pool cost is a fixed amount of core work,
the same instructions on every x86 core of one kernel era, so its cost in *core* cycles carries
over between CPUs, and the TSC cycles a benchmark prints follow from the clocks::

    cost_tsc = core_cycles(era) * tsc_ghz / turbo_ghz

``core_cycles(era)`` is the mean over the CPUs measured in that kernel era (before or since
:data:`skbmodel.era.DIRECT_RECYCLE_ANY_CONTEXT`; the era's code decides the instruction count),
each converted with its own description's clocks (a single-core time_bench loop runs at the
turbo clock).  Its interval is the spread of those core-cycle costs between CPUs.  The cache
sizes come from the description; every other constant is inherited from the base profile of
the era (``e5-1650v4`` or ``e5-1650v4-2025``) and says so.  The locked-op and cache-latency
figures are carried for the derivations still to come (SLUB, zeroing, the page allocator).

Leave one CPU out (:func:`leave_one_cpu_out`): each described CPU with published page_pool
numbers is derived from the *other* CPUs only and its numbers predicted; next to each, the naive
prediction (the other CPUs' mean ns, the same on every CPU).
"""
from __future__ import annotations

import dataclasses
import math
import re
import tomllib
from pathlib import Path

import numpy as np

from . import era, model, uncertainty
from .custom import GHZ_RANGE
from .profile import Constant, Profile, available_profiles, load_profile

UARCH_DIR = Path(__file__).with_name("data") / "uarch"
#: figures the derivation reads (a description without one cannot be derived)
NEEDED = ("tsc_ghz", "turbo_ghz", "l1d_bytes", "l2_bytes")
#: the page_pool constants the derivation gives, and the model output of each (TSC cycles)
DERIVED_PP = {"pp_fast_cycles": "page_pool.fast_cycles", "pp_ring_cycles": "page_pool.ring_cycles",
              "page_slow_cycles": "page_pool.slow_cycles"}
#: base profile per era (``True``: kernels since the split)
ERA_BASE = {False: "e5-1650v4", True: "e5-1650v4-2025"}
LATEST_KERNEL = "6.16"
#: relative sd of a derived constant when no era has two measured CPUs to give a spread
FALLBACK_REL_SD = 0.3


class UarchError(ValueError):
    """Bad input to a derivation: one line naming the problem."""


@dataclasses.dataclass(frozen=True)
class Figure:
    name: str
    value: float
    unit: str
    source: str
    uncertain: bool = False


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

    @property
    def isa(self) -> str:
        """``x86`` or ``arm64``: the derivation carries core cycles between cores of one instruction set."""
        return "x86" if self.vendor in ("Intel", "AMD") else "arm64"

    def value(self, name: str) -> float:
        if name not in self.figures:
            raise UarchError(f"description {self.name} lacks the figure {name}, which the derivation needs")
        return self.figures[name].value


def _parse(path: Path) -> Description:
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise UarchError(f"{path.name}: not valid TOML ({e})") from None
    figs = {}
    for k, rec in doc.get("figures", {}).items():
        if not isinstance(rec, dict) or "value" not in rec or not str(rec.get("source", "")).strip():
            raise UarchError(f"{path.name}: figure {k} needs a value and a source")
        v = float(rec["value"])
        if not (math.isfinite(v) and v > 0):
            raise UarchError(f"{path.name}: figure {k} = {rec['value']!r} must be a positive number")
        figs[k] = Figure(k, v, str(rec.get("unit", "")), str(rec["source"]), bool(rec.get("uncertain", False)))
    return Description(name=str(doc["name"]), cpu=str(doc["cpu"]), uarch=str(doc["uarch"]),
                       vendor=str(doc["vendor"]), year=int(doc["year"]),
                       profiles=tuple(doc.get("profiles", ())), figures=figs,
                       match=tuple(str(m) for m in doc.get("match", ())),
                       cpu_parts=tuple(str(c).lower() for c in doc.get("cpu_parts", ())))


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


def _since_split(kernel: str) -> bool:
    return era.version_key(kernel) >= era.version_key(era.DIRECT_RECYCLE_ANY_CONTEXT)


def training(exclude: tuple[str, ...] = (), isa: str = "x86") -> list[dict]:
    """The measured CPUs' page_pool costs in core cycles: one record per (description, profile), of
    the cores of one instruction set (``isa``); an arm64 profile's clock is its core clock."""
    out = []
    for d in descriptions().values():
        if d.name in exclude or d.isa != isa:
            continue
        for pid in d.profiles:
            if pid not in available_profiles():
                continue
            prof = load_profile(pid)
            if not _measures_page_pool(prof):
                continue
            scale = d.value("turbo_ghz") / (d.value("tsc_ghz") if "tsc_ghz" in d.figures else prof.ghz)
            out.append(dict(uarch=d.name, profile=pid, new_era=_since_split(prof.kernels[0]),
                            core={k: prof.value(k) * scale for k in DERIVED_PP},
                            ns={k: prof.value(k) / prof.ghz for k in DERIVED_PP}))
    return out


def _measures_page_pool(prof: Profile) -> bool:
    """Whether the profile's page_pool costs are its own data (not inherited, not derived)."""
    parent = load_profile(prof.inherits) if prof.inherits else None
    own = [k for k in DERIVED_PP if parent is None or parent.constants.get(k) != prof.constants[k]]
    return len(own) == len(DERIVED_PP) and not any(prof.constants[k].source.startswith("derived:") for k in own)


def _era_spread(train: list[dict]) -> float:
    """Relative sd of core-cycle costs between CPUs of one era (pooled over eras and constants)."""
    rels = []
    for new in (False, True):
        pts = [t for t in train if t["new_era"] == new]
        if len({t["uarch"] for t in pts}) < 2:
            continue
        for k in DERIVED_PP:
            v = np.array([t["core"][k] for t in pts])
            rels.append(float(np.std(v, ddof=1) / np.mean(v)))
    return float(np.sqrt(np.mean(np.square(rels)))) if rels else FALLBACK_REL_SD


def derive(name: str, ghz: float | None = None, kernel: str | None = None, exclude: tuple[str, ...] = ()) -> Profile:
    """The profile of CPU ``name`` derived from its description and the other CPUs' data.

    ``ghz``: the TSC clock of the machine (default: the description's); ``kernel``: the mainline
    release (default :data:`LATEST_KERNEL`); ``exclude``: descriptions whose data may not be used
    (leave one CPU out).  Raises :class:`UarchError` (one line) on bad input.
    """
    d = load(name)
    kernel = LATEST_KERNEL if kernel is None else str(kernel).strip()
    if kernel not in era.RELEASES:
        first, last = min(era.RELEASES, key=era.version_key), max(era.RELEASES, key=era.version_key)
        raise UarchError(f"--kernel {kernel[:20]!r}: expected a mainline release between {first} and {last}, e.g. 6.12")
    if ghz is not None and not (math.isfinite(ghz) and GHZ_RANGE[0] <= ghz <= GHZ_RANGE[1]):
        raise UarchError(f"--ghz {ghz!r}: expected a clock between {GHZ_RANGE[0]:g} and {GHZ_RANGE[1]:g} GHz")
    for k in NEEDED if ghz is None else [n for n in NEEDED if n != "tsc_ghz"]:
        d.value(k)  # raises, naming the first figure the description lacks
    turbo = d.value("turbo_ghz")
    if ghz is None:
        ghz = d.value("tsc_ghz")
    new = _since_split(kernel)
    train = training(exclude=exclude, isa=d.isa)
    pts = [t for t in train if t["new_era"] == new]
    isa_note = ""
    if not pts and d.isa != "x86":  # no measured core of its own instruction set in this era
        isa_note = (f" ({d.isa}: no {d.isa} CPU measured in this kernel era, so the x86 cores' core cycles, "
                    "a different instruction sequence)")
        train = training(exclude=exclude)
        pts = [t for t in train if t["new_era"] == new]
    pts = pts or train
    if not pts:
        raise UarchError("no measured CPU is left to derive from")
    rel_sd = _era_spread(train)
    base = load_profile(ERA_BASE[new])
    who = ", ".join(sorted({f"{t['uarch']} ({t['profile']})" for t in pts}))
    consts = dict(base.constants)
    fig = d.figures
    if "tsc_ghz" in fig and ghz == fig["tsc_ghz"].value:
        clock = fig["tsc_ghz"].source
    elif "tsc_ghz" not in fig and "base_ghz" in fig and ghz == fig["base_ghz"].value:
        clock = f"the core clock ({d.isa} counts no TSC cycles): {fig['base_ghz'].source}"
    else:
        clock = "given with --ghz"
    consts["ghz"] = Constant("ghz", float(ghz), "GHz", "published",
                             f"TSC clock: {clock}; uncertainty: 0: the clock is a scenario input")
    for k, f in (("l1d_bytes", fig["l1d_bytes"]), ("l2_bytes", fig["l2_bytes"])):
        consts[k] = Constant(k, f.value, "bytes", "published", f"{f.source} (description {d.name}); uncertainty: 0")
    for k in DERIVED_PP:
        core = float(np.mean([t["core"][k] for t in pts]))
        value = core * ghz / turbo
        consts[k] = Constant(k, round(value, 3), "cycles", "assumed",
                             f"derived: {core:.1f} core cycles (mean of {who}{isa_note}, each converted with its own "
                             f"description's turbo/TSC clocks) x TSC {ghz:g} / turbo {turbo:g} GHz "
                             f"({fig['turbo_ghz'].source}); uncertainty: the spread of core-cycle costs between "
                             f"CPUs of one kernel era, relative sd {rel_sd:.2f}",
                             stderr=round(rel_sd * value, 3))
    lo, hi = kernel, kernel
    notes = (f"derived from the {d.uarch} description ({d.name}) for kernel {kernel}: the clock and the cache "
             f"sizes from the description, the page_pool costs from the core cycles measured on {who}; every "
             f"other constant inherited from {base.id}, not derived (SLUB, zeroing, the page allocator and the "
             "path bases are measured on the E5-1650 v4 only)")
    return Profile(id=f"derived-{d.name}", name=f"{d.cpu} (derived: {d.uarch}, kernel {kernel})",
                   constants=consts, inherits=base.id, notes=notes, kernels=(lo, hi),
                   fit_names=base.fit_names, fit_correlation=base.fit_correlation)


DERIVED_PREFIX = "derived-"


def derived_id(name: str) -> str:
    """Id of the shipped profile derived from description ``name``."""
    return DERIVED_PREFIX + name


def shipped_derived(name: str) -> Profile:
    """The profile shipped as ``skbmodel/profiles/derived-<name>.toml``: :func:`derive` for the latest
    kernel at the description's TSC clock (an arm64 core: its core clock), listing only the constants
    that differ from its base profile (the rest it inherits).  ``scripts/derived_profiles.py`` writes it."""
    d = load(name)
    full = derive(name, ghz=None if "tsc_ghz" in d.figures else d.value("base_ghz"))
    base = load_profile(full.inherits)
    own = {k: c for k, c in full.constants.items() if base.constants.get(k) != c}
    return dataclasses.replace(full, id=derived_id(name), constants=own)


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


# ---- leave one CPU out -------------------------------------------------------------------

PROTOCOL = "other CPU"
_PP_OUTPUTS = ("page_pool.fast_cycles", "page_pool.ring_cycles", "page_pool.slow_cycles",
               "page_pool.nosoftirq01_cycles", "page_pool.nosoftirq02_cycles", "page_pool.nosoftirq03_cycles")


def _naive_profile(base: Profile, train: list[dict], ghz: float, kernel: str) -> Profile:
    """The naive prediction as a profile: the other CPUs' mean ns of each cost, the same on every CPU."""
    vals = {k: float(np.mean([t["ns"][k] for t in train])) * ghz for k in DERIVED_PP}
    return dataclasses.replace(base.with_values(vals), kernels=(kernel, kernel))


def leave_one_cpu_out(df) -> list[dict]:
    """Every published page_pool point of a described, measured CPU, predicted from the other CPUs.

    One record per point: measured, the derived profile's prediction and 90 % interval, the naive
    prediction; points whose kernel cannot be read or that ran a debug configuration are left out.
    """
    out = []
    z = uncertainty.z_value(uncertainty.LEVEL)
    for d in descriptions().values():
        if not d.profiles:
            continue
        rows = df[df["cpu"].str.contains(d.cpu.replace("Intel ", ""), regex=False) & (df["x_name"] == "")
                  & df["output"].isin(_PP_OUTPUTS)]
        for r in rows.itertuples(index=False):
            kernel = era.kernel_of(r.kernel) or era.kernel_of(r.source)
            if kernel is None or "debug" in str(r.kernel).lower() or not str(r.unit).startswith("cycles"):
                continue
            prof = derive(d.name, ghz=float(r.ghz), kernel=kernel, exclude=(d.name,))
            train = training(exclude=(d.name,))
            naive = _naive_profile(prof, train, float(r.ghz), kernel)
            pred = float(model.evaluate({}, prof)[r.output])
            sd = _output_sd(prof, r.output)
            npred = float(model.evaluate({}, naive)[r.output])
            meas = float(r.value)
            out.append(dict(id=r.id, uarch=d.name, cpu=r.cpu, kernel=kernel, output=r.output, measured=meas,
                            predicted=pred, lo=pred - z * sd, hi=pred + z * sd, naive=npred,
                            rel_error=(pred - meas) / meas, naive_rel_error=(npred - meas) / meas,
                            inside=bool(pred - z * sd <= meas <= pred + z * sd),
                            rel_half_width=float(z * sd / pred), trained_on=sorted({t["profile"] for t in train})))
    return out


def _output_sd(prof: Profile, output: str) -> float:
    """One sd of a page_pool output from its derived constant's stderr (each output reads one constant)."""
    base = float(model.evaluate({}, prof)[output])
    for k in DERIVED_PP:
        bumped = dataclasses.replace(prof, constants={**prof.constants, k: dataclasses.replace(
            prof.constants[k], value=prof.constants[k].value + 1.0)})
        if float(model.evaluate({}, bumped)[output]) != base:
            return prof.constants[k].stderr
    return 0.0


def summarise(points: list[dict]) -> list[dict]:
    """The "other CPU" row of the out-of-sample summary, with ``baseline_mape`` (the naive
    prediction's error on the same points), the 90 % intervals' coverage and median half-width."""
    if not points:
        return []
    e = np.abs([p["rel_error"] for p in points])
    b = np.abs([p["naive_rel_error"] for p in points])
    return [dict(subsystem="page_pool", protocol=PROTOCOL, points=len(points), mape=float(np.mean(e)),
                 max_error=float(np.max(e)), baseline_mape=float(np.mean(b)),
                 coverage=float(np.mean([p["inside"] for p in points])),
                 median_rel_half_width=float(np.median([p["rel_half_width"] for p in points])),
                 cpus=sorted({p["uarch"] for p in points}))]


def format_points(points: list[dict]) -> list[str]:
    lines = ["| row | CPU (description) | kernel | measured | derived | 90 % interval | error | naive | naive error |",
             "|---|---|---|---:|---:|---|---:|---:|---:|"]
    for p in points:
        lines.append(f"| {p['id']} | {p['uarch']} | {p['kernel']} | {p['measured']:.6g} | {p['predicted']:.4g} | "
                     f"{p['lo']:.4g} – {p['hi']:.4g} | {p['rel_error'] * 100:+.1f} % | {p['naive']:.4g} | "
                     f"{p['naive_rel_error'] * 100:+.1f} % |")
    return lines


# ---- the user's own CPU ----------------------------------------------------------------------

_MODEL_NAME = re.compile(r"^\s*model name\s*:\s*(\S.*?)\s*$", re.I | re.M)
_LSCPU_NAME = re.compile(r"^\s*Model name:\s*(\S.*?)\s*$", re.I | re.M)
_IMPLEMENTER = re.compile(r"^\s*CPU implementer\s*:\s*(0x[0-9a-f]+)\s*$", re.I | re.M)
_PART = re.compile(r"^\s*CPU part\s*:\s*(0x[0-9a-f]+)\s*$", re.I | re.M)


@dataclasses.dataclass(frozen=True)
class CpuMatch:
    """A user's CPU as read (``text``: a model name, ``CPU part 0x41:0xd0c`` or a typed name) and the
    description it matches (None: unknown)."""
    text: str
    description: Description | None

    @property
    def profile(self) -> str | None:
        """The shipped profile a fit starts from: the CPU's own measured profile where the corpus has
        one (its data, derived where it has none), else the profile derived from its description."""
        d = self.description
        if d is None:
            return None
        return d.profiles[0] if d.profiles else derived_id(d.name)

    def line(self, default: str) -> str:
        """One line saying which profile the fit starts from and why."""
        if self.description is None:
            return (f"unknown CPU {self.text[:80]!r}: no machine description matches it, so the fit starts from "
                    f"the default {default} (python -m skbmodel profile list-uarch lists the described CPUs)")
        d = self.description
        return f"CPU {self.text[:80]!r} is {d.uarch} (description {d.name}): the fit starts from {self.profile}"


def cpuinfo_text(text: str) -> str | None:
    """What identifies the CPU in pasted /proc/cpuinfo or lscpu output: the first ``model name``, or
    on arm64 (no model name) ``CPU implementer:CPU part`` (``"0x41:0xd0c"``); None when neither is there."""
    s = str(text or "")
    m = _MODEL_NAME.search(s) or _LSCPU_NAME.search(s)
    if m:
        return m.group(1)
    imp, part = _IMPLEMENTER.search(s), _PART.search(s)
    if imp and part:
        return f"{imp.group(1).lower()}:{part.group(1).lower()}"
    return None


def match_cpu(name: str) -> CpuMatch:
    """The description of a CPU named by the user: a description name, a shipped profile measured on or
    derived from a description, a cpuinfo model name, an lscpu name or an arm64 ``implementer:part``."""
    text = " ".join(str(name or "").split())
    key = text.lower()
    part = re.fullmatch(r"(?:cpu part\s*)?(0x[0-9a-f]+):(0x[0-9a-f]+)", key)
    for d in descriptions().values():
        if key in (d.name, derived_id(d.name)) or key in d.profiles:
            return CpuMatch(text, d)
        if part and f"{part.group(1)}:{part.group(2)}" in d.cpu_parts:
            return CpuMatch(f"CPU part {part.group(1)}:{part.group(2)}", d)
    for d in descriptions().values():
        if any(re.search(rx, text, re.I) for rx in d.match):
            return CpuMatch(text, d)
    return CpuMatch(f"CPU part {key}" if part else text, None)


def user_cpu(text: str) -> CpuMatch | None:
    """The CPU of pasted measurements (their cpuinfo/lscpu lines), or None when they name none."""
    found = cpuinfo_text(text)
    return match_cpu(found) if found else None


def start_profile(cpu: str | None, texts=(), default: str = "e5-1650v4") -> tuple[str, CpuMatch | None]:
    """The shipped profile a fit of the user's measurements starts from, and the CPU match behind it.

    ``cpu``: the CPU as the user names it (wins); otherwise the first cpuinfo/lscpu lines in ``texts``
    (the pasted or uploaded measurements).  No CPU named: ``default`` and None; an unknown CPU:
    ``default`` and its match (whose :meth:`CpuMatch.line` says so).
    """
    if cpu is not None and str(cpu).strip():
        m = match_cpu(cpu)
    else:
        m = next((found for found in map(user_cpu, texts) if found is not None), None)
    if m is None:
        return default, None
    return (m.profile if m.profile in available_profiles() else default), m
