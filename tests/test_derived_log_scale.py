"""A derived SLUB, zeroing or page-allocator constant (counted operations x the description's costs plus a
fitted residual, ``opcounts.derive_costs``) has an sd of ``ln``: it spreads on log scale, a factor, so that
one such constant alone has the interval ``[v exp(-z s), v exp(z s)]`` and no cost reaches 0."""
from __future__ import annotations

import dataclasses
import math
import statistics

import numpy as np
import pytest

from skbmodel import model, interval_rules, uncertainty
from skbmodel.evidence.derivation import opcounts, pp_counts
from skbmodel.links import state as sk_state
from skbmodel.machine import description
from skbmodel.machine.profile import available_profiles, load_profile

#: the cost outputs of the sections derived constants enter (a cost cannot be negative: the signed
#: differences, a saving or a gain, are left out by their kind), the kfree_skb_list drop and the path
COSTS = tuple(o for o, unit in model.OUTPUT_UNITS.items()
              if o.split(".")[0] in ("slub", "zero", "page_alloc") and unit in ("cycles", "ns")
              and o in interval_rules.NONNEGATIVE_OUTPUTS) + ("kfree_skb_list.free_cycles_per_drop",
                                                           "path.ns_per_packet")


def _derived_costs(prof):
    """The constants of ``prof`` that ``derive_costs`` gave it (its source starts ``derived:`` and names a
    constant of the cost model), wherever the profile got them (derived itself or inherited)."""
    return {k: c for k, c in prof.constants.items() if k in opcounts.COST_MODEL and c.source.startswith("derived:")}


def test_every_derived_cost_constant_of_every_profile_is_on_log_scale():
    """Cheap (the profiles are loaded once each), so over every profile; the derived page_pool costs stay
    linear: their sd (``pp_counts.spread``) is the rms of relative residuals, not of ``ln``."""
    seen = 0
    for pid in available_profiles():
        prof = load_profile(pid)
        for k, c in _derived_costs(prof).items():
            assert c.scale == "log" and c.stderr > 0 and "sd of ln" in c.source, (pid, k)
            seen += 1
        for k in pp_counts.DERIVED_PP:
            c = prof.constants[k]
            if c.source.startswith("derived:"):
                assert c.scale == "linear", (pid, k)
    assert seen > 100  # 25 profiles take derived costs (docs/intervals.md)


def test_derive_costs_builds_them_on_log_scale():
    """Straight from the derivation (not a shipped file): every constant in cycles is log scale."""
    costs = opcounts.derive_costs(description.load("zen4-genoa"), 2.55, "6.13")
    cycles = {k: c for k, c in costs.items() if c.unit == "cycles"}
    assert cycles and all(c.scale == "log" for c in cycles.values())
    assert costs["store_buffer_bytes"].scale == "linear"  # a documented size, sd 0


def _only(prof, name):
    """``prof`` with every sd 0 but ``name``'s (its own stderr and scale)."""
    consts = {k: dataclasses.replace(c, stderr=0.0, scale="linear") for k, c in prof.constants.items()}
    consts[name] = prof.constants[name]
    return dataclasses.replace(prof, id="one-derived-constant", constants=consts)


@pytest.mark.parametrize("pid", ["derived-zen4-genoa", "derived-neoverse-v2"])
def test_a_derived_constant_alone_gives_value_times_exp_of_plus_minus_z_s(pid):
    """``page_alloc.single_cycles`` is ``page_single_cycles`` (derived on these profiles): with no other sd,
    its 90 % interval is ``[v exp(-z s), v exp(z s)]`` (``z = 1.645``), ``s = stderr / value``.  Two profiles: an x86
    and an arm64 derivation (the rule is the same; the linearisation is one call each)."""
    prof = load_profile(pid)
    c = prof.constants["page_single_cycles"]
    assert c.source.startswith("derived:")
    v, s = c.value, c.stderr / c.value
    z = statistics.NormalDist().inv_cdf(0.95)  # 1.645: the two-sided 90 % point of the standard normal
    out = ["page_alloc.single_cycles"]
    f, iv = uncertainty.evaluate_with_intervals(sk_state.scenario(sk_state.defaults(pid)), _only(prof, c.name), out,
                                                structural=False)
    assert float(f[out[0]]) == pytest.approx(v, rel=1e-12)
    lo, hi = (float(np.asarray(x)) for x in iv[out[0]])
    assert (lo, hi) == pytest.approx((v * math.exp(-z * s), v * math.exp(z * s)), rel=1e-6)


@pytest.mark.parametrize("pid", available_profiles())
def test_no_cost_reaches_zero_at_the_default_state(pid):
    """Every shipped profile (one linearised call each, a few ms): the 90 % interval of each cost output at
    its default state, structural term included, as the pages show it, has a lower bound above 0."""
    prof = load_profile(pid)
    f, iv = uncertainty.evaluate_with_intervals(sk_state.scenario(sk_state.defaults(pid)), prof, COSTS)
    for o in COSTS:
        lo, v = float(np.asarray(iv[o][0])), float(np.asarray(f[o]))
        assert v > 0 and lo > 0, (pid, o, lo, v)
