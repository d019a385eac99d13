"""SLUB kmem_cache: one-at-a-time vs bulk alloc/free cost per object.

Structure (all costs in cycles per object; a run allocates ``n`` objects, then frees them, as
``slab_bulk_test01`` does):

* per-CPU fast path: ``kmem_cache_alloc`` + ``kmem_cache_free`` to the CPU slab cost
  ``fast_pair_cycles`` together; ``free_share`` of it is the free side.  A run done one object at a
  time also pays ``loop_call_cycles`` once per run (the generic ``__kmem_cache_alloc_bulk`` /
  ``__kmem_cache_free_bulk`` fallback's calls and loop set-up), amortised over ``n``.
* bulk API: one call pair costs ``bulk_call_pair = fast_pair - bulk_obj_pair`` (a bulk of one
  costs what one alloc+free costs: 43 vs 43 cycles in the table of kernel commit fbd02630c6e3,
  "slub: initial bulk free implementation") plus ``bulk_obj_pair_cycles`` per object.
* the per-CPU slab has ``fill = fill_fraction * objects_per_slab`` free objects when a run starts
  (``objects_per_slab = slab_bytes // object_bytes``; skbuff_head_cache: 8192 // 256 = 32, seed 000).
  A longer run takes :func:`new_slabs` fresh slabs (``refill_cycles`` each, the ``___slab_alloc``
  slow path), and every object that is not in the last of them -- :func:`remote_objects` -- is
  freed to a slab that is no longer the CPU slab: one at a time, each pays ``__slab_free``
  (``free_slow_extra_cycles`` on top of the fast free); in bulk, the detached freelists group
  them per slab page, one ``__slab_free`` per page (:func:`detached_freelists`).  This is the
  saw-tooth of the published fallback curves: +49 cycles per object at bulk 34, falling to +26 at
  64 as the one remote slab is shared by more objects, rising again with every further slab.
* cache footprint: a run whose objects overflow the usable part of the L1d (or the L2) pays the
  miss latency on the share of objects that no longer fit (:func:`footprint_cycles`).
"""
from __future__ import annotations

import functools

import numpy as np



def objects_per_slab(slab_bytes, object_bytes):
    """Objects in one slab [objects]: ``floor(slab_bytes / object_bytes)``.

    Reference: seed 000 (256 B skbuff_head_cache objects in an 8192 B order-1 slab = 32).
    """
    return np.floor(np.asarray(slab_bytes, dtype=float) / np.asarray(object_bytes, dtype=float))


def fill_objects(objects_per_slab, fill_fraction=1.0):
    """Free objects in the per-CPU slab when a run starts [objects]: ``fill_fraction * S``.

    In ``slab_bulk_test01`` every run frees what it allocated, so the CPU slab starts full
    (``fill_fraction = 1``); the published fallback curves put the step between bulk 32 and 34
    (``fill = 32``, kernel commit d0ecd894e3d5's table) or between 30 and 32 (kernel commit
    fbd02630c6e3's table): the fill level is known to about one object.
    """
    return np.asarray(fill_fraction, dtype=float) * np.asarray(objects_per_slab, dtype=float)


def new_slabs(n, fill, objects_per_slab):
    """Fresh slabs a run of ``n`` objects takes from the slow path [slabs].

    ``ceil((n - fill) / S)`` for ``n > fill``, else 0: the first ``fill`` objects come from the CPU
    slab, every further ``S`` from one more slab.
    """
    n = np.asarray(n, dtype=float)
    s = np.asarray(objects_per_slab, dtype=float)
    return np.where(n > fill, np.ceil((n - fill) / s - 1e-9), 0.0)


def remote_objects(n, fill, objects_per_slab):
    """Objects of a run of ``n`` freed to a slab that is no longer the CPU slab [objects].

    Once the run has taken ``k = new_slabs(n)`` slabs, the CPU slab is the last one, holding the
    run's tail ``n - fill - (k - 1) S``; every other object is remote: ``n - tail``.
    """
    n = np.asarray(n, dtype=float)
    s = np.asarray(objects_per_slab, dtype=float)
    k = new_slabs(n, fill, s)
    tail = n - fill - np.maximum(k - 1.0, 0.0) * s
    return np.where(k > 0, n - tail, 0.0)


