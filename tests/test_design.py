"""The composed path (skbmodel.composer): each modelled path reproduced exactly, every stage option moving
the cost the way the kernel mechanism implies, compositions that make no sense named by stage, and
the Design page (AppTest)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from skbmodel import answers
from skbmodel import composer, model, uncertainty
from skbmodel.physics import noise
from skbmodel.links import state as sk_state
from skbmodel.machine.profile import load_profile
from tests.cli_util import skbmodel_cli

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ("e5-1650v4", "xeon-platinum-iavf")
SCENARIOS = (
    {},
    dict(place="other_socket", pp_recycle=0.3, zero="memset", zero_bytes=256, xdp_batch=5, page_bulk=8),
    dict(kfl_bulk=1, drop_batch=7, clone_frac=0.4, pp_recycle=0.0, zero="memset"),
    dict(kfl_bulk=64, drop_batch=1024, xdp_batch=1, link_gbps=100.0, frame_bytes=1500),
)


# ---------------------------------------------------------------- exact reproduction
@pytest.mark.parametrize("cpu", PROFILES)
@pytest.mark.parametrize("path", sk_state.PATHS)
def test_each_modelled_path_is_reproduced_exactly_as_a_composition(cpu, path):
    """Exactly, with no tolerance.  A composition is one CPU's: the cpumap path is its destination's
    composition where that CPU limits it at the same node (seed 003's runs); elsewhere the path is the
    busier CPU, and the destination's parts are the composition's but for the placement's ring-slot lines
    and sleeps, which only add to its cross-CPU transfer."""
    prof = load_profile(cpu)
    for sc in SCENARIOS:
        a = {**sc, "cpu": cpu, "path": path}
        b = {**a, "path": "design", "d_from": path}
        oa, ob = model.evaluate(a, prof), model.evaluate(b, prof)
        if path == "cpumap" and (sc.get("place", "same_l3") != "same_l3" or oa["cpumap.bottleneck"] != 1):
            dst, comp = model.cpumap_breakdown_ns(a, prof)["destination"], model.breakdown_ns(b, prof)
            for k in model.COMPONENTS:
                assert dst[k] >= comp[k] if k == "cross-CPU transfer" else dst[k] == comp[k], (sc, k)
            continue
        for k in ("path.ns_per_packet", "path.mpps", "path.budget_pct"):
            assert oa[k] == ob[k], (path, sc, k)  # exact: no tolerance
        ba, bb = model.path_breakdown(a, prof), model.path_breakdown(b, prof)
        assert list(bb) == list(model.COMPONENTS)
        for comp in model.COMPONENTS:
            assert ba[comp] == bb[comp], (path, sc, comp)


@pytest.mark.parametrize("path", sk_state.PATHS)
def test_the_start_written_out_as_explicit_stages_gives_the_same_numbers(path):
    """``from`` resolves to explicit options (composer.resolved); choosing them by hand changes nothing."""
    base = {"path": "design", "d_from": path, "zero": "memset", "place": "other_socket", "pp_recycle": 0.6}
    explicit = {**base, **composer.resolved(base)}
    start_bulk = {"veth": 16, "cpumap": 8, "xdp_pass": 16, "kfree_skb_list": 16}[path]
    explicit["d_skb_bulk"] = start_bulk
    explicit["d_zero_bytes"] = 184
    explicit["d_rx_bulk"] = 64
    a, b = model.evaluate(base), model.evaluate(explicit)
    assert a["path.ns_per_packet"] == pytest.approx(float(b["path.ns_per_packet"]), rel=1e-12)


def test_intervals_of_a_start_equal_those_of_its_path():
    for path in sk_state.PATHS:
        _, ia = uncertainty.evaluate_with_intervals({"path": path}, outputs=["path.ns_per_packet"])
        _, ib = uncertainty.evaluate_with_intervals({"path": "design", "d_from": path}, outputs=["path.ns_per_packet"])
        for j in (0, 1):
            assert float(ia["path.ns_per_packet"][j]) == pytest.approx(float(ib["path.ns_per_packet"][j]), rel=1e-12)


def test_cli_contract_design_from_veth_equals_veth():
    def ns(q):
        r = skbmodel_cli("eval", q, "--json", cwd=ROOT)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["outputs"]["path.ns_per_packet"]
    for path in sk_state.PATHS:
        assert ns(f"path=design&d_from={path}") == ns(f"path={path}")


def test_vectorised_equals_one_state_at_a_time():
    rng = np.random.default_rng(7)
    rows = []
    for _ in range(60):
        r = {k: str(rng.choice(composer.choices_of(k))) for k in composer.STAGE_CHOICES}
        r["d_from"] = str(rng.choice(composer.START_PATHS))
        r.update(d_rx_bulk=int(rng.integers(1, 257)), d_skb_bulk=int(rng.integers(1, 257)),
                 d_free_bulk=int(rng.integers(1, 257)), d_zero_bytes=int(rng.integers(8, 1025)),
                 d_rest_ns=float(rng.uniform(10, 900)), place=str(rng.choice(["same_l3", "other_socket"])),
                 pp_recycle=float(rng.uniform()))
        rows.append(r)
    grid = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    out = model.evaluate({**grid, "path": "design"})["path.ns_per_packet"]
    for i, r in enumerate(rows):
        assert out[i] == pytest.approx(float(model.evaluate({**r, "path": "design"})["path.ns_per_packet"]),
                                       rel=1e-12)


def test_a_grid_of_starts_by_stages_equals_one_state_at_a_time():
    # d_from on one axis, a stage (and the hand-off) on another: each "from" is resolved against its own start
    hands, skbs = composer.choices_of("d_hand"), composer.choices_of("d_skb")
    grid = {"d_from": np.array(composer.START_PATHS)[:, None, None], "d_skb": np.array(skbs)[None, :, None],
            "d_hand": np.array(hands)[None, None, :], "place": "other_socket", "path": "design"}
    out = model.evaluate(grid)["path.ns_per_packet"]
    for i, start in enumerate(composer.START_PATHS):
        for j, skb in enumerate(skbs):
            for k, hand in enumerate(hands):
                one = model.evaluate({"path": "design", "d_from": start, "d_skb": skb, "d_hand": hand,
                                      "place": "other_socket"})
                # not bit for bit: numpy's array and scalar exp/log may differ in the last ulp
                assert out[i, j, k] == pytest.approx(float(one["path.ns_per_packet"]), rel=1e-12), (start, skb, hand)


def test_a_grid_mixing_every_option_with_its_numbers_on_other_axes_equals_one_state_at_a_time():
    """Every stage's options mixed on one axis and the numbers the options read (bulks, bytes, the
    placement, the recycle share, the drop list) on another: each option gets its inputs at its own states."""
    rng = np.random.default_rng(11)
    n = 24
    opts = {k: np.array([str(rng.choice(composer.choices_of(k))) for _ in range(n)])[:, None]
            for k in composer.STAGE_CHOICES}
    opts["d_from"] = np.array([str(rng.choice(composer.START_PATHS)) for _ in range(n)])[:, None]
    nums = dict(d_rx_bulk=np.array([1, 8, 64]), d_skb_bulk=np.array([1, 16, 200]), d_free_bulk=np.array([2, 32, 256]),
                d_zero_bytes=np.array([8, 184, 1024]), d_rest_ns=np.array([10.0, 120.0, 700.0]),
                place=np.array(["same_l3", "other_socket", "same_l3"]), pp_recycle=np.array([0.0, 0.4, 1.0]),
                kfl_bulk=np.array([1, 16, 64]), drop_batch=np.array([1, 64, 1024]),
                clone_frac=np.array([0.0, 0.5, 1.0]),
                xdp_batch=np.array([1, 16, 64]), zero_bytes=np.array([64, 184, 512]))
    grid = {**opts, **{k: v[None, :] for k, v in nums.items()}, "path": "design"}
    out = model.evaluate(grid)
    ns, other = out["path.ns_per_packet"], out["free.other_cpu_ns"]
    assert ns.shape == (n, 3)
    for i in range(n):
        for j in range(3):
            one = model.evaluate({**{k: v[i, 0] for k, v in opts.items()}, **{k: v[j] for k, v in nums.items()},
                                  "path": "design"})
            assert ns[i, j] == pytest.approx(float(one["path.ns_per_packet"]), rel=1e-12), (i, j)
            assert other[i, j] == pytest.approx(float(one["free.other_cpu_ns"]), rel=1e-12, abs=1e-12), (i, j)


def test_an_option_reads_a_new_input_by_declaring_it(monkeypatch):
    """A parameter read by an option is named in the option's inputs and handed to it at the option's states:
    here the custom rest reads ``frame_bytes`` (1 ns per byte), on a grid where three rests are mixed and the
    frame size runs along another axis (1 cycle per byte)."""
    rest = composer.STAGES["rest of path"]
    custom = composer.Option(("frame_bytes",), lambda c, nbytes: np.asarray(nbytes, dtype=float))
    monkeypatch.setitem(composer.STAGES, "rest of path", composer.Stage(
        rest.by, {**rest.options, composer.CODE["d_rest"]["custom"]: custom}))
    rests, frames = np.array(["veth", "custom", "cpumap"]), np.array([64.0, 512.0, 1500.0])
    grid = {"path": "design", "d_from": "veth", "d_rest": rests[:, None], "frame_bytes": frames[None, :]}
    parts = model.path_breakdown(grid)["rest of path"]
    assert parts.shape == (3, 3)
    np.testing.assert_allclose(parts[1], frames, rtol=1e-12)
    for j in range(3):
        for i in (0, 2):
            one = model.path_breakdown({"path": "design", "d_from": "veth", "d_rest": str(rests[i]),
                                        "frame_bytes": float(frames[j])})["rest of path"]
            assert parts[i, j] == pytest.approx(float(one), rel=1e-12)


def test_every_declared_input_is_handed_and_no_derived_name_hides_a_model_input():
    prof = load_profile("e5-1650v4")
    inputs = model.inputs({"path": "design"}, prof)
    assert not set(composer.DERIVED) & set(inputs)
    handed = composer._inputs(inputs, prof.values(), None, {})

    def declared(entry):
        if isinstance(entry, composer.Option):
            return set(entry.inputs)
        return {entry.by}.union(*(declared(e) for e in entry.options.values()))
    names = set().union(*(declared(st) for st in composer.STAGES.values()))
    names |= set().union(*(declared(d) if isinstance(d, composer.Stage) else set(d.inputs)
                           for d in composer.DERIVED.values()))
    for name in names:
        handed.get(name)  # a name nobody hands raises KeyError


# ---------------------------------------------------------------- directions
def _ns(**kw) -> float:
    return float(model.evaluate({"path": "design", **kw})["path.ns_per_packet"])


def _comp(comp, **kw) -> float:
    return float(model.path_breakdown({"path": "design", **kw})[comp])


@pytest.mark.parametrize("cpu", PROFILES)
def test_bulk_never_costs_more_per_object_than_one_at_a_time(cpu):
    n = np.arange(1, 257)
    kw = dict(cpu=cpu, path="design", d_from="xdp_pass")
    alloc_bulk = model.path_breakdown({**kw, "d_skb": "slab_bulk", "d_skb_bulk": n})["skb alloc"]
    alloc_one = model.path_breakdown({**kw, "d_skb": "slab_one"})["skb alloc"]
    assert np.all(alloc_bulk <= alloc_one + 1e-9)
    assert float(alloc_bulk[0]) == pytest.approx(float(alloc_one))  # a bulk of one is one kmem_cache_alloc
    for where in ("local", "remote"):
        free_bulk = model.path_breakdown({**kw, "d_free": "slab_bulk", "d_free_bulk": n, "d_free_where": where})
        free_one = model.path_breakdown({**kw, "d_free": "slab_one", "d_free_where": where})
        assert np.all(free_bulk["skb free"] <= free_one["skb free"] + 1e-9), where
    page_bulk = model.path_breakdown({**kw, "d_rx": "page_bulk", "d_rx_bulk": n})["page alloc/recycle"]
    page_one = model.path_breakdown({**kw, "d_rx": "page_single"})["page alloc/recycle"]
    assert np.all(page_bulk <= page_one + 1e-9)


@pytest.mark.parametrize("hand", ["none", "cpumap_same", "cpumap_cross"])
def test_recycling_never_costs_more_than_the_page_allocator(hand):
    n = np.array([1, 2, 8, 16, 64, 128, 256])
    kw = dict(d_from="cpumap", d_hand=hand)
    page = np.minimum(_comp("page alloc/recycle", d_rx="page_single", **kw),
                      model.path_breakdown({"path": "design", **kw, "d_rx": "page_bulk", "d_rx_bulk": n}
                                           )["page alloc/recycle"].min())
    ring = _comp("page alloc/recycle", d_rx="pp_ring", **kw)
    assert ring <= page
    if hand == "none":
        assert _comp("page alloc/recycle", d_rx="pp_direct", **kw) <= ring
    r = np.linspace(0, 1, 21)
    mix = model.path_breakdown({"path": "design", **kw, "d_rx": "pp_mix", "pp_recycle": r})["page alloc/recycle"]
    assert np.all(np.diff(mix) <= 1e-9)  # more recycled, never dearer


@pytest.mark.parametrize("rx", ["pp_ring", "page_single", "page_bulk", "pp_mix"])
@pytest.mark.parametrize("free", ["slab_one", "defer", "napi_cache"])
def test_cross_node_is_never_faster(rx, free):
    kw = dict(d_from="cpumap", d_rx=rx, d_free=free, pp_recycle=0.5)
    assert _ns(d_hand="cpumap_cross", **kw) >= _ns(d_hand="cpumap_same", **kw)


def test_the_napi_skb_cache_is_the_seed_001_pair():
    """skb head and free through the NAPI cache cost napi_cache_pair; through SLUB the fast pair."""
    c = load_profile("e5-1650v4").values()
    kw = dict(d_from="xdp_pass", d_rx="pp_direct")
    cached = _comp("skb alloc", d_skb="napi_cache", d_free="napi_cache", **kw) + _comp(
        "skb free", d_skb="napi_cache", d_free="napi_cache", **kw)
    slab = _comp("skb alloc", d_skb="slab_one", d_free="slab_one", **kw) + _comp(
        "skb free", d_skb="slab_one", d_free="slab_one", **kw)
    assert cached == pytest.approx(c["napi_cache_pair_cycles"])
    assert slab == pytest.approx(c["slub_fast_pair_cycles"])
    assert cached < slab


@pytest.mark.parametrize("hand", ["none", "cpumap_same", "cpumap_cross"])
def test_a_deferred_free_costs_at_least_the_same_cpu_free_into_the_cache(hand):
    kw = dict(d_from="cpumap", d_hand=hand, d_rx="pp_mix", d_skb="napi_cache")
    assert _ns(d_free="defer", **kw) > _ns(d_free="napi_cache", **kw)


def test_remote_free_and_memset_bytes_move_the_right_way():
    assert _ns(d_from="xdp_pass", d_free_where="remote") > _ns(d_from="xdp_pass", d_free_where="local")
    assert _ns(d_zero="memset", d_zero_bytes=512) > _ns(d_zero="memset", d_zero_bytes=128)
    assert _ns(d_zero="none") < _ns(d_zero="gfp_zero")


def test_the_rest_presets_are_the_fitted_bases():
    c = load_profile("e5-1650v4").values()
    assert _comp("rest of path", d_rest="veth") == c["veth_base_cycles"]
    assert _comp("rest of path", d_rest="cpumap") == c["cpumap_dst_stack_cycles"]
    assert _comp("rest of path", d_rest="custom", d_rest_ns=100.0) == pytest.approx(360.0)


# ---------------------------------------------------------------- bad input
BAD = {
    "d_skb=slab_bulk&d_skb_bulk=0": "skb head",
    "d_free=slab_bulk&d_free_bulk=0": "skb free",
    "d_rx=page_bulk&d_rx_bulk=0": "RX buffer",
    "d_from=cpumap&d_skb=none": "hand-off",
    "d_from=cpumap&d_rest=custom&d_rest_ns=0": "hand-off",
    "d_from=cpumap&d_rx=pp_direct": "RX buffer",
    "d_from=xdp_pass&d_skb=none": "skb free",
    "d_from=kfree_skb_list&d_free=napi_cache": "skb free",
    "d_rx=pp_direct&d_stage=page_alloc": "rest stage",  # the RX stage replaces the veth rest's page stages
}


@pytest.mark.parametrize("query", BAD)
def test_a_composition_that_makes_no_sense_names_its_stage(query, tmp_path):
    st, warnings = sk_state.decode(f"path=design&bulk=32&{query}")
    assert warnings == [] and st["bulk"] == 32  # the rest of the link is kept
    found = composer.problems(st)
    assert found and found[0][0] == BAD[query], found
    out = model.evaluate(sk_state.scenario(st))  # still evaluates: nothing crashes
    assert np.isfinite(out["path.ns_per_packet"])
    r = skbmodel_cli("eval", f"path=design&{query}", cwd=ROOT)
    assert r.returncode == 2 and r.stdout == ""
    err = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(err) == 1 and BAD[query] in err[0] and "Traceback" not in r.stderr
    if query == next(iter(BAD)):  # chart export refuses it the same way
        r = skbmodel_cli("export", f"path=design&{query}", "--page", "design", "--format", "svg", "--out", tmp_path,
                         cwd=ROOT)
        assert r.returncode == 2 and "skb head" in r.stderr and not list(tmp_path.iterdir())


def test_usable_starts_have_no_problems_and_out_of_range_is_clamped():
    for p in sk_state.PATHS:
        assert composer.problems({"d_from": p}) == []
    st, warnings = sk_state.decode("d_skb_bulk=-3&d_rx=bogus")
    assert st["d_skb_bulk"] == 0 and st["d_rx"] == "from" and len(warnings) == 2
    keys = [kv.split("=")[0] for kv in sk_state.encode(st).split("&")]
    assert "d_rx" in keys and not [k for k in keys if k.startswith("b_")]  # B is A: the link writes none of it


def test_eval_help_lists_every_scenario_key_with_its_range_and_default():
    from skbmodel.params import DISPLAY_PARAMS, MODEL_PARAMS, fmt_value

    r = skbmodel_cli("eval", "--help", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    for k in composer.KEY_NAMES:
        assert k + "=" in r.stdout
    lines = {line.split("=", 1)[0].strip(): line for line in r.stdout.splitlines()
             if line.startswith("  ") and "=" in line.split()[0]}
    for p in MODEL_PARAMS + DISPLAY_PARAMS:
        line = lines[p.key]
        if p.kind == "choice":
            assert "|".join(p.choices) in line, line
        else:
            assert f"{fmt_value(p.lo)}..{fmt_value(p.hi)}" in line, line
        assert "(default the CPU profile's" in line if p.key in ("ghz", "noise_ns") else \
            f"(default {p.default if p.key.startswith('d_') else fmt_value(p.default)})" in line, line
    assert "page=overview|" in r.stdout


# ---------------------------------------------------------------- the page (AppTest)
def test_design_page_compose_change_a_stage_breakdown_and_delta_change():
    from tests.test_app_pages import _app, _arr, _metric, _open, _spec, _state

    at = _open(_app(), "design")
    st = _state(at)
    assert st["path"] == "design" and st["page"] == "design"
    assert _metric(at, "Δ B − A") == "+0"  # from veth, against veth: exactly nothing
    spec = _spec(at, 0)
    free0 = _arr(next(t for t in spec["data"] if t.get("name") == "skb free")["y"])
    assert list(free0) == [0.0, 0.0]
    at.selectbox(key="d_free").set_value("slab_bulk").run()
    # the veth rest already frees each skb: that free is subtracted, and the page says so
    assert any("subtracted from the rest" in i.value for i in at.info), [i.value for i in at.info]
    at.selectbox(key="d_zero").set_value("memset").run()
    st = _state(at)
    assert st["d_free"] == "slab_bulk" and st["d_zero"] == "memset"
    a = {**sk_state.scenario(st), "path": "design"}
    # B: the veth path (the comparison the page starts with), in A's scenario
    over = sk_state.b_overrides(st)
    b = {**a, "path": composer.COMPARE_PATH, **{k: over.get(k, composer.DEFAULTS[k]) for k in composer.KEY_NAMES}}
    prof = load_profile(st["cpu"])
    d = float(model.evaluate(b, prof)["path.ns_per_packet"] - model.evaluate(a, prof)["path.ns_per_packet"])
    assert d != 0 and _metric(at, "Δ B − A") == f"{d:+.{answers.decimals(d)}f}"
    lo, hi = uncertainty.delta_interval(a, b, prof, prof)
    verdict = noise.verdict(d, st["noise_ns"], lo, hi)
    assert any(f"B − A: {verdict}" in m.value for m in at.markdown), [m.value for m in at.markdown]
    cost = float(model.evaluate(a, prof)['path.ns_per_packet'])
    assert _metric(at, "Cost (ns/packet)") == f"{cost:.{answers.decimals(cost)}f}"
    spec = _spec(at, 0)
    free = _arr(next(t for t in spec["data"] if t.get("name") == "skb free")["y"])
    assert free[0] > 0 and free[1] == 0.0
    # a stage that makes no sense: a message naming it, no crash, the rest kept
    at.slider(key="d_free_bulk").set_value(0).run()
    assert not at.exception
    assert any("skb free" in e.value for e in at.error)
    assert _state(at)["d_zero"] == "memset"
    # an RX buffer stage on the veth rest, which holds the RX page already: the page stages its perf profile
    # names leave the rest, and the page says so
    at.slider(key="d_free_bulk").set_value(16).run()
    at.selectbox(key="d_rx").set_value("page_single").run()
    assert not at.error
    assert any("RX buffer" in i.value and "subtracted from the rest" in i.value for i in at.info)


def test_design_link_with_a_bad_stage_opens_with_the_rest_of_its_state():
    from tests.test_app_pages import _app, _state

    at = _app({"page": "design", "path": "design", "d_from": "cpumap", "d_skb": "slab_bulk", "d_skb_bulk": "0",
               "bulk": "48", "zero": "memset"})
    assert not at.exception
    st = _state(at)
    assert st["page"] == "design" and st["bulk"] == 48 and st["zero"] == "memset" and st["d_skb_bulk"] == 0
    assert any("skb head" in e.value for e in at.error)


def test_choices_as_names_or_as_codes_give_the_same_numbers():
    """The model compares integer codes; names are turned into codes once, at its edge."""
    rng = np.random.default_rng(11)
    n = 400
    names = {k: rng.choice(np.array(sk_state.PARAMS[k].choices), size=n)
             for k in ("zero", "place", "path", "d_from", *composer.STAGE_CHOICES)}
    codes = {k: sk_state.PARAMS[k].codes(v) for k, v in names.items()}
    assert all(v.dtype.kind == "i" and v.min() >= 0 for v in codes.values())
    a, b = model.evaluate(names), model.evaluate(codes)
    for k in model.OUTPUT_UNITS:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_bench_reports_every_path_and_vectorised_equals_scalar():
    from skbmodel.bench import run_bench
    res = run_bench(n_vector=500, n_scalar=20)
    assert list(res["paths"]) == list(sk_state.PARAMS["path"].choices)
    # the speeds are timings (benchmarks/, not asserted here): only that each path reports both
    assert all(set(r) == {"states_per_s", "ratio"} for r in res["paths"].values())
    assert res["max_rel_diff"] == 0.0


# ---------------------------------------------------------------- a named stage of the rest, re-priced
def test_the_stages_a_composition_can_reprice_are_those_the_profiles_name():
    from skbmodel.evidence import perfprofile as pp
    named = {s for path in composer.START_PATHS for s in pp.rest_fractions(path)}
    assert set(composer.REST_STAGE_OPTIONS.values()) == named
    for o in composer.REST_STAGE_OPTIONS:
        assert len(composer.OPTION_SHORT[o]) <= 16 and composer.OPTION_LABELS[o].startswith("re-price the rest's ")


def test_a_repriced_stage_moves_the_rest_by_its_named_time():
    from skbmodel.evidence import perfprofile as pp
    p = {**model.default_params(None), "path": "design", "d_from": "veth"}
    named = pp.breakdown_stages_ns(p)["stages"]
    rest = float(model.breakdown_ns(p)["rest of path"])
    # GRO off in the veth rest: the rest less GRO's named time (16.9 ns on e5-1650v4)
    off = {**p, "d_stage": "gro", "d_stage_pct": 0.0}
    assert float(model.breakdown_ns(off)["rest of path"]) == pytest.approx(rest - float(named["gro"]), rel=1e-12)
    assert float(named["gro"]) == pytest.approx(16.9, abs=0.05)
    # the driver's RX at 150 %: half its named time more; at 100 % nothing moves
    up = {**p, "d_stage": "driver_rx", "d_stage_pct": 150.0}
    assert float(model.breakdown_ns(up)["rest of path"]) == pytest.approx(rest + 0.5 * float(named["driver_rx"]))
    assert float(model.breakdown_ns({**p, "d_stage": "stack", "d_stage_pct": 100.0})["rest of path"]) == rest
    # drawn: the chosen stage at its new time, every other stage at its named one, the sum the new rest
    split = pp.breakdown_stages_ns(up)
    assert float(split["stages"]["driver_rx"]) == pytest.approx(1.5 * float(named["driver_rx"]), rel=1e-12)
    for s in named:
        if s != "driver_rx":
            assert float(split["stages"][s]) == pytest.approx(float(named[s]), rel=1e-12), s
    # a modelled path re-prices nothing (the option is the composition's)
    veth = {**model.default_params(None), "path": "veth", "d_stage": "gro", "d_stage_pct": 0.0}
    assert float(model.breakdown_ns(veth)["rest of path"]) == pytest.approx(rest)


def test_repriced_stages_vectorised_as_scalar():
    p = {**model.default_params(None), "path": "design"}
    d_from = np.array(["veth", "cpumap", "xdp_pass", "veth", "xdp_pass", "kfree_skb_list"])
    stage = np.array(["gro", "stack", "driver_rx", "none", "from", "gro"])
    pct = np.array([0.0, 50.0, 200.0, 0.0, 0.0, 0.0])
    grid = model.evaluate({**p, "d_from": d_from, "d_stage": stage, "d_stage_pct": pct},
                          outputs=("path.ns_per_packet",))["path.ns_per_packet"]
    for i in range(d_from.size):
        one = model.evaluate({**p, "d_from": str(d_from[i]), "d_stage": str(stage[i]), "d_stage_pct": float(pct[i])},
                             outputs=("path.ns_per_packet",))["path.ns_per_packet"]
        assert float(grid[i]) == float(one)
    # kfree_skb_list's rest has no published profile: GRO there changes nothing, and the page says why
    assert float(grid[-1]) == float(model.evaluate({**p, "d_from": "kfree_skb_list"},
                                                   outputs=("path.ns_per_packet",))["path.ns_per_packet"])
    assert "names no GRO" in composer.problem_text({**p, "d_from": "kfree_skb_list", "d_stage": "gro"})
    assert "custom rest has no named stages" in composer.problem_text({**p, "d_rest": "custom", "d_stage": "gro"})
    assert composer.problems({**p, "d_from": "xdp_pass", "d_stage": "driver_rx"}) == []
    assert "d_stage_pct" in composer.keys_in_use({**p, "d_stage": "gro"})
    assert "d_stage_pct" not in composer.keys_in_use(p)
