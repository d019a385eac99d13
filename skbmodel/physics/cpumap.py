"""cpumap redirect: RX CPU runs XDP and redirects frames to another CPU that builds skbs (seed 003).

Source CPU (driver RX, XDP program, ``cpu_map_enqueue``) per packet:
``src = src_base + alloc_side(r)`` -- refilling the RX ring with a page, either from the page_pool
ptr_ring (a page the destination recycled, ratio ``r``) or from the page allocator.

Destination CPU (``cpu_map_kthread_run``: build skb from xdp_frame, stack) per packet:
``dst = stack + alloc_bulk(CPUMAP_BATCH) + erms(object) + free_one + return_side(r, f)
+ xfer_lines * xcpu_line * f`` (``f`` the placement's line factor, 1 on the same L3:
:func:`skbmodel.physics.placement.line_factor`)

(cpumap allocates skbs with ``kmem_cache_alloc_bulk(..., __GFP_ZERO)``; the frame and packet
headers arrive in ``xfer_lines`` cachelines written by the source CPU).  Throughputs:
``src_mpps = min(offered, 1e3/src_ns)``, ``dst_mpps = min(src_mpps, 1e3/dst_ns)``,
``drops = src_mpps - dst_mpps`` (exactly, as in the seed table).

Plain XDP_PASS on one CPU does both halves without the redirect and recycles pages directly:
``xdp_pass = src_base - redirect + stack + alloc_bulk(16) + memset(zero_bytes) + free_one + pp_fast``
(napi_build_skb takes skbs from the NAPI cache, refilled 16 at a time).

Placement (``place``: the level of the machine's topology the two CPUs meet at) and the destination's
program (``cpumap_prog``) move both CPUs (:func:`placed`, kernel/bpf/cpumap.c as of v5.10-v6.12: the kthread
consumer, ``cpu_map_kthread_run``):

* the producer's ring writes: ``bq_flush_to_queue`` stores each frame pointer into the entry's
  ``ptr_ring`` (``__ptr_ring_produce`` under ``producer_lock``), whose slot lines the consumer last wrote
  (``__ptr_ring_consume_batched`` zeroes consumed slots); one line per ``cacheline_bytes / 8`` frames moves
  to the source, and back to the destination on its read;
* the page's return: a page the destination recycles into the source's page_pool (``r``) is taken back
  by the source in ``page_pool_refill_alloc_cache`` from the pool's ring with its ``struct page`` line
  written on the destination (``cpumap_return_lines``, the loop's misses overlap, and a slot's share per
  recycled page); and when the source writes the next ``struct xdp_frame`` into that page's headroom
  (``xdp_convert_buff_to_frame``) it takes back the line the kthread read (:data:`FRAME_RETURN_LINES`):
  what moved to the destination comes back, per delivered page;
* each of these lines costs one move at the placement's level
  (:func:`skbmodel.physics.placement.line_cycles`, the published one-way latency of the level); the same-L3
  moves are inside the bases fitted on seed 003's same-node runs, so the terms are the excess
  ``line - xcpu_line`` per line;
* frames the full ring refuses (``bq_flush_to_queue`` -> ``xdp_return_frame_rx_napi``) go back to the
  source's own pool and move no line: the source's line moves are per *delivered* frame
  (:func:`delivered_share`);
* kthread wake-ups: every ``__cpu_map_flush`` (once per NAPI poll, ``cpumap_flush_packets`` frames under
  load) calls ``wake_up_process``; the kthread sleeps (``schedule()`` in ``cpu_map_kthread_run``) whenever
  it has emptied its ring, and then the wake is a full ``try_to_wake_up`` on another CPU (the source's
  ``cpumap_wake_cycles`` plus ``cpumap_wake_lines`` lines of the remote runqueue and task at the level; an
  IPI where the CPUs share no LLC) and the destination pays ``cpumap_sleep_cycles`` (switching to idle and
  back).  A kthread with time to spare between flushes sleeps after every one; one that never catches up
  never sleeps; in between as often as its spare time pays for (:func:`sleep_fraction`).  Where the
  destination is the bottleneck (seed 003's runs) no wake-up finds it asleep;
* an ``XDP_DROP`` program on the cpumap entry (``cpu_map_bpf_prog_run_xdp`` -> ``xdp_return_frame``):
  the destination only consumes the ring, runs the program and returns the page
  (``cpumap_drop_dst_cycles`` + the page's return + the frame's lines), no skb.

Which CPU limits the rate is an output (``cpumap.bottleneck``, its codes named in :mod:`skbmodel.schema`).

The cpumap path's cost (``cpumap.ns_per_packet``, the headline) is the busier CPU's, with every term the
rates have (:func:`placed`).  The destination's work is composed, stage by stage, in
:data:`skbmodel.composer.STARTS` (``cpumap``; XDP_PASS on one CPU is ``xdp_pass``); this module keeps the
source CPU, the placement, the rates and the rest of XDP_PASS.
"""
from __future__ import annotations

import numpy as np

from . import page_alloc, page_pool

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