def detached_freelists(k, objects_per_slab, locality):
    """Expected number of slab pages (detached freelists) among ``k`` objects freed in one bulk.

    ``groups = k - locality * (k - 1) * (1 - 1/S)``: objects allocated back to back
    (``locality = 1``) share pages, giving ``1 + (k-1)/S`` groups; scattered objects
    (``locality = 0``) give one group each.
    """
    k = np.asarray(k, dtype=float)
    s = np.asarray(objects_per_slab, dtype=float)
    return k - np.asarray(locality, dtype=float) * np.maximum(k - 1.0, 0.0) * (1.0 - 1.0 / s)


def footprint_cycles(n, object_bytes, l1d_bytes, l1_miss_cycles, l1_usable_fraction=1.0,
                     l2_bytes=np.inf, l2_miss_cycles=0.0):
    """Cache-footprint penalty per object [cycles] for a run of ``n`` objects.

    ``l1_miss * clip(1 - u * l1d / (n * object), 0, 1) + l2_miss * clip(1 - u * l2 / (n * object), 0, 1)``

    ``u`` (``l1_usable_fraction``) is the share of each cache the run's objects can have: the
    stack, the pointer array, the slab metadata and the code take the rest.  The published
    kmem_cache_alloc_bulk curves of 256 B objects start to rise at bulk ~96 (24 KiB, not the full
    32 KiB) -- kernel commit d0ecd894e3d5's table.
    """
    n = np.asarray(n, dtype=float)
    foot = np.maximum(n, 1.0) * np.asarray(object_bytes, dtype=float)
    u = np.asarray(l1_usable_fraction, dtype=float)
    return (np.asarray(l1_miss_cycles, dtype=float) * np.clip(1.0 - u * l1d_bytes / foot, 0.0, 1.0)
            + np.asarray(l2_miss_cycles, dtype=float) * np.clip(1.0 - u * l2_bytes / foot, 0.0, 1.0))


def loop_pair_cycles(n, *, fast_pair_cycles, free_slow_extra_cycles, refill_cycles, slab_bytes,
                     object_bytes, l1d_bytes, l1_miss_cycles, loop_call_cycles=0.0, fill_fraction=1.0,
                     l1_usable_fraction=1.0, l2_bytes=np.inf, l2_miss_cycles=0.0):
    """Alloc+free per object [cycles], objects allocated and freed one at a time.

    ``fast_pair + loop_call / n + (refill * new_slabs(n) + free_slow_extra * remote_objects(n)) / n + footprint(n)``

    Reference: seed 004 ``kmem-in-loop`` (slab_bulk_test01); the fallback columns of kernel
    commits fbd02630c6e3 and d0ecd894e3d5 (step past the CPU slab's 30-32 objects, then a
    saw-tooth with one more slab every 32 objects).
    """
    s = objects_per_slab(slab_bytes, object_bytes)
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    fill = fill_objects(s, fill_fraction)
    return (fast_pair_cycles + np.asarray(loop_call_cycles, dtype=float) / n
            + (refill_cycles * new_slabs(n, fill, s) + free_slow_extra_cycles * remote_objects(n, fill, s)) / n
            + footprint_cycles(n, object_bytes, l1d_bytes, l1_miss_cycles, l1_usable_fraction, l2_bytes,
                               l2_miss_cycles))


def bulk_call_pair_cycles(fast_pair_cycles, bulk_obj_pair_cycles):
    """Fixed cost of one ``kmem_cache_alloc_bulk`` + ``kmem_cache_free_bulk`` pair [cycles].

    ``fast_pair - bulk_obj_pair`` (a bulk of one costs one alloc+free; commit fbd02630c6e3).
    """
    return np.asarray(fast_pair_cycles, dtype=float) - np.asarray(bulk_obj_pair_cycles, dtype=float)


