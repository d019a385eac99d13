"""Rules restated from their source (the kernel, the seed, the module docstrings) and checked against the
model: each test writes the formula out again from the profile's constants instead of reading the value
the code computes, so a change of the code's formula fails here."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from skbmodel import model
from skbmodel.physics import noise, slub
from skbmodel.machine import description
from skbmodel.evidence.derivation import opcounts, pp_counts
from skbmodel.evidence.parsers import mail
from tests import cases

# the measured root profile, and the one that fits its own cpumap hand-off (tests/cases.py)
STAGE_PROFILES = ("e5-1650v4", "xeon-platinum-iavf")
#: the shares of an alloc+free pair (SLUB) and of a page's cost (page_pool) that one side pays: 1/2 in every
#: profile, so the stage tests set other values (the rules hold for any) to tell a share from its complement
SHARES = {"slub_free_share": 0.4, "page_alloc_share": 0.7}


# ---------------------------------------------------------------- SLUB geometry
@pytest.mark.parametrize("slab_bytes,object_bytes,objects", [
    (4096, 96, 42),     # kmalloc-96: 4096 / 96 = 42.67 -> 42 (slabinfo objperslab 42, one page)
    (4096, 192, 21),    # kmalloc-192: 21.33 -> 21
    (8192, 96, 85),     # 85.33 -> 85
    (8192, 3072, 2),    # 2.67 -> 2
    (8192, 256, 32),    # seed 000: 256 B skbuff_head_cache objects in an order-1 slab
])
def test_objects_per_slab_is_the_whole_objects_that_fit(slab_bytes, object_bytes, objects):
    """A slab holds floor(slab / object) objects: the remainder is left unused, never a partial object."""
    assert float(slub.objects_per_slab(slab_bytes, object_bytes)) == objects


def test_the_model_s_kmalloc_96_and_192_slabs_hold_the_kernel_s_objects():
    """On 4 KiB pages kmalloc-96 and kmalloc-192 use one-page slabs: 42 and 21 objects (floor, not round)."""
    o = model.evaluate({"obj_bytes": np.array([96.0, 192.0])})
    assert o["slub.objects_per_slab"].tolist() == [42.0, 21.0]


# ---------------------------------------------------------------- the verdict boundary
def test_a_difference_exactly_at_the_noise_floor_is_measurable():
    """The seed's rule: one run sees a difference when |delta| >= noise (equality included)."""
    assert bool(noise.measurable(2.0, 2.0)) and bool(noise.measurable(-2.0, 2.0))
    assert not bool(noise.measurable(np.nextafter(2.0, 0.0), 2.0))
    assert noise.verdict(2.0, 2.0, 1.0, 3.0) == noise.VERDICT_SURE
    assert noise.verdict(-2.0, 2.0, -3.0, 1.0) == noise.VERDICT_UNSURE
    assert noise.verdict(np.nextafter(2.0, 0.0), 2.0, 1.0, 3.0) == noise.VERDICT_NOISE
    # the interval's sign decides between the other two: 0 on an end of it is "cannot tell"
    assert noise.verdict(5.0, 2.0, 0.0, 6.0) == noise.VERDICT_UNSURE
    assert noise.verdict(-5.0, 2.0, -6.0, 0.0) == noise.VERDICT_UNSURE


# ---------------------------------------------------------------- quoted-printable detection
QP_ONE_BREAK_ONE_CODE = ["time_bench: Type:kmem fast loops=3D1000 and a long line that the mailer cut he=",
                         "re at 76 columns", ""]