#: bytes of one ptr_ring slot (a pointer, 64-bit kernels)
RING_SLOT_BYTES = 8


#: cachelines of the frame's headroom the source writes again when it reuses a page the destination read:
#: ``xdp_convert_buff_to_frame`` stores the ``struct xdp_frame`` at the head of the page's headroom
#: (include/net/xdp.h, v5.10-v6.12), which the kthread read in ``cpu_map_bpf_prog_run_xdp`` /
#: ``__xdp_build_skb_from_frame``: the store takes the line back from the destination (one line)
FRAME_RETURN_LINES = 1.0


def cross_node_lines(recycle_ratio, cacheline_bytes, return_lines):
    """Cachelines per delivered packet that move between the two CPUs on top of the frame's (``(src, dst)``).

    Source: the ring slot it writes (``8 / cacheline_bytes`` of a line per frame) and, per recycled page
    (``r``), the page's round trip back to it: ``return_lines`` of its ``struct page`` and the pool ring's
    slot (``page_pool_refill_alloc_cache``, net/core/page_pool.c), and :data:`FRAME_RETURN_LINES` when it
    writes the next frame's headroom into a line the destination still holds.  Destination: the ring slot
    it reads."""
    slot = RING_SLOT_BYTES / np.asarray(cacheline_bytes, dtype=float)
    r = np.clip(np.asarray(recycle_ratio, dtype=float), 0.0, 1.0)
    return slot + r * (return_lines + slot + FRAME_RETURN_LINES), slot


def sleep_fraction(src0_ns, dst0_ns, wake_src_ns, sleep_dst_ns, offered_mpps):
    """The fraction ``p`` of ``__cpu_map_flush`` calls that find the kthread asleep [1].

    Each flush (after every NAPI poll, ``cpumap_flush_packets`` frames under load) calls
    ``wake_up_process`` (kernel/bpf/cpumap.c ``__cpu_map_flush``, v5.10-v6.12); the kthread sleeps
    (``schedule()`` in ``cpu_map_kthread_run``) whenever it has emptied its ring.  Per flush, in time per
    packet: the source takes ``S(p) = S0 + p a`` (``a`` the wake-up's cost when the kthread sleeps), flushes
    come every ``T(p) = max(S(p), 1 / R)`` (``R`` the offered rate) and the destination needs
    ``D(p) = D0 + p b`` (``b`` its sleep and wake).  A kthread with time to spare sleeps after every flush:
    ``p = 1`` where ``D(1) <= T(1)``; one that never catches up never sleeps: ``p = 0`` where
    ``D(0) >= T(0)``; in between it sleeps as often as its spare time pays for, ``D(p) = T(p)``:
    ``p = (S0 - D0) / (b - a)`` while the source is the limit, ``(1 / R - D0) / b`` while the offered load is.
    ``src0_ns``, ``dst0_ns``: the times without wake-ups [ns]; ``wake_src_ns``, ``sleep_dst_ns``: the wake-up's
    cost per packet on each CPU when every flush finds the kthread asleep [ns]."""
    s0, d0 = np.asarray(src0_ns, dtype=float), np.asarray(dst0_ns, dtype=float)
    a, b = np.asarray(wake_src_ns, dtype=float), np.asarray(sleep_dst_ns, dtype=float)
    gap = 1e3 / np.asarray(offered_mpps, dtype=float)  # ns between packets at the offered rate
    with np.errstate(divide="ignore", invalid="ignore"):
        p_src = np.where(b > a, (s0 - d0) / np.where(b > a, b - a, 1.0), 1.0)
        p_off = (gap - d0) / np.where(b > 0, b, 1.0)
    p_mid = np.where(s0 + p_src * a >= gap, p_src, p_off)
    p = np.where(d0 + b <= np.maximum(s0 + a, gap), 1.0, np.where(d0 >= np.maximum(s0, gap), 0.0, p_mid))
    return np.clip(np.nan_to_num(p, nan=0.0), 0.0, 1.0)