def bulk_pair_cycles(n, *, fast_pair_cycles, bulk_obj_pair_cycles, free_slow_extra_cycles,
                     refill_cycles, slab_bytes, object_bytes, l1d_bytes, l1_miss_cycles, slab_locality,
                     fill_fraction=1.0, l1_usable_fraction=1.0, l2_bytes=np.inf, l2_miss_cycles=0.0,
                     loop_call_cycles=0.0):
    """Alloc+free per object [cycles] through the bulk API with bulk size ``n``.

    ``bulk_obj + call / n + (refill * k + groups * free_slow_extra) / n + footprint(n)``

    where ``call = fast_pair - bulk_obj``, ``k = new_slabs(n)`` and the remote objects are freed
    as detached freelists, one ``__slab_free`` per slab page: ``groups = locality * k +
    (1 - locality) * remote_objects(n)`` (back-to-back allocations fill whole slabs; scattered
    ones give one group per object).
    Reference: seed 004 ``kmem-bulk``; kernel commit d0ecd894e3d5 (detached freelists).
    """
    s = objects_per_slab(slab_bytes, object_bytes)
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    fill = fill_objects(s, fill_fraction)
    k = new_slabs(n, fill, s)
    loc = np.asarray(slab_locality, dtype=float)
    groups = loc * k + (1.0 - loc) * remote_objects(n, fill, s)
    call = bulk_call_pair_cycles(fast_pair_cycles, bulk_obj_pair_cycles)
    return (bulk_obj_pair_cycles + call / n + (refill_cycles * k + groups * free_slow_extra_cycles) / n
            + footprint_cycles(n, object_bytes, l1d_bytes, l1_miss_cycles, l1_usable_fraction, l2_bytes,
                               l2_miss_cycles))


def init_on_alloc_cycles(init_on_alloc, memset_cycles):
    """Clearing of every object SLUB hands out with ``init_on_alloc=1`` [cycles per object].

    ``memset_cycles`` (the ``memset`` of one object: :func:`skbmodel.physics.zeroing.erms_cycles` of the
    object size, ``erms_setup + erms_line * ceil(object_bytes / cacheline_bytes)``) when ``init_on_alloc`` is 1,
    else 0 (exactly: the default adds nothing).

    With ``init_on_alloc=1`` (boot option, or CONFIG_INIT_ON_ALLOC_DEFAULT_ON) ``slab_want_init_on_alloc``
    is true for every cache without a constructor or SLAB_TYPESAFE_BY_RCU, and SLUB clears each object with
    ``memset(obj, 0, s->object_size)`` before returning it: once per ``kmem_cache_alloc`` and once per
    object of ``kmem_cache_alloc_bulk`` (kernel commit 6471384af2a6, "mm: security: introduce
    init_on_alloc=1 and init_on_free=1 boot options", Alexander Potapenko, v5.3; since v5.13 the clear
    is in ``slab_post_alloc_hook``, kernel commit da844b787245).  The length is a run-time value, so the
    out-of-line ``memset`` runs: ``rep stosb`` on ERMS CPUs, priced with the profile's
    :func:`skbmodel.physics.zeroing.erms_cycles` constants (seed 002, time_bench_memset: 256 B 31, 512 B 35
    cycles on the E5-1650 v4).  No constant of its own.

    Not covered: the objects are taken as cache-hot, as in time_bench_memset (a run whose objects
    overflow the caches pays the clear's store misses beyond :func:`footprint_cycles`' one line per
    object); objects above :data:`KMALLOC_MAX_CACHE_BYTES` come from the page allocator, which
    init_on_alloc also clears (``kernel_init_pages``), and that clear is not modelled; nor is
    ``init_on_free``; and the per-packet paths (veth, cpumap, kfree_skb_list, Design) do not change with
    this parameter.  On arm64 profiles the same constants price the clear, although their ``memset``
    is not ``rep stosb``.
    """
    on = np.asarray(init_on_alloc, dtype=float) > 0.5  # a bool (the model's switch) or 0/1
    return np.where(on, memset_cycles, 0.0)


def free_one_cycles(*, fast_pair_cycles, free_share):
    """``kmem_cache_free`` to the CPU slab [cycles]: ``free_share * fast_pair``."""
    return np.asarray(free_share, dtype=float) * fast_pair_cycles


def alloc_bulk_cycles(n, *, fast_pair_cycles, bulk_obj_pair_cycles, free_share):
    """``kmem_cache_alloc_bulk`` per object [cycles] for a bulk of ``n`` served by the CPU slab.

    ``(1 - free_share) * (bulk_obj + call / n)``; ``n = 1`` equals the one-at-a-time
    ``kmem_cache_alloc``, ``(1 - free_share) * fast_pair``.
    """
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    call = bulk_call_pair_cycles(fast_pair_cycles, bulk_obj_pair_cycles)
    return (1.0 - np.asarray(free_share, dtype=float)) * (bulk_obj_pair_cycles + call / n)


