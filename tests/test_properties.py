"""Cheap guards that hold today, over random states of every slider and the profiles that carry the cases: the
breakdown conserves the total, rates and times agree, cycles do not depend on the clock, the shapes
the model is meant to have (and the non-monotone ones it is meant to have), and intervals that
respect what each output is."""
import numpy as np
import pytest

from skbmodel import model, schema, interval_rules, uncertainty
from skbmodel.physics import noise
from skbmodel.links import state as sk_state
from skbmodel.bench import random_states
from skbmodel.machine.profile import available_profiles, load_profile
from tests import cases

N = 2_000


# one measured and one derived profile per kernel era, arm64, a custom profile and a fixed-seed draw of two
# more (tests/cases.py): the derived profiles share one derivation, so more of them repeat these cases
@pytest.fixture(scope="module", params=cases.profile_ids())
def prof(request):
    return cases.load(request.param)


def _states(n=N, seed=11, **fixed):
    st = random_states(n, np.random.default_rng(seed))
    st.update(fixed)
    return st


def _defaults(prof, **kw):
    return cases.scenario(prof, **kw)


@pytest.mark.parametrize("path", sk_state.PATHS + ("design",))
def test_breakdown_conserves_the_total_with_no_negative_part(prof, path):
    st = _states(path=np.full(N, path))
    parts = model.path_breakdown(st, prof)
    total_ns = np.asarray(model.evaluate(st, prof)["path.ns_per_packet"])
    ghz = st.get("ghz", prof.ghz)
    summed = sum(np.broadcast_to(np.asarray(v, dtype=float), (N,)) for v in parts.values()) / ghz
    assert np.allclose(summed, total_ns, rtol=1e-12, atol=0)
    for name, v in parts.items():
        assert np.all(np.asarray(v) >= 0), (path, name, float(np.min(v)))


@pytest.mark.parametrize("rate, time", [("veth.mpps", "veth.ns_per_packet"), ("path.mpps", "path.ns_per_packet"),
                                        ("kfree_skb_list.mpps", "kfree_skb_list.ns_per_packet"),
                                        ("xdp_pass.mpps", "xdp_pass.ns_per_packet"),
                                        ("budget.line_rate_mpps", "budget.ns_per_packet")])
def test_mpps_times_ns_per_packet_is_1000(prof, rate, time):
    """A rate is what one CPU's time per packet gives, never more than the link carries at the frame size."""
    st = _states()
    st["frame_bytes"] = np.where(np.arange(N) % 4 == 0, 4096, st.get("frame_bytes", 64))  # some above the wire
    out = model.evaluate(st, prof)
    cpu = 1000.0 / np.asarray(out[time])
    line = np.asarray(out["budget.line_rate_mpps"])
    if rate == "xdp_pass.mpps":  # a path fed by the generator: at most its offered load too
        line = np.minimum(line, prof.value("offered_mpps"))
    if rate == "kfree_skb_list.mpps":  # pktgen on the CPU itself, not the wire (the wire's feedback is its own)
        line = np.full_like(line, np.inf)
    assert np.allclose(np.asarray(out[rate]), np.minimum(cpu, line), rtol=1e-12)
    assert np.any(cpu < line) and (rate == "kfree_skb_list.mpps" or np.any(cpu > line))  # both sides


def test_cycle_outputs_do_not_depend_on_the_clock(prof):
    slow = model.evaluate(_states(ghz=np.full(N, 1.5)), prof)
    fast = model.evaluate(_states(ghz=np.full(N, 4.5)), prof)
    cycles = [o for o, u in model.OUTPUT_UNITS.items() if u == "cycles"]
    assert len(cycles) >= 10
    for o in cycles:
        assert np.allclose(slow[o], fast[o], rtol=1e-12), o
    # and a time does: the same cycles take 3x the ns at a third of the clock
    assert np.allclose(np.asarray(slow["slub.bulk_ns"]), 3 * np.asarray(fast["slub.bulk_ns"]), rtol=1e-12)


def test_zeroing_is_monotone_in_bytes(prof):
    o = model.evaluate(_defaults(prof, zero_bytes=np.arange(1, 4097, 7)), prof)
    for k in ("zero.memset_cycles", "zero.erms_cycles", "zero.gfp_zero_cycles"):
        assert np.all(np.diff(np.asarray(o[k])) >= 0), k