def test_one_soft_break_with_one_code_and_no_header_is_quoted_printable():
    """RFC 2045 6.7: a soft break (a line ending in one '=') plus one =XX code is quoted-printable even
    without a Content-Transfer-Encoding header; one soft break alone is not (a line may end in '=')."""
    assert mail.is_quoted_printable(QP_ONE_BREAK_ONE_CODE)
    lines, _, _, what = mail.repair(QP_ONE_BREAK_ONE_CODE)
    assert lines[0] == "time_bench: Type:kmem fast loops=1000 and a long line that the mailer cut here at 76 columns"
    assert what == "quoted-printable undone (1 soft line break joined, 1 =XX code decoded)"
    one_break = ["a line that ends in =", "and goes on"]
    assert not mail.is_quoted_printable(one_break)
    assert mail.is_quoted_printable(one_break + ["a second soft =", "break"])
    assert mail.is_quoted_printable(["Content-Transfer-Encoding: quoted-printable", ""] + one_break)
    assert not mail.is_quoted_printable(["Content-Transfer-Encoding: quoted-printable", "loops=600000000"])
    assert not mail.is_quoted_printable(["a setext rule", "==", "another", "=="])  # '==' at the end is text


# ---------------------------------------------------------------- each modelled path's stages
def _alloc_bulk(n, c):
    """kmem_cache_alloc_bulk per object: (1 - free_share) * (bulk_obj + (fast - bulk_obj) / n)."""
    per_obj, call = c["slub_bulk_obj_pair_cycles"], c["slub_fast_pair_cycles"] - c["slub_bulk_obj_pair_cycles"]
    return (1 - c["slub_free_share"]) * (per_obj + call / n)


def _erms(nbytes, c):
    """memset_erms: setup + line * ceil(bytes / cacheline)."""
    return c["erms_setup_cycles"] + c["erms_line_cycles"] * math.ceil(nbytes / c["cacheline_bytes"])


def _parts(prof, **kw):
    return {k: float(v) for k, v in model.path_breakdown(cases.scenario(prof, **kw), prof, SHARES).items()}


def _constants(cpu):
    prof = cases.load(cpu)
    return prof, {**prof.values(), **SHARES}


@pytest.mark.parametrize("cpu", STAGE_PROFILES)
def _farthest(prof):
    """The farthest placement the profile's machine has (the same L3 on a machine with one)."""
    return model.available_placements(prof)[-1]


def _factor(prof, c, place):
    """The line factor of ``place``: ``1 + (t_place - t_same_l3) * ghz / xcpu_line`` (the same L3's is 1)."""
    lc = model.constants_of(prof)
    return 1.0 + (lc[f"line_{place}_ns"] - lc["line_same_l3_ns"]) * prof.ghz / c["xcpu_line_cycles"]


@pytest.mark.parametrize("cpu", STAGE_PROFILES)
@pytest.mark.parametrize("far,recycle", [(False, 1.0), (True, 0.3)])
def test_the_cpumap_destination_is_its_docstring_s_stages(cpu, far, recycle):
    """skbmodel.physics.cpumap: dst = stack + alloc_bulk(CPUMAP_BATCH) + erms(object) + free_one
    + return_side(r, f) + xfer_lines * xcpu_line * f, with
    return_side = (1 - share) * (r * ring * f + (1 - r) * slow) + (1 - r) * xcpu_line * f, ``f`` the line
    factor of the placement (skbmodel.physics.placement)."""
    prof, c = _constants(cpu)
    place = _farthest(prof) if far else "same_l3"
    f = _factor(prof, c, place)
    assert (f > 1) == (place != "same_l3")
    keep = 1 - c["page_alloc_share"]
    got = _parts(prof, path="design", d_from="cpumap", place=place, pp_recycle=recycle)
    want = {"rest of path": c["cpumap_dst_stack_cycles"],
            "skb alloc": _alloc_bulk(c["cpumap_batch"], c),
            "zeroing": _erms(c["slub_object_bytes"], c),
            "skb free": c["slub_free_share"] * c["slub_fast_pair_cycles"],
            "page alloc/recycle": keep * (recycle * c["pp_ring_cycles"] * f + (1 - recycle) * c["page_slow_cycles"])
            + (1 - recycle) * c["xcpu_line_cycles"] * f,
            "cross-CPU transfer": c["cpumap_xfer_lines"] * c["xcpu_line_cycles"] * f}
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("cpu", [p for p in STAGE_PROFILES if len(model.available_placements(cases.load(p))) > 1])
def test_the_cpumap_hand_off_across_nodes_costs_strictly_more(cpu):
    """farthest - same L3, on both CPUs: the destination pays at least (f - 1) * (xfer_lines * xcpu_line +
    (1 - share) * r * ring + (1 - r) * xcpu_line), every line pulled across the interconnect costing f > 1
    times (the ring slots and the kthread wake-ups come on top), and the source, which writes the ring's
    remote lines and takes the recycled pages back, pays more too."""
    prof, c = _constants(cpu)
    place = _farthest(prof)
    f = _factor(prof, c, place)
    assert f > 1
    for r in (0.0, 0.5, 1.0):
        out = {n: model.evaluate(cases.scenario(prof, path="cpumap", place=n, pp_recycle=r), prof, constants=SHARES)
               for n in ("same_l3", place)}
        same, cross = (float(out[n]["cpumap.dst_ns"]) for n in ("same_l3", place))
        lines = (f - 1) * (c["cpumap_xfer_lines"] * c["xcpu_line_cycles"]
                           + (1 - c["page_alloc_share"]) * r * c["pp_ring_cycles"] + (1 - r) * c["xcpu_line_cycles"])
        assert cross - same >= lines / prof.ghz * (1 - 1e-9) and cross > same
        assert float(out[place]["cpumap.src_ns"]) > float(out["same_l3"]["cpumap.src_ns"])


