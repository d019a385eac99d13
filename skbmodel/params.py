"""The scenario parameters: one :class:`Param` per key, with its type, range, default and choice labels.

The input schema, with the Design page's stages and their options: the one place a parameter's default or
the text shown for a choice is written (it imports no model code): the codec
(:mod:`skbmodel.links.state`), the model's defaults for a partial scenario (:mod:`skbmodel.model`), the sidebar
and the charts read it from here.
"""
from __future__ import annotations

import dataclasses
import json
import math
from functools import lru_cache

import numpy as np

from .physics import page_alloc
from . import folders

MAX_VALUE_CHARS = 200


#: where the two CPUs of a cross-CPU path are, nearest first: the levels of a machine description's topology
#: past SMT siblings (:data:`skbmodel.machine.description.LEVELS`, which this must follow), and their texts
PLACEMENTS = ("same_l3", "other_l3", "other_l3_far", "other_socket")
PLACE_LABELS = {"same_l3": "same L3", "other_l3": "another L3 on the socket",
                "other_l3_far": "another L3, the line's memory on another node", "other_socket": "another socket"}


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
    labels: tuple[str, ...] = ()  # what the sidebar and the charts show for each of ``choices``
    #: the sidebar group a shared control is drawn in ("" for a control a page draws itself)
    group: str = ""
    #: how the control is drawn where a slider or radio would not do: "number" (a typed number: a range of
    #: many thousand steps, or a value a slider's steps would miss), "onoff" (a 0/1 switch)
    widget: str = ""
    #: added after the export file names were fixed: it enters a file's scenario hash only when it is set
    #: to something other than its default, so every file exported before keeps its name
    hash_when_set: bool = False

    def label_of(self, value) -> str:
        """The text shown for a choice (the value itself when the parameter has no labels)."""
        if self.labels and value in self.choices:
            return self.labels[self.choices.index(value)]
        return str(value)

    def codes(self, value) -> np.ndarray:
        """The model's integer codes of a choice (the index in ``choices``) for names or codes, scalar
        or array: the model compares small integers, never strings."""
        a = np.asarray(value)
        if a.dtype.kind in "iub":
            return a
        if a.ndim == 0:
            return np.asarray(self.choices.index(str(a)), dtype=np.int8)
        out = np.full(a.shape, -1, dtype=np.int8)
        for i, name in enumerate(self.choices):
            out[a == name] = i
        return out

    def allowed(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        kind = "an integer" if self.kind == "int" else "a number"
        return f"{kind} in [{fmt_value(self.lo)}, {fmt_value(self.hi)}]" + (f" {self.unit}" if self.unit else "")

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
            return y, f"{_show(str(x) if raw is None else raw)} outside {self.allowed()}, clamped to {fmt_value(y)}"
        return (int(x) if self.kind == "int" else float(x)), problem


def fmt_value(x) -> str:
    """Shortest text that parses back to exactly ``x`` (``repr``; ``%g`` kept only 6 digits)."""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return repr(float(x)) if isinstance(x, float) else str(x)


def _show(raw: str) -> str:
    raw = raw if len(raw) <= 40 else raw[:37] + "..."
    return repr(raw)


# ---------------------------------------------------------------- the Design page's stages
#: The modelled paths, each a named composition of :mod:`skbmodel.composer` (``STARTS``).
START_PATHS = ("veth", "cpumap", "xdp_pass", "kfree_skb_list")

#: The named stages of a rest (skbmodel/data/kernel-symbols.toml ids) that a composition can re-price
#: (``d_stage``, its time scaled by ``d_stage_pct``): every stage a modelled path's published perf profile names
#: in its rest (skbmodel/data/rest-stages.toml; a test keeps the two equal), as ``{option: stage id}`` (the
#: option differs from the id where an id is another stage's option: veth).
REST_STAGE_OPTIONS = {"driver_rx": "driver_rx", "xdp_run": "xdp_run", "skb_build": "skb_build", "gro": "gro",
                      "stack": "stack", "veth_xmit": "veth", "free": "free", "page_pool": "page_pool",
                      "page_alloc": "page_alloc", "slub_free": "slub_free", "locking": "locking", "other": "other"}

#: each modelled path's rest in named stages, as fractions of the rest: written by scripts/rest_fractions.py from
#: the published perf profiles (skbmodel.evidence.perfprofile.computed_rest_fractions) and read here, so that the
#: model (``d_stage``: what a stage is worth) and the charts take the same numbers without the model evaluating
#: itself to split its own rest
REST_FRACTIONS_FILE = folders.DATA_DIR / "rest-fractions.json"


@lru_cache(maxsize=1)
def _rest_fractions() -> dict[str, dict[str, float]]:
    return json.loads(REST_FRACTIONS_FILE.read_text(encoding="utf-8"))["fractions"]


def rest_stage_fractions(path: str) -> dict[str, float]:
    """``{stage id: fraction of the rest}`` of modelled path ``path``'s rest (skbmodel/data/rest-fractions.json),
    largest first; empty for a path no published profile names."""
    return dict(_rest_fractions().get(path, {}))


#: ``{key: (label, options)}`` of the stages' choice keys; ``from`` = as in the starting path.
STAGE_CHOICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "d_rx": ("RX buffer", ("from", "pp_direct", "pp_ring", "page_single", "page_bulk", "pp_mix", "none")),
    "d_skb": ("skb head", ("from", "slab_one", "slab_bulk", "napi_cache", "none")),
    "d_zero": ("zeroing", ("from", "memset", "gfp_zero", "none")),
    "d_hand": ("hand-off", ("from", "none", "cpumap_same", "cpumap_cross")),
    "d_free": ("skb free", ("from", "slab_one", "slab_bulk", "defer", "napi_cache", "kfree_skb_list", "none")),
    "d_free_where": ("skb free", ("from", "local", "remote")),
    "d_rest": ("rest of path", ("from", "veth", "cpumap", "xdp_pass", "kfree_skb_list", "custom")),
    "d_stage": ("rest stage", ("from", "none", *REST_STAGE_OPTIONS)),
}

