"""Composition: every subsystem model evaluated for a (vectorised) scenario state.

:func:`evaluate` takes the model parameters of :mod:`skbmodel.state` -- scalars or numpy arrays
that broadcast together -- and one CPU profile, and returns every output as an array with its
unit.  :func:`path_breakdown` gives the named per-packet cost components of the chosen path;
their sum is the path's total (one composition rule, as in Kerncraft's ECM results).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import budget, cpumap, kfree_skb_list, napi_cache, noise, slub, units, veth, zeroing
from .profile import Profile, load_profile

OUTPUT_UNITS: dict[str, str] = {
    "slub.loop_cycles": "cycles", "slub.bulk_cycles": "cycles", "slub.loop_ns": "ns", "slub.bulk_ns": "ns",
    "slub.bulk_gain_cycles": "cycles", "slub.objects_per_slab": "objects",
    "zero.memset_cycles": "cycles", "zero.erms_cycles": "cycles", "zero.gfp_zero_cycles": "cycles",
    "zero.memset_ns": "ns", "zero.gfp_zero_ns": "ns", "zero.delta_ns": "ns",
    "page_pool.fast_cycles": "cycles", "page_pool.ring_cycles": "cycles", "page_pool.slow_cycles": "cycles",
    "page_pool.mix_cycles": "cycles",
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
    cpu = params.get("cpu", None)
    return load_profile(str(np.asarray(cpu).flat[0]) if cpu is not None else "e5-1650v4")


def _inputs(params: Mapping, prof: Profile):
    g = lambda k, d: _arr(params.get(k, d))  # noqa: E731
    ghz = params.get("ghz")
    ghz = _arr(prof.ghz if ghz is None else ghz).astype(float)
    return dict(
        ghz=ghz,
        bulk=g("bulk", 16).astype(float),
        is_gfp=(g("zero", "gfp_zero") == "gfp_zero"),
        zero_bytes=g("zero_bytes", 184).astype(float),
        xdp_batch=g("xdp_batch", 16).astype(float),
        kfl_bulk=g("kfl_bulk", 16).astype(float),
        drop_batch=g("drop_batch", 64).astype(float),
        clone_frac=g("clone_frac", 0.0).astype(float),
        pp_recycle=g("pp_recycle", 1.0).astype(float),
        is_cross=(g("numa", "same") == "cross"),
        defer_cache=g("defer_cache", 1).astype(float) > 0.5,
        link_gbps=g("link_gbps", 10.0).astype(float),
        frame_bytes=g("frame_bytes", 64).astype(float),
        noise_ns=g("noise_ns", prof.value("noise_floor_ns")).astype(float),
        path=g("path", "veth"),
    )


def _slub_kw(c):
    return dict(fast_pair_cycles=c["slub_fast_pair_cycles"], free_slow_extra_cycles=c["slub_free_slow_extra_cycles"],
                refill_cycles=c["slub_refill_cycles"], slab_bytes=c["slub_slab_bytes"],
                object_bytes=c["slub_object_bytes"], l1d_bytes=c["l1d_bytes"], l1_miss_cycles=c["l1_miss_cycles"])


def evaluate(params: Mapping, profile: Profile | None = None, constants: Mapping | None = None) -> dict:
    """Evaluate every output for ``params`` (scalars or broadcastable arrays).

    Parameters
    ----------
    params : mapping of state keys (see :mod:`skbmodel.state`) to scalars or arrays.
        Categorical keys (``zero``, ``numa``, ``path``) take string arrays.
    profile : CPU profile; default: the one named by ``params["cpu"]``.
    constants : optional ``{name: value}`` overriding profile constants (used by the fit).

    Returns
    -------
    dict ``{output name: ndarray}``; units in :data:`OUTPUT_UNITS`.
    """
    prof = _profile_of(params, profile)
    c = prof.values()
    if constants:
        c.update(constants)
    x = _inputs(params, prof)
    ghz = x["ghz"]
    out: dict[str, np.ndarray] = {}

    # SLUB microbenchmark (slab_bulk_test01)
    kw = _slub_kw(c)
    loop = slub.loop_pair_cycles(x["bulk"], free_share=c["slub_free_share"], **kw)
    bulk = slub.bulk_pair_cycles(x["bulk"], bulk_obj_pair_cycles=c["slub_bulk_obj_pair_cycles"],
                                 slab_locality=c["slab_locality"], free_share=c["slub_free_share"], **kw)
    out["slub.loop_cycles"] = loop
    out["slub.bulk_cycles"] = bulk
    out["slub.loop_ns"] = units.cycles_to_ns(loop, ghz)
    out["slub.bulk_ns"] = units.cycles_to_ns(bulk, ghz)
    out["slub.bulk_gain_cycles"] = loop - bulk
    out["slub.objects_per_slab"] = slub.objects_per_slab(c["slub_slab_bytes"], c["slub_object_bytes"]) + 0.0 * loop

    # zeroing (time_bench_memset)
    zkw = {k: c[k] for k in ("stos_setup_cycles", "stos_line_cycles", "stos_drain_line_cycles",
                             "store_buffer_bytes", "cacheline_bytes")}
    ekw = {k: c[k] for k in ("erms_setup_cycles", "erms_line_cycles", "cacheline_bytes")}
    memset_c = zeroing.rep_stos_cycles(x["zero_bytes"], **zkw)
    gfp_c = zeroing.erms_cycles(c["slub_object_bytes"], **ekw) + 0.0 * memset_c
    out["zero.memset_cycles"] = memset_c
    out["zero.erms_cycles"] = zeroing.erms_cycles(x["zero_bytes"], **ekw)
    out["zero.gfp_zero_cycles"] = gfp_c
    out["zero.memset_ns"] = units.cycles_to_ns(memset_c, ghz)
    out["zero.gfp_zero_ns"] = units.cycles_to_ns(gfp_c, ghz)
    out["zero.delta_ns"] = out["zero.memset_ns"] - out["zero.gfp_zero_ns"]

    # page_pool (bench_page_pool_simple)
    r = np.clip(x["pp_recycle"], 0.0, 1.0)
    out["page_pool.fast_cycles"] = c["pp_fast_cycles"] + 0.0 * r
    out["page_pool.ring_cycles"] = c["pp_ring_cycles"] + 0.0 * r
    out["page_pool.slow_cycles"] = c["page_slow_cycles"] + 0.0 * r
    out["page_pool.mix_cycles"] = r * c["pp_ring_cycles"] + (1 - r) * c["page_slow_cycles"]

    # kfree_skb_list on the qdisc drop path
    t_kfl, d_kfl, _ = kfree_skb_list.per_packet(x["kfl_bulk"], x["drop_batch"], x["clone_frac"], ghz, c)
    t_kfl1, _, _ = kfree_skb_list.per_packet(1.0, x["drop_batch"], x["clone_frac"], ghz, c)
    out["kfree_skb_list.mpps"] = units.ns_to_mpps(t_kfl)
    out["kfree_skb_list.ns_per_packet"] = t_kfl
    out["kfree_skb_list.drop_fraction"] = d_kfl
    out["kfree_skb_list.free_cycles_per_drop"] = kfree_skb_list.free_per_drop_cycles(
        x["kfl_bulk"], x["drop_batch"], x["clone_frac"], c)
    out["kfree_skb_list.saving_ns"] = t_kfl1 - t_kfl

    # veth XDP_PASS with bulk-allocated skbs
    v = veth.per_packet_cycles(x["xdp_batch"], x["is_gfp"], x["zero_bytes"], c)
    v_ns = units.cycles_to_ns(sum(v.values()), ghz)
    v_other = veth.per_packet_cycles(x["xdp_batch"], ~x["is_gfp"], x["zero_bytes"], c)
    v_other_ns = units.cycles_to_ns(sum(v_other.values()), ghz)
    out["veth.mpps"] = units.ns_to_mpps(v_ns)
    out["veth.ns_per_packet"] = v_ns
    memset_ns = np.where(x["is_gfp"], v_other_ns, v_ns)
    gfp_ns = np.where(x["is_gfp"], v_ns, v_other_ns)
    out["veth.zero_delta_ns"] = memset_ns - gfp_ns
    out["veth.zero_delta_runs"] = noise.runs_needed(out["veth.zero_delta_ns"], x["noise_ns"])

    # cpumap redirect and plain XDP_PASS
    src = cpumap.src_cycles(r, c)
    dst = cpumap.dst_cycles(r, x["is_cross"], c)
    src_ns = units.cycles_to_ns(sum(src.values()), ghz)
    dst_ns = units.cycles_to_ns(sum(dst.values()), ghz)
    s_mpps, d_mpps, drop = cpumap.rates_mpps(src_ns, dst_ns, c["offered_mpps"])
    out["cpumap.src_mpps"], out["cpumap.dst_mpps"], out["cpumap.drop_mpps"] = s_mpps, d_mpps, drop
    out["cpumap.src_ns"], out["cpumap.dst_ns"] = src_ns, dst_ns
    xp = cpumap.xdp_pass_cycles(x["is_gfp"], x["zero_bytes"], c)
    xp_ns = units.cycles_to_ns(sum(xp.values()), ghz)
    out["xdp_pass.mpps"] = np.minimum(c["offered_mpps"], units.ns_to_mpps(xp_ns))
    out["xdp_pass.ns_per_packet"] = xp_ns

    # same-CPU defer free into the NAPI cache
    nc = napi_cache.per_request_cycles(x["defer_cache"], c)
    out["napi_defer.krps"] = units.ns_to_krps(units.cycles_to_ns(sum(nc.values()), ghz))

    # budget and noise
    out["budget.line_rate_mpps"] = budget.line_rate_mpps(x["link_gbps"], x["frame_bytes"])
    out["budget.ns_per_packet"] = budget.ns_per_packet(x["link_gbps"], x["frame_bytes"])
    path_ns = units.cycles_to_ns(sum(path_breakdown(params, prof, c, x).values()), ghz)
    out["path.ns_per_packet"] = path_ns
    out["path.mpps"] = units.ns_to_mpps(path_ns)
    out["path.budget_pct"] = budget.budget_used_pct(path_ns, x["link_gbps"], x["frame_bytes"])
    out["noise.floor_ns"] = x["noise_ns"] + 0.0 * path_ns

    shape = np.broadcast_shapes(*[np.shape(v) for v in out.values()])
    return {k: np.broadcast_to(np.asarray(v, dtype=float), shape) for k, v in out.items()}


def path_breakdown(params: Mapping, profile: Profile | None = None, constants: Mapping | None = None,
                   _inputs_cache=None) -> dict[str, np.ndarray]:
    """Per-packet cost of the chosen ``path`` as named components [cycles], in :data:`COMPONENTS` order.

    Paths: ``veth`` (veth XDP_PASS CPU), ``cpumap`` (the destination CPU, the bottleneck),
    ``xdp_pass`` (one CPU), ``kfree_skb_list`` (per injected packet on the pktgen CPU).
    """
    prof = _profile_of(params, profile)
    c = constants if (constants is not None and _inputs_cache is not None) else {**prof.values(), **(constants or {})}
    x = _inputs_cache if _inputs_cache is not None else _inputs(params, prof)
    r = np.clip(x["pp_recycle"], 0.0, 1.0)
    parts = {
        "veth": veth.per_packet_cycles(x["xdp_batch"], x["is_gfp"], x["zero_bytes"], c),
        "cpumap": cpumap.dst_cycles(r, x["is_cross"], c),
        "xdp_pass": cpumap.xdp_pass_cycles(x["is_gfp"], x["zero_bytes"], c),
        "kfree_skb_list": kfree_skb_list.per_packet(x["kfl_bulk"], x["drop_batch"], x["clone_frac"], x["ghz"], c)[2],
    }
    path = x["path"]
    out = {}
    for comp in COMPONENTS:
        vals = [np.asarray(parts[p].get(comp, 0.0), dtype=float) for p in parts]
        sel = [path == p for p in parts]
        out[comp] = np.select(sel, vals, default=0.0) if np.ndim(path) or True else None
    return out


def breakdown_ns(params: Mapping, profile: Profile | None = None) -> dict[str, np.ndarray]:
    """:func:`path_breakdown` converted to ns with the scenario's clock."""
    prof = _profile_of(params, profile)
    ghz = params.get("ghz") or prof.ghz
    return {k: units.cycles_to_ns(v, ghz) for k, v in path_breakdown(params, prof).items()}
