"""What an answer rests on (skbmodel.attribution) and honest A/B pairing (skbmodel.uncertainty.same_quantity)."""
from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from skbmodel.machine import custom
from skbmodel import attribution, model, uncertainty
from skbmodel.links import state as sk_state
from skbmodel.machine.profile import archived_versions, load_profile
from tests import cases
from tests.cli_util import skbmodel_cli

E5, PLAT = "e5-1650v4", "xeon-platinum-iavf"
Z = uncertainty.z_value()
#: outputs with a structural term and the paths' costs
OUTPUTS = ("slub.bulk_ns", "slub.loop_ns", "page_alloc.bulk_cycles", "veth.ns_per_packet", "cpumap.dst_ns",
           "kfree_skb_list.ns_per_packet", "path.ns_per_packet")


def _on(cpu: str, **kw) -> dict:
    return {**sk_state.scenario(sk_state.defaults(cpu)), **kw}


# ---------------------------------------------------------------- honest pairing
# the pairs that exercise each branch of the pairing rule (tests/cases.py says which), each way round
@pytest.mark.parametrize("cpu_a,cpu_b", list(cases.PAIR_CASES) + [(b, a) for a, b in cases.PAIR_CASES if a != b])
def test_a_delta_across_two_profiles_carries_both_uncertainties(cpu_a, cpu_b):
    """The structural term of B - A: on one machine one model error, ``Z rel |f_B - f_A|``; across
    machines two independent ones, ``Z rel sqrt(f_A^2 + f_B^2)``, and then (nothing shared) the
    difference is at least as uncertain as either side alone."""
    pa, pb = cases.load_pair_member(cpu_a), cases.load_pair_member(cpu_b)
    a, b = cases.scenario(pa, bulk=32), cases.scenario(pb, bulk=64)
    _, div = uncertainty.delta_intervals(a, b, pa, pb, OUTPUTS)
    va, _ = uncertainty.evaluate_with_intervals(a, pa, OUTPUTS)
    vb, _ = uncertainty.evaluate_with_intervals(b, pb, OUTPUTS)
    across = uncertainty.machine(pa) != uncertainty.machine(pb)
    one_machine, _ = cases.PAIR_CASES.get((cpu_a, cpu_b)) or cases.PAIR_CASES[(cpu_b, cpu_a)]
    assert across != one_machine
    for o in OUTPUTS:
        hw = float(uncertainty.half_width(div[o]))
        fa, fb = float(va[o]), float(vb[o])
        structural = Z * uncertainty.structural_rel_sd(o) * (np.hypot(fa, fb) if across else abs(fb - fa))
        assert hw >= structural * (1 - 1e-9), o
        if across:  # as uncertain: the sd (a side's interval spreads a carried constant as a factor, asymmetric)
            wider = Z * max(float(np.sqrt(uncertainty.linearise(p, None, q, None, [o]).variance(o)))
                            for p, q in ((a, pa), (b, pb)))
            assert hw >= wider * (1 - 1e-9), o


def test_the_veth_difference_across_cpus_is_not_paired_away():
    """e5 vs the iavf lab on veth: 150 ns of clock, the inherited cycles are each machine's stand-in."""
    pa, pb = load_profile(E5), load_profile(PLAT)
    a, b = _on(E5), _on(PLAT)
    d, div = uncertainty.delta_intervals(a, b, pa, pb, ["veth.ns_per_packet"])
    assert float(d["veth.ns_per_packet"]) == pytest.approx(149.96, abs=0.01)
    hw = float(uncertainty.half_width(div["veth.ns_per_packet"]))
    ha = float(uncertainty.half_width(uncertainty.intervals(a, pa, ["veth.ns_per_packet"])["veth.ns_per_packet"]))
    hb = float(uncertainty.half_width(uncertainty.intervals(b, pb, ["veth.ns_per_packet"])["veth.ns_per_packet"]))
    assert hw == pytest.approx(np.hypot(ha, hb), rel=1e-6)  # independent: in quadrature
    assert hw == pytest.approx(4.05, abs=0.01)