#: Labels of every option, for the page and the CLI help.
OPTION_LABELS = {
    "from": "as in the starting path", "none": "none",
    "pp_direct": "page_pool direct recycle", "pp_ring": "page_pool ptr_ring recycle",
    "page_single": "page allocator, one page at a time", "page_bulk": "page allocator, refill in bulk of N",
    "pp_mix": "mix: ptr_ring for the recycle ratio, page allocator (bulk N) for the rest",
    "slab_one": "one at a time (kmem_cache_alloc / kmem_cache_free)",
    "slab_bulk": "bulk of N (kmem_cache_alloc_bulk / kmem_cache_free_bulk)",
    "napi_cache": "NAPI skb cache", "memset": "memset of K bytes (rep stos)",
    "gfp_zero": "__GFP_ZERO, whole object (memset_erms)",
    "cpumap_same": "cpumap, CPU on the same node", "cpumap_cross": "cpumap, CPU on another node",
    "defer": "freed on another CPU, deferred back to this one (skb_attempt_defer_free)",
    "kfree_skb_list": "kfree_skb_list of a qdisc drop batch",
    "local": "local to the slab (CPU slab)", "remote": "remote to the slab (__slab_free)",
    "veth": "veth XDP_PASS base", "cpumap": "cpumap destination stack", "xdp_pass": "XDP_PASS one-CPU base",
    "custom": "custom (ns)",
    "driver_rx": "re-price the rest's driver RX poll and refill", "xdp_run": "re-price the rest's XDP program run",
    "skb_build": "re-price the rest's frame and skb build", "gro": "re-price the rest's GRO",
    "stack": "re-price the rest's netif_receive_skb and the protocol",
    "veth_xmit": "re-price the rest's veth transmit and ptr_ring", "free": "re-price the rest's free side",
    "page_pool": "re-price the rest's page_pool", "page_alloc": "re-price the rest's page allocator",
    "slub_free": "re-price the rest's SLUB free", "locking": "re-price the rest's locking and RCU",
    "other": "re-price the rest's other kernel code",
}

