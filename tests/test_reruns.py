"""Run-to-run spread of published constants (skbmodel.evidence.reruns): estimated from the corpus's own
repeats, checked out of sample (leave one group out), carried by every constant taken from one run."""
from __future__ import annotations

import math

import numpy as np
import pytest

from skbmodel import uncertainty
from skbmodel.evidence import corpus, reruns
from skbmodel.machine.profile import load_profile

Z = uncertainty.z_value()


@pytest.fixture(scope="module")
def df():
    return corpus.load_corpus()


def test_the_spread_is_pooled_over_the_repeats_of_each_group(df):
    reps = reruns.repeats(df)
    sp = reruns.spread(reps)
    assert sp["groups"] == 5 and sp["repeats"] == 13 and sp["dof"] == 17
    ln = [np.log(r["values"]) for r in reps]
    sigma = math.sqrt(sum(float(np.sum((v - v.mean()) ** 2)) for v in ln) / sum(v.size - 1 for v in ln))
    assert sp["sigma"] == pytest.approx(sigma, rel=1e-12) and sp["s_rerun"] == pytest.approx(math.sqrt(2) * sigma)
    assert 0.10 < sp["s_rerun"] < 0.25  # 0.168: a rerun lands some 17 % (one sd) from the run it repeats


def test_only_repeats_of_unchanged_code_are_pooled(df):
    """A patch that changes the measured path (the EPYC's DMA-fix series, the arm64 'after' runs), another
    mitigation (safe-RET) or a debug configuration is no repeat."""
    ids = {i for r in reruns.repeats(df) for i in r["ids"]}
    assert ids and not any(("dmafix" in i or "-after-" in i and "arm64" in i or "srso" in i or "debugcfg" in i)
                           for i in ids)
    assert {r["output"] for r in reruns.repeats(df)} <= set(reruns.RERUN_OUTPUTS)


def test_reruns_fall_inside_the_interval_80_to_95_percent_of_the_time_out_of_sample(df):
    cov = reruns.coverage(df)
    assert cov["points"] == 42 and cov["groups"] == 5
    assert 0.80 <= cov["coverage"] <= 0.95
    for p in cov["pairs"]:  # each judged with the other groups' spread alone
        others = reruns.spread([r for r in reruns.repeats(df) if r["group"] != p["group"]])["s_rerun"]
        assert p["s_rerun"] == pytest.approx(others)
        lo, hi = (p["constant"] * math.exp(k * Z * others) for k in (-1, 1))
        assert p["inside"] == (lo <= p["measured"] <= hi)


@pytest.mark.parametrize("pid", ["xeon-gold-6140", "xeon-platinum-8481c", "e5-1650v4-2025", "epyc-9684x"])
def test_a_constant_from_one_run_carries_the_run_to_run_spread(pid, df):
    s = reruns.spread(reruns.repeats(df))["s_rerun"]
    prof = load_profile(pid)
    for name in ("pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles"):
        c = prof.constants[name]
        assert c.scale == "log" and "run-to-run spread" in c.source
        assert c.stderr / c.value == pytest.approx(math.hypot(0.29 / c.value, s), rel=1e-3)


def test_the_gold_6140_s_other_run_falls_inside_its_profile_s_interval_but_the_fast_path(df):
    """The profile is the control kernel's run; the stats kernel's run of the same benchmark is a rerun: its
    ring and slow paths fall inside the 90 % interval of the profile's constants (the slow path's 106 against
    109 fell outside with the 1 % spread before), the fast path's 12 against 17 does not."""
    prof = load_profile("xeon-gold-6140")
    rows = df.set_index("id")["value"]
    for name, rid, inside in (("pp_ring_cycles", "pp-gold6140-2022-stats-tasklet-ring", True),
                              ("page_slow_cycles", "pp-gold6140-2022-stats-tasklet-slow", True),
                              ("pp_fast_cycles", "pp-gold6140-2022-stats-tasklet-fast", False)):
        c = prof.constants[name]
        lo, hi = c.value * math.exp(-Z * c.log_sd), c.value * math.exp(Z * c.log_sd)
        assert (lo <= float(rows[rid]) <= hi) == inside, (name, lo, hi, rows[rid])
