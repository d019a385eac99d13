"""Composition: every subsystem model evaluated for a (vectorised) scenario state.

:func:`evaluate` takes the model parameters of :mod:`skbmodel.state` -- scalars or numpy arrays
that broadcast together -- and one CPU profile, and returns every output as an array with its
unit.  :func:`path_breakdown` gives the named per-packet cost components of the chosen path;
their sum is the path's total (one composition rule, as in Kerncraft's ECM results).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import (budget, cpumap, design, era, kfree_skb_list, napi_cache, noise, page_alloc, page_pool, slub, units,
               veth, zeroing)
from .custom import decode_cached
from .params import MODEL_PARAMS
from .profile import DEFAULT_PROFILE, Profile, load_profile

OUTPUT_UNITS: dict[str, str] = {
    "slub.loop_cycles": "cycles", "slub.bulk_cycles": "cycles", "slub.loop_ns": "ns", "slub.bulk_ns": "ns",
    "slub.bulk_gain_cycles": "cycles", "slub.objects_per_slab": "objects",
    "zero.memset_cycles": "cycles", "zero.erms_cycles": "cycles", "zero.gfp_zero_cycles": "cycles",
    "zero.memset_ns": "ns", "zero.gfp_zero_ns": "ns", "zero.delta_ns": "ns",
    "page_pool.fast_cycles": "cycles", "page_pool.ring_cycles": "cycles", "page_pool.slow_cycles": "cycles",
    "page_pool.mix_cycles": "cycles", "page_pool.slow_refill_cycles": "cycles",
    "page_pool.nosoftirq01_cycles": "cycles", "page_pool.nosoftirq02_cycles": "cycles",
    "page_pool.nosoftirq03_cycles": "cycles",
    "page_alloc.bulk_cycles": "cycles", "page_alloc.single_cycles": "cycles",
    "page_alloc.refill_saving_cycles": "cycles",
    "kfree_skb_list.mpps": "Mpps", "kfree_skb_list.ns_per_packet": "ns", "kfree_skb_list.drop_fraction": "1",
    "kfree_skb_list.free_cycles_per_drop": "cycles", "kfree_skb_list.saving_ns": "ns",
    "veth.mpps": "Mpps", "veth.ns_per_packet": "ns", "veth.zero_delta_ns": "ns", "veth.zero_delta_runs": "runs",
    "cpumap.src_mpps": "Mpps", "cpumap.dst_mpps": "Mpps", "cpumap.drop_mpps": "Mpps",
    "cpumap.src_ns": "ns", "cpumap.dst_ns": "ns",
    "xdp_pass.mpps": "Mpps", "xdp_pass.ns_per_packet": "ns",
    "napi_defer.krps": "Krps",
    "budget.line_rate_mpps": "Mpps", "budget.ns_per_packet": "ns",
    "path.ns_per_packet": "ns", "path.mpps": "Mpps", "path.budget_pct": "%",
    "noise.floor_ns": "ns",
}

COMPONENTS = ("skb alloc", "zeroing", "page alloc/recycle", "cross-CPU transfer", "rest of path", "skb free")


def _arr(x):
    return np.asarray(x)


def _profile_of(params: Mapping, profile: Profile | None) -> Profile:
    if profile is not None:
        return profile
    custom_text = params.get("prof", None)  # a custom profile (skbmodel.custom link text)
    if custom_text is not None:
        text = custom_text if isinstance(custom_text, str) else str(np.asarray(custom_text).flat[0])
        if text:
            return decode_cached(text)
    cpu = params.get("cpu", None)
    return load_profile(str(np.asarray(cpu).flat[0]) if cpu is not None else DEFAULT_PROFILE)


#: Defaults of a partial scenario, from the parameter schema; the clock and the noise floor default to
#: the profile's (below), the CPU to the default profile (:func:`_profile_of`).
_DEFAULTS = {p.key: p.default for p in MODEL_PARAMS if p.key not in ("cpu", "ghz", "noise_ns")}


def _raw(params: Mapping, prof: Profile) -> dict:
    """The model inputs as arrays, unconverted (defaults filled in)."""
    raw = {k: _arr(params.get(k, d)) for k, d in _DEFAULTS.items()}
    ghz = params.get("ghz")
    raw["ghz"] = _arr(prof.ghz if ghz is None else ghz)
    noise_ns = params.get("noise_ns")
    raw["noise_ns"] = _arr(prof.value("noise_floor_ns") if noise_ns is None else noise_ns)
    return raw


def _inputs(params: Mapping, prof: Profile | None = None):
    """Typed model inputs: floats, and booleans for the categorical keys."""
    raw = params if prof is None else _raw(params, prof)
    f = lambda k: np.asarray(raw[k], dtype=float)  # noqa: E731  (no copy when already float)
    x = {k: f(k) for k in ("ghz", "bulk", "zero_bytes", "xdp_batch", "kfl_bulk", "drop_batch", "clone_frac",
                          "pp_recycle", "page_bulk", "link_gbps", "frame_bytes", "noise_ns")}
    x["is_gfp"] = _is(raw["zero"], "gfp_zero")
    x["is_cross"] = _is(raw["numa"], "cross")
    dc = raw["defer_cache"]
    x["defer_cache"] = dc if dc.dtype == bool else np.asarray(dc, dtype=float) > 0.5
    x["path"] = raw["path"]
    for k in design.KEY_NAMES:  # the composed path's stages (used only where path == "design")
        x[k] = f(k) if k in design.NUMERIC else raw[k]
    return x


def _is(a, value):
    return a if a.dtype == bool else (a == value)


def _slub_kw(c):
    return dict(fast_pair_cycles=c["slub_fast_pair_cycles"], free_slow_extra_cycles=c["slub_free_slow_extra_cycles"],
                refill_cycles=c["slub_refill_cycles"], slab_bytes=c["slub_slab_bytes"],
                object_bytes=c["slub_object_bytes"], l1d_bytes=c["l1d_bytes"], l1_miss_cycles=c["l1_miss_cycles"],
                fill_fraction=c["slab_fill_fraction"], l1_usable_fraction=c["l1_usable_fraction"],
                l2_bytes=c["l2_bytes"], l2_miss_cycles=c["l2_miss_cycles"])


#: key of ``c`` (the constants) that carries whether the profile's kernels recycle page_pool pages
#: directly outside softirq (:func:`skbmodel.era.direct_recycle_any_context`)
_PP_DIRECT = "_pp_direct_any_context"

CHUNK_STATES = 32_768  # evaluate large grids in cache-sized blocks


def evaluate(params: Mapping, profile: Profile | None = None, constants: Mapping | None = None,
             out: dict | None = None) -> dict:
    """Evaluate every output for ``params`` (scalars or broadcastable arrays).

    Parameters
    ----------
    params : mapping of state keys (see :mod:`skbmodel.state`) to scalars or arrays.
        Categorical keys (``zero``, ``numa``, ``path``) take string arrays.
    profile : CPU profile; default: the one named by ``params["cpu"]``.
    constants : optional ``{name: value}`` overriding profile constants (used by the fit).  A value
        may be an array: it broadcasts against the parameter grid like a parameter, so a leading
        axis of shape ``(K,) + (1,) * grid.ndim`` evaluates ``K`` constant sets on the whole grid
        in one call (:mod:`skbmodel.uncertainty`); such calls are not split into blocks and take
        no ``out``.
    out : optional ``{output name: float ndarray}`` of the broadcast shape to write into (reuse
        buffers across sweeps instead of allocating fresh memory).

    Returns
    -------
    dict ``{output name: ndarray}`` of the broadcast shape of the inputs; units in
    :data:`OUTPUT_UNITS`.  Grids larger than :data:`CHUNK_STATES` are evaluated block by block
    (each block vectorised) so that the temporaries stay in cache.
    """
    prof = _profile_of(params, profile)
    c = prof.values()
    # the profile's kernel era decides a code path, not a cost (never fitted, never overridden)
    c[_PP_DIRECT] = era.direct_recycle_any_context(prof.kernels)
    if constants:
        c.update(constants)
    raw = _raw(params, prof)
    shape = np.broadcast_shapes(*[np.shape(v) for v in raw.values()])
    size = int(np.prod(shape))
    if constants and any(np.ndim(v) for v in constants.values()):
        if out is not None:
            raise ValueError("evaluate: array-valued constants take no out buffers")
        res = _evaluate_inputs(_inputs(raw), c)
        shape = np.broadcast_shapes(shape, *(np.shape(v) for v in constants.values()))
        return {k: np.broadcast_to(v, shape) for k, v in res.items()}
    if size <= CHUNK_STATES and out is None:
        return {k: np.broadcast_to(v, shape) for k, v in _evaluate_inputs(_inputs(raw), c).items()}
    flat = {k: (np.broadcast_to(v, shape).reshape(-1) if v.ndim else v) for k, v in raw.items()}
    if out is None:
        out = {k: np.empty(shape) for k in OUTPUT_UNITS}
    flat_out = {k: v.reshape(-1) for k, v in out.items()}
    for lo in range(0, size, CHUNK_STATES):
        chunk = {k: (v[lo:lo + CHUNK_STATES] if v.ndim else v) for k, v in flat.items()}
        for k, v in _evaluate_inputs(_inputs(chunk), c).items():
            flat_out[k][lo:lo + CHUNK_STATES] = v
    return out


def _scenarios(x, c):
    """Each path's breakdown [cycles] computed once: ``{path: {component: cycles}}`` plus extras."""
    r = np.clip(x["pp_recycle"], 0.0, 1.0)
    t_kfl, d_kfl, kfl_parts, f_kfl = kfree_skb_list.per_packet(x["kfl_bulk"], x["drop_batch"], x["clone_frac"],
                                                               x["ghz"], c)
    sc = dict(
        veth=veth.per_packet_cycles(x["xdp_batch"], x["is_gfp"], x["zero_bytes"], c),
        cpumap=cpumap.dst_cycles(r, x["is_cross"], c),
        cpumap_src=cpumap.src_cycles(r, c, x["page_bulk"]),
        xdp_pass=cpumap.xdp_pass_cycles(x["is_gfp"], x["zero_bytes"], c),
        kfree_skb_list=kfl_parts,
        _kfl=(t_kfl, d_kfl, f_kfl),
    )
    if np.any(np.asarray(x["path"]) == "design"):  # composed only when asked for: the other paths pay nothing
        sc["design"], sc["_design_ns"] = design.per_packet(x, c)
    return sc


