"""One question per state: resolved once, and its one paired propagation read by the A/B table, the delta
chart and the answer's differences alike (counted, not timed)."""
from __future__ import annotations

import collections

import numpy as np
import pytest

from skbmodel import answers, constant_sets, model, question, uncertainty
from skbmodel.links import state as sk_state
from skbmodel.machine.profile import load_profile
from skbmodel.question import Question
from skbview import charts, tables


@pytest.fixture
def counts(monkeypatch):
    c = collections.Counter()

    def counting(owner, name, kind):
        fn = getattr(owner, name)

        def wrapped(*a, **k):
            c[kind] += 1
            return fn(*a, **k)
        monkeypatch.setattr(owner, name, wrapped)

    counting(Question, "_resolve", "question")
    counting(question, "scenario_of", "read")
    counting(uncertainty, "linearise", "propagation")
    counting(model, "evaluate", "evaluation")
    probe = constant_sets.relevance

    def probing(*a, **k):  # the relevance probe's evaluation (once per profile and process) counted apart
        c["probing"] += 1
        before = c["evaluation"]
        try:
            return probe(*a, **k)
        finally:
            c["probe"] += c["evaluation"] - before
            c["evaluation"] = before
    monkeypatch.setattr(constant_sets, "relevance", probing)
    answers.clear_caches()
    constant_sets.clear_cache()
    yield c
    answers.clear_caches()


@pytest.mark.parametrize("query", ["b_xdp_batch=4", "cpu=epyc-9684x&b_cpu=e5-1650v4",
                                   "b_path=cpumap&b_place=other_socket&cpu=xeon-platinum-iavf"])
def test_a_cold_compare_table_resolves_its_question_once_and_propagates_the_pair_once(counts, query):
    state, _ = sk_state.decode(f"page=compare&{query}")
    q = Question.of_state(state)
    rows = tables.compare_rows(q)
    charts.figure_for("compare", "ab_delta", q)  # the delta chart reads the pair and the answer's verdicts
    answers.of_question(q)  # the text block's and the report's
    assert counts["question"] == 1 and counts["read"] == 2  # A, and B as A plus its overrides
    # one propagation, the pair (every output, with elasticities); A's and B's own intervals are read from it
    assert counts["propagation"] == 1
    # one vectorised evaluation of A and B side by side on one profile, one per profile on two
    profiles = {q.scenario(w).profile.id for w in ("a", "b")}
    assert counts["evaluation"] == len(profiles)
    assert counts["probe"] == len(profiles)
    assert len(rows) == len(model.OUTPUT_UNITS)


@pytest.mark.parametrize("query", ["b_xdp_batch=4&b_zero=gfp_zero", "cpu=epyc-9684x&b_cpu=e5-1650v4",
                                   "b_path=cpumap&b_place=other_l3&cpu=epyc-9684x", "path=design&b_d_skb=napi_cache"])
def test_each_side_of_the_pair_is_that_scenario_s_own_propagation(query):
    """A's and B's own values and intervals read from the pair's evaluations are what propagating each
    alone gives (every output; the pair holds more dimensions, which move none of a side's outputs)."""
    state, _ = sk_state.decode(f"page=compare&{query}")
    q = Question.of_state(state)
    for w in ("a", "b"):
        scn = q.scenario(w)
        values, iv = q.own(w, list(model.OUTPUT_UNITS))
        want_v, want_iv = uncertainty.evaluate_with_intervals(scn.params, scn.profile)
        for o in model.OUTPUT_UNITS:
            assert np.allclose(np.asarray(values[o], dtype=float), np.asarray(want_v[o], dtype=float),
                               rtol=1e-12, atol=0, equal_nan=True), (w, o)
            assert np.allclose(np.asarray(iv[o], dtype=float), np.asarray(want_iv[o], dtype=float),
                               rtol=1e-9, atol=1e-12, equal_nan=True), (w, o)


