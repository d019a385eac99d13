"""Composition: every subsystem model evaluated for a (vectorised) scenario state.

The outputs and their units, and the cost components, are :mod:`skbmodel.schema`'s; the inputs are
:mod:`skbmodel.params`'.

:func:`evaluate` takes the model parameters of :mod:`skbmodel.links.state` -- scalars or numpy arrays
that broadcast together -- and one CPU profile, and returns every output as an array with its
unit.  :func:`path_breakdown` gives the named per-packet cost components of the chosen path;
their sum is the path's total (one composition rule, as in Kerncraft's ECM results).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from .physics import budget, cpumap, napi_cache, noise, page_alloc, page_pool, placement, slub, units, zeroing
from . import composer
from .machine import era
from .params import BY_KEY as PARAMS, CROSS_NODE_KEY, LINE_NS_KEYS, MODEL_PARAMS, line_ns_of, placement_of
from .params import scenario_defaults
from .machine import description
from .machine.description import cross_node_placement
from .params import PLACEMENTS
from .machine.profile import DEFAULT_PROFILE, Constant, Profile, load_profile
from .schema import COMPONENTS, OUTPUT_UNITS



def _arr(x):
    return np.asarray(x)


def level_constants(profile: Profile) -> tuple[dict, dict]:
    """The placement constants of a profile's machine, ``({line_<placement>_ns: t [ns], _cross_node_place: code},
    {key of a level it lacks: key of the level that stands for it})`` (:data:`skbmodel.params.LINE_NS_KEYS`): the
    line latencies of its description's topology (:class:`skbmodel.machine.description.Topology`).

    A level the machine lacks takes the nearest one below it that it has, and follows that one wherever its
    value moves (an interval's draw, :func:`constants_of`), so that a sweep over every placement evaluates; the
    question refuses it (:func:`placement_problem`).  A profile whose CPU no description names has every level
    at ``xcpu_line`` (no move costs more than the fitted one)."""
    d, _ = description.for_profile(profile)
    if d is None or d.topology is None:
        ns = profile.value("xcpu_line_cycles") / profile.ghz
        return {**{k: ns for k in LINE_NS_KEYS}, CROSS_NODE_KEY: -1.0}, {}
    t = d.topology
    have = [p for p in PLACEMENTS if t.missing(p, profile.sockets, profile.numa_nodes) is None]
    aliases = {}
    for k, p in zip(LINE_NS_KEYS, PLACEMENTS):
        if p not in have:
            below = [q for q in PLACEMENTS[:PLACEMENTS.index(p)] if q in have] or have[:1]
            aliases[k] = LINE_NS_KEYS[PLACEMENTS.index(below[-1])]
    values = {k: t.ns(p) for k, p in zip(LINE_NS_KEYS, PLACEMENTS)}
    values.update({k: values[src] for k, src in aliases.items()})
    cross = t.cross_node(profile.sockets, profile.numa_nodes)
    return {**values, CROSS_NODE_KEY: float(PLACEMENTS.index(cross)) if cross else -1.0}, aliases


def line_cycles(place, c, ghz):
    """One line's move between the two CPUs at the placement codes ``place`` [cycles]
    (:func:`skbmodel.physics.placement.line_cycles` on the constants ``c``)."""
    return placement.line_cycles(place, line_ns_of(c), c["xcpu_line_cycles"], ghz)


def line_factor(place, c, ghz):
    """:func:`skbmodel.physics.placement.line_factor` on the constants ``c``: 1 on the same L3."""
    return placement.line_factor(place, line_ns_of(c), c["xcpu_line_cycles"], ghz)


def available_placements(profile: Profile) -> tuple[str, ...]:
    """The placements ``profile``'s machine has, nearest first (every placement where no description says)."""
    d, _ = description.for_profile(profile)
    if d is None or d.topology is None:
        return PLACEMENTS
    return tuple(p for p in PLACEMENTS if d.topology.missing(p, profile.sockets, profile.numa_nodes) is None)


#: what a machine lacking a placement has not, in words
_NO_LEVEL = {"same_l3": "no second core on an L3", "other_l3": "no other L3 on the socket",
             "other_l3_far": "no node away from both CPUs to home the line on", "other_socket": "no other socket"}


def placement_problem(profile: Profile, place, d_hand: str | None = None) -> str | None:
    """Why a placement cannot be evaluated on ``profile``'s machine (one line), or None: a level it lacks
    (another socket on a one-socket machine, another L3 where one L3 serves the socket, a line homed on another
    node on a one-node machine), or a cross-node hand-off (``d_hand=cpumap_cross``) on a one-node machine."""
    d, _ = description.for_profile(profile)
    topo = d.topology if d is not None else None
    if topo is None:
        return None
    where = f"profile {profile.id} runs on {d.cpu} ({profile.topology_source or topo.source})"
    lacks = topo.missing(str(place), profile.sockets, profile.numa_nodes)
    if lacks:
        have = " or place=".join(available_placements(profile))
        return (f"place={place}: {where}, which has {lacks}: {_NO_LEVEL[str(place)]} to put the other CPU on; "
                f"take place={have}")
    if d_hand == "cpumap_cross" and topo.cross_node(profile.sockets, profile.numa_nodes) is None:
        return (f"d_hand=cpumap_cross: {where}, a machine with one NUMA node: there is no other node to "
                "redirect to; take d_hand=cpumap_same")
    return None


#: the z of a 90 % two-sided interval: a level's published p10-p90 spread as one standard deviation
_Z90 = 1.6448536269514722
_WITH_LEVELS: dict[int, tuple[Profile, Profile]] = {}


def with_levels(profile: Profile) -> Profile:
    """``profile`` with its machine's placement line latencies as uncertain constants (``line_<placement>_ns``,
    [ns]), for the intervals and the drivers: each the median of its description's cited row, its sd the
    row's spread (``low``-``high``, p10-p90 across core pairs, wider where the row is of another part) as a
    90 % range on log scale; ``kind`` "published", or "assumed" where the row is of another part or the CPU
    itself is assumed (:data:`skbmodel.machine.description.LEVELS_ASSUMED`).  A level the machine lacks adds
    nothing uncertain.  Not a profile of its own: its version is never asked (the evaluation is the same)."""
    hit = _WITH_LEVELS.get(id(profile))
    if hit is not None and hit[0] is profile:  # the entry holds its profile: its id is not reused meanwhile
        return hit[1]
    d, why = description.for_profile(profile)
    if d is None or d.topology is None or any(k in profile.constants for k in LINE_NS_KEYS):
        return _remember_levels(profile, profile)  # nothing to add, remembered too: no description read again
    assumed_cpu = str(profile.id).split("@", 1)[0] in description.LEVELS_ASSUMED
    add = {}
    for k, place in zip(LINE_NS_KEYS, PLACEMENTS):
        fig = d.topology.line_ns.get(place)
        if fig is None or d.topology.missing(place, profile.sockets, profile.numa_nodes):
            continue
        sd = math.log(fig.high / fig.low) / (2 * _Z90) * fig.value if fig.high > fig.low else 0.0
        add[k] = Constant(k, fig.value, "ns", "assumed" if fig.uncertain or assumed_cpu else "published",
                          f"{fig.source} (description {d.name}: {why})", stderr=sd, scale="log")
    return _remember_levels(profile, dataclasses.replace(profile, constants={**profile.constants, **add}))


def _remember_levels(profile: Profile, out: Profile) -> Profile:
    if len(_WITH_LEVELS) > 256:
        _WITH_LEVELS.clear()
    _WITH_LEVELS[id(profile)] = (profile, out)
    return out


_LEVELS: dict[tuple, dict] = {}


def constants_of(prof: Profile, constants: Mapping | None = None) -> dict:
    """The constants the model reads for ``prof``: its values, the kernel era's code path, the line's move at
    each placement of its machine (:func:`level_constants`), then ``constants``."""
    key = (prof.id, prof.inherits, prof.sockets, prof.numa_nodes, prof.value("xcpu_line_cycles"), prof.ghz)
    if key not in _LEVELS:
        _LEVELS[key] = level_constants(prof)
    levels, aliases = _LEVELS[key]
    c = {**prof.values(), **levels}
    # the profile's kernel era decides a code path, not a cost (never fitted, never overridden)
    c[_PP_DIRECT] = era.direct_recycle_any_context(prof.kernels)
    if constants:
        c.update(constants)
        c.update({k: c[src] for k, src in aliases.items()})  # a level it lacks moves with the one it takes
    return c


def profile_of(params: Mapping, profile: Profile | None = None) -> Profile:
    """``profile``, else the shipped profile the scenario names (``cpu``).

    A custom profile travels as link text (``prof``, :mod:`skbmodel.machine.custom`) and is decoded where a
    scenario is resolved (:meth:`skbmodel.scenario.Scenario.from_params`), so the model needs the profile
    itself: raises ``ValueError`` for a ``prof`` without ``profile``, rather than price its base.
    """
    if profile is not None:
        return profile
    text = params.get("prof", None)
    if text is not None and str(np.asarray(text).flat[0]):
        raise ValueError("a custom profile (prof) is decoded by skbmodel.scenario.Scenario.from_params, not here")
    cpu = params.get("cpu", None)
    return load_profile(str(np.asarray(cpu).flat[0]) if cpu is not None else DEFAULT_PROFILE)


#: Defaults of a partial scenario, from the parameter schema; the clock and the noise floor default to
#: the profile's (below), the CPU to the default profile (:func:`profile_of`).
_DEFAULTS = {p.key: p.default for p in MODEL_PARAMS if p.key not in ("cpu", "ghz", "noise_ns")}


def default_params(cpu: str | None = None) -> dict:
    """Every model parameter at its default on shipped profile ``cpu`` (default :data:`DEFAULT_PROFILE`), the
    clock at that profile's: scenario A of a link that sets nothing (:func:`skbmodel.params.scenario_defaults`)."""
    cpu = cpu or DEFAULT_PROFILE
    return scenario_defaults(cpu, load_profile(cpu).ghz)


def _placement_given(params: Mapping, prof: Profile):
    """``place`` of a scenario, or the placement a retired ``numa`` stands for on ``prof``'s machine
    (:data:`skbmodel.params.RETIRED`), or None."""
    if "place" in params or "numa" not in params:
        return params.get("place")
    cross = cross_node_placement(prof)
    numa = np.asarray(params["numa"])
    if numa.ndim == 0:
        return placement_of(str(numa), cross)
    return np.vectorize(lambda v: placement_of(v, cross), otypes=[object])(numa).astype(str)


def raw_inputs(params: Mapping, prof: Profile) -> dict:
    """The model inputs of a scenario as arrays, unconverted (defaults filled in; the clock and the
    noise floor from ``prof`` where the scenario gives none; a retired key read as its successor)."""
    place = _placement_given(params, prof)
    if place is not None:
        params = {**params, "place": place}
    raw = {k: _arr(params.get(k, d)) for k, d in _DEFAULTS.items()}
    ghz = params.get("ghz")
    raw["ghz"] = _arr(prof.ghz if ghz is None else ghz)
    noise_ns = params.get("noise_ns")
    raw["noise_ns"] = _arr(prof.value("noise_floor_ns") if noise_ns is None else noise_ns)
    return raw


#: The 0/1 switches (``widget="onoff"`` in the schema): the model takes them as booleans.
_SWITCH_KEYS = tuple(p.key for p in MODEL_PARAMS if p.widget == "onoff")
#: The numeric inputs the model takes as floats (every int and float parameter but the switches).
_FLOAT_KEYS = tuple(p.key for p in MODEL_PARAMS if p.kind in ("int", "float") and p.key not in _SWITCH_KEYS)
#: Choices the model takes as integer codes (:meth:`skbmodel.params.Param.codes`).
_CODE_KEYS = ("path", *composer.STAGE_CHOICES, "d_from")
PATH_CODES = {name: i for i, name in enumerate(PARAMS["path"].choices)}
_DESIGN = PATH_CODES["design"]


def inputs(params: Mapping, prof: Profile | None = None):
    """Typed model inputs: floats, booleans for the two-way choices, integer codes for the others."""
    raw = params if prof is None else raw_inputs(params, prof)
    x = {k: np.asarray(raw[k], dtype=float) for k in _FLOAT_KEYS}  # no copy when already float
    x["is_gfp"] = PARAMS["zero"].codes(raw["zero"]) == 1
    x["place"] = PARAMS["place"].codes(raw["place"])
    x["is_drop_dst"] = PARAMS["cpumap_prog"].codes(raw["cpumap_prog"]) == 1
    for k in _SWITCH_KEYS:
        v = raw[k]
        x[k] = v if v.dtype == bool else np.asarray(v, dtype=float) > 0.5
    for k in _CODE_KEYS:
        x[k] = PARAMS[k].codes(raw[k])
    return x


def _slub_kw(c):
    return dict(fast_pair_cycles=c["slub_fast_pair_cycles"], free_slow_extra_cycles=c["slub_free_slow_extra_cycles"],
                refill_cycles=c["slub_refill_cycles"], slab_bytes=c["slub_slab_bytes"],
                object_bytes=c["slub_object_bytes"], l1d_bytes=c["l1d_bytes"], l1_miss_cycles=c["l1_miss_cycles"],
                fill_fraction=c["slab_fill_fraction"], l1_usable_fraction=c["l1_usable_fraction"],
                l2_bytes=c["l2_bytes"], l2_miss_cycles=c["l2_miss_cycles"])


#: key of ``c`` (the constants) that carries whether the profile's kernels recycle page_pool pages
#: directly outside softirq (:func:`skbmodel.machine.era.direct_recycle_any_context`)
_PP_DIRECT = "_pp_direct_any_context"

CHUNK_STATES = 32_768  # evaluate large grids in cache-sized blocks


def evaluate(params: Mapping, profile: Profile | None = None, constants: Mapping | None = None,
             out: dict | None = None, outputs=None) -> dict:
    """Evaluate the outputs (every output by default) for ``params`` (scalars or broadcastable arrays).

    Parameters
    ----------
    params : mapping of state keys (see :mod:`skbmodel.links.state`) to scalars or arrays.
        Categorical keys (``zero``, ``place``, ``path``) take string arrays.
    profile : CPU profile; default: the one named by ``params["cpu"]``.
    constants : optional ``{name: value}`` overriding profile constants (used by the fit).  A value
        may be an array: it broadcasts against the parameter grid like a parameter, so a leading
        axis of shape ``(K,) + (1,) * grid.ndim`` evaluates ``K`` constant sets on the whole grid
        in one call (:mod:`skbmodel.uncertainty`); such calls are not split into blocks and take
        no ``out``.
    out : optional ``{output name: float ndarray}`` of the broadcast shape to write into (reuse
        buffers across sweeps instead of allocating fresh memory).
    outputs : optional names of the outputs wanted (a chart's): only the model sections they belong
        to, and only the paths those use, are computed.  Default: every output.

    Returns
    -------
    dict ``{output name: ndarray}`` of the broadcast shape of the inputs; units in
    :data:`OUTPUT_UNITS`.  Grids larger than :data:`CHUNK_STATES` are evaluated block by block
    (each block vectorised) so that the temporaries stay in cache.
    """
    prof = profile_of(params, profile)
    c = constants_of(prof, constants)
    raw = raw_inputs(params, prof)
    shape = np.broadcast_shapes(*[np.shape(v) for v in raw.values()])
    size = int(np.prod(shape))
    if constants and any(np.ndim(v) for v in constants.values()):
        if out is not None:
            raise ValueError("evaluate: array-valued constants take no out buffers")
        res = _evaluate_inputs(inputs(raw), c, outputs)
        shape = np.broadcast_shapes(shape, *(np.shape(v) for v in constants.values()))
        return {k: np.broadcast_to(v, shape) for k, v in res.items()}
    if size <= CHUNK_STATES and out is None:
        return {k: np.broadcast_to(v, shape) for k, v in _evaluate_inputs(inputs(raw), c, outputs).items()}
    flat = {k: (np.broadcast_to(v, shape).reshape(-1) if v.ndim else v) for k, v in raw.items()}
    if out is None:
        out = {k: np.empty(shape) for k in OUTPUT_UNITS if outputs is None or k in outputs}
    flat_out = {k: v.reshape(-1) for k, v in out.items()}
    for lo in range(0, size, CHUNK_STATES):
        chunk = {k: (v[lo:lo + CHUNK_STATES] if v.ndim else v) for k, v in flat.items()}
        for k, v in _evaluate_inputs(inputs(chunk), c, outputs).items():
            flat_out[k][lo:lo + CHUNK_STATES] = v
    return out


class _CpumapCpus(NamedTuple):
    """The cpumap path's two CPUs [cycles per packet]: each CPU's total, the limiting CPU's, the share of
    flushes that find the kthread asleep [1], and the placement's terms in each CPU's total."""
    src: np.ndarray
    dst: np.ndarray
    limit: np.ndarray
    p_sleep: np.ndarray
    src_terms: np.ndarray
    dst_terms: np.ndarray


class _Paths:
    """The compositions of one evaluation, each composed on first use (:data:`skbmodel.composer.STARTS`
    for a modelled path, the ``d_*`` inputs for ``design``); they share one memo of option-free costs."""

    def __init__(self, x, c):
        self.x, self.c, self.memo, self.done, self.alone = x, c, {}, {}, {}
        self._cpumap = self._cpumap_parts0 = None

    def __getitem__(self, name: str) -> composer.Composed:
        if name not in self.done:
            self.done[name] = composer.per_packet(self.x, self.c, None if name == "design" else name, self.memo)
        return self.done[name]

    def path_ns(self, name: str) -> np.ndarray:
        """A modelled path's per-packet time [ns]: its composition's, and for ``cpumap`` the busier CPU's."""
        return units.cycles_to_ns(self.cpumap().limit, self.x["ghz"]) if name == "cpumap" else self.ns(name)

    def path_parts(self, name: str) -> dict:
        """A modelled path's components [cycles] (:data:`COMPONENTS`), summing to :meth:`path_ns` x the clock."""
        return self.cpumap_parts()["limit"] if name == "cpumap" else self[name].parts

    def ns(self, name: str) -> np.ndarray:
        """``self[name].ns``; a composition not kept yet gives its time only (its components are then
        not kept: they are no output of the path section)."""
        if name in self.done:
            return self.done[name].ns
        if name not in self.alone:
            self.alone[name] = composer.per_packet(self.x, self.c, None if name == "design" else name, self.memo).ns
        return self.alone[name]

    def _cpumap_own(self) -> tuple[dict, dict | None]:
        """The cpumap CPUs' own parts before placement [cycles]: the source's (:func:`cpumap.src_cycles`) and,
        where a state runs an XDP_DROP program, the destination's (:func:`cpumap.drop_dst_cycles`), else None
        (the destination is the ``cpumap`` composition)."""
        if self._cpumap_parts0 is None:
            x, c = self.x, self.c
            r = np.clip(x["pp_recycle"], 0.0, 1.0)
            drop = None
            if np.any(x["is_drop_dst"]):
                drop = cpumap.drop_dst_cycles(r, line_factor(x["place"], c, x["ghz"]), c)
            self._cpumap_parts0 = cpumap.src_cycles(r, c, x["page_bulk"]), drop
        return self._cpumap_parts0

    def cpumap(self) -> _CpumapCpus:
        """Both CPUs of the cpumap path [cycles per packet], placed (:func:`cpumap.placed`); the path's cost is
        the busier CPU's.  Totals only: :meth:`cpumap_parts` gives each CPU's components."""
        if self._cpumap is None:
            x = self.x
            src_parts, drop = self._cpumap_own()
            src0, dst0 = _total(src_parts), self.ns("cpumap") * x["ghz"]
            if drop is not None:
                dst0 = np.where(x["is_drop_dst"], _total(drop), dst0)
            line = line_cycles(x["place"], self.c, x["ghz"])
            terms = cpumap.placed(src0, dst0, line, np.clip(x["pp_recycle"], 0.0, 1.0), self.c, x["ghz"],
                                  self.offered_mpps())
            s, d = src0 + terms["src"], dst0 + terms["dst"]
            self._cpumap = _CpumapCpus(s, d, np.maximum(s, d), terms["p"], terms["src"], terms["dst"])
        return self._cpumap

    def line_mpps(self) -> np.ndarray:
        """What the link carries at the frame size [Mpps] (:func:`skbmodel.physics.budget.line_rate_mpps`): no
        rate of a path fed from the wire exceeds it."""
        if "_line" not in self.memo:
            self.memo["_line"] = budget.line_rate_mpps(self.x["link_gbps"], self.x["frame_bytes"])
        return self.memo["_line"]

    def offered_mpps(self) -> np.ndarray:
        """The load offered to the RX CPU [Mpps]: the generator's (``offered_mpps``), at most the line rate."""
        return np.minimum(self.c["offered_mpps"], self.line_mpps())

    def cpumap_parts(self) -> dict[str, dict]:
        """Each cpumap CPU's components [cycles] (:data:`COMPONENTS`): ``{"source", "destination", "limit"}``
        (the busier CPU's), each summing to that CPU's total of :meth:`cpumap`."""
        cpus = self.cpumap()
        src, drop = self._cpumap_own()
        dst = dict(self["cpumap"].parts)
        if drop is not None:
            dst = {k: np.where(self.x["is_drop_dst"], drop.get(k, 0.0), v) for k, v in dst.items()}
        add = "cross-CPU transfer"
        src = {k: src.get(k, 0.0) + (cpus.src_terms if k == add else 0.0) for k in COMPONENTS}
        dst = {k: dst.get(k, 0.0) + (cpus.dst_terms if k == add else 0.0) for k in COMPONENTS}
        on_src = cpus.src > cpus.dst
        limit = {k: np.where(on_src, src[k], dst[k]) for k in COMPONENTS}
        return {"source": src, "destination": dst, "limit": limit}

    def chosen(self) -> list[str]:
        """The paths the states choose (``path``), in :data:`PATH_CODES` order."""
        path = self.x["path"]
        if np.ndim(path) == 0:
            return [PARAMS["path"].choices[int(path)]]
        return [p for p, code in PATH_CODES.items() if p == PATH_NAMES[0] or np.any(path == code)]


def _evaluate_inputs(x, c, outputs=None) -> dict:
    """The ``outputs`` (default: every output) of the typed inputs ``x``: only the sections they
    belong to are computed, and only the compositions those sections use."""
    want = OUTPUT_UNITS if outputs is None else set(outputs)
    need = lambda *prefixes: any(o.split(".", 1)[0] in prefixes for o in want)  # noqa: E731
    ghz = x["ghz"]
    out: dict[str, np.ndarray] = {}
    sc = _Paths(x, c)
    # the composed path first, while few outputs are alive, and only its time kept: its stages' grids
    # then stay below the peak of the outputs (a block's fresh pages cost more than its arithmetic)
    if need("path") and "design" in sc.chosen():
        sc.ns("design")

    if need("slub"):  # SLUB microbenchmark (slab_bulk_test01) on a cache of obj_bytes objects
        obj = x["obj_bytes"]
        slab, per_slab = slub.scenario_geometry(obj, c["slub_object_bytes"], c["slub_slab_bytes"])
        refill = slub.slab_refill_cycles(slab, refill_cycles=c["slub_refill_cycles"],
                                         profile_slab_bytes=c["slub_slab_bytes"],
                                         page_single_cycles=c["page_single_cycles"])
        kw = {**_slub_kw(c), "slab_bytes": slab, "object_bytes": obj, "refill_cycles": refill}
        loop = slub.loop_pair_cycles(x["bulk"], loop_call_cycles=c["slub_loop_call_cycles"], **kw)
        bulk = slub.bulk_pair_cycles(x["bulk"], bulk_obj_pair_cycles=c["slub_bulk_obj_pair_cycles"],
                                     slab_locality=c["slab_locality"], **kw)
        # init_on_alloc=1: every object handed out is cleared (memset of obj_bytes), one at a time or in bulk
        clear = slub.init_on_alloc_cycles(x["init_on_alloc"], zeroing.erms_cycles(
            obj, erms_setup_cycles=c["erms_setup_cycles"], erms_line_cycles=c["erms_line_cycles"],
            cacheline_bytes=c["cacheline_bytes"]))
        loop, bulk = loop + clear, bulk + clear
        # above the largest kmalloc cache: an order-N page block from the page allocator and back, bulk or not
        large = slub.is_page_allocator(obj)
        if np.any(large):
            pages = slub.large_kmalloc_pair_cycles(
                obj, page_single_cycles=c["page_single_cycles"],
                compound_page_cycles=slub.COMPOUND_PAGE_SHARE * c["page_single_cycles"])
            loop, bulk = np.where(large, pages, loop), np.where(large, pages, bulk)
        out["slub.loop_cycles"] = loop
        out["slub.bulk_cycles"] = bulk
        out["slub.loop_ns"] = units.cycles_to_ns(loop, ghz)
        out["slub.bulk_ns"] = units.cycles_to_ns(bulk, ghz)
        out["slub.bulk_gain_cycles"] = loop - bulk
        out["slub.objects_per_slab"] = per_slab

    if need("zero", "veth"):  # zeroing (time_bench_memset)
        zkw = {k: c[k] for k in ("stos_setup_cycles", "stos_line_cycles", "stos_drain_line_cycles",
                                 "store_buffer_bytes", "cacheline_bytes")}
        ekw = {k: c[k] for k in ("erms_setup_cycles", "erms_line_cycles", "cacheline_bytes")}
        memset_c = zeroing.rep_stos_cycles(x["zero_bytes"], **zkw)
        gfp_c = zeroing.erms_cycles(c["slub_object_bytes"], **ekw)
        out["zero.memset_cycles"] = memset_c
        out["zero.erms_cycles"] = zeroing.erms_cycles(x["zero_bytes"], **ekw)
        out["zero.gfp_zero_cycles"] = gfp_c
        out["zero.memset_ns"] = units.cycles_to_ns(memset_c, ghz)
        out["zero.gfp_zero_ns"] = units.cycles_to_ns(gfp_c, ghz)
        out["zero.delta_ns"] = out["zero.memset_ns"] - out["zero.gfp_zero_ns"]

    r = np.clip(x["pp_recycle"], 0.0, 1.0)
    if need("page_pool"):  # page_pool (bench_page_pool_simple)
        out["page_pool.fast_cycles"] = c["pp_fast_cycles"]
        out["page_pool.ring_cycles"] = c["pp_ring_cycles"]
        out["page_pool.slow_cycles"] = c["page_slow_cycles"]
        out["page_pool.mix_cycles"] = page_pool.recycle_mix_cycles(r, pp_ring_cycles=c["pp_ring_cycles"],
                                                                   page_slow_cycles=c["page_slow_cycles"])
        out["page_pool.slow_refill_cycles"] = (c["page_slow_cycles"]
                                               + page_alloc.refill_extra_cycles(x["page_bulk"], c))
        ppk = {k: c[k] for k in ("pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles")}
        for test in (1, 2, 3):  # the process-context tests of the upstream selftest benchmark
            out[f"page_pool.nosoftirq0{test}_cycles"] = page_pool.nosoftirq_cycles(test, c[_PP_DIRECT], **ppk)

    if need("page_alloc"):  # the page allocator, order-0 pages one at a time vs in bulk (page_bench04_bulk)
        page_bulk = page_alloc.bulk_cycles(x["page_bulk"], **{k: c[k] for k in page_alloc.CONSTANTS})
        out["page_alloc.bulk_cycles"] = page_bulk
        out["page_alloc.single_cycles"] = c["page_single_cycles"]
        out["page_alloc.refill_saving_cycles"] = c["page_single_cycles"] - page_bulk

    if need("kfree_skb_list"):  # kfree_skb_list on the qdisc drop path
        kfl = sc["kfree_skb_list"]
        t_kfl = kfl.ns
        one = {**x, "kfl_bulk": 1.0, "drop_batch": 1.0, "clone_frac": 0.0}  # one at a time: batch does not matter
        t_kfl1 = composer.per_packet(one, c, "kfree_skb_list").ns
        out["kfree_skb_list.mpps"] = units.ns_to_mpps(t_kfl)
        out["kfree_skb_list.ns_per_packet"] = t_kfl
        out["kfree_skb_list.drop_fraction"] = kfl.drop_fraction
        out["kfree_skb_list.free_cycles_per_drop"] = kfl.free_per_drop
        out["kfree_skb_list.saving_ns"] = t_kfl1 - t_kfl

    if need("veth"):  # veth XDP_PASS with bulk-allocated skbs; the other zeroing method differs only in "zeroing"
        v_ns = sc["veth"].ns
        out["veth.mpps"] = np.minimum(units.ns_to_mpps(v_ns), sc.line_mpps())
        out["veth.ns_per_packet"] = v_ns
        out["veth.zero_delta_ns"] = units.cycles_to_ns(memset_c - gfp_c, ghz)
        out["veth.zero_delta_runs"] = noise.runs_needed(out["veth.zero_delta_ns"], x["noise_ns"])

    if need("cpumap"):  # cpumap redirect: both CPUs respond to the placement and the destination's program
        cpus = sc.cpumap()
        src_ns, dst_ns = units.cycles_to_ns(cpus.src, ghz), units.cycles_to_ns(cpus.dst, ghz)
        offered = sc.offered_mpps()
        s_mpps, d_mpps, drop = cpumap.rates_mpps(src_ns, dst_ns, offered)
        out["cpumap.src_mpps"], out["cpumap.dst_mpps"], out["cpumap.drop_mpps"] = s_mpps, d_mpps, drop
        out["cpumap.src_ns"], out["cpumap.dst_ns"] = src_ns, dst_ns
        out["cpumap.ns_per_packet"] = units.cycles_to_ns(cpus.limit, ghz)
        out["cpumap.sleep_fraction"] = cpus.p_sleep
        out["cpumap.bottleneck"] = cpumap.bottleneck(src_ns, dst_ns, offered)
    if need("xdp_pass"):  # plain XDP_PASS
        xp_ns = sc["xdp_pass"].ns
        out["xdp_pass.mpps"] = np.minimum(sc.offered_mpps(), units.ns_to_mpps(xp_ns))
        out["xdp_pass.ns_per_packet"] = xp_ns

    if need("napi_defer"):  # same-CPU defer free into the NAPI cache
        nc = napi_cache.per_request_cycles(x["defer_cache"], c)
        out["napi_defer.krps"] = units.ns_to_krps(units.cycles_to_ns(_total(nc), ghz))

    if need("budget", "path"):  # budget and the chosen path
        line_mpps = sc.line_mpps()
        out["budget.line_rate_mpps"] = line_mpps
        out["budget.ns_per_packet"] = units.mpps_to_ns(line_mpps)
    if need("path"):
        path_ns = _pick(x["path"], {p: sc.path_ns(p) for p in sc.chosen()})
        out["path.ns_per_packet"] = path_ns
        out["path.mpps"] = np.minimum(units.ns_to_mpps(path_ns), sc.line_mpps())
        out["path.budget_pct"] = budget.share_of_budget_pct(path_ns, out["budget.ns_per_packet"])
    if need("free"):  # the chosen path's skb free on the other CPU (its own CPU's: the "skb free" component)
        there = {p: composer.other_cpu_free_cycles(x, c, None if p == "design" else p, sc.memo) for p in sc.chosen()}
        out["free.other_cpu_ns"] = units.cycles_to_ns(_pick(x["path"], there), ghz)
    out["noise.floor_ns"] = x["noise_ns"]
    return {k: np.asarray(out[k], dtype=float) for k in OUTPUT_UNITS if k in want}


def _total(parts: dict) -> np.ndarray:
    vals = list(parts.values())
    total = np.asarray(vals[0], dtype=float)
    for v in vals[1:]:
        total = total + v
    return total


#: The modelled paths, each a named composition of :mod:`skbmodel.composer`.
PATH_NAMES = composer.START_PATHS


def _pick(path, values: dict) -> np.ndarray:
    """``values[path]`` element-wise for a scalar or an array of path codes (``values``: the paths the
    states choose, the first path first)."""
    if np.ndim(path) == 0:
        return values[PARAMS["path"].choices[int(path)]]
    res = values[PATH_NAMES[0]]
    for p, v in values.items():
        if p != PATH_NAMES[0]:
            res = np.where(path == PATH_CODES[p], v, res)
    return res


def _select_path(sc: _Paths) -> dict[str, np.ndarray]:
    """The chosen path's components: :func:`_pick` applied to each component."""
    chosen = sc.chosen()
    parts = {p: sc.path_parts(p) for p in chosen}
    return {comp: _pick(sc.x["path"], {p: np.asarray(parts[p].get(comp, 0.0), dtype=float) for p in chosen})
            for comp in COMPONENTS}


def path_breakdown(params: Mapping, profile: Profile | None = None,
                   constants: Mapping | None = None) -> dict[str, np.ndarray]:
    """Per-packet cost of the chosen ``path`` as named components [cycles], in :data:`COMPONENTS` order.

    Paths: ``veth`` (veth XDP_PASS CPU), ``cpumap`` (the CPU that limits it, source or destination, with the
    placement's line moves and wake-ups in "cross-CPU transfer"),
    ``xdp_pass`` (one CPU), ``kfree_skb_list`` (per injected packet on the pktgen CPU), ``design``
    (the composition of the ``d_*`` keys, :mod:`skbmodel.composer`).
    The components sum to ``path.ns_per_packet * ghz``.
    """
    prof = profile_of(params, profile)
    c = constants_of(prof, constants)
    x = inputs(params, prof)
    return _select_path(_Paths(x, c))


def cpumap_breakdown_ns(params: Mapping, profile: Profile | None = None) -> dict[str, dict[str, np.ndarray]]:
    """Each cpumap CPU's per-packet components [ns]: ``{"source": {...}, "destination": {...}}``, in
    :data:`COMPONENTS` order; each sums to ``cpumap.src_ns`` or ``cpumap.dst_ns``."""
    prof = profile_of(params, profile)
    x = inputs(params, prof)
    parts = _Paths(x, constants_of(prof)).cpumap_parts()
    return {side: {k: units.cycles_to_ns(np.asarray(parts[side][k], dtype=float), x["ghz"]) for k in COMPONENTS}
            for side in ("source", "destination")}


def breakdown_ns(params: Mapping, profile: Profile | None = None) -> dict[str, np.ndarray]:
    """:func:`path_breakdown` converted to ns with the scenario's clock."""
    prof = profile_of(params, profile)
    ghz = inputs(params, prof)["ghz"]
    return {k: units.cycles_to_ns(v, ghz) for k, v in path_breakdown(params, prof).items()}