def _evaluate_inputs(x, c) -> dict:
    ghz = x["ghz"]
    out: dict[str, np.ndarray] = {}
    sc = _scenarios(x, c)

    # SLUB microbenchmark (slab_bulk_test01)
    kw = _slub_kw(c)
    loop = slub.loop_pair_cycles(x["bulk"], loop_call_cycles=c["slub_loop_call_cycles"], **kw)
    bulk = slub.bulk_pair_cycles(x["bulk"], bulk_obj_pair_cycles=c["slub_bulk_obj_pair_cycles"],
                                 slab_locality=c["slab_locality"], **kw)
    out["slub.loop_cycles"] = loop
    out["slub.bulk_cycles"] = bulk
    out["slub.loop_ns"] = units.cycles_to_ns(loop, ghz)
    out["slub.bulk_ns"] = units.cycles_to_ns(bulk, ghz)
    out["slub.bulk_gain_cycles"] = loop - bulk
    out["slub.objects_per_slab"] = slub.objects_per_slab(c["slub_slab_bytes"], c["slub_object_bytes"])

    # zeroing (time_bench_memset)
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

    # page_pool (bench_page_pool_simple)
    r = np.clip(x["pp_recycle"], 0.0, 1.0)
    out["page_pool.fast_cycles"] = c["pp_fast_cycles"]
    out["page_pool.ring_cycles"] = c["pp_ring_cycles"]
    out["page_pool.slow_cycles"] = c["page_slow_cycles"]
    out["page_pool.mix_cycles"] = page_pool.recycle_mix_cycles(r, pp_ring_cycles=c["pp_ring_cycles"],
                                                               page_slow_cycles=c["page_slow_cycles"])
    out["page_pool.slow_refill_cycles"] = c["page_slow_cycles"] + page_alloc.refill_extra_cycles(x["page_bulk"], c)
    ppk = {k: c[k] for k in ("pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles")}
    for test in (1, 2, 3):  # the process-context tests of the upstream selftest benchmark
        out[f"page_pool.nosoftirq0{test}_cycles"] = page_pool.nosoftirq_cycles(test, c[_PP_DIRECT], **ppk)

    # the page allocator, order-0 pages one at a time vs in bulk (page_bench04_bulk)
    page_bulk = page_alloc.bulk_cycles(x["page_bulk"], **{k: c[k] for k in page_alloc.CONSTANTS})
    out["page_alloc.bulk_cycles"] = page_bulk
    out["page_alloc.single_cycles"] = c["page_single_cycles"]
    out["page_alloc.refill_saving_cycles"] = c["page_single_cycles"] - page_bulk

    # kfree_skb_list on the qdisc drop path
    t_kfl, d_kfl, f_kfl = sc["_kfl"]
    t_kfl1 = kfree_skb_list.per_packet(1.0, 1.0, 0.0, ghz, c)[0]  # one at a time: batch does not matter
    out["kfree_skb_list.mpps"] = units.ns_to_mpps(t_kfl)
    out["kfree_skb_list.ns_per_packet"] = t_kfl
    out["kfree_skb_list.drop_fraction"] = d_kfl
    out["kfree_skb_list.free_cycles_per_drop"] = f_kfl
    out["kfree_skb_list.saving_ns"] = t_kfl1 - t_kfl

    # veth XDP_PASS with bulk-allocated skbs; the other zeroing method differs only in "zeroing"
    v = sc["veth"]
    v_ns = units.cycles_to_ns(_total(v), ghz)
    out["veth.mpps"] = units.ns_to_mpps(v_ns)
    out["veth.ns_per_packet"] = v_ns
    out["veth.zero_delta_ns"] = units.cycles_to_ns(memset_c - gfp_c, ghz)
    out["veth.zero_delta_runs"] = noise.runs_needed(out["veth.zero_delta_ns"], x["noise_ns"])

    # cpumap redirect and plain XDP_PASS
    src_ns = units.cycles_to_ns(_total(sc["cpumap_src"]), ghz)
    dst_ns = units.cycles_to_ns(_total(sc["cpumap"]), ghz)
    s_mpps, d_mpps, drop = cpumap.rates_mpps(src_ns, dst_ns, c["offered_mpps"])
    out["cpumap.src_mpps"], out["cpumap.dst_mpps"], out["cpumap.drop_mpps"] = s_mpps, d_mpps, drop
    out["cpumap.src_ns"], out["cpumap.dst_ns"] = src_ns, dst_ns
    xp_ns = units.cycles_to_ns(_total(sc["xdp_pass"]), ghz)
    out["xdp_pass.mpps"] = np.minimum(c["offered_mpps"], units.ns_to_mpps(xp_ns))
    out["xdp_pass.ns_per_packet"] = xp_ns

    # same-CPU defer free into the NAPI cache
    nc = napi_cache.per_request_cycles(x["defer_cache"], c)
    out["napi_defer.krps"] = units.ns_to_krps(units.cycles_to_ns(_total(nc), ghz))

    # budget and noise
    line_mpps = budget.line_rate_mpps(x["link_gbps"], x["frame_bytes"])
    out["budget.line_rate_mpps"] = line_mpps
    out["budget.ns_per_packet"] = units.mpps_to_ns(line_mpps)
    totals = {"veth": v_ns, "cpumap": dst_ns, "xdp_pass": xp_ns, "kfree_skb_list": t_kfl}
    if "design" in sc:
        totals["design"] = sc["_design_ns"]
    path_ns = _pick(x["path"], totals)
    out["path.ns_per_packet"] = path_ns
    out["path.mpps"] = units.ns_to_mpps(path_ns)
    out["path.budget_pct"] = budget.share_of_budget_pct(path_ns, out["budget.ns_per_packet"])
    out["noise.floor_ns"] = x["noise_ns"]
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def _total(parts: dict) -> np.ndarray:
    vals = list(parts.values())
    total = np.asarray(vals[0], dtype=float)
    for v in vals[1:]:
        total = total + v
    return total