def free_remote_list_cycles(batch, bulk, clone_fraction, *, fast_pair_cycles, bulk_obj_pair_cycles,
                            free_share, free_slow_extra_cycles, slab_bytes, object_bytes, slab_locality):
    """Free side per object [cycles] of a list of ``batch`` objects that are *not* in the CPU slab.

    This is ``kfree_skb_list`` on the qdisc drop path: the skbs were allocated long before they are
    dropped, so every free is a remote ``__slab_free``.  With ``bulk == 1`` each object costs
    ``free_fast + free_slow_extra``.  With ``bulk = k > 1`` the list is cut into ``ceil(batch/k)``
    ``kmem_cache_free_bulk`` calls; each call of ``m`` objects costs
    ``free_share * (call + m * bulk_obj) + groups(m) * free_slow_extra``.  Clones
    (``clone_fraction``, fclone != SKB_FCLONE_UNAVAILABLE) always take the single free.

    Reference: seed 000 (KFREE_SKB_BULK_SIZE = 16, fq_codel drop_batch = 64).
    """
    batch = np.maximum(np.asarray(batch, dtype=float), 1.0)
    c = np.clip(np.asarray(clone_fraction, dtype=float), 0.0, 1.0)
    k = np.clip(np.asarray(bulk, dtype=float), 1.0, None)
    s = objects_per_slab(slab_bytes, object_bytes)
    fs = np.asarray(free_share, dtype=float)
    single = fs * fast_pair_cycles + free_slow_extra_cycles
    # the non-clone part of the list goes through the bulk array
    m_total = np.maximum(batch * (1.0 - c), 0.0)
    k_eff = np.minimum(k, np.maximum(m_total, 1.0))
    full = np.floor(m_total / k_eff)
    rem = m_total - full * k_eff
    calls = full + (rem > 0)
    groups = full * detached_freelists(k_eff, s, slab_locality) + np.where(
        rem > 0, detached_freelists(np.maximum(rem, 1.0), s, slab_locality), 0.0)
    call = bulk_call_pair_cycles(fast_pair_cycles, bulk_obj_pair_cycles)
    bulk_total = fs * (calls * call + m_total * bulk_obj_pair_cycles) + groups * free_slow_extra_cycles
    bulk_per_obj = np.where(m_total > 0, bulk_total / np.maximum(m_total, 1e-12), single)
    per_obj = c * single + (1.0 - c) * bulk_per_obj
    return np.where(k <= 1.0, single, per_obj)


# ---- object size: slab order, objects per slab, kmalloc buckets, the page-allocator hand-over ----
#: x86-64 PAGE_SIZE [bytes]
PAGE_BYTES = 4096
#: ``slub_max_order`` default: PAGE_ALLOC_COSTLY_ORDER = 3 (mm/slub.c, include/linux/mmzone.h)
SLUB_MAX_ORDER = 3
#: MAX_OBJS_PER_PAGE in mm/slub.c (the objects count of a slab is a 15-bit field)
MAX_OBJS_PER_PAGE = 32767
#: KMALLOC_MAX_CACHE_SIZE for SLUB = 2 * PAGE_SIZE (include/linux/slab.h: KMALLOC_SHIFT_HIGH =
#: PAGE_SHIFT + 1): larger kmalloc() requests go to the page allocator (``kmalloc_large``)
KMALLOC_MAX_CACHE_BYTES = 2 * PAGE_BYTES
#: the kmalloc caches of x86-64 (kmalloc-8 ... kmalloc-8k, with the 96 and 192 byte caches;
#: include/linux/slab.h, mm/slab_common.c kmalloc_info[])
KMALLOC_CACHE_BYTES = (8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192)
#: largest page order the buddy allocator hands out: MAX_PAGE_ORDER = 10 (4 MiB) on x86-64
MAX_PAGE_ORDER = 10


def get_order(size_bytes, page_bytes=PAGE_BYTES):
    """The kernel's ``get_order()``: smallest ``o`` with ``page_bytes << o >= size`` (``size >= 1``)."""
    s = np.maximum(np.asarray(size_bytes, dtype=float), 1.0)
    return np.maximum(np.ceil(np.log2(s / page_bytes) - 1e-12), 0.0)


