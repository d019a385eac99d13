"""Whole-path rates out of sample: the cpumap rate a lab's profile predicts on another kernel than it
was fitted on (protocol "same lab, other kernel"), the E5-1650 v4's 2019 cpumap rates predicted by its
profile whose cpumap constants come from another lab (protocol "other CPU, other kernel"), the rows
left out with their reasons, and the statements of what cannot be predicted."""
import dataclasses
from pathlib import Path

import pytest

from skbmodel.evidence import corpus, era_validation as ev, outofsample as oos
from skbmodel.machine import era
from skbmodel import model
from skbmodel.evidence.observations import seed_observations
from skbmodel.machine.profile import load_profile


@pytest.fixture(scope="module")
def df():
    return corpus.load_corpus()


@pytest.fixture(scope="module")
def points(df):
    return ev.rate_points(df)


@pytest.fixture(scope="module")
def report():
    return oos.load_report()


def test_the_profile_was_not_fitted_to_the_points_it_predicts(df, points):
    """Each point is a prediction: the profile's constants cite neither the row's series nor its
    message, and the row's kernel lies outside the kernels the profile was fitted on."""
    rows = df.set_index("id")
    assert {s.protocol for s in ev.RATE_POINTS} == {ev.RATE_PROTOCOL, ev.OTHER_CPU_PROTOCOL}
    for p, spec in zip(points, ev.RATE_POINTS):
        prof = load_profile(spec.profile)
        cited = " ".join(c.source for c in prof.constants.values())
        r = rows.loc[spec.row]
        assert r["series"] not in cited and ev._message_id(r["source"]) not in cited
        assert not era.in_range(p["kernel"], prof.kernels)
        assert not p["fitted"] and p["protocol"] == spec.protocol
        if spec.protocol == ev.RATE_PROTOCOL:
            assert ev._message_id(r["source"]).startswith("<")
            # the naive prediction is the lab's earlier run, the one the profile was fitted to
            assert spec.naive_row in cited
        else:
            # the naive prediction is the other lab's run, the one the carried-over constants were fitted to
            lab = load_profile("xeon-platinum-iavf")
            assert spec.naive_row in " ".join(c.source for c in lab.constants.values())
            assert "cpumap03-optimizations.org" not in cited


def test_the_cpumap_point_against_the_published_rate(points):
    """Lobakin's 2024-08 baseline (GRO off, kthread): 2.7 Mpps on the destination CPU.  The profile
    predicts the 2023 run's rate (cpm-08, 2.2 Mpps, which it reproduces within its 3 % fit tolerance):
    18.5 % low.  Its constants alone gave +-10 %, which missed; with the kernel drift over the 1.4 years
    from 6.3 to 6.11 (page_pool's random walk, fitted on the E5-1650 v4's two eras) the interval is
    about +-37 % and holds the published rate."""
    (p,) = [q for q in points if q["id"] == "cpumap-2024-olek-udp-mpps-base"]
    assert p["output"] == "cpumap.dst_mpps" and p["unit"] == "Mpps" and p["kernel"] == "6.11"
    assert p["measured"] == 2.7
    assert p["naive"] == seed_observations()["cpm-08"].value == 2.2
    assert p["predicted"] == pytest.approx(2.2, rel=0.03)
    assert -0.25 < p["rel_error"] < -0.12
    assert 0 < p["lo"] < p["predicted"] < p["measured"] < p["hi"]
    assert 0.25 < p["rel_half_width"] < 0.5 and p["inside"]


def test_the_prediction_is_the_model_on_the_rows_kernel(points):
    """The point is evaluated on the profile moved to the row's kernel; the model's era switch is live
    there (the no-softirq page_pool test changes across 6.8), the cpumap path has none."""
    prof = load_profile("xeon-platinum-iavf")
    moved = dataclasses.replace(prof, kernels=("6.11", "6.11"))
    out = "page_pool.nosoftirq01_cycles"
    assert model.evaluate({}, moved)[out] != model.evaluate({}, prof)[out]
    state = {"pp_recycle": 1.0, "place": "same_l3"}
    assert float(model.evaluate(state, moved)["cpumap.dst_mpps"]) == pytest.approx(points[0]["predicted"], rel=1e-9)


