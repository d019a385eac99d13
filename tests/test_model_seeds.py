"""Seed measurements reproduced by the model, by row id, within the tolerances of skbmodel.evidence.validation."""
import pytest

from skbmodel import model
from skbmodel.physics import slub, units
from skbmodel.evidence import seed_checks, validation
from skbmodel.evidence.observations import seed_observations
from skbmodel.machine.profile import load_profile
from skbmodel.links.state import defaults, scenario
from tests.cli_util import skbmodel_cli

OBS = seed_observations()
E5 = load_profile("e5-1650v4")
PLAT = load_profile("xeon-platinum-iavf")


def ev(prof=E5, **kw):
    params = scenario(defaults(prof.id))
    params.update(kw)
    return {k: float(v) for k, v in model.evaluate(params, prof).items()}


@pytest.mark.parametrize("rid,bulk,output", [("kfl-01", 16, "slub.loop_cycles"), ("kfl-03", 16, "slub.bulk_cycles"),
                                             ("kfl-02", 16, "slub.loop_ns"), ("kfl-04", 16, "slub.bulk_ns")])
def test_slab_bulk_test01_within_5pct(rid, bulk, output):
    assert ev(bulk=bulk)[output] == pytest.approx(OBS[rid].value, rel=0.05)


def test_best_case_bulk_gain_kfl05():
    assert ev(bulk=16)["slub.bulk_gain_cycles"] == pytest.approx(OBS["kfl-05"].value, rel=0.05)


@pytest.mark.parametrize("rid,nbytes,output", [
    ("mem-01", 184, "zero.memset_cycles"), ("mem-02", 192, "zero.memset_cycles"),
    ("mem-03", 256, "zero.erms_cycles"), ("mem-04", 256, "zero.memset_cycles"),
    ("mem-05", 512, "zero.erms_cycles"), ("mem-06", 512, "zero.memset_cycles")])
def test_time_bench_memset_within_5pct(rid, nbytes, output):
    assert ev(zero_bytes=nbytes)[output] == pytest.approx(OBS[rid].value, rel=0.05)


def test_memset_vs_gfp_zero_delta_is_the_seed_1_66_ns_and_below_noise():
    o = ev(zero="gfp_zero", zero_bytes=184)
    # seed 002: 10.463 - 8.803 = 1.66 ns (memset 184 B minus memset_erms 256 B), "below 2 ns is extremely hard";
    # the tolerance is a fifth of the effect, so its sign and size are both tested
    assert o["zero.delta_ns"] == pytest.approx(10.463 - 8.803, abs=0.35)
    assert o["zero.delta_ns"] < OBS["veth-n1"].value
    assert o["veth.zero_delta_runs"] > 1


@pytest.mark.parametrize("rid,batch,zero", [("veth-01", 1, "memset"), ("veth-02", 16, "memset"),
                                            ("veth-03", 8, "gfp_zero"), ("veth-04", 16, "gfp_zero"),
                                            ("veth-05", 8, "memset"), ("veth-06", 16, "memset")])
def test_veth_rows_within_2ns_per_packet(rid, batch, zero):
    o = ev(xdp_batch=batch, zero=zero)
    measured_ns = float(units.mpps_to_ns(OBS[rid].value))
    assert abs(o["veth.ns_per_packet"] - measured_ns) <= 2.0


@pytest.mark.parametrize("rid,kfl_bulk", [("kfl-06", 1), ("kfl-07", 16)])
def test_pktgen_qdisc_drop_rate_within_3pct(rid, kfl_bulk):
    o = ev(kfl_bulk=kfl_bulk, drop_batch=64)
    assert units.mpps_to_pps(o["kfree_skb_list.mpps"]) == pytest.approx(OBS[rid].value, rel=0.03)


def test_kfree_skb_list_saving_kfl08_within_noise_floor():
    assert ev(kfl_bulk=16, drop_batch=64)["kfree_skb_list.saving_ns"] == pytest.approx(OBS["kfl-08"].value, abs=2.0)


def test_line_rate_kfl11():
    o = ev(link_gbps=10, frame_bytes=64)
    assert o["budget.line_rate_mpps"] == pytest.approx(14.88, abs=0.005)
    assert o["budget.line_rate_mpps"] == pytest.approx(OBS["kfl-11"].value, rel=0.03)
    assert o["budget.ns_per_packet"] == pytest.approx(67.2, abs=0.05)


@pytest.mark.parametrize("recycle,src,drop,dst",
                         [(0.0, "cpm-03", "cpm-04", "cpm-05"), (1.0, "cpm-06", "cpm-07", "cpm-08")])
