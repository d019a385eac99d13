"""skbmodel.scenario: a state's scenario A or B with its profile resolved once, giving the model's
numbers through public functions."""
from __future__ import annotations

import numpy as np
import pytest

from skbmodel.machine import custom
from skbmodel import model, question, uncertainty
from skbmodel.links import state as sk_state
from skbmodel.machine.profile import load_profile
from skbmodel.scenario import Scenario


def _state():
    prof = custom.build(load_profile("e5-1650v4"), {"slub_slab_bytes": 16384}, "scenario-test")
    st, warnings = sk_state.decode("bulk=32&b_bulk=8&cpu=xeon-platinum-iavf&path=cpumap&b_path=design"
                            "&b_d_from=kfree_skb_list&b_prof=" + custom.encode_profile(prof).replace("+", "%2B"))
    assert warnings == []
    return st


@pytest.mark.parametrize("which", ["a", "b"])
def test_a_scenario_is_the_states_side_with_its_profile(which):
    st = _state()
    sc = question.scenario_of(st, which)
    assert dict(sc.params) == sk_state.scenario(st, which)
    assert sc.profile.id == sk_state.profile_for(st, which).id
    with pytest.raises(TypeError):
        sc.params["bulk"] = 1  # read-only: a scenario does not change under its users
    want = model.evaluate(sk_state.scenario(st, which), sk_state.profile_for(st, which))
    got = sc.evaluate()
    assert list(got) == list(model.OUTPUT_UNITS)
    for k in want:
        assert got[k] == want[k], k
    assert sc.evaluate(["path.mpps"])["path.mpps"] == want["path.mpps"]


def test_b_is_a_second_scenario_not_a_key_prefix():
    st = _state()
    a, b = question.scenario_of(st, "a"), question.scenario_of(st, "b")
    assert a.params["bulk"] == 32 and b.params["bulk"] == 8
    assert b.params["path"] == "design" and b.params["d_from"] == "kfree_skb_list"
    assert b.profile.id != a.profile.id and "prof" in b.params and "prof" not in a.params
    delta, div = a.delta(b, ["path.ns_per_packet"])
    want = uncertainty.delta_intervals(sk_state.scenario(st, "a"), sk_state.scenario(st, "b"),
                                       sk_state.profile_for(st, "a"),
                                       sk_state.profile_for(st, "b"), ["path.ns_per_packet"])
    assert float(delta["path.ns_per_packet"]) == float(want[0]["path.ns_per_packet"])
    assert [float(v) for v in div["path.ns_per_packet"]] == [float(v) for v in want[1]["path.ns_per_packet"]]


def test_replace_sweeps_and_inputs_are_typed():
    sc = Scenario.from_params({"cpu": "e5-1650v4", "zero": "memset"})
    sweep = sc.replace(bulk=np.arange(1, 9))
    assert sc.params.get("bulk") is None and sweep.evaluate(["slub.bulk_cycles"])["slub.bulk_cycles"].shape == (8,)
    x = sweep.inputs()
    assert x["bulk"].dtype == float and not bool(x["is_gfp"]) and x["path"].dtype.kind == "i"
    v, iv = sweep.with_intervals(["slub.bulk_cycles"])
    lo, hi = iv["slub.bulk_cycles"]
    assert np.all(lo <= v["slub.bulk_cycles"]) and np.all(v["slub.bulk_cycles"] <= hi)