def test_a_profile_moved_to_another_kernel_gains_the_drift_on_its_costs_only():
    """kernel_moved: costs (cycles, ns) keep their values and gain d * sqrt(years) as an independent sd;
    other constants are untouched; the fitted covariances are kept; the same kernel changes nothing."""
    import math

    import numpy as np

    from skbmodel.evidence.derivation import opcounts
    prof = load_profile("xeon-platinum-iavf")
    assert ev.kernel_moved(prof, prof.kernels[0]) is prof
    moved = ev.kernel_moved(prof, "6.11")
    assert moved.kernels == ("6.11", "6.11")
    dy = era.year_of("6.11") - era.year_of("6.3")
    assert 1.3 < dy < 1.5
    d = opcounts.kernel_drift(sub="page_pool")[0]
    for k, c in prof.constants.items():
        m = moved.constants[k]
        assert m.value == c.value
        if c.unit in ev.COST_UNITS and k not in opcounts.COST_MODEL:
            assert m.stderr == pytest.approx(math.hypot(c.stderr, d * math.sqrt(dy) * c.value), rel=1e-12)
        elif c.unit not in ev.COST_UNITS:
            assert m.stderr == c.stderr
    names = [n for n in prof.fit_names if prof.constants[n].unit in ev.COST_UNITS]
    assert len(names) >= 2
    sd0 = np.array([prof.constants[n].stderr for n in names])
    sd1 = np.array([moved.constants[n].stderr for n in names])
    cov0 = prof.correlation(names) * np.outer(sd0, sd0)
    cov1 = moved.correlation(names) * np.outer(sd1, sd1)
    np.testing.assert_allclose(cov1 - np.diag(np.diag(cov1)), cov0 - np.diag(np.diag(cov0)), atol=1e-12)
    assert np.all(np.abs(moved.correlation(names)) <= 1.0)
    farther = ev.kernel_moved(prof, "6.16")
    k = "cpumap_xdp_redirect_cycles" if "cpumap_xdp_redirect_cycles" in names else names[0]
    assert farther.constants[k].stderr > moved.constants[k].stderr  # drift grows with the distance


def test_every_published_rate_is_predicted_or_left_out_with_its_reason(df, points):
    left = ev.rates_left_out(df)
    ids = {p["id"] for p in points} | {r["id"] for r in left}
    assert ids == set(df[df["subsystem"].isin(ev.RATE_SUBSYSTEMS)]["id"])
    assert all(not r["why"].startswith("not examined") for r in left), [r["id"] for r in left]
    assert set(ev.RATE_LEFT_OUT) <= set(df["id"]), "a reason for a row the corpus does not have"


def test_the_statements_still_hold(df, report):
    """The 'other CPU' statement: the only cpumap rows that name their CPU are the E5-1650 v4's 2019 runs,
    the CPU of a shipped profile.  The kfree_skb_list statement: the corpus has no rate of that path,
    and both seed rows are not predictable when left out."""
    cpumap = df[df["subsystem"] == "cpumap"]
    named = cpumap[~cpumap["cpu"].str.contains("not stated")]
    assert set(named["cpu"]) == {"Intel Xeon E5-1650 v4 @ 3.60GHz (HT disabled)"}
    assert named["id"].str.startswith("cpumap-e51650v4-2019-").all()
    assert df[df["subsystem"] == "kfree_skb_list"].empty
    for key in ("loso", "loro"):
        status = {r["id"]: r["status"] for r in report[key]}
        assert status["kfl-06"] == status["kfl-07"] == "not predictable"


def test_the_figures_are_reported_and_gated(report):
    (s,) = [s for s in report["summary"] if s["protocol"] == ev.RATE_PROTOCOL]
    assert s["subsystem"] == "cpumap" and s["points"] == 1
    assert s["baseline_mape"] is not None and s["coverage"] is not None
    rec = oos.load_recorded()
    for k in ("MAPE", "max error", "points", "coverage"):
        assert f"cpumap / {ev.RATE_PROTOCOL}: {k}" in rec
    doc = (Path(__file__).resolve().parent.parent / "docs" / "validation.md").read_text()
    for name, _ in ev.RATE_STATEMENTS:
        assert f"**{name}**" in doc


