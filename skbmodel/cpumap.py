"""cpumap redirect: RX CPU runs XDP and redirects frames to another CPU that builds skbs (seed 003).

Source CPU (driver RX, XDP program, ``cpu_map_enqueue``) per packet:
``src = src_base + alloc_side(r)`` -- refilling the RX ring with a page, either from the page_pool
ptr_ring (a page the destination recycled, ratio ``r``) or from the page allocator.

Destination CPU (``cpu_map_kthread_run``: build skb from xdp_frame, stack) per packet:
``dst = stack + alloc_bulk(CPUMAP_BATCH) + erms(object) + free_one + return_side(r, numa)
+ xfer_lines * xcpu_line * numa``

(cpumap allocates skbs with ``kmem_cache_alloc_bulk(..., __GFP_ZERO)``; the frame and packet
headers arrive in ``xfer_lines`` cachelines written by the source CPU).  Throughputs:
``src_mpps = min(offered, 1e3/src_ns)``, ``dst_mpps = min(src_mpps, 1e3/dst_ns)``,
``drops = src_mpps - dst_mpps`` (exactly, as in the seed table).

Plain XDP_PASS on one CPU does both halves without the redirect and recycles pages directly:
``xdp_pass = src_base - redirect + stack + alloc_bulk(16) + memset(zero_bytes) + free_one + pp_fast``
(napi_build_skb takes skbs from the NAPI cache, refilled 16 at a time).
"""
from __future__ import annotations

import numpy as np

from . import page_alloc, page_pool, slub, zeroing

NAPI_SKB_CACHE_BULK = 16  # net/core/skbuff.c


def numa_factor(is_cross, c):
    """Cost multiplier for cross-CPU traffic: ``numa_remote_factor`` across nodes, else 1."""
    return np.where(is_cross, c["numa_remote_factor"], 1.0)


def _skb_costs(bulk, c):
    alloc = slub.alloc_bulk_cycles(bulk, fast_pair_cycles=c["slub_fast_pair_cycles"],
                                   bulk_obj_pair_cycles=c["slub_bulk_obj_pair_cycles"],
                                   free_share=c["slub_free_share"])
    free = slub.free_one_cycles(fast_pair_cycles=c["slub_fast_pair_cycles"], free_share=c["slub_free_share"])
    return alloc, free


def src_cycles(recycle_ratio, c, page_bulk=page_alloc.PP_ALLOC_CACHE_REFILL):
    """Source CPU breakdown [cycles]: ``{"rest of path", "page alloc/recycle"}``.

    A page that is not recycled comes from page_pool's refill of ``page_bulk`` pages from the
    page allocator (:func:`skbmodel.page_alloc.refill_extra_cycles`, 0 at the kernel's 64).
    """
    r = np.clip(np.asarray(recycle_ratio, dtype=float), 0.0, 1.0)
    page = (page_pool.alloc_side_cycles(r, pp_ring_cycles=c["pp_ring_cycles"],
                                        page_slow_cycles=c["page_slow_cycles"],
                                        page_alloc_share=c["page_alloc_share"])
            + (1.0 - r) * page_alloc.refill_extra_cycles(page_bulk, c))
    return {"page alloc/recycle": page, "rest of path": c["cpumap_src_base_cycles"]}


def dst_cycles(recycle_ratio, is_cross, c):
    """Destination CPU breakdown [cycles]."""
    numa = numa_factor(is_cross, c)
    alloc, free = _skb_costs(c["cpumap_batch"], c)
    zero = zeroing.erms_cycles(c["slub_object_bytes"], erms_setup_cycles=c["erms_setup_cycles"],
                               erms_line_cycles=c["erms_line_cycles"], cacheline_bytes=c["cacheline_bytes"])
    page = page_pool.return_side_cycles(recycle_ratio, numa, pp_ring_cycles=c["pp_ring_cycles"],
                                        page_slow_cycles=c["page_slow_cycles"],
                                        page_alloc_share=c["page_alloc_share"],
                                        xcpu_line_cycles=c["xcpu_line_cycles"])
    xfer = c["cpumap_xfer_lines"] * c["xcpu_line_cycles"] * numa
    return {"skb alloc": alloc, "zeroing": zero, "page alloc/recycle": page,
            "cross-CPU transfer": xfer, "rest of path": c["cpumap_dst_stack_cycles"], "skb free": free}


def xdp_pass_rest_cycles(c):
    """The rest of the one-CPU XDP_PASS path [cycles]: the cpumap source's base without its redirect,
    plus the destination's stack."""
    return c["cpumap_src_base_cycles"] - c["cpumap_redirect_cycles"] + c["cpumap_dst_stack_cycles"]


def xdp_pass_cycles(is_gfp_zero, zero_bytes, c):
    """One CPU doing RX, XDP_PASS and the stack, pages recycled directly [cycles]."""
    alloc, free = _skb_costs(NAPI_SKB_CACHE_BULK, c)
    zero = zeroing.zero_skb_cycles(is_gfp_zero, zero_bytes, c["slub_object_bytes"], **c)
    return {"skb alloc": alloc, "zeroing": zero, "page alloc/recycle": c["pp_fast_cycles"],
            "rest of path": xdp_pass_rest_cycles(c),
            "skb free": free}


def rates_mpps(src_ns, dst_ns, offered_mpps):
    """``(src_mpps, dst_mpps, drop_mpps)`` from per-packet times [ns] on the two CPUs."""
    src = np.minimum(offered_mpps, 1e3 / src_ns)
    dst = np.minimum(src, 1e3 / dst_ns)
    return src, dst, src - dst