@pytest.mark.parametrize("cpu", STAGE_PROFILES)
def test_xdp_pass_is_its_docstring_s_stages(cpu):
    """skbmodel.physics.cpumap: xdp_pass = src_base - redirect + stack + alloc_bulk(16) (the NAPI cache's refill)
    + memset(zero_bytes) + free_one + pp_fast (pages recycled directly), on one CPU: no transfer."""
    prof, c = _constants(cpu)
    got = _parts(prof, path="xdp_pass", zero="gfp_zero")
    want = {"rest of path": c["cpumap_src_base_cycles"] - c["cpumap_redirect_cycles"] + c["cpumap_dst_stack_cycles"],
            "skb alloc": _alloc_bulk(16, c), "zeroing": _erms(c["slub_object_bytes"], c),
            "skb free": c["slub_free_share"] * c["slub_fast_pair_cycles"],
            "page alloc/recycle": c["pp_fast_cycles"], "cross-CPU transfer": 0.0}
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("cpu", STAGE_PROFILES)
@pytest.mark.parametrize("batch", [1, 16, 33])
def test_veth_is_its_docstring_s_stages(cpu, batch):
    """skbmodel.physics.veth: T = base + alloc_bulk(VETH_XDP_BATCH) + zero; base holds everything else (the
    frees and pages too), so no other stage is counted."""
    prof, c = _constants(cpu)
    got = _parts(prof, path="veth", xdp_batch=batch, zero="gfp_zero")
    want = {"rest of path": c["veth_base_cycles"], "skb alloc": _alloc_bulk(batch, c),
            "zeroing": _erms(c["slub_object_bytes"], c), "skb free": 0.0, "page alloc/recycle": 0.0,
            "cross-CPU transfer": 0.0}
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("cpu", STAGE_PROFILES)
def test_kfree_skb_list_is_base_plus_the_dropped_share_of_the_free(cpu):
    """skbmodel.physics.kfree_skb_list: T = base + d * F per injected packet, d the drop fraction; nothing else."""
    prof, c = _constants(cpu)
    st = cases.scenario(prof, path="kfree_skb_list", kfl_bulk=16, drop_batch=64)
    got = _parts(prof, **{k: v for k, v in st.items() if k in ("path", "kfl_bulk", "drop_batch")})
    o = model.evaluate(st, prof, constants=SHARES)
    d, per_drop = float(o["kfree_skb_list.drop_fraction"]), float(o["kfree_skb_list.free_cycles_per_drop"])
    assert 0 < d < 1
    want = {"rest of path": c["kfl_base_cycles"], "skb free": d * per_drop, "skb alloc": 0.0, "zeroing": 0.0,
            "page alloc/recycle": 0.0, "cross-CPU transfer": 0.0}
    assert got == pytest.approx(want, rel=1e-12)