# ---- other CPU, other kernel: the E5-1650 v4's 2019 cpumap runs ------------------------------------

E5_ROWS = {  # cpumap_kthread pps of areas/cpumap/cpumap03-optimizations.org (xdp-project), qsize 128 unless named
    "baseline": 3180074, "p1-ptr-ring-batch": 3327729, "p2-build-skb-around": 3221303, "p3-skb-bulk-alloc": 3290563,
    "p4-prefetchw-page": 3520250, "p5-skb-list": 3303269, "p4-qsize64": 3930379, "p5-qsize64": 4089778,
}
E5 = "cpumap-e51650v4-2019-udpnoports-"


def _e5(points, suffix):
    (p,) = [q for q in points if q["id"] == E5 + suffix]
    return p


def test_the_e5_rows_parse_and_map_to_the_destination_rate(df):
    """Every row: the value as printed, in pps (a unit the model's Mpps output converts to), the
    destination CPU's rate as output, kernel 5.1, and a source naming the repository file and the
    commit that carries the figure."""
    import re

    from skbmodel.evidence import parsers
    rows = df.set_index("id")
    for suffix, value in E5_ROWS.items():
        r = rows.loc[E5 + suffix]
        assert r["value"] == value and r["unit"] == "pps"
        assert r["subsystem"] == "cpumap" and r["output"] == "cpumap.dst_mpps"
        assert parsers.compatible(r["output"], r["unit"])
        assert era.kernel_of(r["kernel"]) == "5.1"
        assert "E5-1650 v4" in r["cpu"] and float(r["ghz"]) == 3.6
        assert re.search(r"xdp-project/xdp-project areas/cpumap/cpumap03-optimizations\.org @[0-9a-f]{40}\b",
                         r["source"])
        assert r["verified"].startswith("yes: ") and f"{value:,}" in r["verified"]
        assert ("qsize 64" in r["conditions"]) == suffix.endswith("qsize64")


def test_the_e5_profile_never_saw_a_cpumap_rate():
    """The profile's cpumap bases are carried over from the seed 003 fit (same cycles, wider sd), not fitted."""
    e5, lab = load_profile("e5-1650v4"), load_profile("xeon-platinum-iavf")
    for k in ("cpumap_src_base_cycles", "cpumap_dst_stack_cycles", "cpumap_redirect_cycles", "xcpu_line_cycles"):
        assert e5.constants[k].kind == "assumed" and "xeon-platinum-iavf" in e5.constants[k].source
        assert e5.constants[k].value == pytest.approx(lab.constants[k].value, abs=5e-4)  # carried, to 3 decimals
        assert e5.constants[k].log_sd > lab.constants[k].log_sd  # wider: the sd of ln (carried: log scale)
    assert not set(e5.fit_names) & {"cpumap_dst_stack_cycles", "cpumap_src_base_cycles"}


def test_the_e5_predictions_are_the_model_on_the_rows_kernel(points):
    """The baseline row: the composed cpumap destination with 5.1's skb stage (one kmem_cache_alloc and a
    memset of the head), no page recycling; the patch 3 row: the model's cpumap destination as is (bulk 8,
    __GFP_ZERO).  Both equal the public model API on the e5-1650v4 profile moved to 5.1 (values unchanged,
    only the sd grows), and the composed path equals the cpumap destination rate when the stages match."""
    prof = load_profile("e5-1650v4")
    moved = ev.kernel_moved(prof, "5.1")
    assert moved.kernels == ("5.1", "5.1")
    base = dict(pp_recycle=0.0, place="same_l3")
    one = {**base, "path": "design", "d_from": "cpumap", "d_skb": "slab_one", "d_zero": "memset"}
    p0, p3 = _e5(points, "baseline"), _e5(points, "p3-skb-bulk-alloc")
    assert p0["output"] == "path.mpps" and p3["output"] == "cpumap.dst_mpps"
    for prf in (moved, prof):
        assert float(model.evaluate(one, prf)["path.mpps"]) * 1e6 == pytest.approx(p0["predicted"], rel=1e-9)
        out = model.evaluate(base, prf)
        assert float(out["cpumap.dst_mpps"]) * 1e6 == pytest.approx(p3["predicted"], rel=1e-9)
        # the source CPU keeps up (as the runs' 14.7 Mpps XDP-RX against ~3.2 Mpps): the destination is the rate
        assert float(out["cpumap.src_mpps"]) > 2 * float(out["cpumap.dst_mpps"])
        composed = model.evaluate({**base, "path": "design", "d_from": "cpumap"}, prf)["path.mpps"]
        assert float(composed) == pytest.approx(float(out["cpumap.dst_mpps"]), rel=1e-9)


