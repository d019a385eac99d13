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

Both paths are composed, stage by stage, in :data:`skbmodel.design.STARTS` (``cpumap``: the
destination CPU; ``xdp_pass``); this module keeps the source CPU, the rates and the rest of XDP_PASS.
"""
from __future__ import annotations

import numpy as np

from . import page_alloc, page_pool

NAPI_SKB_CACHE_BULK = 16  # net/core/skbuff.c


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


def xdp_pass_rest_cycles(c):
    """The rest of the one-CPU XDP_PASS path [cycles]: the cpumap source's base without its redirect,
    plus the destination's stack."""
    return c["cpumap_src_base_cycles"] - c["cpumap_redirect_cycles"] + c["cpumap_dst_stack_cycles"]


def rates_mpps(src_ns, dst_ns, offered_mpps):
    """``(src_mpps, dst_mpps, drop_mpps)`` from per-packet times [ns] on the two CPUs."""
    src = np.minimum(offered_mpps, 1e3 / src_ns)
    dst = np.minimum(src, 1e3 / dst_ns)
    return src, dst, src - dst