def test_side_by_side_evaluation_is_each_scenario_s_evaluation_on_a_grid():
    """A and B stacked on one profile in one call give each scenario's own rows, grid axes kept."""
    prof = load_profile("e5-1650v4")
    a = {"path": "veth", "xdp_batch": np.array([1.0, 4.0, 16.0]), "zero": "memset"}
    b = {"path": "cpumap", "xdp_batch": 8.0, "zero": "gfp_zero", "place": "other_socket"}
    pair = uncertainty.linearise(a, b, prof, prof, ["path.ns_per_packet", "veth.ns_per_packet"])
    for side, params in (("A", a), ("B", b)):
        alone = uncertainty.linearise(params, None, prof, None, ["path.ns_per_packet", "veth.ns_per_packet"])
        got = pair.side(side)
        for o in got.outputs:
            want = np.broadcast_to(alone.value[o], np.shape(got.value[o]))
            assert np.allclose(got.value[o], want, rtol=1e-12), (side, o)
            lo, hi = got.intervals()[o]
            wlo, whi = alone.intervals()[o]
            assert np.allclose(lo, np.broadcast_to(wlo, np.shape(lo)), rtol=1e-9), (side, o)
            assert np.allclose(hi, np.broadcast_to(whi, np.shape(hi)), rtol=1e-9), (side, o)


def test_the_shared_pair_gives_what_separate_propagations_give():
    state, _ = sk_state.decode("page=compare&b_xdp_batch=4&b_zero=gfp_zero")
    q = Question.of_state(state)
    (a, pa), (b, pb) = ((q.scenario(w).params, q.scenario(w).profile) for w in ("a", "b"))
    delta, div = uncertainty.delta_intervals(a, b, pa, pb)
    got, got_div = q.pair.value, q.pair_intervals
    for o in model.OUTPUT_UNITS:
        assert float(got[o]) == pytest.approx(float(delta[o]), rel=1e-12, abs=1e-12), o
        assert np.allclose(np.asarray(got_div[o], dtype=float), np.asarray(div[o], dtype=float), rtol=1e-12,
                           atol=1e-12), o
    res = answers.of_question(q)
    assert res.differences and all(d.output in q.pair.outputs for d in res.differences)
    for d in res.differences:
        lo, hi = uncertainty.delta_intervals(a, b, pa, pb, [d.output])[1][d.output]
        assert (d.lo, d.hi) == pytest.approx((float(lo), float(hi)), rel=1e-12, abs=1e-12)


def test_a_state_has_one_question_and_another_state_another():
    s1, _ = sk_state.decode("page=compare&b_bulk=8")
    s2, _ = sk_state.decode("page=compare&b_bulk=32")
    assert Question.of_state(s1) is Question.of_state(dict(s1))
    assert Question.of_state(s2) is not Question.of_state(s1)
    assert Question.of_state(s2).b.params["bulk"] == 32 and Question.of_state(s2).a.params["bulk"] == 16


def test_only_refuses_an_output_the_propagation_did_not_carry():
    lin = uncertainty.linearise({"bulk": 8}, None, None, None, ["slub.bulk_ns"])
    with pytest.raises(ValueError, match="not propagated"):
        lin.only(["veth.mpps"])


def test_a_file_identical_to_a_shipped_profile_is_that_profile(tmp_path):
    """``eval --profile FILE`` on a copy of a shipped profile names that profile, its kernels and its version,
    and links to it by id; a copy with one value changed stays a custom profile on its base."""
    from pathlib import Path
    from tests.cli_util import skbmodel_cli
    root = Path(__file__).resolve().parents[1]
    src = root / "skbmodel" / "profiles" / "xeon-gold-6140.toml"
    copy = tmp_path / "mine.toml"
    copy.write_text(src.read_text())
    res = skbmodel_cli("eval", "page=slub", "--profile", str(copy), "--text", cwd=root)
    assert res.returncode == 0, res.stderr
    flat = " ".join(res.stdout.split())
    assert "CPU profile: xeon-gold-6140 (" in flat and "kernel 5.17" in flat and "custom" not in flat
    assert res.stdout.strip().splitlines()[-1].endswith("&cpu=xeon-gold-6140")
    edited = tmp_path / "edited.toml"
    edited.write_text(src.read_text().replace("[constants.ghz]\nvalue = 2.3", "[constants.ghz]\nvalue = 2.4"))
    assert edited.read_text() != src.read_text()
    res = skbmodel_cli("eval", "page=slub", "--profile", str(edited), "--text", cwd=root)
    assert res.returncode == 0 and "custom profile" in res.stdout and "prof=" in res.stdout
