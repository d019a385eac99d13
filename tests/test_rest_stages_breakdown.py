"""The breakdown with the rest of path in named stages (skbmodel.evidence.perfprofile.breakdown_stages_ns):
the stages split the rest exactly, on every shipped profile and path, and no total moves."""
import numpy as np
import pytest

from skbmodel import folders, model
from skbmodel.question import Question
from skbmodel.evidence import kstages
from skbmodel.evidence import perfprofile as pp

PATHS = ("veth", "cpumap", "xdp_pass", "kfree_skb_list")


def _params(cpu, **kw):
    return {**model.default_params(cpu), **kw}


@pytest.mark.parametrize("cpu", folders.shipped_profiles())
def test_stages_sum_to_the_rest_and_totals_unchanged(cpu):
    paths = np.array([*PATHS, "design", "design", "design", "design", "design"])
    d_rest = np.array([*("from",) * 4, "veth", "cpumap", "xdp_pass", "kfree_skb_list", "custom"])
    p = _params(cpu, path=paths, d_rest=d_rest, d_free="slab_one")
    out = pp.breakdown_stages_ns(p)
    parts = model.breakdown_ns(p)
    rest = np.asarray(parts["rest of path"], dtype=float)
    stages = out["stages"]
    assert pp.UNNAMED in stages
    np.testing.assert_allclose(sum(stages.values()), rest, rtol=1e-12, atol=1e-9)
    for s, v in stages.items():
        assert np.all(np.asarray(v) >= -1e-9), s
    # every component other than the rest is the model's, and the path's total is the same sum
    for k in model.COMPONENTS:
        np.testing.assert_array_equal(out["parts"][k], parts[k])
    total = model.evaluate(p, outputs=("path.ns_per_packet",))["path.ns_per_packet"]
    comps = sum(np.asarray(out["parts"][k], dtype=float) for k in model.COMPONENTS if k != "rest of path")
    np.testing.assert_allclose(comps + sum(stages.values()), total, rtol=1e-9)
    # a custom rest is named by no profile
    assert float(stages[pp.UNNAMED][-1]) == pytest.approx(float(rest[-1]), rel=1e-12)


def test_veth_default_names_most_of_its_rest():
    b = pp.breakdown_stages_ns(_params(None, path="veth"))
    rest = float(b["parts"]["rest of path"])
    named = rest - float(b["stages"][pp.UNNAMED])
    # the baseline profile on the same CPU model: its named stages x its per-packet time (271.9 ns)
    assert 0.8 < named / rest < 0.95
    assert float(b["stages"]["xdp_run"]) == pytest.approx(12.8 / 100 * 1e9 / 3677958, rel=1e-9)


def test_design_rest_takes_the_paths_stages():
    # the composition's rest from veth is split as the veth path's rest is (same fractions)
    a = pp.breakdown_stages_ns(_params(None, path="veth"))
    b = pp.breakdown_stages_ns(_params(None, path="design", d_from="veth", d_rest="veth"))
    for s in a["stages"]:
        if s != pp.UNNAMED:
            fa = float(a["stages"][s]) / float(a["parts"]["rest of path"])
            fb = float(b["stages"][s]) / float(b["parts"]["rest of path"])
            assert fb == pytest.approx(fa, rel=1e-12)


def test_cpumap_limited_by_its_source_is_named_by_the_source_cpu_profile():
    # the destination drops every frame and the source CPU limits (on this CPU it does): the rest is the source's
    # and takes the source CPU's profile; where the destination still limits, its rest (the drop) is unnamed
    p = _params("derived-neoverse-v1", path="cpumap", cpumap_prog="drop")
    sides = model.cpumap_breakdown_ns(p)
    assert sum(float(v) for v in sides["source"].values()) > sum(float(v) for v in sides["destination"].values())
    b = pp.breakdown_stages_ns(p)
    assert b["paths"].item() == "cpumap:source"
    assert pp.breakdown_stages_ns(_params(None, path="cpumap", cpumap_prog="drop"))["paths"].item() == ""
    rest = float(b["parts"]["rest of path"])
    assert sum(float(v) for v in b["stages"].values()) == pytest.approx(rest, rel=1e-12)
    assert float(b["stages"]["xdp_run"]) == pytest.approx(rest * 0.2516, rel=1e-9)  # 25.16 % of all samples
    assert pp.default_for("cpumap:source").side == "source"