PATH_NAMES = ("veth", "cpumap", "xdp_pass", "kfree_skb_list")


def _pick(path, values: dict) -> np.ndarray:
    """``values[path]`` element-wise for a scalar or an array of path names."""
    path = np.asarray(path)
    if path.ndim == 0:
        return values[str(path)]
    res = values[PATH_NAMES[0]]
    for p in PATH_NAMES[1:] + (("design",) if "design" in values else ()):
        res = np.where(path == p, values[p], res)
    return res


def _select_path(sc, path) -> dict[str, np.ndarray]:
    """The chosen path's components: :func:`_pick` applied to each component."""
    names = PATH_NAMES + (("design",) if "design" in sc else ())
    return {comp: _pick(path, {p: np.asarray(sc[p].get(comp, 0.0), dtype=float) for p in names})
            for comp in COMPONENTS}


def path_breakdown(params: Mapping, profile: Profile | None = None,
                   constants: Mapping | None = None) -> dict[str, np.ndarray]:
    """Per-packet cost of the chosen ``path`` as named components [cycles], in :data:`COMPONENTS` order.

    Paths: ``veth`` (veth XDP_PASS CPU), ``cpumap`` (the destination CPU, the bottleneck),
    ``xdp_pass`` (one CPU), ``kfree_skb_list`` (per injected packet on the pktgen CPU), ``design``
    (the composition of the ``d_*`` keys, :mod:`skbmodel.design`).
    The components sum to ``path.ns_per_packet * ghz``.
    """
    prof = _profile_of(params, profile)
    c = {**prof.values(), **(constants or {})}
    x = _inputs(params, prof)
    return _select_path(_scenarios(x, c), x["path"])


def breakdown_ns(params: Mapping, profile: Profile | None = None) -> dict[str, np.ndarray]:
    """:func:`path_breakdown` converted to ns with the scenario's clock."""
    prof = _profile_of(params, profile)
    ghz = _inputs(params, prof)["ghz"]
    return {k: units.cycles_to_ns(v, ghz) for k, v in path_breakdown(params, prof).items()}
