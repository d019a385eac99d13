"""Whole-path rates out of sample (protocol "same lab, other kernel"): the cpumap rate a lab's profile
predicts on another kernel than it was fitted on, the rows left out with their reasons, and the
statements of what cannot be predicted (another CPU, kfree_skb_list)."""
import dataclasses
from pathlib import Path

import pytest

from skbmodel import corpus, era, era_validation as ev, model, outofsample as oos
from skbmodel.observations import seed_observations
from skbmodel.profile import load_profile


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
    for p, spec in zip(points, ev.RATE_POINTS):
        prof = load_profile(spec.profile)
        cited = " ".join(c.source for c in prof.constants.values())
        r = rows.loc[spec.row]
        assert r["series"] not in cited and ev._message_id(r["source"]) not in cited
        assert ev._message_id(r["source"]).startswith("<")
        assert not era.in_range(p["kernel"], prof.kernels)
        assert not p["fitted"]
        # the naive prediction is the lab's earlier run, the one the profile was fitted to
        assert spec.naive_row in cited


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
    state = {"pp_recycle": 1.0, "numa": "same"}
    assert float(model.evaluate(state, moved)["cpumap.dst_mpps"]) == pytest.approx(points[0]["predicted"], rel=1e-9)


def test_a_profile_moved_to_another_kernel_gains_the_drift_on_its_costs_only():
    """kernel_moved: costs (cycles, ns) keep their values and gain d * sqrt(years) as an independent sd;
    other constants are untouched; the fitted covariances are kept; the same kernel changes nothing."""
    import math

    import numpy as np

    from skbmodel import uarch
    prof = load_profile("xeon-platinum-iavf")
    assert ev.kernel_moved(prof, prof.kernels[0]) is prof
    moved = ev.kernel_moved(prof, "6.11")
    assert moved.kernels == ("6.11", "6.11")
    dy = era.year_of("6.11") - era.year_of("6.3")
    assert 1.3 < dy < 1.5
    d = uarch.kernel_drift(sub="page_pool")[0]
    for k, c in prof.constants.items():
        m = moved.constants[k]
        assert m.value == c.value
        if c.unit in ev.COST_UNITS and k not in uarch.COST_MODEL:
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
    """The 'other CPU' statement: no cpumap row names its CPU.  The kfree_skb_list statement: the corpus
    has no rate of that path, and both seed rows are not predictable when left out."""
    cpumap = df[df["subsystem"] == "cpumap"]
    assert cpumap["cpu"].str.contains("not stated").all()
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
