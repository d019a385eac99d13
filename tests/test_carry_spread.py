"""A constant carried to another CPU: one move from the CPU that measured it, however often it was carried;
the move is the same-era carry error of measured kernel code; its sd spreads on log scale (a factor)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from skbmodel import model, uncertainty
from skbmodel.evidence.derivation import carry, pp_counts
from skbmodel.links import state as sk_state
from skbmodel.machine import description
from skbmodel.machine.profile import available_profiles, load_profile

#: the E5's cpumap constants, carried from seed 003's lab to the E5, and from the E5 to every other CPU
TWICE = ("cpumap_src_base_cycles", "cpumap_dst_stack_cycles", "cpumap_redirect_cycles")
#: the headline outputs of the veth and cpumap pages, the path cost
HEADLINES = ("veth.mpps", "cpumap.src_mpps", "cpumap.dst_mpps", "path.ns_per_packet")


def _rel(c) -> float:
    return c.stderr / c.value


@pytest.mark.parametrize("pid", ["epyc-9684x", "xeon-gold-6140", "derived-zen4-genoa"])
def test_a_twice_carried_constant_has_the_sd_of_one_move(pid):
    """``s = sqrt(s_own^2 + s_move^2)`` (sd of ln), ``s_own`` its own in the profile that measured it (seed
    003's lab; a fit's ``r = stderr / value`` as ``sqrt(ln(1 + r^2))``), not the E5's it passed through (which
    holds a move already)."""
    lab, e5, prof = load_profile("xeon-platinum-iavf"), load_profile("e5-1650v4"), load_profile(pid)
    s_move = carry.carry_spread(())[0]
    for k in TWICE:
        c = prof.constants[k]
        assert c.origin == "xeon-platinum-iavf" and c.scale == "log", k
        r = _rel(lab.constants[k])
        one_move = math.hypot(math.sqrt(math.log(1 + r * r)), s_move)
        assert _rel(c) == pytest.approx(one_move, abs=2e-3), k
        assert _rel(c) == pytest.approx(_rel(e5.constants[k]), abs=2e-3), k  # no second move on the way
        assert _rel(c) < math.hypot(_rel(e5.constants[k]), s_move) - 0.05, k
        assert "carry_spread" in c.source and f"{s_move:.2f} for one move" in c.source, k


def test_a_carry_back_to_the_measuring_cpu_adds_no_move():
    """A constant measured on the E5 (veth base) carried to a profile of the same CPU keeps its own sd."""
    e5, same = load_profile("e5-1650v4-2025"), load_profile("derived-broadwell-ep")
    assert _rel(same.constants["veth_base_cycles"]) == pytest.approx(_rel(e5.constants["veth_base_cycles"]),
                                                                      abs=1e-3)
    assert same.constants["veth_base_cycles"].scale == "linear"


def test_the_move_is_the_rms_of_the_measured_page_pool_costs_carried_between_cpus_of_one_era():
    """By hand: every measured profile's page_pool costs as core cycles (TSC cycles x turbo / TSC of its
    SKU); every pair of two different CPUs whose kernels put the cost in one era, both ways; rms of ln."""
    measured = ["e5-1650v4", "e5-1650v4-2025", "epyc-9684x", "xeon-gold-6140", "xeon-platinum-8481c"]
    core, era_of, cpu = {}, {}, {}
    for pid in measured:
        prof = load_profile(pid)
        d = description.measured_on(pid)[0].for_cpu(prof.name)
        cpu[pid] = d.name
        for k in pp_counts.DERIVED_PP:
            core[pid, k] = prof.value(k) * d.value("turbo_ghz") / d.value("tsc_ghz")
            era_of[pid, k] = pp_counts.cost_era(prof.kernels[0], k)
    errs = [math.log(core[a, k] / core[b, k]) for a in measured for b in measured for k in pp_counts.DERIVED_PP
            if cpu[a] != cpu[b] and era_of[a, k] == era_of[b, k]]
    s, n, who = carry.carry_spread(())
    assert n == len(errs) == 24
    assert s == pytest.approx(math.sqrt(sum(e * e for e in errs) / len(errs)), rel=1e-12)
    assert 0.4 < s < 0.6  # docs/intervals.md: 0.51
    assert who.split(", ") == sorted(measured)


def _one_constant(name: str, rel: float, scale: str):
    """epyc-9684x with every sd 0 but ``name``'s, ``rel x value`` on ``scale``."""
    prof = load_profile("epyc-9684x")
    consts = {k: dataclasses.replace(c, stderr=0.0, scale="linear") for k, c in prof.constants.items()}
    c = consts[name]
    consts[name] = dataclasses.replace(c, stderr=rel * c.value, scale=scale)
    return dataclasses.replace(prof, id="one-constant", constants=consts)