# ---------------------------------------------------------------- the composer's NAPI cache
@pytest.mark.parametrize("where", ["local", "remote"])
def test_a_napi_cache_nobody_takes_from_flushes_half_of_it_in_one_bulk_free(where):
    """napi_skb_cache_put: the skb goes into the 64-entry cache (free_share * napi_cache_pair); when nothing
    takes from it, every 32nd put flushes 32 with kmem_cache_free_bulk, per skb
    free_share * (bulk_obj + (fast - bulk_obj) / 32), plus the slow free's extra when the slab is remote."""
    prof, c = _constants("e5-1650v4")
    fs = c["slub_free_share"]
    put = fs * c["napi_cache_pair_cycles"]
    flush = fs * (c["slub_bulk_obj_pair_cycles"] + (c["slub_fast_pair_cycles"] - c["slub_bulk_obj_pair_cycles"]) / 32)
    extra = c["slub_free_slow_extra_cycles"] if where == "remote" else 0.0
    kw = dict(path="design", d_from="xdp_pass", d_free="napi_cache", d_free_where=where)
    taken = _parts(prof, **kw, d_skb="napi_cache")["skb free"]
    not_taken = _parts(prof, **kw, d_skb="slab_one")["skb free"]
    assert taken == pytest.approx(put, rel=1e-12)
    assert not_taken == pytest.approx(put + flush + extra, rel=1e-12)


# ---------------------------------------------------------------- the derivation's counts
def _priced(d: description.Description, figure: str, delta: float) -> description.Description:
    f = d.figures[figure]
    return dataclasses.replace(d, figures={**d.figures, figure: dataclasses.replace(f, value=f.value + delta)})


@pytest.mark.parametrize("name,new_era,locked", [
    ("pp_fast_cycles", False, 0), ("pp_fast_cycles", True, 0),     # the alloc cache: no locked operation
    ("pp_ring_cycles", False, 1), ("pp_ring_cycles", True, 1),     # ptr_ring_produce's producer_lock
    ("page_slow_cycles", False, 2),   # before 6.5: the release counter and put_page
    ("page_slow_cycles", True, 5),    # since 6.5: get_page, the counter, two put_page, the pcp spinlock
])
def test_a_page_pool_cost_moves_by_its_locked_count_times_the_lock_price(name, new_era, locked):
    """cost = (instr / issue_width + n_locked * lock_add) * ghz / turbo: a lock_add dearer by 1 cycle moves
    the cost by n_locked * ghz / turbo cycles, the count read from the kernel source."""
    d = description.load("zen4-genoa")
    ghz = 2.5
    base = pp_counts.cost_cycles(300.0, d, new_era, name, ghz)
    dearer = pp_counts.cost_cycles(300.0, _priced(d, "lock_add_cycles", 1.0), new_era, name, ghz)
    assert dearer - base == pytest.approx(locked * ghz / d.value("turbo_ghz"), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name,figure,count", [
    ("l1_miss_cycles", "l2_latency_cycles", 2.0),   # the alloc's and the free's free-pointer line from the L2
    ("l2_miss_cycles", "l3_latency_cycles", 2.0),   # the same two lines from the L3 instead
    ("l2_miss_cycles", "l2_latency_cycles", -2.0),
])
def test_a_counted_constant_moves_by_count_times_price(name, figure, count):
    """A constant that is its counted operations alone (no residual): a figure dearer by 1 core cycle moves
    the derived constant by count * ghz / turbo TSC cycles."""
    d = description.load("zen4-genoa")
    ghz, kernel = d.value("turbo_ghz") / 2, "6.16"
    base = opcounts.derive_costs(d, ghz, kernel)[name].value
    moved = opcounts.derive_costs(_priced(d, figure, 1.0), ghz, kernel)[name].value
    assert moved - base == pytest.approx(count * ghz / d.value("turbo_ghz"), abs=2e-3)  # values kept to 3 digits


