"""What the model gives: every output with its unit, and the cost components of a path.

The bottom of the package (it imports nothing): :mod:`skbmodel.model` computes these outputs, the
pages, the report, the A/B table and the exports read their units here.  The inputs are
:data:`skbmodel.params.MODEL_PARAMS`; the paths, :data:`skbmodel.params.PATHS` (each a named
composition of :mod:`skbmodel.design`).

An output's name is ``<section>.<quantity>_<unit>``-like; its section (the part before the dot) is
the block of :func:`skbmodel.model.evaluate` that computes it, so asking for one output computes
only its section.
"""
from __future__ import annotations

#: Every model output and its unit.
OUTPUT_UNITS: dict[str, str] = {
    "slub.loop_cycles": "cycles", "slub.bulk_cycles": "cycles", "slub.loop_ns": "ns", "slub.bulk_ns": "ns",
    "slub.bulk_gain_cycles": "cycles", "slub.objects_per_slab": "objects",
    "zero.memset_cycles": "cycles", "zero.erms_cycles": "cycles", "zero.gfp_zero_cycles": "cycles",
    "zero.memset_ns": "ns", "zero.gfp_zero_ns": "ns", "zero.delta_ns": "ns",
    "page_pool.fast_cycles": "cycles", "page_pool.ring_cycles": "cycles", "page_pool.slow_cycles": "cycles",
    "page_pool.mix_cycles": "cycles", "page_pool.slow_refill_cycles": "cycles",
    "page_pool.nosoftirq01_cycles": "cycles", "page_pool.nosoftirq02_cycles": "cycles",
    "page_pool.nosoftirq03_cycles": "cycles",
    "page_alloc.bulk_cycles": "cycles", "page_alloc.single_cycles": "cycles",
    "page_alloc.refill_saving_cycles": "cycles",
    "kfree_skb_list.mpps": "Mpps", "kfree_skb_list.ns_per_packet": "ns", "kfree_skb_list.drop_fraction": "1",
    "kfree_skb_list.free_cycles_per_drop": "cycles", "kfree_skb_list.saving_ns": "ns",
    "veth.mpps": "Mpps", "veth.ns_per_packet": "ns", "veth.zero_delta_ns": "ns", "veth.zero_delta_runs": "runs",
    "cpumap.src_mpps": "Mpps", "cpumap.dst_mpps": "Mpps", "cpumap.drop_mpps": "Mpps",
    "cpumap.src_ns": "ns", "cpumap.dst_ns": "ns", "cpumap.sleep_fraction": "1", "cpumap.bottleneck": "code",
    "xdp_pass.mpps": "Mpps", "xdp_pass.ns_per_packet": "ns",
    "napi_defer.krps": "Krps",
    "budget.line_rate_mpps": "Mpps", "budget.ns_per_packet": "ns",
    "path.ns_per_packet": "ns", "path.mpps": "Mpps", "path.budget_pct": "%",
    "noise.floor_ns": "ns",
}

#: The named per-packet cost components of a path, in the order they are summed.
COMPONENTS = ("skb alloc", "zeroing", "page alloc/recycle", "cross-CPU transfer", "rest of path", "skb free")
