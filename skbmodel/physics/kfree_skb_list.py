"""kfree_skb_list on the qdisc drop path (seed 000: pktgen ``queue_xmit`` mode into fq_codel).

pktgen injects skbs at the qdisc layer as fast as one CPU can; Ethernet flow control lets only
``wire_kpps`` reach the wire, fq_codel drops the rest in batches of ``drop_batch`` from the
fattest flow and frees each batch with ``kfree_skb_list``.  Per injected packet:

``T = base + d * F``,  with drop fraction ``d = 1 - W * T`` (W = wire rate)  =>
``T = (base + F) / (1 + W * F)``  (``d`` clipped to [0, 1])

``F`` is the free cost of one dropped skb head (:func:`skbmodel.physics.slub.free_remote_list_cycles`):
one at a time (``KFREE_SKB_BULK_SIZE = 1``) or through the stack array of
``KFREE_SKB_BULK_SIZE`` entries and ``kmem_cache_free_bulk``.  ``base`` (pktgen skb alloc, qdisc
enqueue, fq_codel, freeing the data buffer) is the scenario's one fitted constant.  The path is
composed in :data:`skbmodel.composer.STARTS` (``kfree_skb_list``).
"""
from __future__ import annotations

import numpy as np

from . import slub, units


def free_per_drop_cycles(kfl_bulk, drop_batch, clone_fraction, c):
    """Free cost of one dropped skb [cycles] (see module docstring); ``c``: profile constants."""
    return slub.free_remote_list_cycles(
        drop_batch, kfl_bulk, clone_fraction,
        fast_pair_cycles=c["slub_fast_pair_cycles"], bulk_obj_pair_cycles=c["slub_bulk_obj_pair_cycles"],
        free_share=c["slub_free_share"], free_slow_extra_cycles=c["slub_free_slow_extra_cycles"],
        slab_bytes=c["slub_slab_bytes"], object_bytes=c["slub_object_bytes"],
        slab_locality=c["slab_locality"])


def drop_feedback_ns(base_ns, free_ns, wire_kpps):
    """``(ns per injected packet, drop fraction)`` when only the dropped share is freed [ns, 1].

    ``T = (base + F) / (1 + W F)``, ``d = clip(1 - W T, 0, 1)``, then ``T = base + d F`` (a wire
    faster than the injection drops nothing).
    """
    w_per_ns = wire_kpps * 1e3 / units.NS_PER_S
    t_ns = (base_ns + free_ns) / (1.0 + w_per_ns * free_ns)
    d = np.clip(1.0 - w_per_ns * t_ns, 0.0, 1.0)
    return base_ns + d * free_ns, d