def test_a_log_scale_constant_alone_gives_value_times_exp_of_plus_minus_z_s():
    """The output is the constant (``page_pool.fast_cycles = pp_fast_cycles``): linearised ``[v e^(-z s),
    v e^(z s)]``; on linear scale the same sd gives ``v -+ z s v``; sampling draws log-normal."""
    s, z = 0.5, uncertainty.z_value()
    params = sk_state.scenario(sk_state.defaults("epyc-9684x"))
    out = ["page_pool.fast_cycles"]
    prof = _one_constant("pp_fast_cycles", s, "log")
    v = prof.value("pp_fast_cycles")
    f, iv = uncertainty.evaluate_with_intervals(params, prof, out, structural=False)
    assert float(f[out[0]]) == v
    assert (float(iv[out[0]][0]), float(iv[out[0]][1])) == pytest.approx((v * math.exp(-z * s), v * math.exp(z * s)),
                                                                        rel=1e-12)
    _, lin = uncertainty.evaluate_with_intervals(params, _one_constant("pp_fast_cycles", s, "linear"), out,
                                                 structural=False, physical=False)
    assert (float(lin[out[0]][0]), float(lin[out[0]][1])) == pytest.approx((v - z * s * v, v + z * s * v), rel=1e-12)
    _, mc = uncertainty.evaluate_with_intervals(params, prof, out, structural=False, method="sampling",
                                                n_samples=4000)
    assert (float(mc[out[0]][0]), float(mc[out[0]][1])) == pytest.approx((v * math.exp(-z * s), v * math.exp(z * s)),
                                                                        rel=0.08)


def test_an_untouched_profile_propagates_as_before():
    """No constant of the E5's seed-fitted profile family outside the carried ones is on log scale, so its
    veth intervals are the symmetric ``f +- z sd`` they were."""
    e5 = load_profile("e5-1650v4")
    assert {k for k, c in e5.constants.items() if c.scale == "log"} == {*TWICE, "xcpu_line_cycles"}
    f, iv = uncertainty.evaluate_with_intervals(sk_state.scenario(sk_state.defaults()), e5, ["veth.mpps"])
    lo, hi = (float(x) for x in iv["veth.mpps"])
    assert float(f["veth.mpps"]) - lo == pytest.approx(hi - float(f["veth.mpps"]), rel=1e-9)


@pytest.mark.parametrize("pid", [p for p in available_profiles() if not p.startswith("e5-1650v4")])
def test_no_cost_or_rate_reaches_zero_for_its_carried_constants(pid):
    """The constants' own intervals (no structural term) of the headline outputs of every non-E5 profile,
    on the same L3 and (where it has one) at its nearest level on another node, stay above 0.  Where the
    destination limits a cross-node cpumap, the source's time follows the share of frames it delivers
    (``cpumap.delivered_share``), a feedback first-order propagation cannot follow: there the sampled interval
    is the one that must stay above 0 (the linearised one is clipped at 0 on the AMD parts across sockets)."""
    prof = load_profile(pid)
    far = model.cross_node_placement(prof)
    for extra in ({}, {"place": far}):
        if extra and far is None:
            continue
        params = {**sk_state.scenario(sk_state.defaults(pid)), **extra}
        f, iv = uncertainty.evaluate_with_intervals(params, prof, HEADLINES, structural=False)
        sampled = None
        for o in HEADLINES:
            lo = float(np.asarray(iv[o][0]))
            if lo <= 0.1 * float(np.asarray(f[o])) and extra and o.startswith("cpumap.src"):
                if sampled is None:
                    sampled = uncertainty.evaluate_with_intervals(params, prof, HEADLINES, structural=False,
                                                                  method="sampling")[1]
                lo = float(np.asarray(sampled[o][0]))
            assert lo > 0.1 * float(np.asarray(f[o])), (pid, extra, o, lo)


def test_a_value_the_user_sets_is_no_longer_a_carried_one():
    """A custom value (or a fit) of a carried constant is the user's measurement: linear, no origin."""
    from skbmodel.machine import custom
    base = load_profile("epyc-9684x")
    prof = custom.build(base, {"veth_base_cycles": 600.0})
    c = prof.constants["veth_base_cycles"]
    assert base.constants["veth_base_cycles"].scale == "log"
    assert (c.scale, c.origin) == ("linear", "")
    f, iv = uncertainty.evaluate_with_intervals(sk_state.scenario(sk_state.defaults("epyc-9684x")), prof, ["veth.mpps"])
    assert 0 <= float(iv["veth.mpps"][0]) < float(f["veth.mpps"]) < float(iv["veth.mpps"][1])