def order_objects(order, size_bytes, page_bytes=PAGE_BYTES):
    """Objects in a slab of ``order`` [objects]: ``(page_bytes << order) // size``."""
    return np.floor(page_bytes * np.exp2(np.asarray(order, dtype=float)) / np.asarray(size_bytes, dtype=float))


def min_objects(nr_cpus):
    """``slub_min_objects`` when not set on the command line: ``4 * (fls(nr_cpus) + 1)`` (mm/slub.c)."""
    n = np.maximum(np.asarray(nr_cpus, dtype=float), 1.0)
    fls = np.floor(np.log2(n)) + 1.0
    return 4.0 * (fls + 1.0)


def calculate_order(size_bytes, nr_cpus=12, max_order=SLUB_MAX_ORDER, min_order=0, page_bytes=PAGE_BYTES):
    """Slab page order SLUB gives a cache of ``size_bytes`` objects (vectorised).

    ``calculate_order()`` of mm/slub.c since v6.8 ("mm/slub: attempt to find layouts up to 1/2
    waste", Vlastimil Babka): ``min_objects = min(4 (fls(nr_cpus) + 1), objects at max_order)``;
    start at ``max(min_order, get_order(min_objects * size))`` and take the smallest order up to
    ``max_order`` whose leftover ``slab % size`` is at most 1/16 of the slab, else 1/8, then 1/4;
    if none fits (an object larger than an order-``max_order`` slab), ``get_order(size)``.
    ``nr_cpus`` (present CPUs) defaults to the E5-1650 v4's 12 threads: 256 B objects then get
    order 1 and 32 objects per slab, the skbuff_head_cache of seed 000.
    """
    size = np.maximum(np.asarray(size_bytes, dtype=float), 1.0)
    max_objs = np.maximum(order_objects(max_order, size, page_bytes), 1.0)
    mo = np.minimum(min_objects(nr_cpus), max_objs)
    start = np.maximum(float(min_order), get_order(mo * size, page_bytes))
    orders = np.arange(0, max_order + 1, dtype=float).reshape((-1,) + (1,) * size.ndim)
    slab = page_bytes * np.exp2(orders)
    rem = np.mod(slab, size)
    usable = (orders >= start) & (order_objects(orders, size, page_bytes) >= 1)
    out = np.full(np.broadcast_shapes(size.shape, np.shape(start)), np.nan)
    for fraction in (16.0, 8.0, 4.0, 2.0):  # four waste limits, not a loop over grid points
        ok = usable & (rem <= slab / fraction)
        first = np.where(ok.any(axis=0), np.argmax(ok, axis=0), -1).astype(float)
        out = np.where(np.isnan(out) & (first >= 0), first, out)
    too_many = order_objects(start, size, page_bytes) > MAX_OBJS_PER_PAGE
    out = np.where(too_many, get_order(size * MAX_OBJS_PER_PAGE, page_bytes) - 1.0, out)
    return np.where(np.isnan(out), get_order(size, page_bytes), out)


def kmalloc_bytes(request_bytes):
    """Bytes a ``kmalloc(request)`` really takes (vectorised): the smallest kmalloc cache that holds
    it, or above :data:`KMALLOC_MAX_CACHE_BYTES` the whole order-``get_order`` page block."""
    req = np.asarray(request_bytes, dtype=float)
    caches = np.asarray(KMALLOC_CACHE_BYTES, dtype=float)
    idx = np.searchsorted(caches, req, side="left")
    bucket = caches[np.minimum(idx, caches.size - 1)]
    pages = PAGE_BYTES * np.exp2(get_order(req))
    return np.where(req > KMALLOC_MAX_CACHE_BYTES, pages, bucket)


def is_page_allocator(request_bytes):
    """Whether ``kmalloc(request)`` bypasses the slab caches (``kmalloc_large``: an order-N page
    alloc and ``free_pages`` on kfree)."""
    return np.asarray(request_bytes, dtype=float) > KMALLOC_MAX_CACHE_BYTES


def slab_geometry(object_bytes, nr_cpus=12):
    """``(order, slab_bytes, objects_per_slab, waste_fraction)`` of a SLUB cache of ``object_bytes``."""
    order = calculate_order(object_bytes, nr_cpus)
    slab = PAGE_BYTES * np.exp2(order)
    objs = order_objects(order, object_bytes)
    waste = (slab - objs * np.asarray(object_bytes, dtype=float)) / slab
    return order, slab, objs, waste


