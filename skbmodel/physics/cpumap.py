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

Placement (``numa``) and the destination's program (``cpumap_prog``) move both CPUs
(:func:`placed_ns`, kernel/bpf/cpumap.c as of v5.10-v6.12: the kthread consumer, ``cpu_map_kthread_run``):

* the producer's ring writes: ``bq_flush_to_queue`` stores each frame pointer into the entry's
  ``ptr_ring`` (``__ptr_ring_produce`` under ``producer_lock``), whose slot lines the consumer last wrote
  (``__ptr_ring_consume_batched`` zeroes consumed slots); one line per ``cacheline_bytes / 8`` frames moves
  to the source, and back to the destination on its read;
* the page's return: a page the destination recycles into the source's page_pool (``r``) is taken back
  by the source in ``page_pool_refill_alloc_cache`` from the pool's ring with its ``struct page`` line
  written on the destination: ``cpumap_return_lines`` (the loop's misses overlap) and a slot's share per
  recycled page on the source;
* across nodes each of these lines costs ``numa_remote_factor`` times a same-node line; the same-node
  moves are inside the bases fitted on seed 003's same-node runs, so the terms are the cross-node
  excess ``(numa - 1) * xcpu_line`` per line;
* kthread wake-ups: ``__cpu_map_flush`` (once per NAPI poll, ``cpumap_flush_packets`` frames under load)
  calls ``wake_up_process``; when the kthread found its ring empty it has slept (``schedule()`` in
  ``cpu_map_kthread_run``) and the wake is a full ``try_to_wake_up`` on another CPU (the source's
  ``cpumap_wake_cycles`` plus ``cpumap_wake_lines`` lines of the remote runqueue and task, x numa), and
  the destination pays ``cpumap_sleep_cycles`` (switching to idle and back).  The fraction of flushes
  that find it asleep is ``p = 1 - rho`` (``rho`` the destination's utilisation; of an M/G/1 queue's
  departures, the share that leave it empty), solved with the costs it adds (:func:`sleep_fraction`):
  a consumer faster than the producer sleeps more and the source pays more wake-ups.  Where the
  destination is the bottleneck (``rho >= 1``, seed 003's runs) no wake-up finds it asleep;
* an ``XDP_DROP`` program on the cpumap entry (``cpu_map_bpf_prog_run_xdp`` -> ``xdp_return_frame``):
  the destination only consumes the ring, runs the program and returns the page
  (``cpumap_drop_dst_cycles`` + the page's return + the frame's lines), no skb.

Which CPU limits the rate is an output (``cpumap.bottleneck``: :data:`BOTTLENECK`).

Both paths are composed, stage by stage, in :data:`skbmodel.design.STARTS` (``cpumap``: the
destination CPU; ``xdp_pass``); this module keeps the source CPU, the rates and the rest of XDP_PASS.
"""
from __future__ import annotations

import numpy as np

from . import page_alloc, page_pool
from .. import schema

NAPI_SKB_CACHE_BULK = 16  # net/core/skbuff.c


def src_cycles(recycle_ratio, c, page_bulk=page_alloc.PP_ALLOC_CACHE_REFILL):
    """Source CPU breakdown [cycles]: ``{"rest of path", "page alloc/recycle"}``.

    A page that is not recycled comes from page_pool's refill of ``page_bulk`` pages from the
    page allocator (:func:`skbmodel.physics.page_alloc.refill_extra_cycles`, 0 at the kernel's 64).
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


#: ``cpumap.bottleneck`` codes: what limits the destination's rate
BOTTLENECK = dict(enumerate(schema.BY_NAME["cpumap.bottleneck"].codes))
#: bytes of one ptr_ring slot (a pointer, 64-bit kernels)
RING_SLOT_BYTES = 8


def cross_node_lines(recycle_ratio, cacheline_bytes, return_lines):
    """Cachelines per packet that move between the two CPUs on top of the frame's (``(src, dst)``).

    Source: the ring slot it writes (``8 / cacheline_bytes`` of a line per frame) and, per recycled page
    (``r``), ``return_lines`` of its ``struct page`` and the pool ring's slot.  Destination: the ring slot
    it reads."""
    slot = RING_SLOT_BYTES / np.asarray(cacheline_bytes, dtype=float)
    r = np.clip(np.asarray(recycle_ratio, dtype=float), 0.0, 1.0)
    return slot + r * (return_lines + slot), slot


def sleep_fraction(src0_ns, dst0_ns, wake_src_ns, sleep_dst_ns, offered_mpps):
    """The fraction ``p`` of ``__cpu_map_flush`` calls that find the kthread asleep [1].

    ``src0_ns``, ``dst0_ns``: per-packet times without wake-ups; ``wake_src_ns``, ``sleep_dst_ns``: the
    wake-up's cost per packet on each CPU when every flush finds it asleep.  Solves ``p = max(0, 1 - rho)``
    with ``rho = lambda * (dst0 + p * sleep)`` and ``lambda = min(offered, 1 / (src0 + p * wake))``:
    source-bound, ``a p^2 + (S0 - a + b) p - (S0 - D0) = 0`` (``a``, ``b`` the two wake costs, ``S0``, ``D0``
    the times); offered-bound, ``p = (1 - R D0) / (1 + R b)`` (``R`` in packets per ns)."""
    s0, d0 = np.asarray(src0_ns, dtype=float), np.asarray(dst0_ns, dtype=float)
    a, b = np.asarray(wake_src_ns, dtype=float), np.asarray(sleep_dst_ns, dtype=float)
    rate = np.asarray(offered_mpps, dtype=float) * 1e-3  # packets per ns
    lin = s0 - a + b
    gap = np.maximum(s0 - d0, 0.0)
    disc = np.sqrt(lin * lin + 4.0 * a * gap)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_src = np.where(a > 0, (disc - lin) / (2.0 * np.where(a > 0, a, 1.0)), gap / np.maximum(s0 + b, 1e-12))
    p_off = np.clip((1.0 - rate * d0) / (1.0 + rate * b), 0.0, 1.0)
    offered_bound = rate * (s0 + p_off * a) < 1.0
    return np.clip(np.where(offered_bound, p_off, p_src), 0.0, 1.0)


def placed_ns(src0_ns, dst0_ns, is_cross, recycle_ratio, c, ghz):
    """Per-packet times on the two CPUs with placement and wake-ups [ns]: ``(src_ns, dst_ns, p_sleep)``.

    ``src0_ns``, ``dst0_ns``: the paths' times at the same node without wake-ups; ``is_cross``: boolean
    (broadcast).  See the module text for the terms."""
    numa = np.where(np.asarray(is_cross, dtype=bool), c["numa_remote_factor"], 1.0)
    src_lines, dst_lines = cross_node_lines(recycle_ratio, c["cacheline_bytes"], c["cpumap_return_lines"])
    excess = (numa - 1.0) * c["xcpu_line_cycles"] / ghz  # ns per line across nodes, beyond a same-node line
    s0, d0 = src0_ns + src_lines * excess, dst0_ns + dst_lines * excess
    per = 1.0 / c["cpumap_flush_packets"]
    wake = per * (c["cpumap_wake_cycles"] + c["cpumap_wake_lines"] * c["xcpu_line_cycles"] * numa) / ghz
    sleep = per * c["cpumap_sleep_cycles"] / ghz
    p = sleep_fraction(s0, d0, wake, sleep, c["offered_mpps"])
    return s0 + p * wake, d0 + p * sleep, p


def drop_dst_cycles(recycle_ratio, numa_factor, c):
    """The destination with an XDP_DROP program on the cpumap entry [cycles]: the ring consume, the
    program and ``xdp_return_frame`` (``cpumap_drop_dst_cycles``), the page's return to the source's pool
    and the frame's lines; no skb."""
    ret = page_pool.return_side_cycles(recycle_ratio, numa_factor, pp_ring_cycles=c["pp_ring_cycles"],
                                       page_slow_cycles=c["page_slow_cycles"],
                                       page_alloc_share=c["page_alloc_share"],
                                       xcpu_line_cycles=c["xcpu_line_cycles"])
    return c["cpumap_drop_dst_cycles"] + ret + c["cpumap_xfer_lines"] * c["xcpu_line_cycles"] * numa_factor


def bottleneck(src_ns, dst_ns, offered_mpps):
    """``cpumap.bottleneck`` code (:data:`BOTTLENECK`): 1 where the destination is slower than the rate it
    is offered, else 0 where the source is slower than the offered load, else 2."""
    src_rate = np.minimum(offered_mpps, 1e3 / src_ns)
    return np.where(1e3 / dst_ns < src_rate, 1.0, np.where(1e3 / src_ns < offered_mpps, 0.0, 2.0))


def placement_problem(profile, numa) -> str | None:
    """Why a placement cannot be evaluated on ``profile`` (one line), or None: a cross-node destination on a
    machine whose profile states one NUMA node."""
    if str(numa) == "cross" and profile.numa_nodes == 1:
        return (f"numa=cross: profile {profile.id} is a machine with one NUMA node ({profile.topology_source}); "
                "there is no other node to redirect to: take numa=same or a profile of a multi-node machine")
    return None
