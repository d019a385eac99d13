"""What the "rest of path" of each modelled path contains, and what a Design stage may add to it.

Each path's breakdown (:func:`skbmodel.model.path_breakdown`) ends in one fitted constant, the
"rest of path": everything the benchmark measured that the sub-models do not cost separately.
:data:`CONTENTS` states, per path, which kernel functions and costs that constant holds, which
constant it is, and where it was fitted; the Overview and Design pages show it.

A Design stage can duplicate what a rest holds.  The veth rest contains the skb's free (one
``kmem_cache_free`` per skb, from ``kfree_skb`` when the stack drops the packet) and the page
handling of the ixgbe RX buffer.  So, with the veth rest:

* a **skb free** stage replaces the rest's own free: :func:`overlap_cycles` subtracts one
  ``kmem_cache_free`` (:func:`skbmodel.physics.slub.free_one_cycles`) from the rest, and
  :func:`notes` says so;
* an **RX buffer** stage replaces the rest's own RX page: :func:`rx_overlap_cycles` subtracts the part of
  the rest that the rest's published perf profile names as the page's handling (the stages
  :data:`RX_PAGE_STAGES`: the page allocator and page_pool, ``skbmodel/data/rest-fractions.json``), and
  :func:`notes` says so.
"""
from __future__ import annotations

import dataclasses

import numpy as np



@dataclasses.dataclass(frozen=True)
class Rest:
    constant: str          # the fitted constant (or the expression) the rest is
    contains: str          # kernel functions and costs inside it
    source: str            # where it was fitted / where the split is stated
    #: the breakdown's components (skbmodel.schema.COMPONENTS) whose cost this path's rest holds, so that
    #: the path shows them as 0: what ``contains`` says is inside
    holds: tuple[str, ...] = ()


CONTENTS: dict[str, Rest] = {
    "veth": Rest(
        "veth_base_cycles",
        "ixgbe RX and its XDP_REDIRECT (ndo_xdp_xmit into the veth ptr_ring), veth_xdp_rcv and the XDP_PASS "
        "program, building the skb around the frame (build_skb_around, eth_type_trans), the stack up to where "
        "the packet is dropped, the skb's free (kfree_skb -> kfree_skbmem -> kmem_cache_free, one at a time) and "
        "the RX page's refcount and return; not inside: the skb head's kmem_cache_alloc_bulk share and its zeroing",
        "fitted to seed 002 rows veth-01..veth-06 (veth XDP_PASS with VETH_XDP_BATCH 1-16, memset vs "
        "__GFP_ZERO); the split is skbmodel/physics/veth.py's",
        ("page alloc/recycle", "skb free")),
    "cpumap": Rest(
        "cpumap_dst_stack_cycles",
        "on the destination CPU: cpu_map_kthread_run's loop, __xdp_build_skb_from_frame without the skb head "
        "and its zeroing, netif_receive_skb_list and the stack (no GRO on cpumap, software checksum); not "
        "inside: skb alloc, zeroing, the page's return, the cross-CPU cachelines, the skb's free",
        "fitted to seed 003 rows cpm-05, cpm-08 on xeon-platinum-iavf (destination rx without / with "
        "recycling); other CPUs take those cycles; the split is skbmodel/physics/cpumap.py's"),
    "xdp_pass": Rest(
        "cpumap_src_base_cycles - cpumap_redirect_cycles + cpumap_dst_stack_cycles",
        "the driver RX and the XDP program of the cpumap source without the redirect, and the destination's "
        "stack; not inside: the NAPI skb cache's alloc, zeroing, the page_pool direct recycle, the skb's free",
        "seed 003 rows cpm-01, cpm-02 (plain XDP_PASS on one CPU) with the cpumap fit; skbmodel/physics/cpumap.py "
        "(xdp_pass_rest_cycles)"),
    "kfree_skb_list": Rest(
        "kfl_base_cycles",
        "pktgen's skb alloc and xmit (pktgen_bench_xmit_mode_queue_xmit), the qdisc enqueue into fq_codel and "
        "the free of the packet data; not inside: the skb heads' free on the drop list (kfree_skb_list, "
        "costed by the free stage)",
        "fitted to seed 000 row kfl-06 (unpatched); skbmodel/physics/kfree_skb_list.py",
        ("skb alloc", "zeroing")),  # __alloc_skb clears the new skb: pktgen's alloc holds its zeroing
}


def describe(path: str) -> str:
    """One paragraph: what the rest of ``path`` contains, the constant it is, and its source."""
    r = CONTENTS.get(path)
    if r is None:
        return ""
    return f"Rest of path ({path}, {r.constant}): {r.contains}. Source: {r.source}."


def overlap_cycles(veth_rest, has_free, free_one_cycles) -> np.ndarray:
    """What a composition's free stage duplicates of its rest [cycles]: the veth rest's own
    ``kmem_cache_free`` per skb (``free_one_cycles``, :func:`skbmodel.physics.slub.free_one_cycles`) where
    the rest is veth's (``veth_rest``) and a free stage is set (``has_free``; booleans, broadcast), else 0.
    Subtracted from the rest."""
    return np.where(np.asarray(veth_rest) & np.asarray(has_free), free_one_cycles, 0.0)


#: the named stages of a rest (skbmodel/data/kernel-symbols.toml) that are its RX page's handling: what an
#: RX buffer stage replaces in the veth rest
RX_PAGE_STAGES = ("page_alloc", "page_pool")


def rx_overlap_cycles(veth_rest, has_rx, rest_cycles, page_fraction) -> np.ndarray:
    """What a composition's RX buffer stage duplicates of its rest [cycles]: ``page_fraction * rest_cycles``
    where the rest is veth's (``veth_rest``) and an RX buffer stage is set (``has_rx``; booleans, broadcast),
    else 0.  ``page_fraction``: the share of the veth rest its published perf profile puts in
    :data:`RX_PAGE_STAGES` (the driver's page refill from the page allocator and the page_pool calls).
    Subtracted from the rest.  The fraction is one published profile's (mlx5 into veth on the E5-1650 v4,
    skbmodel/data/rest-stages.toml): its own error is not in the intervals, which hold the rest's and the
    page costs' only."""
    return np.where(np.asarray(veth_rest) & np.asarray(has_rx), page_fraction * np.asarray(rest_cycles), 0.0)


def notes(opt: dict, page_fraction: float = 0.0) -> list[tuple[str, str]]:
    """``[(stage, message)]`` for a resolved scalar composition (:func:`skbmodel.composer.resolved`) whose
    stage replaces part of its rest (the numbers account for it); ``page_fraction`` as in
    :func:`rx_overlap_cycles`."""
    out = []
    if opt.get("d_rest") == "veth" and opt.get("d_free") not in (None, "none"):
        out.append(("skb free", "the veth rest already frees each skb (kfree_skb -> kmem_cache_free, one at a "
                                "time): that free is subtracted from the rest, and this stage's free counts instead"))
    if opt.get("d_rest") == "veth" and opt.get("d_rx") not in (None, "none"):
        out.append(("RX buffer", f"the veth rest already handles the RX page (the driver's refill and the page's "
                                 f"return): its published perf profile puts {page_fraction:.1%} of the rest there "
                                 "(the page allocator and page_pool), subtracted from the rest; this stage's page "
                                 "counts instead"))
    return out