def test_veth_never_slows_with_a_bigger_xdp_batch(prof):
    st = _states(200)
    batch = np.arange(1, 65)
    o = model.evaluate({**{k: np.asarray(v)[:, None] for k, v in st.items()}, "xdp_batch": batch[None, :]}, prof)
    assert np.all(np.diff(np.asarray(o["veth.mpps"]), axis=1) >= -1e-12)


def test_cpumap_source_never_exceeds_what_is_offered(prof):
    o = model.evaluate(_states(), prof)
    assert np.all(np.asarray(o["cpumap.src_mpps"]) <= prof.value("offered_mpps") * (1 + 1e-12))
    assert np.all(np.asarray(o["cpumap.dst_mpps"]) <= np.asarray(o["cpumap.src_mpps"]) * (1 + 1e-12))


def test_kfree_skb_list_dips_where_the_last_bulk_is_partial(prof):
    """With KFREE_SKB_BULK_SIZE 16, a drop batch of 17 frees one bulk of 16 and one of 1: the cost
    per packet steps up past each multiple of 16 and falls again as the last bulk fills."""
    o = model.evaluate(_defaults(prof, kfl_bulk=16, drop_batch=np.arange(1, 65)), prof)
    ns = np.asarray(o["kfree_skb_list.ns_per_packet"])
    at = {b: ns[b - 1] for b in range(1, 65)}
    for full in (16, 32, 48):
        assert at[full + 1] > at[full], full
        assert np.all(np.diff(ns[full:full + 16]) <= 1e-12), full


def test_page_allocator_spills_past_the_pcp_list(prof):
    """Bulk page allocation gets cheaper per page up to the per-CPU list's size, then dearer: the
    pages beyond it come from the zone (the pcp spill)."""
    o = model.evaluate(_defaults(prof, page_bulk=np.arange(1, 257)), prof)
    per_page = np.asarray(o["page_alloc.bulk_cycles"])
    low = int(np.argmin(per_page)) + 1
    assert low == int(prof.value("pcp_high_pages"))
    assert np.all(np.diff(per_page[:low]) <= 1e-12) and per_page[-1] > per_page[low - 1]


# ---------------------------------------------------------------- intervals that respect physics
@pytest.mark.parametrize("seed", range(2))  # two draws: the second varies what the first may have missed
def test_intervals_respect_physics_over_4000_random_states(prof, seed):
    """2 x 2,000 random states per profile: a cost, rate or share (by its kind in the schema) is never
    negative and keeps a non-negative interval, a signed difference is not clipped by its kind (only by
    the sign its own constant moves agree on, which the raw interval has too), the slab geometry is
    exact, runs needed stay within [1, MAX_RUNS], every interval holds its value, no cost or rate reaches
    10 x its value, a difference of two rates stays below its minuend's bound and a fraction below 1."""
    st = _states(seed=100 + seed)
    values, iv = uncertainty.evaluate_with_intervals(st, prof)
    _, raw = uncertainty.evaluate_with_intervals(st, prof, physical=False)
    nonneg = interval_rules.NONNEGATIVE_OUTPUTS
    assert {"kfree_skb_list.free_cycles_per_drop", "veth.mpps"} <= nonneg
    assert not {"slub.bulk_gain_cycles", "zero.delta_ns", "veth.zero_delta_ns"} & nonneg  # differences
    for o in schema.of_kind("difference"):
        assert np.array_equal(np.asarray(iv[o][0]), np.asarray(raw[o][0])), o  # never clipped
    for o, (lo, hi) in iv.items():
        f = np.asarray(values[o], dtype=float)
        lo, hi = np.broadcast_to(lo, f.shape), np.broadcast_to(hi, f.shape)
        assert np.all(lo <= f + 1e-9 * np.abs(f)) and np.all(f <= hi + 1e-9 * np.abs(f)), o
        if o in nonneg:
            assert np.all(f >= 0), (o, float(np.min(f)))  # the kind's limit holds for the value itself
            assert np.all(lo >= 0), (o, float(np.min(lo)))
    assert np.array_equal(iv["slub.objects_per_slab"][0], values["slub.objects_per_slab"])
    assert np.array_equal(iv["slub.objects_per_slab"][1], values["slub.objects_per_slab"])
    lo, hi = iv["veth.zero_delta_runs"]
    assert np.all(lo >= 1) and np.all(hi <= noise.MAX_RUNS)
    _assert_bounded(values, iv)


