"""The page allocator for order-0 pages: one at a time vs ``alloc_pages_bulk`` (kernel 5.13+).

Per page, alloc + free (``page_bench04_bulk`` of the prototype-kernel: the pages of one bulk call
are allocated, then freed one by one):

* one page at a time (``page_single_cycles``): ``__alloc_pages`` + ``__free_page`` through the
  per-CPU page lists (pcp);
* in bulk of ``n`` into an array: one call (``page_bulk_call_cycles``: the zone and pcp-list set-up,
  the local lock) plus ``page_bulk_page_cycles`` per page taken off the pcp list.  A bulk of one
  falls back to ``__alloc_pages`` (kernel commit 387ba26fb1cb, "mm/page_alloc: add a bulk page
  allocator"), so it costs one page at a time;
* a call asking for more pages than the per-CPU list holds (``pcp_high_pages``) sends the rest
  through the buddy allocator's zone lock, ``page_buddy_extra_cycles`` more per page.

page_pool refills its cache from the page allocator in bulk (``PP_ALLOC_CACHE_REFILL`` = 64 pages,
net/core/page_pool.c), so a recycling miss costs the bulk per-page cost, not the single-page one.
"""
from __future__ import annotations

import numpy as np

#: pages page_pool asks the page allocator for when its cache runs dry (net/core/page_pool.c)
PP_ALLOC_CACHE_REFILL = 64

#: the constants of :func:`bulk_cycles`, by keyword
CONSTANTS = ("page_single_cycles", "page_bulk_page_cycles", "page_bulk_call_cycles", "pcp_high_pages",
             "page_buddy_extra_cycles")


def bulk_cycles(n, *, page_single_cycles, page_bulk_page_cycles, page_bulk_call_cycles,
                pcp_high_pages, page_buddy_extra_cycles):
    """Alloc+free per page [cycles] for order-0 pages allocated in bulk calls of ``n`` pages.

    ``single`` for ``n = 1``, else ``bulk_page + bulk_call / n + buddy_extra * max(n - pcp_high, 0) / n``

    Reference: the array-variant columns of the ``page_bench04_bulk`` tables in the 2021
    ``alloc_pages_bulk`` threads (E5-1650 v4: 195 cycles at bulk 1, 127 at 2, 97 at 128), and the
    2017 list-based RFC (a step past bulk 128 where the pcp list runs dry).
    """
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    bulk = (np.asarray(page_bulk_page_cycles, dtype=float) + np.asarray(page_bulk_call_cycles, dtype=float) / n
            + np.asarray(page_buddy_extra_cycles, dtype=float) * np.maximum(n - pcp_high_pages, 0.0) / n)
    return np.where(n < 1.5, np.asarray(page_single_cycles, dtype=float) + 0.0 * n, bulk)


def refill_extra_cycles(n, c):
    """Extra cost per page [cycles] of page_pool's slow path when it refills in bulk of ``n`` pages.

    ``bulk_cycles(n) - bulk_cycles(64)``: ``page_slow_cycles`` is measured with the kernel's refill
    of :data:`PP_ALLOC_CACHE_REFILL` pages (bench_page_pool_simple), and only the allocation side
    depends on the refill size (pages are freed one at a time either way).  Paid on the
    allocating CPU; 0 at ``n = 64``.
    """
    kw = {k: c[k] for k in CONSTANTS}
    return bulk_cycles(n, **kw) - bulk_cycles(PP_ALLOC_CACHE_REFILL, **kw)