def test_a_fitted_constant_moves_by_its_counted_operations_on_one_training_cpu():
    """slub_fast_pair_cycles = 2 x cmpxchg16b (one this_cpu_cmpxchg_double in the alloc, one in the free)
    + the residual one training CPU gives: a cmpxchg16b dearer by 1 cycle costs 2 more core cycles."""
    d = description.load("zen4-genoa")
    train = opcounts.cost_training()["slub_fast_pair_cycles"][:1]
    one = opcounts.derive_cost("slub_fast_pair_cycles", d, "6.16", train, 0.1, 0.0)
    two = opcounts.derive_cost("slub_fast_pair_cycles", _priced(d, "cmpxchg16b_cycles", 1.0), "6.16", train, 0.1, 0.0)
    assert two["core"] - one["core"] == pytest.approx(2.0, rel=1e-9)
    assert one["counted"] == pytest.approx(2 * d.value("cmpxchg16b_cycles"), rel=1e-12)


# ---------------------------------------------------------------- the validation protocol
@pytest.mark.parametrize("scale", [1.0, 1.06, 1.12, 0.9])
def test_a_seed_row_is_within_tolerance_exactly_when_its_relative_error_is(scale):
    """validation.validate: a row with a relative tolerance is ok iff |predicted - measured| <= tol |measured|,
    whatever the profile; with the SLUB and veth constants scaled, some rows fall outside and say so."""
    from skbmodel.evidence import validation
    e5 = cases.load("e5-1650v4")
    names = ("slub_fast_pair_cycles", "slub_bulk_obj_pair_cycles", "veth_base_cycles")
    prof = e5.with_values({n: e5.value(n) * scale for n in names})
    rows = validation.validate({"e5-1650v4": prof})
    rel = [r for r in rows if r["tolerance"].endswith(" %") and r["profile"] == "e5-1650v4"]
    assert len(rel) >= 10
    for r in rel:
        tol = float(r["tolerance"].strip("±% ")) / 100
        assert r["rel_error"] == pytest.approx((r["predicted"] - r["measured"]) / r["measured"], rel=1e-12)
        if r["id"] not in ("cpm-04", "cpm-07"):  # drops: also src - dst exactly
            assert r["ok"] == (abs(r["predicted"] - r["measured"]) <= tol * abs(r["measured"]) * (1 + 1e-12)), r["id"]
    assert any(not r["ok"] for r in rel) == (scale != 1.0)


def test_a_relative_residual_is_of_the_measured_value():
    """z = (predicted - measured) / (|measured| tol): a prediction 10 % above every measured row is 0.1 / tol."""
    from skbmodel.evidence import seed_checks, validation
    specs = [s for s in seed_checks.ROWS if s.tol_kind == "rel"]
    measured = np.array([validation.measured_of(s)[0] for s in specs])
    z = validation.residuals_normalised(specs, measured * 1.1)
    np.testing.assert_allclose(z, [0.1 / s.tol for s in specs], rtol=1e-12)


# ---------------------------------------------------------------- cpumap's source CPU and the qdisc drop path
@pytest.mark.parametrize("cpu", STAGE_PROFILES)
@pytest.mark.parametrize("recycle,page_bulk", [(0.0, 64), (0.3, 16), (1.0, 64)])
def test_the_cpumap_source_is_its_docstring_s_stages(cpu, recycle, page_bulk):
    """skbmodel.physics.cpumap: src = src_base + alloc_side(r), alloc_side = share * (r * ring + (1 - r) * slow), plus
    (1 - r) times the page allocator's refill extra at page_bulk (0 at the kernel's 64)."""
    from skbmodel.physics import page_alloc
    prof, c = _constants(cpu)
    o = model.evaluate(cases.scenario(prof, path="cpumap", pp_recycle=recycle, page_bulk=page_bulk), prof,
                       constants=SHARES)
    refill = float(page_alloc.refill_extra_cycles(page_bulk, c))
    assert (refill == 0.0) == (page_bulk == 64)
    want = (c["cpumap_src_base_cycles"] + c["page_alloc_share"] * (recycle * c["pp_ring_cycles"]
                                                                   + (1 - recycle) * c["page_slow_cycles"])
            + (1 - recycle) * refill)
    assert float(o["cpumap.src_ns"]) * prof.ghz == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("base_ns,free_ns,wire_kpps", [(50.0, 20.0, 10_000.0), (300.0, 30.0, 1_488.0)])
