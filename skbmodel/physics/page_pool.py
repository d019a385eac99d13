"""Pages for packet data: page_pool recycling vs the page allocator.

Per page, alloc + return (bench_page_pool_simple, E5-1650 v4 @ 3.60GHz, J. Brouer on netdev,
2023: fast path 14, ptr_ring 49, slow path 162 cycles):

* direct recycle (``pp_fast_cycles``): returned in the pool's own NAPI context to its lockless cache;
* ptr_ring (``pp_ring_cycles``): returned from another CPU through the pool's ``ptr_ring``;
* slow path (``page_slow_cycles``): a page from the page allocator, freed back to it.

``page_alloc_share`` of each cost is paid where the page is allocated, the rest where it is
returned.  A page freed on a CPU other than the one that allocated it also pays a cross-CPU
cacheline transfer (``xcpu_line_cycles``), scaled by the line factor of the two CPUs' level
(:func:`skbmodel.physics.placement.line_factor`).
"""
from __future__ import annotations

import numpy as np


def recycle_mix_cycles(recycle_ratio, *, pp_ring_cycles, page_slow_cycles):
    """Per-page cost [cycles] when a fraction ``recycle_ratio`` comes back via the ptr_ring.

    ``r * ring + (1 - r) * slow``; monotone non-increasing in ``r`` when ``ring <= slow``.
    """
    r = np.clip(np.asarray(recycle_ratio, dtype=float), 0.0, 1.0)
    return r * pp_ring_cycles + (1.0 - r) * page_slow_cycles


def alloc_side_cycles(recycle_ratio, *, pp_ring_cycles, page_slow_cycles, page_alloc_share):
    """Share of :func:`recycle_mix_cycles` paid by the allocating (RX) CPU [cycles]."""
    return page_alloc_share * recycle_mix_cycles(recycle_ratio, pp_ring_cycles=pp_ring_cycles,
                                                 page_slow_cycles=page_slow_cycles)


def return_side_cycles(recycle_ratio, line_factor, *, pp_ring_cycles, page_slow_cycles,
                       page_alloc_share, xcpu_line_cycles):
    """Cost on the CPU that returns a page it did not allocate [cycles].

    ``(1 - share) * (r * ring * f + (1 - r) * slow) + (1 - r) * xcpu_line * f``: a page
    freed to the page allocator from a remote CPU also pulls its ``struct page`` cacheline across;
    the ptr_ring path is built for cross-CPU hand-over and only its ring cost grows with the level
    (``f``: the line factor, 1 on the same L3).
    """
    r = np.clip(np.asarray(recycle_ratio, dtype=float), 0.0, 1.0)
    f = np.asarray(line_factor, dtype=float)
    keep = 1.0 - np.asarray(page_alloc_share, dtype=float)
    return keep * (r * pp_ring_cycles * f + (1.0 - r) * page_slow_cycles) + (1.0 - r) * xcpu_line_cycles * f


def nosoftirq_cycles(test, direct_any_context, *, pp_fast_cycles, pp_ring_cycles, page_slow_cycles):
    """What bench_page_pool_simple's ``no-softirq-page_poolNN`` tests measure [cycles per page].

    The tests run in process context (the only ones the upstream selftest benchmark,
    ``tools/testing/selftests/net/bench/page_pool``, has kept).  ``test`` 1 recycles with
    ``page_pool_recycle_direct``: the fast path where the kernel recycles directly in any context
    (``direct_any_context``, :data:`skbmodel.machine.era.DIRECT_RECYCLE_ANY_CONTEXT`), else the same
    ptr_ring return as test 2; test 2 is ``page_pool_put_page`` into the ptr_ring; test 3 holds an
    extra reference so the page goes back to the page allocator (the slow path).  Published
    process-context and tasklet numbers of one run agree within a few cycles (Xeon Gold 6140:
    ring 45 vs 42, slow 118 vs 109; 2025-04 net-next: 19/46/121 vs 19/45/123), so no extra
    context cost is modelled.
    """
    t = np.asarray(test)
    fast = np.where(np.asarray(direct_any_context, dtype=bool), pp_fast_cycles, pp_ring_cycles)
    return np.where(t == 1, fast, np.where(t == 2, pp_ring_cycles, page_slow_cycles)) * np.ones(np.shape(t))
