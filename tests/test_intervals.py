"""Prediction intervals: profile fields, the fit's covariance, propagation, A/B verdicts, CLI and pages."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from skbmodel.evidence import calibration, seed_checks
from skbmodel.question import Question
from skbmodel import model, interval_rules, uncertainty
from skbmodel.physics import noise
from skbmodel.links import state as sk_state
from skbmodel.machine.profile import ProfileError, load_profile, parse_profile
from tests.cli_util import skbmodel_cli

REPO = Path(__file__).resolve().parent.parent
E5, PLAT = "e5-1650v4", "xeon-platinum-iavf"


def _states():
    from skbview.app.appstate import preset_state
    base = sk_state.defaults()
    return [base, {**base, "bulk": 100, "zero": "memset", "zero_bytes": 512, "place": "other_socket", "pp_recycle": 0.3,
                   "kfl_bulk": 1, "clone_frac": 0.4, "path": "cpumap"},
            {**base, "path": "kfree_skb_list", "drop_batch": 7, "defer_cache": 0}, preset_state("003")]


def _with_stderr(prof, name, stderr):
    c = dataclasses.replace(prof.constants[name], stderr=stderr)
    return dataclasses.replace(prof, constants={**prof.constants, name: c})


# ---------------------------------------------------------------- profile format
def test_profile_round_trip_keeps_stderr_and_correlation():
    for pid in (E5, PLAT):
        prof = load_profile(pid)
        assert any(c.stderr > 0 for c in prof.constants.values())
        assert len(prof.fit_names) > 1
        back = parse_profile(prof.to_toml(), resolve_parent=load_profile)
        for n, c in prof.constants.items():
            assert back.constants[n].stderr == pytest.approx(c.stderr, abs=1e-6)
        np.testing.assert_allclose(back.correlation(prof.fit_names), prof.correlation(prof.fit_names), atol=1e-6)


def test_inherited_profile_keeps_parent_correlation_unless_overridden():
    parent = load_profile(E5)
    child = load_profile(PLAT)
    a, b = "slub_fast_pair_cycles", "slub_bulk_obj_pair_cycles"
    assert parent.correlation([a, b])[0, 1] != 0
    assert child.correlation([a, b])[0, 1] == parent.correlation([a, b])[0, 1]
    assert child.constants[a].stderr == parent.constants[a].stderr
    text = f"""format_version = 1