def test_the_qdisc_drop_path_is_in_steady_state(base_ns, free_ns, wire_kpps):
    """pktgen injects one packet per T ns; the wire takes W per ns of them, fq_codel drops the rest:
    d = 1 - W T, and each injected packet costs T = base + d F (only the dropped ones are freed)."""
    from skbmodel.physics import kfree_skb_list
    t_ns, d = (float(v) for v in kfree_skb_list.drop_feedback_ns(base_ns, free_ns, wire_kpps))
    w_per_ns = wire_kpps * 1e3 / 1e9
    assert 0 < d < 1
    assert d == pytest.approx(1 - w_per_ns * t_ns, rel=1e-12)
    assert t_ns == pytest.approx(base_ns + d * free_ns, rel=1e-12)
    # a wire faster than the injection drops nothing
    t_fast, d_fast = (float(v) for v in kfree_skb_list.drop_feedback_ns(base_ns, free_ns, 2e6 / base_ns))
    assert d_fast == 0.0 and t_fast == base_ns


# ---------------------------------------------------------------- runs needed, and the structural term alone
@pytest.mark.parametrize("delta_ns,noise_ns", [(1.0, 2.0), (0.5, 1.0), (3.0, 0.7)])
def test_runs_needed_is_the_two_sample_formula(delta_ns, noise_ns):
    """Runs per variant to see delta at 5 % two-sided and 80 % power, each run's sd sigma:
    n = ceil(2 ((1.95996 + 0.84162) sigma / delta)^2), at least 1."""
    want = max(1, math.ceil(2 * ((1.959964 + 0.841621) * noise_ns / delta_ns) ** 2))
    assert float(noise.runs_needed(delta_ns, noise_ns)) == want


def _exact(prof):
    """``prof`` with every constant's sd 0: what is left of an interval is the structural term."""
    consts = {k: dataclasses.replace(c, stderr=0.0) for k, c in prof.constants.items()}
    return dataclasses.replace(prof, constants=consts)


def test_with_exact_constants_the_interval_of_a_difference_is_the_structural_term():
    """One model form on one machine: its error moves A and B alike, sd rel |f_B - f_A|; on two machines two
    independent errors, rel sqrt(f_A^2 + f_B^2) (the half width is 1.645 times that)."""
    from skbmodel import uncertainty
    out = "slub.bulk_ns"
    rel = uncertainty.structural_rel_sd(out)
    assert rel > 0
    e5, plat = _exact(cases.load("e5-1650v4")), _exact(cases.load("xeon-platinum-iavf"))
    a, b = cases.scenario(e5, bulk=8), cases.scenario(e5, bulk=64)
    fa, fb = (float(model.evaluate(s, e5)[out]) for s in (a, b))
    _, iv = uncertainty.delta_intervals(a, b, e5, e5, [out])
    assert float(uncertainty.half_width(iv[out])) == pytest.approx(1.6448536 * rel * abs(fb - fa), rel=1e-6)
    bp = cases.scenario(plat, bulk=64)
    fp = float(model.evaluate(bp, plat)[out])
    _, iv = uncertainty.delta_intervals(a, bp, e5, plat, [out])
    assert float(uncertainty.half_width(iv[out])) == pytest.approx(1.6448536 * rel * math.hypot(fa, fp), rel=1e-6)