def test_the_e5_points_against_the_published_rates(points):
    """Measured 3,180,074 (baseline) and 3,290,563 pps (patch 3).  Predicted about 2.74 and 2.80 Mpps:
    14 and 15 % low, inside intervals that reach 0 (the carried constants' transfer spread); the naive
    prediction (seed 003's destination rate
    without recycling, cpm-05, 1.8 Mpps) is 43 and 45 % low.  The model puts patch 3 above the baseline,
    as measured (+110,489 pps measured, about +57,000 predicted)."""
    p0, p3 = _e5(points, "baseline"), _e5(points, "p3-skb-bulk-alloc")
    assert p0["measured"] == 3180074 and p3["measured"] == 3290563
    for p in (p0, p3):
        assert p["kernel"] == "5.1" and p["unit"] == "pps" and p["protocol"] == ev.OTHER_CPU_PROTOCOL
        assert p["naive_row"] == "cpm-05"
        assert p["naive"] == pytest.approx(seed_observations()["cpm-05"].value * 1e6, rel=1e-12) == 1.8e6
        assert -0.2 < p["rel_error"] < -0.1 and -0.5 < p["naive_rel_error"] < -0.4
        assert abs(p["rel_error"]) < abs(p["naive_rel_error"])
        # inside an interval that reaches 0: the cpumap constants carried from another CPU add the transfer
        # spread of skbmodel.evidence.derivation.derive (0.69 relative sd) to their own
        assert 0 <= p["lo"] < p["predicted"] < p["measured"] < p["hi"] and p["inside"]
        assert p["rel_half_width"] > 0.45
    assert p0["predicted"] == pytest.approx(2.74e6, rel=0.01)
    assert p3["predicted"] == pytest.approx(2.80e6, rel=0.01)
    assert 0 < p3["predicted"] - p0["predicted"] < p3["measured"] - p0["measured"]


def test_the_e5_rows_of_mechanisms_the_model_lacks_are_left_out(df):
    left = {r["id"]: r["why"] for r in ev.rates_left_out(df)}
    for suffix, word in (("p1-ptr-ring-batch", "ptr_ring"), ("p2-build-skb-around", "ptr_ring"),
                         ("p4-prefetchw-page", "prefetch"), ("p5-skb-list", "list"),
                         ("p4-qsize64", "queue of 64"), ("p5-qsize64", "queue of 64")):
        assert word in left[E5 + suffix]
    assert E5 + "baseline" not in left and E5 + "p3-skb-bulk-alloc" not in left


def test_whole_path_rates_stay_out_of_the_default_state_protocols(report):
    """The E5 rows are scenario rows: neither the era table nor 'same CPU, other kernel' evaluates them
    at the default state."""
    assert not [p for p in report["eras"] if p["id"].startswith(E5)]
    assert not [p for p in report["points"] if p["id"].startswith(E5)]


def test_the_other_cpu_protocol_is_reported_and_gated(report):
    (s,) = [s for s in report["summary"] if s["protocol"] == ev.OTHER_CPU_PROTOCOL]
    assert s["subsystem"] == "cpumap" and s["points"] == 2
    assert s["mape"] == pytest.approx(0.144, abs=0.002) and s["baseline_mape"] == pytest.approx(0.443, abs=0.002)
    assert s["coverage"] == 1.0
    rec = oos.load_recorded()
    for k in ("MAPE", "max error", "points", "coverage"):
        assert f"cpumap / {ev.OTHER_CPU_PROTOCOL}: {k}" in rec
    doc = (Path(__file__).resolve().parent.parent / "docs" / "validation.md").read_text()
    assert f"| cpumap          | {ev.OTHER_CPU_PROTOCOL:<27} |" in doc
    assert "cpumap03-optimizations.org" in doc
