"""Same-CPU ``skb_attempt_defer_free`` into the NAPI skb cache (seed 001).

A CPU-bound TCP ping-pong (netbench) frees each received skb on the CPU that allocated it.
Before the patch that free is ``__kfree_skb`` -> ``kmem_cache_free`` and the next RX skb comes from
``kmem_cache_alloc`` (the SLUB fast pair, ``slub_fast_pair_cycles``); with it the skb goes to the
NAPI cache (``napi_skb_cache_put`` under ``local_bh_disable``) and is handed out again by
``napi_skb_cache_get`` (``napi_cache_pair_cycles``).  Per request:

``T = base + (napi_cache_pair if cached else slub_fast_pair)``
"""
from __future__ import annotations

import numpy as np


def per_request_cycles(defer_cache, c):
    """Breakdown per request [cycles]: ``{"skb alloc+free", "rest of path"}``."""
    skb = np.where(defer_cache, c["napi_cache_pair_cycles"], c["slub_fast_pair_cycles"])
    return {"skb alloc+free": skb, "rest of path": c["napi_base_cycles"]}