def test_labels_from_the_symbol_map():
    names = {s.id: s.name for s in kstages.load().stages.values()}
    for path in PATHS:
        for s in pp.rest_fractions(path):
            assert pp.stage_label(s) == names[s]
    assert pp.stage_label(pp.UNNAMED) == "rest, unnamed"
    src = pp.profile_source(pp.default_for("veth"))
    assert "veth-mlx5-e5-1650v4-5.11-baseline" in src and "E5-1650 v4" in src and "5.11" in src


@pytest.mark.parametrize("d_rest", ["veth", "cpumap", "xdp_pass", "kfree_skb_list", "custom"])
def test_design_breakdown_draws_the_rest_in_stages(d_rest):
    from skbview import charts, tables
    from skbmodel.links import state as sk_state

    state = {**sk_state.defaults(), "page": "design", "d_rest": d_rest, "d_free": "slab_one"}
    fig = charts.figure_for("design", "breakdown", Question.of_state(state))
    pa, pb = tables.design_params_ab(Question.of_state(state))
    bars = [t for t in fig.data if t.type == "bar"]
    stage_bars = [t for t in bars if t.legendgroup == "rest of path"]
    assert stage_bars[-1].name == "rest, unnamed"
    for j, p in enumerate((pa, pb)):
        parts = model.breakdown_ns(p)
        assert sum(float(t.y[j]) for t in stage_bars) == pytest.approx(float(parts["rest of path"]), rel=1e-9)
        # the bars still stack to the composition's total
        total = float(model.evaluate(p, outputs=("path.ns_per_packet",))["path.ns_per_packet"])
        assert sum(float(t.y[j]) for t in bars) == pytest.approx(total, rel=1e-9)
    named_a = [t for t in stage_bars if float(t.y[0]) > 0 and t.name != "rest, unnamed"]
    assert bool(named_a) == (d_rest in ("veth", "cpumap", "xdp_pass"))  # kfree_skb_list: no published profile
    for t in named_a:
        assert "perf profile " + pp.default_for(d_rest).id in t.customdata[0]


def test_all_paths_chart_draws_each_rest_in_its_stages():
    from skbview import charts
    from skbmodel.links import state as sk_state

    state = {**sk_state.defaults(), "page": "overview"}
    fig = charts.figure_for("overview", "paths", Question.of_state(state))
    bars = [t for t in fig.data if t.type == "bar"]
    stage_bars = [t for t in bars if t.legendgroup == "rest of path"]
    assert stage_bars[-1].name == "rest, unnamed"
    paths = np.array(sk_state.PATHS)
    p = {**model.default_params(None), "path": paths}
    parts = model.breakdown_ns(p)
    totals = model.evaluate(p, outputs=("path.ns_per_packet",))["path.ns_per_packet"]

    def at(t, label):   # a trace's value on one path's bar: a stage is drawn only on the paths it is part of
        x = list(t.x)
        return (float(t.y[x.index(label)]), t.customdata[x.index(label)] if t.customdata else "") \
            if label in x else (0.0, "")

    labels = list(bars[0].x)
    for j, path in enumerate(paths):
        # the stages fill the rest exactly, and every path's bars still stack to its total
        assert sum(at(t, labels[j])[0] for t in stage_bars) == pytest.approx(float(parts["rest of path"][j]))
        assert sum(at(t, labels[j])[0] for t in bars) == pytest.approx(float(totals[j]), rel=1e-9)
        named = [t for t in stage_bars if at(t, labels[j])[0] > 0 and t.name != "rest, unnamed"]
        assert bool(named) == (path in ("veth", "cpumap", "xdp_pass")), path
        for t in named:
            assert "perf profile " + pp.default_for(str(path)).id in at(t, labels[j])[1]
    # the large stages are named inside their segments
    assert "stack receive" in [x for t in stage_bars for x in t.text]