def test_same_machine_pairs_and_a_changed_constant_does_not():
    e5 = load_profile(E5)
    assert uncertainty.same_quantity(e5, e5, "veth_base_cycles")
    assert not uncertainty.same_quantity(e5, load_profile(PLAT), "veth_base_cycles")  # inherited: a stand-in
    arch = load_profile(f"{E5}@{archived_versions(E5)[0]}")
    assert uncertainty.machine(arch) == E5
    changed = custom.build(e5, {"veth_base_cycles": e5.value("veth_base_cycles") + 10.0})
    assert uncertainty.machine(changed) == E5
    assert uncertainty.same_quantity(e5, changed, "slub_fast_pair_cycles")
    assert not uncertainty.same_quantity(e5, changed, "veth_base_cycles")
    # B overriding the base: A's and B's base are independent, so the veth difference carries both
    a = _on(E5)
    _, div = uncertainty.delta_intervals(a, a, e5, changed, ["veth.ns_per_packet"])
    sd_ns = e5.stderr("veth_base_cycles") / e5.ghz
    assert float(uncertainty.half_width(div["veth.ns_per_packet"])) == pytest.approx(Z * sd_ns * np.sqrt(2), rel=1e-6)


def test_same_profile_still_cancels_what_a_and_b_share():
    e5 = load_profile(E5)
    a = _on(E5)
    d, div = uncertainty.delta_intervals(a, {**a, "xdp_batch": 1}, e5, e5, ["veth.ns_per_packet"])
    hw = float(uncertainty.half_width(div["veth.ns_per_packet"]))
    single = uncertainty.intervals(a, e5, ["veth.ns_per_packet"])["veth.ns_per_packet"]
    assert hw < float(uncertainty.half_width(single))  # the base cost cancels


# ---------------------------------------------------------------- drivers
@pytest.mark.parametrize("cpu_b", [E5, PLAT])
def test_driver_variance_is_the_propagated_variance(cpu_b):
    pa, pb = load_profile(E5), load_profile(cpu_b)
    a = _on(E5, path="cpumap")
    b = _on(cpu_b, path="cpumap", pp_recycle=0.5, place="other_socket", bulk=64)
    outs = ["cpumap.dst_ns", "slub.bulk_ns", "veth.ns_per_packet"]
    rep = attribution.drivers(a, b, pa, pb, outs, top=1000)
    d, div = uncertainty.delta_intervals(a, b, pa, pb, outs)
    for o in outs:
        assert rep[o]["value"] == pytest.approx(float(d[o]), rel=1e-9)
        assert Z * rep[o]["sd"] == pytest.approx(float(uncertainty.half_width(div[o])), rel=1e-6)
        shares = sum(r["variance_share"] for r in rep[o]["rows"])
        if rep[o]["sd"] == 0:  # veth does not move on one machine: nothing to share
            assert cpu_b == E5 and o == "veth.ns_per_packet" and shares == 0
            continue
        assert shares == pytest.approx(1.0, abs=0.02)  # the rows left out carry < 0.5 % each


