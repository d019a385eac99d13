"""The seed rows the model is checked against: each row's output, its conditions (state keys) and its
tolerance.  Data only, so that a parser can map a row by its id without importing the model."""
from __future__ import annotations

import dataclasses

E5 = "e5-1650v4"
PLAT = "xeon-platinum-iavf"


@dataclasses.dataclass(frozen=True)
class RowSpec:
    id: str
    profile: str
    output: str                # model output name (or "const:<constant>")
    state: dict                # the row's conditions as state keys
    tol_kind: str              # "rel" | "abs_ns" | "exact"
    tol: float
    note: str = ""
    #: a measurement given directly (a user's own measurements); ``None`` = the seed CSV row ``id``
    measured: float | None = None
    #: the unit of ``measured`` (required with it)
    unit: str | None = None

    @property
    def microbenchmark(self) -> bool:
        """A time_bench microbenchmark row (precise to a cycle) rather than a system throughput."""
        return self.output.startswith(("slub.", "zero.", "page_pool.", "page_alloc."))


def _r(id, prof, output, tol_kind, tol, note="", **state):
    return RowSpec(id, prof, output, state, tol_kind, tol, note)


VETH = dict(tol_kind="abs_ns", tol=2.0)
ROWS: tuple[RowSpec, ...] = (
    _r("kfl-01", E5, "slub.loop_cycles", "rel", 0.05, bulk=16),
    _r("kfl-02", E5, "slub.loop_ns", "rel", 0.05, bulk=16),
    _r("kfl-03", E5, "slub.bulk_cycles", "rel", 0.05, bulk=16),
    _r("kfl-04", E5, "slub.bulk_ns", "rel", 0.05, bulk=16),
    _r("kfl-05", E5, "slub.bulk_gain_cycles", "rel", 0.05, bulk=16),
    _r("kfl-06", E5, "kfree_skb_list.mpps", "rel", 0.03, kfl_bulk=1, drop_batch=64, clone_frac=0.0),
    _r("kfl-07", E5, "kfree_skb_list.mpps", "rel", 0.03, kfl_bulk=16, drop_batch=64, clone_frac=0.0),
    _r("kfl-08", E5, "kfree_skb_list.saving_ns", "abs", 2.0, "within the 2 ns noise floor",
       kfl_bulk=16, drop_batch=64, clone_frac=0.0),
    _r("kfl-11", E5, "budget.line_rate_mpps", "rel", 0.03, link_gbps=10, frame_bytes=64),
    _r("kfl-c1", E5, "const:slub_object_bytes", "exact", 0.0),
    _r("kfl-c2", E5, "const:slub_slab_bytes", "exact", 0.0),
    _r("kfl-c3", E5, "slub.objects_per_slab", "exact", 0.0),
    _r("kfl-c4", E5, "state:kfl_bulk", "exact", 0.0),
    _r("kfl-c5", E5, "state:drop_batch", "exact", 0.0),
    _r("mem-01", E5, "zero.memset_cycles", "rel", 0.05, zero_bytes=184),
    _r("mem-02", E5, "zero.memset_cycles", "rel", 0.05, zero_bytes=192),
    _r("mem-03", E5, "zero.erms_cycles", "rel", 0.05, zero_bytes=256),
    _r("mem-04", E5, "zero.memset_cycles", "rel", 0.05, zero_bytes=256),
    _r("mem-05", E5, "zero.erms_cycles", "rel", 0.05, zero_bytes=512),
    _r("mem-06", E5, "zero.memset_cycles", "rel", 0.05, zero_bytes=512),
    _r("veth-01", E5, "veth.mpps", note="before bulk alloc = VETH_XDP_BATCH 1", xdp_batch=1, zero="memset", **VETH),
    _r("veth-02", E5, "veth.mpps", note="v2 patch: batch 16 with memset", xdp_batch=16, zero="memset", **VETH),
    _r("veth-03", E5, "veth.mpps", xdp_batch=8, zero="gfp_zero", **VETH),
    _r("veth-04", E5, "veth.mpps", xdp_batch=16, zero="gfp_zero", **VETH),
    _r("veth-05", E5, "veth.mpps", xdp_batch=8, zero="memset", **VETH),
    _r("veth-06", E5, "veth.mpps", xdp_batch=16, zero="memset", **VETH),
    _r("veth-n1", E5, "noise.floor_ns", "exact", 0.0),
    _r("cpm-01", PLAT, "xdp_pass.mpps", "rel", 0.03),
    _r("cpm-02", PLAT, "xdp_pass.mpps", "rel", 0.03),
    _r("cpm-03", PLAT, "cpumap.src_mpps", "rel", 0.03, pp_recycle=0.0, place="same_l3"),
    _r("cpm-04", PLAT, "cpumap.drop_mpps", "rel", 0.03, "drops = src - dst exactly", pp_recycle=0.0, place="same_l3"),
    _r("cpm-05", PLAT, "cpumap.dst_mpps", "rel", 0.03, pp_recycle=0.0, place="same_l3"),
    _r("cpm-06", PLAT, "cpumap.src_mpps", "rel", 0.03, pp_recycle=1.0, place="same_l3"),
    _r("cpm-07", PLAT, "cpumap.drop_mpps", "rel", 0.03, "drops = src - dst exactly", pp_recycle=1.0, place="same_l3"),
    _r("cpm-08", PLAT, "cpumap.dst_mpps", "rel", 0.03, pp_recycle=1.0, place="same_l3"),
    _r("dfr-01", E5, "napi_defer.krps", "rel", 0.03, "CPU not stated: evaluated on the E5 profile", defer_cache=0),
    _r("dfr-02", E5, "napi_defer.krps", "rel", 0.03, "CPU not stated: evaluated on the E5 profile", defer_cache=1),
)
