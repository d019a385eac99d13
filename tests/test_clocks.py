"""Clocks that match: every cycles constant says which clock counts it, one clock per profile, and a cost
carried from another CPU moves exactly by its clock conversion (core cycles under load, counted by the
target's clock), with the uncertainty of the move."""
from __future__ import annotations

import dataclasses
import math

import pytest

from skbmodel.machine import description, kconfig
from skbmodel.evidence.derivation import carry, pp_counts
from skbmodel.machine.profile import PROFILE_DIR, ProfileError, available_profiles, load_profile, parse_profile

#: the path bases and the other cycles a profile takes from the E5-1650 v4 (carried, not measured)
CARRIED = ("veth_base_cycles", "kfl_base_cycles", "napi_base_cycles", "cpumap_src_base_cycles",
           "cpumap_dst_stack_cycles", "cpumap_redirect_cycles", "napi_cache_pair_cycles", "cpumap_wake_cycles")


def _cpu_of(pid: str) -> description.Description:
    if pid.startswith(description.DERIVED_PREFIX):
        return description.load(pid[len(description.DERIVED_PREFIX):])
    return description.measured_on(pid)[0]


# every shipped profile: each file states its own clock per constant, so each file is a case of its own
@pytest.mark.parametrize("pid", available_profiles())
def test_every_cycles_constant_counts_the_clock_of_its_profile(pid):
    prof = load_profile(pid)
    clocks = {c.clock for c in prof.constants.values() if c.unit == "cycles"}
    assert clocks == {prof.clock}
    assert all(not c.clock for c in prof.constants.values() if c.unit != "cycles")
    # x86 counts the TSC (time_bench's cycles(tsc)); an arm64 core has none: its profile counts the core clock
    cpu = _cpu_of(pid)  # None: a Xeon no source names by model (seed 003's lab), x86
    assert prof.clock == ("tsc" if cpu is None else pp_counts.counting_clock(cpu))


def test_a_profile_whose_cycles_count_two_clocks_is_refused():
    text = (PROFILE_DIR / "e5-1650v4-2025.toml").read_text()
    text = text.replace('clock = "tsc"\n', 'clock = "core"\n', 1)
    with pytest.raises(ProfileError, match="two clocks"):
        parse_profile(text, resolve_parent=load_profile)


def test_the_conversion_factor_is_core_cycles_under_load_counted_by_the_target_clock():
    bdw = description.load("broadwell-ep")
    zen4 = description.load("zen4-genoa").for_cpu("EPYC 9684X")
    f = carry.carry_factor(bdw, 3.6, zen4, 2.546)
    assert f == pytest.approx(4.0 / 3.6 * 2.546 / 3.7, rel=1e-12)
    # the issue's example: the E5's 892 veth cycles are 991 core cycles at 4.0 GHz, 268 ns on a 3.7 GHz core
    e5, epyc = load_profile("e5-1650v4"), load_profile("epyc-9684x")
    ns = epyc.value("veth_base_cycles") / epyc.ghz
    assert ns == pytest.approx(e5.value("veth_base_cycles") * 4.0 / 3.6 / 3.7, rel=1e-3)
    # a line's move is carried as time, scaled by the two machines' measured same-L3 transfers (Zen 4's CCX
    # moves a line in 27.1 ns, Broadwell-EP's ring in 39.1 ns: the published medians of their descriptions)
    assert carry.carry_factor(bdw, 3.6, zen4, 2.546, as_ns=True) == pytest.approx(2.546 / 3.6 * 27.1 / 39.1)
    no_topology = dataclasses.replace(zen4, topology=None)
    assert carry.carry_factor(bdw, 3.6, no_topology, 2.546, as_ns=True) == pytest.approx(2.546 / 3.6)


# every profile whose carried constants were written by a derivation or a corpus fit: the shipped values
# of each file are what is checked (a file edited by hand, or stale, fails here alone)
@pytest.mark.parametrize("pid", [p for p in available_profiles() if not p.startswith("e5-1650v4")
                                 and p != "xeon-platinum-iavf"])
def test_no_carried_cost_moves_by_more_than_its_clock_conversion(pid):
    prof = load_profile(pid)
    base = load_profile(prof.inherits)
    src = description.measured_on(base.id)[0]
    dst = _cpu_of(pid)
    if not pid.startswith(description.DERIVED_PREFIX):
        dst = dst.for_cpu(prof.name)
    f = carry.carry_factor(src, base.ghz, dst, prof.ghz)
    extra = {}
    if prof.config.get("return_thunk") == "srso-safe-ret":  # carried with plain returns, then the thunk's price
        twin = load_profile(pid.removesuffix("-srso"))  # the same machine booted with plain returns
        plain = {**{k: base.value(k) * f for k in CARRIED}, **{k: twin.value(k) for k in kconfig.RETURNS_V613}}
        extra = {k: v[0] for k, v in kconfig.return_thunk_terms(twin.config, prof.config, plain).items()}
        assert all(extra.get(k, 0) > 0 for k in kconfig.RETURNS_BY_DENSITY if k in CARRIED)
    for k in CARRIED:
        assert prof.value(k) == pytest.approx(base.value(k) * f + extra.get(k, 0.0), rel=2e-3, abs=2e-3), k
        assert f"carried from {base.id}" in prof.constants[k].source
    line = carry.carry_factor(src, base.ghz, dst, prof.ghz, as_ns=True)  # a line's move is carried as ns
    assert prof.value("xcpu_line_cycles") == pytest.approx(base.value("xcpu_line_cycles") * line, rel=2e-3)


def test_a_carry_to_another_cpu_widens_the_interval_and_to_the_same_cpu_does_not():
    e5, same, other = load_profile("e5-1650v4"), load_profile("derived-broadwell-ep"), load_profile("epyc-9684x")
    rel = lambda p: p.stderr("veth_base_cycles") / p.value("veth_base_cycles")  # noqa: E731
    assert rel(same) == pytest.approx(rel(e5), abs=1e-3)
    s_move = carry.carry_spread(())[0]
    assert rel(other) == pytest.approx(math.hypot(rel(e5), s_move), abs=2e-3)
    assert rel(other) > rel(e5) + 0.1


def test_the_e5_takes_the_cpumap_lab_s_cycles_unchanged_with_a_move_s_uncertainty():
    """seed 003's lab names no CPU model or clock: no conversion can be made, only the move's sd added."""
    e5, lab = load_profile("e5-1650v4"), load_profile("xeon-platinum-iavf")
    s_move = carry.carry_spread(())[0]
    for k in ("cpumap_src_base_cycles", "cpumap_dst_stack_cycles", "xcpu_line_cycles"):
        assert e5.value(k) == pytest.approx(lab.value(k), rel=1e-4)
        own = lab.constants[k].log_sd  # its linear sd as the sd of ln of a log-normal
        assert e5.stderr(k) / e5.value(k) == pytest.approx(math.hypot(own, s_move), abs=2e-3)
        assert e5.constants[k].kind == "assumed"  # not fitted on the E5: the calibration must not refit it
