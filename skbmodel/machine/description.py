"""Machine descriptions: what the physics needs of one CPU, each figure with its public source.

A description (``skbmodel/data/uarch/<name>.toml``, in the spirit of Kerncraft's machine files)
holds clocks (TSC, base, turbo) [GHz], cache sizes [bytes] and latencies [core cycles], the cost of a
locked add and of ``lock cmpxchg16b`` [core cycles], the rename width [uops per cycle], ``rep stos``
throughput [bytes per cycle], store-buffer size [entries] -- each figure with its public source and
``uncertain = true`` where the figure is not documented for that part.  ``profiles`` names the shipped
profiles measured on that CPU; :func:`measured_on` says which CPU a shipped profile was measured on.

This module reads the files (:func:`descriptions`, :func:`load`) so that nothing else parses them; the
profiles derived from them are :mod:`skbmodel.evidence.derivation.derive`, the user's CPU read from pasted text is
:mod:`skbmodel.machine.cpuinfo`.  Figures: Intel Optimization Reference Manual, AMD and Arm software
optimization guides, Agner Fog's instruction tables, uops.info (each file cites its own).
"""
from __future__ import annotations

from pathlib import Path

import csv
import dataclasses
import functools
import math
import re
import tomllib

from .. import folders

UARCH_DIR = folders.DATA_DIR / "uarch"
#: the rows of the published core-to-core table the descriptions cite (``scripts/core_to_core_levels.py``)
LEVELS_CSV = folders.DATA_DIR / "core-to-core-levels.csv"
LEVELS_COLUMNS = ("cpu", "uarch", "level", "sublevel", "line_home", "pairs", "median_ns", "p10_ns", "p90_ns",
                  "caveats", "source_repo", "source_path", "source_commit")
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
    #: or None: the derivation widens its interval by it
    #: (:func:`skbmodel.evidence.derivation.pp_counts.percpu_rmw_price`)
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
    #: where two of its CPUs meet and a line's move at each level (:class:`Topology`); None: not described
    topology: Topology | None = None

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


#: where two CPUs can meet, nearest first: SMT siblings, two cores of one L3, two L3s of one node (CCX/CCD, an
#: SCCL die), two L3s of one socket with the line's memory on a node neither is in (AMD: the coherence directory
#: of the line's home node answers), two sockets; past SMT: the placements a model input offers
#: (:data:`skbmodel.params.PLACEMENTS`, the same names)
LEVELS = ("smt", "same_l3", "other_l3", "other_l3_far", "other_socket")
PLACEMENTS = LEVELS[1:]
#: what each level is, in words (for the messages below)
LEVEL_LABELS = {"smt": "SMT siblings", "same_l3": "same L3", "other_l3": "another L3 on the socket",
                "other_l3_far": "another L3, the line's memory on another node", "other_socket": "another socket"}


def row_key(row) -> str:
    """The key a description cites a core-to-core row by: ``cpu|level|sublevel|line_home``."""
    return "|".join(str(row[k]) for k in ("cpu", "level", "sublevel", "line_home"))


@dataclasses.dataclass(frozen=True)
class LineFigure:
    """One level's cache-line transfer [ns]: the one-way CAS latency of the cited row, its spread (``low``,
    ``high``: the row's p10-p90 across core pairs, widened where the row is of another part), the row
    (:func:`row_key`) and its source."""
    level: str
    value: float
    low: float
    high: float
    row: str
    source: str
    uncertain: bool = False


@dataclasses.dataclass(frozen=True)
class Topology:
    """Where two CPUs of a machine can meet and what a cache line costs to move between them.

    ``cores_per_l3``, ``l3_per_socket``, ``sockets``, ``nodes_per_socket``: the description's CPU in the
    machine its figures are for (its ``source``); ``line_ns``: one :class:`LineFigure` per level it has.

    A line in the kernel path that one CPU last wrote and the other now reads or writes (a ptr_ring slot, a
    ``struct page``, an skb's cacheline) moves once: the reader's miss is answered from the writer's cache
    (for a write, a read-for-ownership that invalidates the writer's copy).  The benchmark's one-way CAS
    latency is exactly one such move of one line between two pinned cores, so one transfer at a level costs
    ``line_ns[level]``.  Where the line's memory is homed on a node neither CPU is in, the request first goes
    to that home's directory: the ``other_l3_far`` level (measured on multi-die AMD parts, about twice
    ``other_l3``).  Reference: nviennot/core-to-core-latency (``src/bench/cas.rs``), extracted per level in
    ``skbmodel/data/core-to-core-levels.csv``.
    """
    cores_per_l3: int
    l3_per_socket: int
    sockets: int
    nodes_per_socket: int
    source: str
    line_ns: dict[str, LineFigure]

    def missing(self, level: str, sockets: int = 0, numa_nodes: int = 0) -> str | None:
        """Why the machine has no level ``level`` (one phrase), or None.  ``sockets``, ``numa_nodes``: what a
        profile states of its machine (0 = not stated: the description's)."""
        # a profile that states its sockets but not its nodes (a BIOS setting, AMD's NPS) may have several
        nodes = numa_nodes or (0 if sockets else self.sockets * self.nodes_per_socket)
        sockets = sockets or self.sockets
        if level == "other_socket" and sockets < 2:
            return "one socket"
        if level == "other_l3" and self.l3_per_socket < 2:
            return f"one L3 per socket ({self.cores_per_l3} cores share it)"
        if level == "other_l3_far" and "other_l3_far" not in self.line_ns:
            return "no measured cost of a line homed away from both CPUs (one directory for the socket's L3s)"
        if level == "other_l3_far" and nodes == 1:
            return "one NUMA node: every line's memory is local to both CPUs"
        if level not in self.line_ns:
            return f"no {LEVEL_LABELS[level]} level"
        return None

    def cross_node(self, sockets: int = 0, numa_nodes: int = 0) -> str | None:
        """The nearest placement whose two CPUs are on different NUMA nodes (what a cross-node placement
        meant before levels: another socket, else another node of the socket), or None on a one-node machine."""
        for level in ("other_socket", "other_l3_far", "other_l3"):
            if self.missing(level, sockets, numa_nodes) is None and (
                    level != "other_l3" or self.nodes_per_socket > 1):
                return level
        return None

    def ns(self, level: str) -> float:
        """The transfer at ``level`` [ns]; a level the machine lacks takes the nearest one it has below it, so
        that a sweep over every placement evaluates (the question refuses such a state)."""
        for lv in reversed(LEVELS[: LEVELS.index(level) + 1]):
            if lv in self.line_ns:
                return self.line_ns[lv].value
        raise UarchError(f"topology has no level up to {level}")


