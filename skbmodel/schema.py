"""What the model gives: every output with its unit, and the cost components of a path.

The bottom of the package (it imports nothing): :mod:`skbmodel.model` computes these outputs, the
pages, the report, the A/B table and the exports read their units here.  The inputs are
:data:`skbmodel.params.MODEL_PARAMS`; the paths, :data:`skbmodel.params.PATHS` (each a named
composition of :mod:`skbmodel.composer`).

An output's name is ``<section>.<quantity>_<unit>``-like; its section (the part before the dot) is
the block of :func:`skbmodel.model.evaluate` that computes it, so asking for one output computes
only its section.
"""
from __future__ import annotations

import dataclasses

#: What an output is, and so which physical limits its interval obeys (:mod:`skbmodel.uncertainty`):
#: a cost, rate or share is never below 0; a signed difference (a saving, memset minus
#: ``__GFP_ZERO``) takes either sign and is never clipped; a count of runs follows the difference it
#: counts; an exact value is fixed by the kernel (integers of the slab geometry: no uncertainty); a
#: category names one of its ``codes`` (which CPU limits a rate): no interval, never averaged.
KINDS = ("cost", "rate", "share", "difference", "count", "exact", "category")
NONNEGATIVE_KINDS = frozenset({"cost", "rate", "share", "count", "exact"})


@dataclasses.dataclass(frozen=True)
class Output:
    """One model output: everything the model, the intervals, the verdicts, the grid, the parsers and
    every surface need to know about it."""

    name: str
    unit: str
    label: str
    kind: str
    #: the kernel subsystem its numbers are about (the out-of-sample protocols group by it)
    subsystem: str
    #: rank among the outputs an A/B verdict may be about (lower first); None: no verdict speaks of it
    verdict: int | None = None
    #: measured per packet by a path benchmark: the noise floor ``noise_ns`` (one run's sd of ns/packet)
    #: applies, so "runs per variant" means something for it
    per_packet: bool = False
    #: its place in the question grid's list of outputs; None: the grid does not show it
    grid: int | None = None
    #: a user's measurement may be mapped to it (the fit can compare them)
    mappable: bool = False
    #: the modelled path whose own per-packet cost it is
    path: str | None = None
    #: for a count: ``(the difference it counts, the noise key)``
    counts: tuple[str, str] | None = None
    #: for a category: the text of each code (code ``i`` is ``codes[i]``)
    codes: tuple[str, ...] = ()
    #: ``(minuend, subtrahend)``: the output is their difference, evaluated sample by sample.  Its interval
    #: spreads additively (never as a factor of its own value, which may sit near 0 while its inputs do not)
    #: and cannot pass the minuend's own upper bound (the subtrahend is never negative)
    difference_of: tuple[str, str] = ()
    #: the largest value it can take (1 for a fraction of events); None: unbounded above
    upper: float | None = None
    #: what one number is of, as its unit reads after it (``"object"``: "cycles/object"); ``""``: the unit
    #: alone; None: the unit's usual reading (:data:`UNIT_TEXT`: ns per packet)
    per: str | None = None

    @property
    def unit_text(self) -> str:
        """The unit as it reads after a number (ASCII): ``ns/packet``, ``cycles/object``; '' for a fraction or a
        category (its text says what it is)."""
        if self.kind == "category":
            return ""
        if self.per is not None:
            return f"{self.unit}/{self.per}" if self.per else self.unit
        return UNIT_TEXT.get(self.unit, self.unit)

    @property
    def factor_spread(self) -> bool:
        """Whether a log-scale constant spreads its interval as a factor: a cost or a rate built from sums,
        products and quotients of positive constants, or an unbounded share (a cost over a fixed budget).
        A difference of two such outputs is not, nor a fraction of events (bounded by 1, it saturates)."""
        return (self.kind in ("cost", "rate") or (self.kind == "share" and self.upper is None)) \
            and not self.difference_of

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r} is not one of {KINDS}")