#: ``(key, label, kind, default, lo, hi, unit, step)`` of every design key (the Params of
#: :mod:`skbmodel.links.state`).  Bulk sizes start at 0 so that a link's 0 is kept and reported by
#: :func:`skbmodel.composer.problems` (naming the stage) instead of being clamped silently.
KEYS = (
    ("d_from", "Design: start from path", "choice", "veth", None, None, "", None),
    ("d_rx", "RX buffer", "choice", "from", None, None, "", None),
    ("d_rx_bulk", "RX buffer: page allocator bulk N (pages)", "int", 64, 0, 256, "pages", 1),
    ("d_skb", "skb head", "choice", "from", None, None, "", None),
    ("d_skb_bulk", "skb head: bulk N (objects)", "int", 16, 0, 256, "objects", 1),
    ("d_zero", "Zeroing", "choice", "from", None, None, "", None),
    ("d_zero_bytes", "Zeroing: memset K (bytes)", "int", 184, 8, 1024, "bytes", 8),
    ("d_hand", "Hand-off", "choice", "from", None, None, "", None),
    ("d_free", "skb free", "choice", "from", None, None, "", None),
    ("d_free_bulk", "skb free: bulk N (objects)", "int", 16, 0, 256, "objects", 1),
    ("d_free_where", "skb free: slab", "choice", "from", None, None, "", None),
    ("d_rest", "Rest of path", "choice", "from", None, None, "", None),
    ("d_rest_ns", "Rest of path: custom (ns)", "float", 200.0, 0.0, 10000.0, "ns", 1.0),
    ("d_stage", "Rest of path: a named stage re-priced", "choice", "from", None, None, "", None),
    ("d_stage_pct", "Rest of path: the named stage's time (% of its named time)", "float", 100.0, 0.0, 300.0, "%",
     1.0),
)
#: design keys added after the exported file names were fixed (Param.hash_when_set)
_KEYS_ADDED_LATER = ("d_stage", "d_stage_pct")
KEY_NAMES = tuple(k[0] for k in KEYS)
DEFAULTS = {k[0]: k[3] for k in KEYS}
NUMERIC = tuple(k[0] for k in KEYS if k[2] != "choice")


def choices_of(key: str) -> tuple[str, ...]:
    return START_PATHS if key == "d_from" else STAGE_CHOICES[key][1]


#: The options in at most 16 characters, for controls a quarter of a 1280 px page wide (the Design
#: page); :data:`OPTION_LABELS` says each in full.
OPTION_SHORT = {"from": "as in the start", "none": "none", "pp_direct": "page_pool direct",
                "pp_ring": "page_pool ring", "page_single": "page alloc ×1", "page_bulk": "page alloc ×N",
                "pp_mix": "ring + alloc ×N", "slab_one": "kmem_cache ×1", "slab_bulk": "kmem_cache ×N",
                "napi_cache": "NAPI skb cache", "memset": "memset K bytes", "gfp_zero": "__GFP_ZERO",
                "cpumap_same": "cpumap same node", "cpumap_cross": "cpumap far node", "defer": "deferred free",
                "kfree_skb_list": "kfree_skb_list", "local": "local CPU slab", "remote": "remote slab",
                "veth": "veth base", "cpumap": "cpumap stack", "xdp_pass": "XDP_PASS base", "custom": "custom (ns)",
                "driver_rx": "driver RX", "xdp_run": "XDP program", "skb_build": "skb build", "gro": "GRO",
                "stack": "stack receive", "veth_xmit": "veth xmit, ring", "free": "free side",
                "page_pool": "page_pool", "page_alloc": "page allocator", "slub_free": "SLUB free",
                "locking": "locking, RCU", "other": "other kernel"}
#: The starting paths in at most 16 characters.
START_SHORT = {"veth": "veth XDP_PASS", "cpumap": "cpumap dest.", "xdp_pass": "XDP_PASS 1 CPU",
               "kfree_skb_list": "kfree_skb_list"}


#: The modelled paths: the named compositions of :mod:`skbmodel.composer`.
PATHS = START_PATHS
_PATH_LABELS = ("veth XDP_PASS (veth CPU)", "cpumap (destination CPU)", "XDP_PASS, one CPU",
                "kfree_skb_list drop path (pktgen CPU)")


def _design_label(option: str) -> str:
    """What the Design page shows for a stage option (a modelled path by its path label)."""
    return dict(zip(PATHS, _PATH_LABELS)).get(option) or OPTION_LABELS.get(option, option)


