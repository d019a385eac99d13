"""veth ``ndo_xdp_xmit`` + XDP_PASS: skbs built for XDP frames, allocated in bulk (seed 002).

eth (ixgbe) -> XDP_REDIRECT -> veth0 -> veth1 XDP_PASS.  Per packet on the veth NAPI CPU:

``T = base + alloc_bulk(VETH_XDP_BATCH) + zero``

* ``alloc_bulk`` -- ``kmem_cache_alloc_bulk`` share per skb (:func:`skbmodel.physics.slub.alloc_bulk_cycles`);
  ``VETH_XDP_BATCH = 1`` is the pre-patch one-at-a-time ``kmem_cache_alloc`` (row veth-01);
* ``zero`` -- ``memset(skb, 0, offsetof(struct sk_buff, tail))`` (rep stos, ``zero_bytes``) or
  ``__GFP_ZERO`` (memset_erms of the whole 256 B object), :mod:`skbmodel.physics.zeroing`;
* ``base`` -- everything else (XDP redirect, veth ring, stack, skb and page free), one fitted constant.

The path is composed, stage by stage, in :data:`skbmodel.composer.STARTS` (``veth``): skb head
``slab_bulk`` of ``VETH_XDP_BATCH``, zeroing by the sidebar's method, rest ``veth_base_cycles``.
"""