#: how a unit reads after a number where an output says nothing else (:attr:`Output.per`)
UNIT_TEXT = {"ns": "ns/packet", "1": "", "%": "%"}
_O = Output
#: Every model output, in the order :func:`skbmodel.model.evaluate` returns them.
OUTPUTS: tuple[Output, ...] = (
    _O("slub.loop_cycles", "cycles", "SLUB one at a time (cycles/object)", "cost", "slub", mappable=True, per="object"),
    _O("slub.bulk_cycles", "cycles", "SLUB bulk API (cycles/object)", "cost", "slub", mappable=True, per="object"),
    _O("slub.loop_ns", "ns", "SLUB one at a time (ns/object)", "cost", "slub", verdict=10, grid=8, mappable=True,
       per="object"),
    _O("slub.bulk_ns", "ns", "SLUB bulk API (ns/object)", "cost", "slub", verdict=11, grid=7, mappable=True,
       per="object"),
    _O("slub.bulk_gain_cycles", "cycles", "SLUB saving of bulk over one at a time (cycles/object)", "difference",
       "slub", mappable=True, per="object"),
    _O("slub.objects_per_slab", "objects", "objects per slab", "exact", "slub"),
    _O("zero.memset_cycles", "cycles", "memset zeroing (cycles/skb)", "cost", "zeroing", mappable=True),
    _O("zero.erms_cycles", "cycles", "rep stosb zeroing (cycles/skb)", "cost", "zeroing", mappable=True),
    _O("zero.gfp_zero_cycles", "cycles", "__GFP_ZERO zeroing (cycles/skb)", "cost", "zeroing", mappable=True),
    _O("zero.memset_ns", "ns", "memset zeroing (ns/skb)", "cost", "zeroing", verdict=8, grid=9, mappable=True, per=""),
    _O("zero.gfp_zero_ns", "ns", "__GFP_ZERO zeroing (ns/skb)", "cost", "zeroing", verdict=9, mappable=True, per=""),
    _O("zero.delta_ns", "ns", "memset - __GFP_ZERO (ns/skb)", "difference", "zeroing", mappable=True, per="skb"),
    _O("page_pool.fast_cycles", "cycles", "page_pool fast path (cycles/page)", "cost", "page_pool", mappable=True),
    _O("page_pool.ring_cycles", "cycles", "page_pool ptr_ring path (cycles/page)", "cost", "page_pool",
       mappable=True),
    _O("page_pool.slow_cycles", "cycles", "page_pool slow path (cycles/page)", "cost", "page_pool", mappable=True),
    _O("page_pool.mix_cycles", "cycles", "page_pool at the recycle ratio (cycles/page)", "cost", "page_pool",
       mappable=True),
    _O("page_pool.slow_refill_cycles", "cycles", "page_pool slow refill (cycles/page)", "cost", "page_pool",
       mappable=True),
    _O("page_pool.nosoftirq01_cycles", "cycles", "page_pool no-softirq fast (cycles/page)", "cost", "page_pool",
       mappable=True),
    _O("page_pool.nosoftirq02_cycles", "cycles", "page_pool no-softirq ptr_ring (cycles/page)", "cost", "page_pool",
       mappable=True),
    _O("page_pool.nosoftirq03_cycles", "cycles", "page_pool no-softirq slow (cycles/page)", "cost", "page_pool",
       mappable=True),
    _O("page_alloc.bulk_cycles", "cycles", "page allocator, bulk (cycles/page)", "cost", "page_alloc",
       mappable=True),
    _O("page_alloc.single_cycles", "cycles", "page allocator, one page (cycles/page)", "cost", "page_alloc",
       mappable=True),
    _O("page_alloc.refill_saving_cycles", "cycles", "page allocator saving of a bulk refill (cycles/page)",
       "difference", "page_alloc", mappable=True),
    _O("kfree_skb_list.mpps", "Mpps", "kfree_skb_list injection rate (Mpps)", "rate", "kfree_skb_list",
       per_packet=True, mappable=True),
    _O("kfree_skb_list.ns_per_packet", "ns", "kfree_skb_list drop path (ns/packet)", "cost", "kfree_skb_list",
       verdict=7, per_packet=True, grid=6, mappable=True, path="kfree_skb_list"),
    _O("kfree_skb_list.drop_fraction", "1", "kfree_skb_list dropped fraction", "share", "kfree_skb_list", upper=1.0),
    _O("kfree_skb_list.free_cycles_per_drop", "cycles", "kfree_skb_list free (cycles/dropped skb)", "cost",
       "kfree_skb_list", mappable=True),
    _O("kfree_skb_list.saving_ns", "ns", "kfree_skb_list saving of bulk free (ns/packet)", "difference",
       "kfree_skb_list", mappable=True),
    _O("veth.mpps", "Mpps", "veth XDP_PASS rate (Mpps)", "rate", "veth", per_packet=True, mappable=True),
    _O("veth.ns_per_packet", "ns", "veth XDP_PASS (ns/packet)", "cost", "veth", verdict=1, per_packet=True,
       grid=2, mappable=True, path="veth"),
    _O("veth.zero_delta_ns", "ns", "veth memset - __GFP_ZERO (ns/packet)", "difference", "veth", mappable=True),
    _O("veth.zero_delta_runs", "runs", "runs per variant to see memset - __GFP_ZERO", "count", "veth",
       counts=("veth.zero_delta_ns", "noise_ns")),
    _O("cpumap.src_mpps", "Mpps", "cpumap source CPU rate (Mpps)", "rate", "cpumap", per_packet=True,
       mappable=True),
    _O("cpumap.dst_mpps", "Mpps", "cpumap destination CPU rate (Mpps)", "rate", "cpumap", per_packet=True,
       mappable=True),
    _O("cpumap.drop_mpps", "Mpps", "cpumap drops (Mpps)", "rate", "cpumap", mappable=True,
       difference_of=("cpumap.src_mpps", "cpumap.dst_mpps")),
    _O("cpumap.src_ns", "ns", "cpumap source CPU (ns/packet)", "cost", "cpumap", verdict=4, per_packet=True,
       grid=4, mappable=True),
    _O("cpumap.dst_ns", "ns", "cpumap destination CPU (ns/packet)", "cost", "cpumap", verdict=3, per_packet=True,
       grid=3, mappable=True),
    _O("cpumap.ns_per_packet", "ns", "cpumap, the CPU that limits it (ns/packet)", "cost", "cpumap", verdict=2,
       per_packet=True, path="cpumap"),
    _O("cpumap.sleep_fraction", "1", "cpumap flushes that find the kthread asleep", "share", "cpumap", upper=1.0),
    _O("cpumap.bottleneck", "code", "cpumap bottleneck", "category", "cpumap",
       # short, so that a metric shows the code whole; which work each CPU does: skbmodel/physics/cpumap.py
       codes=("source CPU", "destination CPU", "offered load")),
    _O("xdp_pass.mpps", "Mpps", "XDP_PASS one CPU rate (Mpps)", "rate", "cpumap", per_packet=True, mappable=True),
    _O("xdp_pass.ns_per_packet", "ns", "XDP_PASS one CPU (ns/packet)", "cost", "cpumap", verdict=6,
       per_packet=True, grid=5, mappable=True, path="xdp_pass"),
    _O("napi_defer.krps", "Krps", "NAPI defer cache rate (Krps)", "rate", "napi_cache", mappable=True),
    _O("budget.line_rate_mpps", "Mpps", "line rate (Mpps)", "rate", "budget"),
    _O("budget.ns_per_packet", "ns", "time between packets at line rate (ns)", "cost", "budget"),
    _O("path.ns_per_packet", "ns", "overview path (ns/packet)", "cost", "path", verdict=0, per_packet=True,
       grid=0),
    _O("path.mpps", "Mpps", "overview path rate (Mpps)", "rate", "path", per_packet=True, grid=1),
    _O("path.budget_pct", "%", "share of the line-rate budget used (%)", "share", "path"),
    _O("free.other_cpu_ns", "ns", "skb free's part on the other CPU (ns/packet)", "cost", "path"),
    _O("noise.floor_ns", "ns", "noise floor (ns/packet)", "cost", "noise"),
)
BY_NAME: dict[str, Output] = {o.name: o for o in OUTPUTS}

