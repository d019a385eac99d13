"""veth ``ndo_xdp_xmit`` + XDP_PASS: skbs built for XDP frames, allocated in bulk (seed 002).

eth (ixgbe) -> XDP_REDIRECT -> veth0 -> veth1 XDP_PASS.  Per packet on the veth NAPI CPU:

``T = base + alloc_bulk(VETH_XDP_BATCH) + zero``

* ``alloc_bulk`` -- ``kmem_cache_alloc_bulk`` share per skb (:func:`skbmodel.slub.alloc_bulk_cycles`);
  ``VETH_XDP_BATCH = 1`` is the pre-patch one-at-a-time ``kmem_cache_alloc`` (row veth-01);
* ``zero`` -- ``memset(skb, 0, offsetof(struct sk_buff, tail))`` (rep stos, ``zero_bytes``) or
  ``__GFP_ZERO`` (memset_erms of the whole 256 B object), :mod:`skbmodel.zeroing`;
* ``base`` -- everything else (XDP redirect, veth ring, stack, skb and page free), one fitted constant.
"""
from __future__ import annotations

from . import slub, zeroing


def per_packet_cycles(xdp_batch, is_gfp_zero, zero_bytes, c):
    """Breakdown of the per-packet cost [cycles]: ``{"skb alloc", "zeroing", "rest of path"}``."""
    alloc = slub.alloc_bulk_cycles(xdp_batch, fast_pair_cycles=c["slub_fast_pair_cycles"],
                                   bulk_obj_pair_cycles=c["slub_bulk_obj_pair_cycles"],
                                   free_share=c["slub_free_share"])
    zero = zeroing.zero_skb_cycles(is_gfp_zero, zero_bytes, c["slub_object_bytes"], **c)
    return {"skb alloc": alloc, "zeroing": zero, "rest of path": c["veth_base_cycles"]}