id = "c"
name = "c"
inherits = "{E5}"
[constants.{a}]
value = 110.0
unit = "cycles"
kind = "fitted"
source = "test"
stderr = 2.5
[fit]
names = ["{a}", "{b}"]
correlation = [[1.0, 0.25], [0.25, 1.0]]
"""
    over = parse_profile(text, resolve_parent=load_profile)
    assert over.constants[a].stderr == 2.5 and over.constants[b].stderr == parent.constants[b].stderr
    assert over.correlation([a, b])[0, 1] == 0.25
    s, t = "stos_setup_cycles", "stos_line_cycles"  # a parent pair the child does not list
    assert over.correlation([s, t])[0, 1] == parent.correlation([s, t])[0, 1]


def test_old_profile_without_uncertainty_loads_with_zero_stderr(monkeypatch):
    monkeypatch.setattr(uncertainty, "STRUCTURAL_REL_SD", {})  # only the constants' share is of interest here
    lines = [ln for ln in load_profile(E5).to_toml().splitlines() if not ln.startswith("stderr")]
    text = "\n".join(lines[:lines.index("[fit]")])
    prof = parse_profile(text)
    assert all(c.stderr == 0 for c in prof.constants.values()) and prof.fit_names == ()
    out, iv = uncertainty.evaluate_with_intervals(sk_state.scenario(sk_state.defaults()), prof)
    for k in model.OUTPUT_UNITS:
        assert float(iv[k][0]) == float(iv[k][1]) == pytest.approx(float(out[k]))


@pytest.mark.parametrize("fit", ['names = ["ghz"]\ncorrelation = [[2.0]]', 'names = ["nope"]\ncorrelation = [[1.0]]',
                                 'names = ["ghz", "l1d_bytes"]\ncorrelation = [[1.0, 0.5], [0.4, 1.0]]',
                                 'names = ["ghz", "l1d_bytes"]\ncorrelation = [[1.0, 0.5]]'])
def test_bad_fit_table_is_rejected(fit):
    text = f'format_version = 1\nid = "c"\nname = "c"\ninherits = "{E5}"\n[fit]\n{fit}\n'
    with pytest.raises(ProfileError, match="fit"):
        parse_profile(text, resolve_parent=load_profile)


def test_every_constant_states_its_uncertainty():
    for pid in (E5, PLAT):
        prof = load_profile(pid)
        for n, c in prof.constants.items():
            if c.kind == "kernel":
                assert c.stderr == 0, n
            if c.stderr > 0 or c.kind in ("published", "assumed"):
                assert "uncertainty:" in c.source, (pid, n)


# ---------------------------------------------------------------- the fit's covariance
def test_fit_covariance_of_an_exactly_determined_pair_is_the_measurement_precision():
    prof = load_profile(E5)
    rows = [s for s in seed_checks.ROWS if s.id in ("mem-03", "mem-05")]
    names = ["erms_setup_cycles", "erms_line_cycles"]
    se, corr = calibration.fit_covariance(prof, rows, names)
    # erms(bytes) = setup + line * ceil(bytes / 64): 4 and 8 lines
    sd = np.array([np.hypot(1 / np.sqrt(12), 0.01 * v) for v in (31, 35)])
    jw = np.array([[1.0, 4.0], [1.0, 8.0]]) / sd[:, None]
    cov = np.linalg.inv(jw.T @ jw)
    np.testing.assert_allclose(se, np.sqrt(np.diag(cov)), rtol=1e-5)
    assert corr[0, 1] == pytest.approx(cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1]), rel=1e-5)
    np.testing.assert_allclose([prof.stderr(n) for n in names], se, rtol=1e-5)  # what calibrate wrote


# ---------------------------------------------------------------- propagation
@pytest.mark.parametrize("method", uncertainty.METHODS)
def test_interval_contains_the_point_estimate_for_every_output(method):
    for st in _states():
        params = sk_state.scenario(st)
        prof = sk_state.profile_for(st)
        ref = model.evaluate(params, prof)
        out, iv = uncertainty.evaluate_with_intervals(params, prof, method=method)
        assert set(iv) == set(model.OUTPUT_UNITS)
        for k in model.OUTPUT_UNITS:
            lo, hi = (float(np.asarray(x)) for x in iv[k])
            v = float(np.asarray(ref[k]))
            assert float(np.asarray(out[k])) == v, k  # the nominal row is the plain evaluate
            if k in interval_rules.EXACT_OUTPUTS:  # a kernel-fixed value has no spread
                assert lo == v == hi, k
        # the outputs of the chosen path rest on fitted constants: their interval has a width
        lo, hi = (float(np.asarray(x)) for x in iv["path.ns_per_packet"])
        assert hi - lo > 0.001 * abs(float(np.asarray(ref["path.ns_per_packet"]))), method


def test_the_half_width_of_a_two_constant_output_is_z_times_its_propagated_sd():
    """zero.erms_cycles = erms_setup + erms_line * L (L lines of zero_bytes): linearised, its sd is
    sqrt(s_setup^2 + L^2 s_line^2 + 2 L rho s_setup s_line), with the structural sd rel * f in quadrature;
    the 90 % half width is 1.645 times that."""
    prof = load_profile(E5)
    params = {**sk_state.scenario(sk_state.defaults()), "zero_bytes": 184}
    v, iv = uncertainty.evaluate_with_intervals(params, prof, ["zero.erms_cycles"], method="linear")
    lines = np.ceil(184 / prof.value("cacheline_bytes"))
    s1, s2 = prof.stderr("erms_setup_cycles"), prof.stderr("erms_line_cycles")
    rho = float(prof.correlation(["erms_setup_cycles", "erms_line_cycles"])[0, 1])
    f = float(v["zero.erms_cycles"])
    assert f == pytest.approx(prof.value("erms_setup_cycles") + lines * prof.value("erms_line_cycles"), rel=1e-12)
    sd = np.sqrt(s1 ** 2 + lines ** 2 * s2 ** 2 + 2 * lines * rho * s1 * s2
                 + (uncertainty.structural_rel_sd("zero.erms_cycles") * f) ** 2)
    lo, hi = (float(x) for x in iv["zero.erms_cycles"])
    assert s1 > 0 and s2 > 0 and rho != 0
    assert (hi - lo) / 2 == pytest.approx(1.6448536 * sd, rel=1e-6)
    assert (lo + hi) / 2 == pytest.approx(f, rel=1e-12)


def test_intervals_are_vectorised_over_the_grid():
    p = {**sk_state.scenario(sk_state.defaults()), "bulk": np.arange(1, 257)}
    prof = load_profile(E5)
    out, iv = uncertainty.evaluate_with_intervals(p, prof, ["slub.loop_cycles"])
    lo, hi = iv["slub.loop_cycles"]
    assert lo.shape == hi.shape == (256,)
    for b in (1, 32, 200):
        one = uncertainty.intervals({**p, "bulk": b}, prof, ["slub.loop_cycles"])["slub.loop_cycles"]
        assert float(one[0]) == pytest.approx(lo[b - 1]) and float(one[1]) == pytest.approx(hi[b - 1])


@pytest.mark.parametrize("method", uncertainty.METHODS)
def test_interval_widens_monotonically_with_one_constants_stderr(method):
    prof = load_profile(E5)
    params = {**sk_state.scenario(sk_state.defaults()), "xdp_batch": np.array([1, 8, 16, 64])}
    widths = []
    for se in (0.0, 1.0, 2.0, 5.0, 20.0):
        iv = uncertainty.intervals(params, _with_stderr(prof, "veth_base_cycles", se), ["veth.ns_per_packet"],
                                   method=method)
        widths.append(uncertainty.half_width(iv["veth.ns_per_packet"]))
    assert np.all(np.diff(np.array(widths), axis=0) > 0)


def test_structural_term_adds_in_quadrature(monkeypatch):
    prof = load_profile(E5)
    params = sk_state.scenario(sk_state.defaults())
    monkeypatch.setattr(uncertainty, "STRUCTURAL_REL_SD", {})
    f, iv = uncertainty.evaluate_with_intervals(params, prof, ["veth.ns_per_packet", "slub.loop_cycles"])
    monkeypatch.setitem(uncertainty.STRUCTURAL_REL_SD, "veth.", 0.02)
    assert uncertainty.structural_rel_sd("veth.mpps") == 0.02 and uncertainty.structural_rel_sd("slub.loop_ns") == 0
    f2, iv2 = uncertainty.evaluate_with_intervals(params, prof, ["veth.ns_per_packet", "slub.loop_cycles"])
    z = uncertainty.z_value(0.9)
    hw = float(uncertainty.half_width(iv["veth.ns_per_packet"]))
    expect = np.hypot(hw, z * 0.02 * float(f["veth.ns_per_packet"]))
    assert float(uncertainty.half_width(iv2["veth.ns_per_packet"])) == pytest.approx(expect)
    hw = uncertainty.half_width
    assert float(hw(iv2["slub.loop_cycles"])) == float(hw(iv["slub.loop_cycles"]))


SMOOTH = ("slub.loop_cycles", "slub.bulk_cycles", "slub.bulk_gain_cycles", "zero.memset_cycles", "zero.erms_cycles",
          "zero.delta_ns", "page_pool.mix_cycles", "veth.ns_per_packet", "path.ns_per_packet", "cpumap.dst_ns",
          "xdp_pass.ns_per_packet", "kfree_skb_list.ns_per_packet")


def test_linearisation_and_sampling_agree_on_smooth_outputs():
    base = sk_state.scenario(sk_state.defaults())
    for pid in (E5, PLAT):
        prof = load_profile(pid)
        params = {**base, "cpu": pid, "bulk": np.array([1, 8, 16, 24]), "zero_bytes": np.array([64, 184, 256, 512]),
                  "pp_recycle": np.array([0.0, 0.5, 0.9, 1.0])}
        lin = uncertainty.intervals(params, prof, SMOOTH, method="linear")
        mc = uncertainty.intervals(params, prof, SMOOTH, method="sampling")
        for k in SMOOTH:
            a, b = uncertainty.half_width(lin[k]), uncertainty.half_width(mc[k])
            np.testing.assert_allclose(a, b, rtol=0.10, err_msg=f"{pid} {k}")


# ---------------------------------------------------------------- paired A/B
@pytest.mark.parametrize("method", uncertainty.METHODS)
def test_identical_a_and_b_give_a_zero_delta_interval(method):
    for st in _states():
        p = sk_state.scenario(st)
        prof = sk_state.profile_for(st)
        d, iv = uncertainty.delta_intervals(p, dict(p), prof, prof, method=method)
        for k in model.OUTPUT_UNITS:
            assert float(d[k]) == 0.0 and float(iv[k][0]) == 0.0 and float(iv[k][1]) == 0.0, k
        assert uncertainty.delta_interval(p, p, prof, prof, "path.ns_per_packet", method=method) == (0.0, 0.0)


def test_a_shared_constant_cancels_in_the_delta():
    prof = load_profile(E5)
    a = sk_state.scenario(sk_state.defaults())
    b = {**a, "xdp_batch": 1}
    ref = uncertainty.delta_interval(a, b, prof, prof, "veth.ns_per_packet")
    wide = _with_stderr(prof, "veth_base_cycles", 500.0)  # the base cost: in A and B alike
    got = uncertainty.delta_interval(a, b, wide, wide, "veth.ns_per_packet")
    assert got == pytest.approx(ref, abs=1e-9)
    # unpaired, the same constant would dominate: each side alone is far wider than the delta
    single = uncertainty.intervals(b, wide, ["veth.ns_per_packet"])["veth.ns_per_packet"]
    assert float(uncertainty.half_width(single)) > 50 * float(uncertainty.half_width(ref))
    # the point delta is B - A
    d = float(model.evaluate(b, prof)["veth.ns_per_packet"] - model.evaluate(a, prof)["veth.ns_per_packet"])
    assert ref[0] < d < ref[1]


def test_verdicts():
    assert noise.verdict(5.0, 2.0, 4.0, 6.0) == noise.VERDICT_SURE
    assert noise.verdict(-5.0, 2.0, -6.0, -4.0) == noise.VERDICT_SURE
    assert noise.verdict(1.0, 2.0, 0.5, 1.5) == noise.VERDICT_NOISE
    assert noise.verdict(0.0, 2.0, 0.0, 0.0) == noise.VERDICT_NOISE
    assert noise.verdict(5.0, 2.0, -1.0, 11.0) == noise.VERDICT_UNSURE
    assert set(noise.VERDICTS) == {"measurable, and the model is sure of the sign", "below the noise floor",
                                   "the model cannot tell"}


def test_compare_rows_carry_paired_intervals_and_verdicts():
    from skbview import tables
    from skbview.app.appstate import preset_state
    st = preset_state("002")
    rows = {r["output"]: r for r in tables.compare_rows(Question.of_state(st))}
    for k, r in rows.items():
        assert r["delta_lo"] <= r["delta"] <= r["delta_hi"], k
        assert r["verdict"] in (*noise.VERDICTS, "—")
    r = rows["path.ns_per_packet"]
    lo, hi = uncertainty.delta_interval(sk_state.scenario(st, "a"), sk_state.scenario(st, "b"),
                                        sk_state.profile_for(st, "a"), sk_state.profile_for(st, "b"))
    assert (r["delta_lo"], r["delta_hi"]) == pytest.approx((lo, hi))
    assert r["verdict"] == noise.verdict(r["delta_ns"], st["noise_ns"], lo, hi)


# ---------------------------------------------------------------- CLI and dashboard
def test_eval_json_has_an_interval_for_every_output():
    res = skbmodel_cli("eval", "bulk=32&zero=memset", "--json", cwd=REPO)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert set(doc["intervals"]) == set(doc["outputs"]) == set(model.OUTPUT_UNITS)
    st, _ = sk_state.decode({"bulk": "32", "zero": "memset"})
    _, iv = uncertainty.evaluate_with_intervals(sk_state.scenario(st), sk_state.profile_for(st))
    for k in doc["outputs"]:  # the interval the model computes, printed as is
        assert doc["intervals"][k] == pytest.approx([float(x) for x in iv[k]], rel=1e-9, abs=1e-12), k
    plain = skbmodel_cli("eval", "bulk=32", cwd=REPO)
    assert plain.returncode == 0 and plain.stdout.count("[") >= len(model.OUTPUT_UNITS)


def test_every_model_chart_has_a_band_or_error_bars():
    from skbview import charts
    for page in ("overview", "slub", "zeroing", "veth", "cpumap", "kfree", "compare"):
        for name, fig in charts.figures_for_page(page, Question.of_state(sk_state.defaults())):
            if name == "batch_heatmap":
                continue
            d = fig.to_plotly_json()["data"]
            bands = [t for t in d if charts.BAND_NAME in (t.get("name") or "") and t.get("fill") == "toself"]
            errors = [t for t in d if t.get("error_x") or t.get("error_y")]
            assert bands or errors, (page, name)
            if bands:
                assert any(t.get("showlegend", True) for t in bands), (page, name)


def test_model_page_shows_pm_and_a_band():
    from tests.test_app_pages import _app, _open, _spec
    at = _open(_app(), "slub")
    assert any((m.proto.delta or "").startswith("90 %: ") for m in at.metric)  # the interval, as every surface
    spec = _spec(at, 0)
    band = [t for t in spec["data"] if "90 % interval" in (t.get("name") or "")]
    assert band and band[0]["fill"] == "toself"
    at.button(key="preset_002").click().run()
    at = _open(at, "compare")
    assert (next(m for m in at.metric if "Δ B − A" in m.label).proto.delta or "").startswith("90 %: ")