#: Every model output and its unit.
OUTPUT_UNITS: dict[str, str] = {o.name: o.unit for o in OUTPUTS}


def of_kind(*kinds: str) -> tuple[str, ...]:
    """The outputs of these kinds, in order."""
    return tuple(o.name for o in OUTPUTS if o.kind in kinds)


#: The outputs an A/B verdict can be about, in order of precedence: the chosen path, every modelled
#: path's per-packet cost, then the microbenchmarks' per-object times.
VERDICT_OUTPUTS: tuple[str, ...] = tuple(o.name for o in sorted((o for o in OUTPUTS if o.verdict is not None),
                                                                key=lambda o: o.verdict))
#: Outputs measured per packet by a path benchmark (what ``noise_ns`` is the noise of).
PER_PACKET_OUTPUTS: tuple[str, ...] = tuple(o.name for o in OUTPUTS if o.per_packet)
#: The outputs the question grid can show.
GRID_OUTPUTS: tuple[str, ...] = tuple(o.name for o in sorted((o for o in OUTPUTS if o.grid is not None),
                                                             key=lambda o: o.grid))
#: The outputs a user's measurement may map to.
MAPPABLE_OUTPUTS: tuple[str, ...] = tuple(o.name for o in OUTPUTS if o.mappable)
#: ``{path: its own per-packet cost}``; ``path.ns_per_packet`` picks among them.
PATH_OUTPUTS: dict[str, str] = {o.path: o.name for o in OUTPUTS if o.path}
#: Kernel-fixed outputs (no uncertainty) and ``{count: (difference, noise key)}``.
EXACT_OUTPUTS = frozenset(of_kind("exact", "category"))
RUNS_OUTPUTS: dict[str, tuple[str, str]] = {o.name: o.counts for o in OUTPUTS if o.counts}
#: ``{difference: (minuend, subtrahend)}`` of the outputs that are a difference of two others
DIFFERENCE_OUTPUTS: dict[str, tuple[str, str]] = {o.name: o.difference_of for o in OUTPUTS if o.difference_of}
#: The outputs a log-scale constant spreads as a factor (:attr:`Output.factor_spread`).
FACTOR_OUTPUTS = frozenset(o.name for o in OUTPUTS if o.factor_spread)
#: ``{output: largest value}`` of the bounded outputs.
UPPER_BOUNDS: dict[str, float] = {o.name: o.upper for o in OUTPUTS if o.upper is not None}


#: The named per-packet cost components of a path, in the order they are summed.
COMPONENTS = ("skb alloc", "zeroing", "page alloc/recycle", "cross-CPU transfer", "rest of path", "skb free")
