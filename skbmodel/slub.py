"""SLUB kmem_cache: one-at-a-time vs bulk alloc/free cost per object.

Structure (all costs in cycles per object, ``n`` objects allocated then freed):

* per-CPU fast path: ``kmem_cache_alloc`` + ``kmem_cache_free`` to the CPU slab cost
  ``fast_pair_cycles`` together; ``free_share`` of it is the free side.
* bulk API: one call pair costs ``bulk_call_pair = fast_pair - bulk_obj_pair`` (a bulk of one
  costs what one alloc+free costs: 43 vs 43 cycles in the table of kernel commit fbd02630c6e3,
  "slub: initial bulk free implementation") plus ``bulk_obj_pair_cycles`` per object.
* the per-CPU slab holds ``objects_per_slab = slab_bytes // object_bytes`` objects
  (skbuff_head_cache: 8192 // 256 = 32, seed 000).  A run of ``n >= objects_per_slab`` objects
  outgrows it: every slab's worth costs one slow-path refill (``refill_cycles``), and a fraction
  ``remote_fraction(n)`` of the frees hit a slab that is no longer the CPU slab and pay
  ``__slab_free`` (``free_slow_extra_cycles`` on top of the fast free).
* bulk free builds *detached freelists*: remote objects of one slab page are returned with one
  ``__slab_free``; the number of groups depends on slab-page locality (:func:`detached_freelists`).
* cache footprint: a run whose objects exceed the L1d (``n * object_bytes > l1d_bytes``) pays
  ``l1_miss_cycles`` for the share of objects that no longer fit.
"""
from __future__ import annotations

import numpy as np


def objects_per_slab(slab_bytes, object_bytes):
    """Objects in one slab [objects]: ``floor(slab_bytes / object_bytes)``.

    Reference: seed 000 (256 B skbuff_head_cache objects in an 8192 B order-1 slab = 32).
    """
    return np.floor(np.asarray(slab_bytes, dtype=float) / np.asarray(object_bytes, dtype=float))


def remote_fraction(n, objects_per_slab):
    """Fraction of the frees of a run of ``n`` objects that miss the CPU slab [0-1].

    Below the slab size the CPU slab serves the whole run (0).  From ``n >= objects_per_slab``
    on, the run spans slabs; only the objects of the last (current CPU) slab -- on average half
    a slab -- are freed locally: ``1 - S / (2 n)``.
    """
    n = np.asarray(n, dtype=float)
    s = np.asarray(objects_per_slab, dtype=float)
    return np.where(n >= s, 1.0 - s / (2.0 * np.maximum(n, 1.0)), 0.0)


def detached_freelists(k, objects_per_slab, locality):
    """Expected number of slab pages (detached freelists) among ``k`` objects freed in one bulk.

    ``groups = k - locality * (k - 1) * (1 - 1/S)``: objects allocated back to back
    (``locality = 1``) share pages, giving ``1 + (k-1)/S`` groups; scattered objects
    (``locality = 0``) give one group each.
    """
    k = np.asarray(k, dtype=float)
    s = np.asarray(objects_per_slab, dtype=float)
    return k - np.asarray(locality, dtype=float) * np.maximum(k - 1.0, 0.0) * (1.0 - 1.0 / s)


def footprint_cycles(n, object_bytes, l1d_bytes, l1_miss_cycles):
    """Cache-footprint penalty per object [cycles] for a run of ``n`` objects.

    ``l1_miss_cycles * clip(1 - l1d_bytes / (n * object_bytes), 0, 1)``
    """
    n = np.asarray(n, dtype=float)
    foot = np.maximum(n, 1.0) * np.asarray(object_bytes, dtype=float)
    return np.asarray(l1_miss_cycles, dtype=float) * np.clip(1.0 - l1d_bytes / foot, 0.0, 1.0)


def loop_pair_cycles(n, *, fast_pair_cycles, free_slow_extra_cycles, refill_cycles,
                     slab_bytes, object_bytes, l1d_bytes, l1_miss_cycles):
    """Alloc+free per object [cycles], objects allocated and freed one at a time.

    ``fast_pair + [n >= S] * refill / S + f(n) * free_slow_extra + footprint(n)``

    Reference: seed 004 ``kmem-in-loop`` (slab_bulk_test01); the slab-size step follows the
    fallback column of kernel commit fbd02630c6e3 (jump between bulk 30 and 32).
    """
    s = objects_per_slab(slab_bytes, object_bytes)
    n = np.asarray(n, dtype=float)
    spill = (n >= s).astype(float)
    return (fast_pair_cycles + spill * refill_cycles / s
            + remote_fraction(n, s) * free_slow_extra_cycles
            + footprint_cycles(n, object_bytes, l1d_bytes, l1_miss_cycles))


def bulk_call_pair_cycles(fast_pair_cycles, bulk_obj_pair_cycles):
    """Fixed cost of one ``kmem_cache_alloc_bulk`` + ``kmem_cache_free_bulk`` pair [cycles].

    ``fast_pair - bulk_obj_pair`` (a bulk of one costs one alloc+free; commit fbd02630c6e3).
    """
    return np.asarray(fast_pair_cycles, dtype=float) - np.asarray(bulk_obj_pair_cycles, dtype=float)


def bulk_pair_cycles(n, *, fast_pair_cycles, bulk_obj_pair_cycles, free_slow_extra_cycles,
                     refill_cycles, slab_bytes, object_bytes, l1d_bytes, l1_miss_cycles, slab_locality,
                     free_share=0.5):
    """Alloc+free per object [cycles] through the bulk API with bulk size ``n``.

    ``bulk_obj + call / n + [n >= S] * refill / S + (f(n)/S + [f>0]/n) * free_slow_extra + footprint(n)``

    where ``call = fast_pair - bulk_obj``; remote frees are grouped per slab page into detached
    freelists (``f(n) n`` remote objects of consecutive allocation span ``f n / S + 1`` pages).
    Reference: seed 004 ``kmem-bulk``; kernel commit d0ecd894e3d5 (detached freelists).
    """
    s = objects_per_slab(slab_bytes, object_bytes)
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    f = remote_fraction(n, s)
    remote = f * n
    groups = np.where(remote > 0, detached_freelists(remote, s, slab_locality), 0.0)
    call = bulk_call_pair_cycles(fast_pair_cycles, bulk_obj_pair_cycles)
    spill = (n >= s).astype(float)
    return (bulk_obj_pair_cycles + call / n + spill * refill_cycles / s
            + groups / n * free_slow_extra_cycles
            + footprint_cycles(n, object_bytes, l1d_bytes, l1_miss_cycles))


def free_one_cycles(*, fast_pair_cycles, free_share):
    """``kmem_cache_free`` to the CPU slab [cycles]: ``free_share * fast_pair``."""
    return np.asarray(free_share, dtype=float) * fast_pair_cycles


def alloc_bulk_cycles(n, *, fast_pair_cycles, bulk_obj_pair_cycles, free_share):
    """``kmem_cache_alloc_bulk`` per object [cycles] for a bulk of ``n`` served by the CPU slab.

    ``(1 - free_share) * (bulk_obj + call / n)``; ``n = 1`` equals the one-at-a-time ``kmem_cache_alloc``, ``(1 - free_share) * fast_pair``.
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
