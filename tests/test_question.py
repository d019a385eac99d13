"""One question per state: resolved once, and its one paired propagation read by the A/B table, the delta
chart and the answer's differences alike (counted, not timed)."""
from __future__ import annotations

import collections

import numpy as np
import pytest

from skbmodel import answers, model, uncertainty
from skbmodel.links import state as sk_state
from skbmodel.question import Question
from skbmodel.scenario import Scenario
from skbview import tables


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
    counting(Scenario, "of", "read")
    counting(uncertainty, "linearise", "propagation")
    counting(model, "evaluate", "evaluation")
    answers.clear_caches()
    yield c
    answers.clear_caches()


@pytest.mark.parametrize("query", ["b_xdp_batch=4", "cpu=epyc-9684x&b_cpu=e5-1650v4", "b_path=cpumap&b_numa=cross"])
def test_a_cold_compare_table_resolves_its_question_once_and_propagates_the_pair_once(counts, query):
    state, _ = sk_state.decode(query)
    rows = tables.compare_rows(state)
    tables.paired_deltas(state)  # the delta chart's read
    answers.of_state({**state, "page": "compare"})  # the text block's and the report's
    assert counts["question"] == 1 and counts["read"] == 2  # A, and B as A plus its overrides
    # the pair (every output, with elasticities), then A's and B's own intervals of what the page shows
    assert counts["propagation"] == 3
    assert len(rows) == len(model.OUTPUT_UNITS)


def test_the_shared_pair_gives_what_separate_propagations_give():
    state, _ = sk_state.decode("page=compare&b_xdp_batch=4&b_zero=gfp_zero")
    q = Question.of_state(state)
    a, b = sk_state.scenario(state, "a"), sk_state.scenario(state, "b")
    delta, div = uncertainty.delta_intervals(a, b, sk_state.profile_for(state), sk_state.profile_for(state, "b"))
    got, got_div = tables.paired_deltas(state)
    for o in model.OUTPUT_UNITS:
        assert float(got[o]) == pytest.approx(float(delta[o]), rel=1e-12, abs=1e-12), o
        assert np.allclose(np.asarray(got_div[o], dtype=float), np.asarray(div[o], dtype=float), rtol=1e-12,
                           atol=1e-12), o
    res = answers.of_question(q)
    assert res.differences and all(d.output in q.pair.outputs for d in res.differences)
    for d in res.differences:
        lo, hi = uncertainty.delta_intervals(a, b, sk_state.profile_for(state), sk_state.profile_for(state, "b"),
                                             [d.output])[1][d.output]
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