#: Parameters of one scenario (A; B uses the same with the ``b_`` prefix).
MODEL_PARAMS: tuple[Param, ...] = (
    Param("cpu", "CPU profile", "choice", folders.DEFAULT_PROFILE, choices=tuple(folders.shipped_profiles()),
          group="CPU"),
    Param("ghz", "Clock (GHz)", "float", None, 0.5, 6.0, unit="GHz", step=0.05, group="CPU"),
    Param("bulk", "kmem_cache bulk size (objects)", "int", 16, 1, 256, unit="objects", step=1,
          group="SLUB and zeroing"),
    Param("obj_bytes", "SLUB object size (bytes)", "int", 256, 8, 1 << 20, unit="bytes", step=8,
          group="SLUB and zeroing", widget="number", hash_when_set=True),
    Param("init_on_alloc", "init_on_alloc: SLUB clears every object it hands out (0/1)", "int", 0, 0, 1,
          step=1, group="SLUB and zeroing", widget="onoff", hash_when_set=True),
    Param("zero", "Zeroing method", "choice", "gfp_zero", choices=("memset", "gfp_zero"),
          labels=("memset (rep stos)", "__GFP_ZERO"), group="SLUB and zeroing"),
    Param("zero_bytes", "Bytes zeroed by memset (bytes)", "int", 184, 8, 1024, unit="bytes", step=8,
          group="SLUB and zeroing"),
    Param("xdp_batch", "VETH_XDP_BATCH (skbs)", "int", 16, 1, 64, unit="skbs", step=1, group="veth"),
    Param("kfl_bulk", "KFREE_SKB_BULK_SIZE (skbs, 1 = no bulk)", "int", 16, 1, 64, unit="skbs", step=1,
          group="kfree_skb_list"),
    Param("drop_batch", "fq_codel drop_batch (packets)", "int", 64, 1, 1024, unit="packets", step=1,
          group="kfree_skb_list"),
    Param("clone_frac", "Cloned skbs in drop list (fraction)", "float", 0.0, 0.0, 1.0, step=0.05,
          group="kfree_skb_list"),
    Param("pp_recycle", "page_pool recycle ratio (fraction)", "float", 1.0, 0.0, 1.0, step=0.05,
          group="page_pool and cpumap"),
    Param("page_bulk", "page_pool refill from the page allocator, bulk (pages)", "int",
          page_alloc.PP_ALLOC_CACHE_REFILL, 1, 256, unit="pages", step=1, group="page_pool and cpumap"),
    Param("place", "CPU placement (cpumap, remote and deferred frees)", "choice", "same_l3",
          choices=PLACEMENTS, labels=tuple(PLACE_LABELS[k] for k in PLACEMENTS), group="page_pool and cpumap"),
    Param("cpumap_prog", "cpumap destination", "choice", "pass", choices=("pass", "drop"),
          labels=("builds skbs (XDP_PASS to the stack)", "XDP_DROP program on the cpumap entry"),
          group="page_pool and cpumap", hash_when_set=True),
    Param("defer_cache", "Same-CPU defer free to NAPI cache (0/1)", "int", 1, 0, 1, step=1,
          group="page_pool and cpumap", widget="onoff"),
    Param("link_gbps", "Link speed (Gbit/s)", "float", 10.0, 1.0, 800.0, unit="Gbit/s", step=1.0,
          group="Link and noise", widget="number"),
    Param("frame_bytes", "Frame size (bytes, incl. FCS)", "int", 64, 64, 9216, unit="bytes", step=1,
          group="Link and noise"),
    Param("noise_ns", "Benchmark noise per run (ns/packet)", "float", 2.0, 0.1, 50.0, unit="ns", step=0.1,
          group="Link and noise"),
    Param("path", "Path shown in the overview", "choice", "veth", choices=PATHS + ("design",),
          labels=_PATH_LABELS + ("composed path (Design page)",)),
    # the composed path of the Design page (skbmodel.composer); old links without these keys get the defaults
    *(Param(k, label, kind, default, lo, hi, choices=choices_of(k) if kind == "choice" else (),
            labels=tuple(_design_label(o) for o in choices_of(k)) if kind == "choice" else (),
            unit=unit, step=step, hash_when_set=k in _KEYS_ADDED_LATER)
      for k, label, kind, default, lo, hi, unit, step in KEYS),
)
MODEL_KEYS = tuple(p.key for p in MODEL_PARAMS)
BY_KEY: dict[str, Param] = {p.key: p for p in MODEL_PARAMS}


#: How the charts are drawn (not the model): one value for the whole view, no ``b_`` twin; kept in the link.
DISPLAY_PARAMS: tuple[Param, ...] = (
    Param("yzero", "Start the y axes at zero (0/1)", "int", 0, 0, 1, step=1, group="Charts", widget="onoff"),
)
DISPLAY_KEYS = tuple(p.key for p in DISPLAY_PARAMS)


#: scenario keys whose default is the CPU profile's own (the model reads the profile where a link gives none)
_FOLLOWS_PROFILE = {"ghz": "the CPU profile's clock", "noise_ns": "the CPU profile's noise floor"}