def _assert_bounded(values, iv):
    """A factor-spread output (a cost, a rate) within 10 x its value; a difference of two outputs
    within [0, the minuend's upper bound]; a fraction of events within [0, 1]."""
    for o in schema.FACTOR_OUTPUTS & set(iv):
        f = np.asarray(values[o], dtype=float)
        hi = np.broadcast_to(iv[o][1], f.shape)
        pos = f > 0
        assert np.all(hi[pos] <= 10.0 * f[pos]), (o, float(np.max(hi[pos] / f[pos])))
    for o in schema.DIFFERENCE_OUTPUTS.keys() & iv.keys():
        minuend, lo, hi = schema.DIFFERENCE_OUTPUTS[o][0], *iv[o]
        assert np.all(np.asarray(lo) >= 0) and np.all(np.asarray(hi) <= np.asarray(iv[minuend][1]) + 1e-12), o
    for o in schema.UPPER_BOUNDS.keys() & iv.keys():
        assert np.all(np.asarray(iv[o][1]) <= schema.UPPER_BOUNDS[o]), o


@pytest.mark.parametrize("pid", [p for p in available_profiles()
                                 if model.cross_node_placement(load_profile(p)) is not None])
def test_cpumap_intervals_hold_on_every_profile_that_can_cross_nodes(pid):
    """Every profile a cross-node cpumap may be asked of (its machine has more than one NUMA node, or does not
    say): 400 random cpumap states, both programs and both placements, obey the bounds above; and the paired
    cross - same excess of the skb-building destination's time is positive and inside its interval (which, as
    every difference's, may reach below 0: nothing holds it to its sign)."""
    prof = load_profile(pid)
    st = _states(400, seed=5, path="cpumap")
    values, iv = uncertainty.evaluate_with_intervals(st, prof, [o for o in schema.OUTPUT_UNITS
                                                                if o.startswith(("cpumap.", "path."))])
    _assert_bounded(values, iv)
    # XDP_PASS: the kthread builds skbs and never catches up, so it never sleeps: its excess is its lines alone
    same = {**_defaults(prof), "path": "cpumap", "place": "same_l3", "pp_recycle": np.array([0.0, 0.5, 1.0])}
    far = {**same, "place": model.cross_node_placement(prof)}
    delta, div = uncertainty.delta_intervals(same, far, prof, prof, ["cpumap.dst_ns"])
    d, (lo, hi) = np.asarray(delta["cpumap.dst_ns"]), (np.asarray(x) for x in div["cpumap.dst_ns"])
    assert np.all(d > 0) and np.all(lo <= d) and np.all(d <= hi)


def test_runs_needed_follow_the_interval_of_the_difference():
    """At zero_bytes=40 the zeroing difference's interval holds 0: runs from those at its largest
    |delta| up to no finite number; a difference sure of its sign gives a bounded range."""
    e5 = load_profile("e5-1650v4")
    for zero_bytes in (40.0, 2048.0):
        v, iv = uncertainty.evaluate_with_intervals({"zero_bytes": zero_bytes}, e5,
                                                    ["veth.zero_delta_ns", "veth.zero_delta_runs"])
        d_lo, d_hi = (float(x) for x in iv["veth.zero_delta_ns"])
        lo, hi = (float(x) for x in iv["veth.zero_delta_runs"])
        noise_ns = e5.value("noise_floor_ns")
        assert lo == float(noise.runs_needed(max(abs(d_lo), abs(d_hi)), noise_ns)) and lo >= 1
        if d_lo <= 0 <= d_hi:
            assert hi == noise.MAX_RUNS
        else:
            assert hi == float(noise.runs_needed(min(abs(d_lo), abs(d_hi)), noise_ns)) < noise.MAX_RUNS