def _topology(path: Path, doc: dict) -> Topology | None:
    t = doc.get("topology")
    if t is None:
        return None
    counts = {}
    for k in ("cores_per_l3", "l3_per_socket", "sockets", "nodes_per_socket"):
        v = t.get(k)
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 512:
            raise UarchError(f"{path.name}: topology.{k} must be a whole number from 1 to 512; got {v!r}")
        counts[k] = v
    if not str(t.get("source", "")).strip():
        raise UarchError(f"{path.name}: topology needs a source")
    lines = {}
    for level, rec in t.get("line_ns", {}).items():
        if level not in LEVELS:
            raise UarchError(f"{path.name}: topology.line_ns.{level}: not a level ({', '.join(LEVELS)})")
        fig = _figures(path, {level: rec}, "topology.line_ns.")[level]
        if fig.bracket is None or not str(rec.get("row", "")).strip():
            raise UarchError(f"{path.name}: topology.line_ns.{level} needs low, high and the row it cites")
        lines[level] = LineFigure(level, fig.value, *fig.bracket, str(rec["row"]), fig.source, fig.uncertain)
    if "same_l3" not in lines:
        raise UarchError(f"{path.name}: topology.line_ns needs same_l3")
    return Topology(**counts, source=str(t["source"]), line_ns=lines)


@functools.lru_cache(maxsize=1)
def levels_table() -> dict[str, dict]:
    """The cited core-to-core rows (:data:`LEVELS_CSV`) by :func:`row_key`."""
    with LEVELS_CSV.open(newline="") as f:
        return {row_key(r): r for r in csv.DictReader(f)}


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
                       features_source=str(doc.get("features_source", "")), skus=skus,
                       topology=_topology(path, doc))


def descriptions() -> dict[str, Description]:
    """Every shipped description by name (sorted); the files are read again only when one of them changed (a
    question asks which machine its profile runs on, once per scenario)."""
    files = sorted(UARCH_DIR.glob("*.toml"))
    key = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    if _READ.get("key") != key:
        _READ["key"], _READ["out"] = key, {d.name: d for d in map(_parse, files)}
    return dict(_READ["out"])


_READ: dict = {}


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


#: the description whose levels a profile measured on a CPU no source names takes, and why
LEVELS_ASSUMED = {"xeon-platinum-iavf": ("ice-lake-sp", "seed 003's two-socket Xeon Platinum lab (model not "
                                                        "stated; its clock is assumed an Ice Lake-SP's)")}


def for_profile(profile) -> tuple[Description | None, str]:
    """The description whose topology a profile's machine has, and why: the CPU it was measured on
    (:func:`measured_on`), derived from (``derived-<name>``), or, for a profile that inherits a shipped one
    (a custom profile, an archived version), its base's; ``(None, why)`` when none is known."""
    for pid in (str(profile.id), str(profile.inherits or "")):
        pid = pid.split("@", 1)[0]
        if not pid:
            continue
        if pid.startswith(DERIVED_PREFIX) and pid[len(DERIVED_PREFIX):] in descriptions():
            name = pid[len(DERIVED_PREFIX):]
            return load(name), f"profile {pid} is derived from description {name}"
        if pid in LEVELS_ASSUMED:
            name, why = LEVELS_ASSUMED[pid]
            return load(name), why
        if pid not in UNKNOWN_CPU:
            try:
                return measured_on(pid)
            except UarchError:
                pass
    return None, f"no description says which CPU profile {profile.id} is"


def cross_node_placement(profile) -> str | None:
    """The nearest placement on another NUMA node of ``profile``'s machine (:meth:`Topology.cross_node`; None
    on a one-node machine, or where no description names its CPU)."""
    d, _ = for_profile(profile)
    return d.topology.cross_node(profile.sockets, profile.numa_nodes) if d is not None and d.topology else None