def delivered_share(src0_ns, src_lines_ns, dst_ns, offered_mpps):
    """The share ``u`` of the source's frames that the destination takes [1]; the rest are dropped.

    ``bq_flush_to_queue`` (kernel/bpf/cpumap.c, v5.10-v6.12) drops a frame the full ring refuses with
    ``xdp_return_frame_rx_napi``: it goes back to the source's own page_pool and moves no line, so the
    source's per-packet time is ``S = S0 + u L`` (``L`` its line moves per delivered frame) and the
    destination takes ``u = min(1, (1 / D) / rate_src)``: source-bound, ``u = S0 / (D - L)``; offered-bound,
    ``u = 1 / (R D)``."""
    s0, lines, d = (np.asarray(v, dtype=float) for v in (src0_ns, src_lines_ns, dst_ns))
    gap = 1e3 / np.asarray(offered_mpps, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        u_src = np.where(d > s0 + lines, s0 / np.where(d > lines, d - lines, 1.0), 1.0)
        u = np.where(s0 + u_src * lines < gap, np.minimum(1.0, gap / d), u_src)
    return np.clip(np.nan_to_num(u, nan=1.0), 0.0, 1.0)


def placement_cycles(line_cycles, recycle_ratio, c):
    """The placement's moves per packet [cycles]: ``(source lines, destination lines, wake-up on the source,
    sleep on the destination, wake-up latency)``, the first two per delivered frame, the last three per packet
    when every flush finds the kthread asleep.

    ``line_cycles``: one line's move between the two CPUs at their level
    (:func:`skbmodel.physics.placement.line_cycles`).  Lines: the excess ``line - xcpu_line`` of each line of
    :func:`cross_node_lines` over the calibration's placement (seed 003: the same L3), whose moves are inside
    the fitted bases.  Wake-up: ``try_to_wake_up`` of the kthread on the other CPU once per
    ``cpumap_flush_packets``: ``cpumap_wake_cycles`` plus ``cpumap_wake_lines`` lines of its runqueue and task
    at the level; the destination's ``cpumap_sleep_cycles`` likewise.  Latency: the kthread runs only once the
    wake has reached its CPU, ``cpumap_wake_lines`` moves of those lines and one more for the interrupt that
    carries it (``ttwu_queue``: where the CPUs share no LLC, ``__ttwu_queue_wakelist`` ->
    ``send_call_function_single_ipi``; on one LLC the remote runqueue is written directly and the idle CPU
    woken by ``resched_curr``), each at the level: time the destination cannot work, though no CPU spends
    cycles on it."""
    line = np.asarray(line_cycles, dtype=float)
    src_lines, dst_lines = cross_node_lines(recycle_ratio, c["cacheline_bytes"], c["cpumap_return_lines"])
    excess = line - c["xcpu_line_cycles"]
    per = 1.0 / c["cpumap_flush_packets"]
    wake = per * (c["cpumap_wake_cycles"] + c["cpumap_wake_lines"] * line)
    latency = per * (c["cpumap_wake_lines"] + 1.0) * line
    return src_lines * excess, dst_lines * excess, wake, per * c["cpumap_sleep_cycles"], latency


def placed(src0, dst0, line_cycles, recycle_ratio, c, ghz, offered_mpps) -> dict:
    """The placement's terms on both CPUs [cycles per packet]: ``{"src": u * lines + p * wake, "dst": lines +
    p * sleep, "p": p_sleep, "u": delivered share}``.

    ``src0``, ``dst0``: each CPU's cycles on the same L3 without wake-ups (:func:`src_cycles`, the destination's
    composition or :func:`drop_dst_cycles`); ``offered_mpps``: the load the source is offered (the generator's,
    at most the link's line rate).  The kthread's sleeps (:func:`sleep_fraction`) follow from the two CPUs'
    rates per flush of ``cpumap_flush_packets`` frames: it sleeps after a flush only when it has drained that
    batch, the wake's latency included, before the next one comes; then no frame is dropped; where it does not
    keep up, the source's line moves follow the frames it delivers (:func:`delivered_share`).  Each CPU's cost
    is its own plus its term; the terms are its "cross-CPU transfer"."""
    s_lines, d_lines, wake, sleep, latency = placement_cycles(line_cycles, recycle_ratio, c)
    d0 = dst0 + d_lines
    ns = lambda cyc: cyc / ghz  # noqa: E731
    p = sleep_fraction(ns(src0 + s_lines), ns(d0), ns(wake), ns(sleep + latency), offered_mpps)
    u = np.where(p > 0, 1.0, delivered_share(ns(src0), ns(s_lines), ns(d0), offered_mpps))
    return {"src": u * s_lines + p * wake, "dst": d_lines + p * sleep, "p": p, "u": u}


def drop_dst_cycles(recycle_ratio, line_factor, c):
    """The destination with an XDP_DROP program on the cpumap entry [cycles], by component: the ring consume,
    the program and ``xdp_return_frame`` (``cpumap_drop_dst_cycles``, "rest of path"), the page's return to
    the source's pool ("page alloc/recycle") and the frame's lines ("cross-CPU transfer"); no skb."""
    ret = page_pool.return_side_cycles(recycle_ratio, line_factor, pp_ring_cycles=c["pp_ring_cycles"],
                                       page_slow_cycles=c["page_slow_cycles"],
                                       page_alloc_share=c["page_alloc_share"],
                                       xcpu_line_cycles=c["xcpu_line_cycles"])
    return {"page alloc/recycle": ret,
            "cross-CPU transfer": c["cpumap_xfer_lines"] * c["xcpu_line_cycles"] * line_factor,
            "rest of path": c["cpumap_drop_dst_cycles"]}


def bottleneck(src_ns, dst_ns, offered_mpps):
    """``cpumap.bottleneck`` code (its names in :mod:`skbmodel.schema`): 1 (destination CPU) where the
    destination is slower than the rate it is offered, else 0 (source CPU) where the source is slower than
    the offered load, else 2 (offered load)."""
    src_rate = np.minimum(offered_mpps, 1e3 / src_ns)
    return np.where(1e3 / dst_ns < src_rate, 1.0, np.where(1e3 / src_ns < offered_mpps, 0.0, 2.0))