def help_text(b_key: str) -> str:
    """Every scenario key but the composed path's (:func:`skbmodel.composer.help_text` lists those) with what it
    takes and its default, one line each under its sidebar group (for ``eval --help``); ``b_key``: how a link
    names B's ``<key>`` (:func:`skbmodel.links.state.key_of`)."""
    design_keys = {k for k, *_ in KEYS}
    lines = [f"scenario keys (query 'key=value&...'; {b_key}: scenario B on the Compare page):"]
    group = None
    for p in MODEL_PARAMS + DISPLAY_PARAMS:
        if p.key in design_keys:
            continue
        if (p.group or "Overview") != group:
            group = p.group or "Overview"
            lines.append(f" {group}:")
        if p.kind == "choice":
            allowed = "|".join(p.choices)
        else:
            allowed = f"{fmt_value(p.lo)}..{fmt_value(p.hi)}" + (f" {p.unit}" if p.unit else "")
        default = _FOLLOWS_PROFILE.get(p.key) or fmt_value(p.default)
        lines.append(f"  {p.key}={allowed} (default {default}): {p.label}")
    return "\n".join(lines)


# ---------------------------------------------------------------- the question grid's vocabulary
#: The parameters a grid can sweep and the values each sweeps.
AXES: dict[str, tuple] = {
    "xdp_batch": (1, 16, 64),
    "zero": ("memset", "gfp_zero"),
    "d_free": ("from", "slab_bulk", "napi_cache"),
    "bulk": (1, 8, 16, 32, 64, 128),
    "zero_bytes": (64, 128, 184, 256),
    "kfl_bulk": (1, 8, 16, 32, 64),
    "drop_batch": (16, 64, 256, 1024),
    "clone_frac": (0.0, 0.25, 0.5),
    "pp_recycle": (0.0, 0.5, 1.0),
    "place": PLACEMENTS,
    "page_bulk": (1, 16, 64),
    "d_skb": ("from", "slab_one", "slab_bulk", "napi_cache"),
    "d_free_bulk": (1, 8, 16, 32, 64),
    "d_hand": ("none", "cpumap_same", "cpumap_cross"),
}
# The path is not an axis: the model evaluates one path per call (a named composition computes only its
# own stages), so a grid is one evaluation on scenario A's path; compare paths on the Compare page.
#: The choices of a grid axis control: no parameter, or a key of :data:`AXES`.
AXIS_CHOICES = ("none",) + tuple(AXES)


# ---------------------------------------------------------------- keys a link may carry from older versions
#: the value of a retired key that stands for a machine's own level: the nearest placement whose two CPUs are
#: on different NUMA nodes (:meth:`skbmodel.machine.description.Topology.cross_node`)
CROSS_NODE = "cross_node"


@dataclasses.dataclass(frozen=True)
class Retired:
    """A key older links and callers use that a newer key replaced: ``values`` maps each old value to the new
    key's (:data:`CROSS_NODE`: the machine's own cross-node level); ``until``: the last model version that read
    the old key itself."""
    key: str
    new_key: str
    values: dict
    until: str


#: the model's constants of the placements: each one's one-way line latency [ns] (``line_<placement>_ns``) and
#: the code of the machine's nearest placement on another NUMA node (-1: one node)
LINE_NS_KEYS = tuple(f"line_{k}_ns" for k in PLACEMENTS)
CROSS_NODE_KEY = "_cross_node_place"


def line_ns_of(c) -> tuple:
    """The placements' line latencies [ns] of the model's constants ``c``, in code order."""
    return tuple(c[k] for k in LINE_NS_KEYS)


#: ``numa`` (model 0.1-0.6: ``same`` / ``cross`` NUMA node, the cross-node line ``numa_remote_factor`` times a
#: same-node one) became ``place``, a level of the machine's topology: ``same`` is the calibration runs'
#: placement (another core of the same L3), ``cross`` the nearest level that crosses a node on that machine.
RETIRED: dict[str, Retired] = {
    "numa": Retired("numa", "place", {"same": "same_l3", "cross": CROSS_NODE}, "0.6.0"),
}
#: grid axes (``g1``-``g3`` values) renamed with their key
RETIRED_AXES = {r.key: r.new_key for r in RETIRED.values()}


def placement_of(value, cross_node: str | None) -> str:
    """The ``place`` a retired ``numa`` value stands for on a machine whose cross-node level is ``cross_node``
    (None: a one-node machine, where ``cross`` is ``other_socket``, a level it lacks, which the question
    refuses as it refused ``cross``)."""
    new = RETIRED["numa"].values.get(str(value), str(value))
    return (cross_node or "other_socket") if new == CROSS_NODE else new


def scenario_defaults(cpu: str, ghz: float) -> dict:
    """Every model parameter at its default on CPU profile ``cpu`` at its clock ``ghz`` [GHz] (the profile's,
    read by the caller): scenario A of a link that sets nothing."""
    return {**{p.key: p.default for p in MODEL_PARAMS}, "cpu": cpu, "ghz": ghz}