def test_an_answers_interval_and_its_drivers_are_one_propagation():
    """The Compare answer's paired interval is ``f +- z sd`` with the sd its drivers report, and asking
    for elasticities adds rows to the propagation without moving the interval it gives."""
    from skbmodel import answers
    from skbmodel.scenario import Scenario
    pa = load_profile(E5)
    a = _on(E5, path="cpumap")
    b = {**a, "pp_recycle": 0.5, "place": "other_socket"}
    ans = answers.answer(Scenario.from_params(a, pa), Scenario.from_params(b, pa), ["path.ns_per_packet"])
    assert ans.differences
    for d in ans.differences:
        assert (d.hi - d.lo) / 2 == pytest.approx(Z * d.drivers["sd"], rel=1e-9), d.output
        assert d.value == d.drivers["value"]
    outs = [d.output for d in ans.differences]
    plain = uncertainty.linearise(a, b, pa, pa, outs)
    rich = uncertainty.linearise(a, b, pa, pa, outs, elasticities=True)
    assert plain.dims == rich.dims and not plain.value_dims and rich.value_dims
    for o in outs:
        # the same rows in a longer call: equal to rounding (vectorised kernels may round a tail otherwise)
        np.testing.assert_allclose(plain.per_sd[o], rich.per_sd[o], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(plain.bounds(o), rich.bounds(o), rtol=1e-12, atol=1e-12)


def test_value_shares_of_a_sum_of_cycle_constants_add_up():
    """veth's cost is base + alloc + zero, each a sum of cycle constants (times fractions): the cycle
    constants' elasticities add up to the value (within the rows below 0.5 % left out)."""
    prof = load_profile(E5)
    rep = attribution.drivers(_on(E5), None, prof, None, ["veth.ns_per_packet"], top=1000)["veth.ns_per_packet"]
    cyc = sum(r["elasticity"] for r in rep["rows"] if r["unit"] == "cycles")
    assert cyc == pytest.approx(rep["value"], rel=0.01)
    assert all(r["name"] != attribution.CLOCK for r in rep["rows"])  # one clock scales everything alike
    base = next(r for r in rep["rows"] if r["name"] == "veth_base_cycles")
    assert base["kind"] == "fitted" and base["source"] == prof.constants["veth_base_cycles"].source
    assert base["elasticity"] == pytest.approx(prof.value("veth_base_cycles") / prof.ghz, rel=1e-4)


def test_the_placement_answer_is_flagged_as_resting_on_assumptions():
    """Half the pages recycled on another socket, on a two-node machine whose CPU model is not stated: the
    difference is the model's, its leading driver carries the largest share of the variance, and the
    cross-socket line latency taken from an assumed part (its description's row) is named as assumed."""
    cpu = "xeon-platinum-iavf"
    prof = load_profile(cpu)
    a = _on(cpu, path="cpumap")
    b = {**a, "pp_recycle": 0.5, "place": "other_socket"}
    rep = attribution.drivers(a, b, prof, prof, ["cpumap.dst_ns"])["cpumap.dst_ns"]
    want = float(model.evaluate(b, prof)["cpumap.dst_ns"] - model.evaluate(a, prof)["cpumap.dst_ns"])
    assert rep["value"] == pytest.approx(want, rel=1e-9) and want > 0
    kinds = {r["name"]: r["kind"] for r in rep["rows"]}
    assert kinds["line_other_socket_ns"] == "assumed"
    assert rep["rows"][0]["variance_share"] == max(r["variance_share"] for r in rep["rows"])


def test_the_clock_carries_a_difference_across_cpus_and_is_flagged_when_assumed():
    pa, pb = load_profile(E5), load_profile(PLAT)
    rep = attribution.drivers(_on(E5), _on(PLAT), pa, pb, ["slub.bulk_ns"])["slub.bulk_ns"]
    top = rep["rows"][0]
    assert top["constant"] == "B: ghz" and top["kind"] == "assumed"
    assert rep["dominated_by_assumed"] and "B: ghz" in rep["flag"]


def test_a_fitted_answer_is_not_flagged():
    prof = load_profile(E5)
    a = _on(E5)
    rep = attribution.drivers(a, {**a, "bulk": 8}, prof, prof, ["slub.bulk_ns"])["slub.bulk_ns"]
    assert not rep["dominated_by_assumed"] and rep["flag"] == ""
    assert {r["kind"] for r in rep["rows"]} <= {"fitted", "published", "structural"}


def test_identical_a_and_b_have_no_drivers():
    prof = load_profile(E5)
    a = _on(E5)
    rep = attribution.drivers(a, dict(a), prof, prof, ["path.ns_per_packet"])["path.ns_per_packet"]
    assert rep["value"] == 0.0 and rep["sd"] == 0.0 and not rep["dominated_by_assumed"]


def test_verdict_outputs_follow_what_changed():
    prof = load_profile(E5)
    a = _on(E5)  # veth
    b = {**a, "pp_recycle": 0.5, "place": "other_socket"}
    va, vb = model.evaluate(a, prof), model.evaluate(b, prof)
    assert attribution.verdict_outputs(a, b, va, vb) == ["cpumap.ns_per_packet", "cpumap.dst_ns", "cpumap.src_ns"]
    a2, b2 = {**a, "path": "cpumap"}, {**b, "path": "cpumap"}
    assert attribution.verdict_outputs(a2, b2, model.evaluate(a2, prof), model.evaluate(b2, prof))[0] == \
        "path.ns_per_packet"
    b3 = {**a, "path": "xdp_pass"}
    assert attribution.verdict_outputs(a, b3, va, model.evaluate(b3, prof)) == ["path.ns_per_packet"]
    assert attribution.verdict_outputs(a, dict(a), va, va) == []


def test_drivers_of_a_changed_constant_name_both_sides():
    e5 = load_profile(E5)
    changed = custom.build(e5, {"veth_base_cycles": e5.value("veth_base_cycles") + 36.0})
    a = _on(E5)
    rep = attribution.drivers(a, a, e5, changed, ["veth.ns_per_packet"])["veth.ns_per_packet"]
    assert rep["value"] == pytest.approx(10.0, rel=1e-6)  # 36 cycles at 3.6 GHz
    names = {r["constant"] for r in rep["rows"]}
    assert {"A: veth_base_cycles", "B: veth_base_cycles"} <= names
    assert "slub_fast_pair_cycles" not in names or all(r["constant"] != "A: slub_fast_pair_cycles"
                                                          for r in rep["rows"])


def test_json_rounds_to_four_digits():
    prof = load_profile(E5)
    rep = attribution.drivers(_on(E5), None, prof, None, ["veth.ns_per_packet"])["veth.ns_per_packet"]
    js = attribution.to_json(rep)
    assert js["value"] == float(f"{rep['value']:.4g}")
    assert all(r["value_share"] == float(f"{r['value_share']:.4g}") for r in js["rows"])
    assert dataclasses.is_dataclass(prof)  # the profile is untouched by the evaluation


def test_eval_json_names_the_drivers_and_the_flag():
    import json
    from pathlib import Path
    repo = Path(__file__).resolve().parent.parent
    res = skbmodel_cli("eval", "page=compare&cpu=xeon-platinum-iavf&path=cpumap&b_path=cpumap&b_pp_recycle=0.5"
                       "&b_place=other_socket", "--json", cwd=repo)
    assert res.returncode == 0, res.stderr
    drv = json.loads(res.stdout)["drivers"]
    assert drv["about"] == "B - A"
    head = drv["outputs"]["path.ns_per_packet"]
    a = sk_state.scenario(sk_state.defaults("xeon-platinum-iavf") | {"path": "cpumap"})
    b = {**a, "pp_recycle": 0.5, "place": "other_socket"}
    want = [float(model.evaluate(st)["path.ns_per_packet"]) for st in (a, b)]
    # the destination limits both: its cross-node lines, ring slots and the page's return
    assert head["value"] == pytest.approx(want[1] - want[0], rel=1e-3) and head["dominated_by_assumed"]
    assert {r["kind"] for r in head["rows"]} <= {"fitted", "published", "assumed", "structural"}
    res = skbmodel_cli("eval", "page=slub&bulk=8", "--json", cwd=repo)
    drv = json.loads(res.stdout)["drivers"]
    assert drv["about"] == "A" and list(drv["outputs"]) == ["slub.loop_cycles"]


# ---------------------------------------------------------------- the question grid
def test_grid_is_one_evaluation_with_paired_deltas_and_the_tie():
    from skbmodel import grid
    base = _on(E5)
    res = grid.evaluate(base, ["xdp_batch", "zero", "d_free"])
    assert res["value"].shape == (3, 2, 3)
    prof = load_profile(E5)
    # each cell is the composed path with the cell's values; the free bulk follows VETH_XDP_BATCH
    for i, n in enumerate((1, 16, 64)):
        cell = {**base, "path": "design", "xdp_batch": n, "zero": "memset", "d_free": "slab_bulk", "d_free_bulk": n}
        assert float(res["value"][i, 0, 1]) == pytest.approx(float(model.evaluate(cell, prof)["path.ns_per_packet"]),
                                                             rel=1e-12)
        lo, hi = uncertainty.delta_interval({**base, "path": "design"}, cell, prof, prof)
        assert (float(res["delta_lo"][i, 0, 1]), float(res["delta_hi"][i, 0, 1])) == pytest.approx((lo, hi), rel=1e-9)
    # the baseline cell (16, __GFP_ZERO, free in the rest) is A itself; a free stage of one at a time
    # reproduces the rest's own free
    assert float(res["delta"][1, 1, 0]) == 0.0
    # kmem_cache_free_bulk at VETH_XDP_BATCH 16 with __GFP_ZERO: -6.16 ns, measurable and sure
    assert float(res["delta"][1, 1, 1]) == pytest.approx(-6.16, abs=0.01)
    assert int(res["verdict"][1, 1, 1]) == grid.SURE
    rows = grid.rows(res)
    assert len(rows) == 18 and rows[0]["xdp_batch"] == "1" and rows[0]["zero"] == "memset"


def test_a_free_stage_on_the_veth_rest_replaces_its_own_free():
    from skbmodel import composer
    from skbmodel.physics import rest
    prof = load_profile(E5)
    veth = float(model.evaluate(_on(E5), prof)["path.ns_per_packet"])
    one = float(model.evaluate(_on(E5, path="design", d_free="slab_one"), prof)["path.ns_per_packet"])
    assert one == pytest.approx(veth, rel=1e-12)  # not counted twice
    opts = composer.resolved(_on(E5, path="design", d_free="slab_bulk"))
    assert rest.notes(opts)
    for path in ("veth", "cpumap", "xdp_pass", "kfree_skb_list"):
        assert rest.CONTENTS[path].constant.split(" ")[0] in prof.constants
        assert "not inside" in rest.describe(path)


def test_an_rx_buffer_stage_on_the_veth_rest_replaces_the_page_stages_its_perf_profile_names():
    """The veth rest's page handling, as its published perf profile names it (the page allocator's and
    page_pool's samples: 19.5 % of the rest), leaves the rest when an RX buffer stage costs the page."""
    from skbmodel import composer
    from skbmodel.physics import rest
    prof = load_profile(E5)
    f = composer.veth_page_fraction()
    assert 0.15 < f < 0.25  # page_alloc 17.3 % + page_pool 2.2 % of the rest (rest-fractions.json)
    base = model.constants_of(prof)["veth_base_cycles"] / prof.ghz
    veth = float(model.evaluate(_on(E5), prof)["path.ns_per_packet"])
    for rx in ("pp_direct", "pp_ring", "page_single", "page_bulk"):
        st = _on(E5, path="design", d_rx=rx)
        page = float(model.breakdown_ns(st, prof)["page alloc/recycle"])
        diff = float(model.evaluate(st, prof)["path.ns_per_packet"]) - veth
        assert diff == pytest.approx(page - f * base, rel=1e-9), rx
    # recycling into the pool costs less than the page allocator's refill the rest held (about 44 ns less)
    direct = float(model.evaluate(_on(E5, path="design", d_rx="pp_direct"), prof)["path.ns_per_packet"])
    assert -60 < direct - veth < -30
    opts = composer.resolved(_on(E5, path="design", d_rx="pp_ring"))
    assert any(stage == "RX buffer" for stage, _ in rest.notes(opts, f))
    assert composer.problems({**_on(E5, path="design", d_rx="pp_ring"), "d_stage": "page_alloc"})


# the profiles that carry the cases (tests/cases.py): measured and derived of each era, arm64, a custom one
@pytest.mark.parametrize("cpu", cases.profile_ids())
def test_a_step_a_paths_rest_holds_is_costed_at_zero_on_that_path(cpu):
    """The Overview labels a step's 0 "in the rest" from ``rest.CONTENTS[path].holds``: on every profile and
    across the controls that move the steps, each step a rest holds is 0 on its path (counted once, inside
    the fitted constant), and the rest itself is never 0."""
    from skbmodel.physics import rest

    prof = cases.load(cpu)
    grid = [dict(bulk=b, zero=z, xdp_batch=x, kfl_bulk=k, pp_recycle=r)
            for b, z, x, k, r in itertools.product((1, 64), ("memset", "gfp_zero"), (1, 16), (1, 16), (0.0, 1.0))]
    for path, r in rest.CONTENTS.items():
        assert set(r.holds) <= set(model.COMPONENTS) - {"rest of path"}
        sweep = {k: np.array([g[k] for g in grid]) for k in grid[0]}
        parts = model.breakdown_ns({**cases.scenario(prof, path=path), **sweep}, prof)
        for comp in r.holds:
            np.testing.assert_array_equal(np.broadcast_to(parts[comp], (len(grid),)), 0.0, err_msg=f"{path} {comp}")
        assert np.all(np.asarray(parts["rest of path"]) > 0)