def test_cpumap_rows(recycle, src, drop, dst):
    o = ev(PLAT, pp_recycle=recycle, numa="same")
    assert o["cpumap.src_mpps"] == pytest.approx(OBS[src].value, rel=0.03)
    assert o["cpumap.dst_mpps"] == pytest.approx(OBS[dst].value, rel=0.03)
    assert o["cpumap.drop_mpps"] == pytest.approx(OBS[drop].value, rel=0.03)


def test_cpumap_recycling_gain_and_xdp_pass():
    base, rec = ev(PLAT, pp_recycle=0.0), ev(PLAT, pp_recycle=1.0)
    # seed 003: +22 % destination rate from page_pool recycling of skbs built from XDP frames
    assert rec["cpumap.dst_mpps"] / base["cpumap.dst_mpps"] - 1 == pytest.approx(0.22, abs=0.03)
    assert rec["xdp_pass.mpps"] == pytest.approx(OBS["cpm-01"].value, rel=0.03)


@pytest.mark.parametrize("rid,cache", [("dfr-01", 0), ("dfr-02", 1)])
def test_napi_defer_cache(rid, cache):
    assert ev(defer_cache=cache)["napi_defer.krps"] == pytest.approx(OBS[rid].value, rel=0.03)


def test_napi_defer_cache_effect_sign_and_size():
    """The cache's measured effect is +1.07 % (dfr-02 over dfr-01): the paired difference must have its
    sign and its size within 0.2 percentage points, a tolerance smaller than the effect (a model
    without the cache fails)."""
    measured = OBS["dfr-02"].value / OBS["dfr-01"].value - 1
    predicted = ev(defer_cache=1)["napi_defer.krps"] / ev(defer_cache=0)["napi_defer.krps"] - 1
    assert measured > 0.002 and predicted > 0
    assert predicted == pytest.approx(measured, abs=0.002)


def test_objects_per_slab_of_the_seed_s_slab_is_the_seed_s_count():
    """Seed 000 states the slab (8192 B), the object (256 B) and, separately, 32 objects per slab: the
    model's floor(slab / object) of the seed's two sizes gives the seed's third figure."""
    assert float(slub.objects_per_slab(OBS["kfl-c2"].value, OBS["kfl-c1"].value)) == OBS["kfl-c3"].value


def test_validate_covers_every_row_in_tolerance():
    rows = validation.validate()
    assert len(rows) >= 35
    assert [r["id"] for r in rows if not r["ok"]] == []
    covered = {r["id"] for r in rows} | set(validation.NOT_COVERED)
    assert covered == set(OBS), "every seed row is either validated or listed as not covered with a reason"


def test_validate_cli_exit_code():
    res = skbmodel_cli("validate")
    assert res.returncode == 0, res.stdout + res.stderr
    counts = validation.evidence_counts(validation.validate())
    n = sum(c["rows"] for c in counts.values())
    assert f"{n} of {n} covered seed rows within tolerance" in res.stdout
    assert validation.evidence_summary(validation.validate()) in res.stdout


def test_every_row_says_what_evidence_it_is():
    """Rows of a subsystem with 0 degrees of freedom are reproduced by construction; constants,
    defaults and inputs returned unchanged restate an input; only the rest count as predicted."""
    ev = validation.evidence_of_rows()
    assert set(ev) == {s.id for s in seed_checks.ROWS} and set(ev.values()) <= set(validation.EVIDENCE_KINDS)
    built = [i for i, k in ev.items() if k == "reproduced by construction"]
    restates = [i for i, k in ev.items() if k == "restates an input"]
    assert sorted(restates) == ["kfl-c1", "kfl-c2", "kfl-c3", "kfl-c4", "kfl-c5", "veth-n1"]
    assert sorted(built) == [f"cpm-0{i}" for i in range(1, 9)] + [f"kfl-0{i}" for i in range(1, 9)]
    assert len(ev) - len(built) - len(restates) == 15
    # the kinds follow the degrees of freedom they are given, not a list
    fake = [dict(by_construction=True, row_ids=["veth-01"], restated=[])]
    assert validation.evidence_of_rows(fake)["veth-01"] == "reproduced by construction"
    assert validation.evidence_of_rows(fake)["kfl-01"] == "predicted"


def test_validate_json_carries_the_evidence_of_each_row():
    import json
    res = skbmodel_cli("validate", "--json")
    doc = json.loads(res.stdout)
    assert all(r["evidence"] in validation.EVIDENCE_KINDS for r in doc["rows"])
    assert doc["evidence"]["predicted"] == {"rows": 15, "ok": 15}
    assert sum(c["rows"] for c in doc["evidence"].values()) == doc["n_rows"]


def test_validation_fails_when_a_constant_is_wrong():
    bad = E5.with_values({"slub_fast_pair_cycles": 150.0})
    rows = validation.validate({"e5-1650v4": bad})
    assert {"kfl-01", "kfl-02"} <= {r["id"] for r in rows if not r["ok"]}