def large_kmalloc_pair_cycles(request_bytes, *, page_single_cycles, compound_page_cycles):
    """kmalloc + kfree above the largest kmalloc cache [cycles]: an order-N page block from the
    page allocator and back, ``page_single + (2^N - 1) * compound_page`` (each tail page of the
    compound page is initialised and torn down).  Reference points: order 0 alloc+free 199 cycles
    (corpus pa-e51650v4-2021-bulk-rebase-v5r9-single), order 3 (32 KiB) 514 cycles (corpus
    pa-2023-jesper-order3, page_bench01, same test lab): (514 - 199) / 7 = 45 cycles per extra page.
    """
    pages = np.exp2(get_order(request_bytes))
    return page_single_cycles + (pages - 1.0) * compound_page_cycles


#: Each further page of an order-N page block, relative to an order-0 alloc+free [1]: on the E5-1650 v4
#: order 0 costs 199 cycles (corpus pa-e51650v4-2021-bulk-rebase-v5r9-single) and order 3 (32 KiB) 514
#: cycles (corpus pa-2023-jesper-order3, page_bench01, same test lab): (514 - 199) / 7 / 199 = 0.226,
#: 45 cycles per tail page of the compound page.  Scaled by a profile's ``page_single_cycles``.
COMPOUND_PAGE_SHARE = (514.0 - 199.0) / 7.0 / 199.0


@functools.lru_cache(maxsize=4)
def _order_table(nr_cpus) -> np.ndarray:
    """:func:`calculate_order` of every whole size ``0 .. KMALLOC_MAX_CACHE_BYTES`` (one byte each): the
    slab sizes the model looks up instead of running the kernel's search once per state."""
    return calculate_order(np.arange(KMALLOC_MAX_CACHE_BYTES + 1, dtype=float), nr_cpus).astype(np.uint8)


def scenario_geometry(object_bytes, profile_object_bytes, profile_slab_bytes, nr_cpus=12):
    """``(slab_bytes, objects_per_slab)`` of a SLUB cache of ``object_bytes`` (vectorised).

    The profile states the slab of its own object size (the skbuff_head_cache of seed 000: 256 B in
    8192 B); any other size gets the slab :func:`calculate_order` gives it on an ``nr_cpus`` machine.
    Above :data:`KMALLOC_MAX_CACHE_BYTES` an object is one order-``get_order`` page block of its own
    (one object per "slab").
    """
    obj = np.asarray(object_bytes, dtype=float)
    if np.all(obj == profile_object_bytes):  # the profile's own cache: nothing to compute
        slab = np.broadcast_to(np.asarray(profile_slab_bytes, dtype=float), obj.shape)
        return slab, objects_per_slab(slab, obj)
    large = is_page_allocator(obj)
    if np.all(obj == np.floor(obj)):  # whole sizes (the parameter is an integer): a lookup
        order = _order_table(nr_cpus)[np.clip(obj, 0.0, KMALLOC_MAX_CACHE_BYTES).astype(np.int64)].astype(float)
    else:
        order = calculate_order(obj, nr_cpus)
    slab = np.where(obj == profile_object_bytes, profile_slab_bytes, PAGE_BYTES * np.exp2(order))
    slab = np.where(large, PAGE_BYTES * np.exp2(get_order(obj)), slab)
    return slab, np.where(large, 1.0, objects_per_slab(slab, obj))


def slab_refill_cycles(slab_bytes, *, refill_cycles, profile_slab_bytes, page_single_cycles):
    """The slow path that takes a fresh slab [cycles per slab]: the profile's ``refill_cycles`` for a
    slab of its own size, plus or minus :data:`COMPOUND_PAGE_SHARE` ``* page_single`` for each page a
    slab of ``slab_bytes`` has more or fewer (an order-N slab is one compound page from the page
    allocator, and goes back as one when it is discarded).

    ``refill + (slab - profile_slab) / PAGE_BYTES * share * page_single``
    """
    extra_pages = (np.asarray(slab_bytes, dtype=float) - profile_slab_bytes) / PAGE_BYTES
    return refill_cycles + extra_pages * COMPOUND_PAGE_SHARE * page_single_cycles
