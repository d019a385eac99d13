"""AppTest for every dashboard page: set controls, check the numbers and chart data it shows
against skbmodel evaluated directly (the oracle is the model package, not the page code)."""
from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import parse_qsl

import numpy as np
import plotly.graph_objects as go
import pytest

from skbmodel import answers
from skbmodel.question import Question
from skbmodel import model, uncertainty
from skbmodel.physics import noise
from skbmodel.evidence import outofsample, perfprofile, protocols, validation
from skbmodel.links import shortlink, state as sk_state
from skbmodel.evidence.observations import seed_observations
from skbmodel.machine.profile import load_profile
from skbview import charts
from skbview.safe_text import md_escape
from tests.limits import APPTEST_TIMEOUT_S

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
DASHBOARD = str(Path(__file__).resolve().parent.parent / "dashboard.py")


@pytest.fixture(autouse=True)
def _navigation_mode(monkeypatch):
    """AppTest resets ``PagesManager.uses_pages_directory`` before every run, so with a ``pages/``
    folder next to the entry point each run after ``switch_page`` would execute the page file
    alone (legacy mode).  A real server leaves that mode for good on the first ``st.navigation``
    call; do the same here."""
    from streamlit.runtime.pages_manager import PagesManager

    orig = PagesManager.__init__

    def init(self, *a, **k):
        orig(self, *a, **k)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


class _App(AppTest):
    """AppTest that, like the browser, holds the whole page after a control is moved.

    A moved model control reruns only the view fragments (``appstate.view_fragment``: the page's
    live area and the sidebar's link box).  AppTest builds its element tree from the messages of
    one run only, so after such a rerun it would hold just those fragments; the browser keeps the
    rest of the page.  Here an unchanged full run follows, which redraws the rest from the same
    state.  The fragment-only rerun itself is checked by ``test_control_move_reruns_only_views``.
    """

    def _run(self, widget_state=None, timeout=None):
        super()._run(widget_state, timeout=timeout)
        if self.exception or any(s.key == "cpu" for s in self.selectbox):
            return self
        return super()._run(None, timeout=timeout)


def _app(query: dict | None = None, cls=_App) -> AppTest:
    at = cls(DASHBOARD, default_timeout=APPTEST_TIMEOUT_S)
    if query:
        at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def _open(at: AppTest, slug: str) -> AppTest:
    at.switch_page(f"pages/{slug}.py").run()
    assert not at.exception, at.exception
    assert at.query_params["page"] == slug
    return at


def _arr(v):
    """Plotly JSON array: a list or numpy's base64 ``{dtype, bdata, shape}``."""
    if isinstance(v, dict) and "bdata" in v:
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        if "shape" in v:
            a = a.reshape([int(s) for s in str(v["shape"]).split(",")])
        return a
    return np.asarray(v)


def _spec(at: AppTest, i: int) -> dict:
    return json.loads(at.get("plotly_chart")[i].proto.spec)


def _chart(at: AppTest, name: str) -> dict:
    """Open the tab of the page's chart ``name``, as a click on it does, and return that chart's spec."""
    page = _state(at)["page"]
    at.session_state[f"chart_tab_{page}"] = charts.chart_labels(page)[name]
    at.run()
    drawn = {c.proto.id.rsplit("-", 1)[-1]: c for c in at.get("plotly_chart")}
    assert f"chart_{page}_{name}" in drawn, list(drawn)
    return json.loads(drawn[f"chart_{page}_{name}"].proto.spec)


def _trace(spec: dict, name_part: str, exact: bool = False) -> dict:
    for t in spec["data"]:
        if "fillpattern" in t:  # a curve's band (named after the curve): the curve itself is wanted
            continue
        name = t.get("name") or ""
        if (name == name_part) if exact else (name_part in name):
            return t
    raise AssertionError(f"no trace named like {name_part!r}: {[t.get('name') for t in spec['data']]}")


def _fmt4(x: float, sign: str = "") -> str:
    """A number as the page's metrics (and every other surface) print it: 4 significant digits, fixed point."""
    return f"{float(x):{sign}.{answers.decimals(float(x))}f}"


def _metric(at: AppTest, label_part: str) -> str:
    for m in at.metric:
        if label_part in m.label:
            return m.value
    raise AssertionError(f"no metric {label_part!r}: {[m.label for m in at.metric]}")


def copied(block) -> list[str]:
    """The texts of the copy blocks (share link, plain-text summary) in an AppTest block, in page order."""
    return [json.loads(e.proto.json)["text"] for e in block.get("bidi_component")
            if e.proto.component_name == "skbmodel_copy_text"]


def _state(at: AppTest) -> dict:
    st, warnings = sk_state.decode(dict(at.query_params))
    assert not warnings
    return st


def _eval(at: AppTest, **override):
    st = _state(at)
    p = {**sk_state.scenario(st), **override}
    return model.evaluate(p, load_profile(p["cpu"]))


def _check_chart_basics(spec: dict):
    lay = spec["layout"]
    assert lay["title"]["text"]
    assert lay["xaxis"]["title"]["text"]
    caption = [a for a in lay.get("annotations", []) if a.get("name") == "caption"]
    assert caption and "skbmodel" in caption[0]["text"] and "profile" in caption[0]["text"]


# --------------------------------------------------------------------------- URL and sidebar
@pytest.mark.parametrize("slug", sk_state.PAGES)
def test_no_page_draws_a_code_element(slug):
    """The link box's share link and plain-text summary are copy blocks, not ``st.code``: the first
    ``st.code`` on a page makes a new visitor's browser load and run a 1.5 MB syntax highlighter before the
    first chart (docs/benchmarks.md, the first chart of a new visitor)."""
    at = _app({"page": slug})
    at.toggle(key="copy_as_text").set_value(True).run()
    assert not at.exception, at.exception
    assert not at.get("code"), slug
    link, text = copied(at.sidebar)
    assert text.splitlines()[-1] == link and f"page={slug}" in link


def test_first_run_writes_the_short_link_with_the_versions_and_the_page():
    import skbmodel
    at = _app()
    q = dict(at.query_params)
    assert q["v"] == "2" and q["mv"] == skbmodel.__version__ and "pv" in q and "h" in q
    assert q["page"] == "overview"
    assert set(q) == {"v", "mv", "pv", "h", "page"}  # the default view: nothing else differs
    assert _state(at) == sk_state.decode("")[0]
    share = copied(at.sidebar)[0]
    assert "?v=2&" in share and "bulk=" not in share and len(share) <= 120


def test_bad_link_warns_per_parameter_and_clamps():
    at = _app({"v": "1", "bulk": "999", "zero": "nope", "foo": "1", "xdp_batch": "8"})
    text = " ".join(w.value for w in at.warning)
    assert "bulk" in text and "zero" in text and "'foo'" in text
    assert at.slider(key="bulk").value == 256
    assert at.slider(key="xdp_batch").value == 8
    assert at.query_params["bulk"] == "256" and "zero" not in at.query_params  # the default: not in the link
    assert _state(at)["zero"] == "gfp_zero"


def test_link_page_opens_that_page_with_its_controls():
    q = sk_state.encode({**sk_state.defaults(), "page": "veth", "xdp_batch": 8, "zero": "memset"})
    at = _app(dict(parse_qsl(q)))
    assert at.query_params["page"] == "veth"
    assert "veth" in at.title[0].value
    assert at.slider(key="xdp_batch").value == 8
    out = _eval(at)
    assert _metric(at, "Throughput") == _fmt4(float(out['veth.mpps']))


def test_slider_change_updates_url_and_metric():
    at = _app()
    at.slider(key="xdp_batch").set_value(1).run()
    assert at.query_params["xdp_batch"] == "1"
    assert _metric(at, "Throughput") == _fmt4(float(_eval(at)['path.mpps']))


@pytest.mark.parametrize("preset", ["000", "001", "002", "003", "004"])
def test_presets_set_every_control(preset):
    from skbview.app.appstate import preset_state

    at = _app()
    at.button(key=f"preset_{preset}").click().run()
    want = preset_state(preset)
    st = dict(at.session_state["_skb_state"])  # the session's state: B's overrides live on past pages without B
    for which in ("a", "b"):
        got, exp = sk_state.scenario(st, which), sk_state.scenario(want, which)
        for k in sk_state.MODEL_KEYS:
            assert got[k] == pytest.approx(exp[k]) if isinstance(exp[k], float) else got[k] == exp[k], (which, k)
    assert sk_state.b_overrides(st) == sk_state.b_overrides(want)


def test_controls_survive_page_switches():
    at = _app()
    at.slider(key="bulk").set_value(100).run()
    at.radio(key="path").set_value("cpumap").run()
    _open(at, "compare")
    at.selectbox(key="add_difference").set_value("bulk").run()  # "Add a difference…": B's bulk, then its control
    at.slider(key="b_bulk").set_value(3).run()
    assert at.query_params["b_bulk"] == "3"
    _open(at, "slub")
    assert at.slider(key="bulk").value == 100
    assert at.query_params["path"] == "cpumap" and "b_bulk" not in at.query_params  # no B on this page
    _open(at, "compare")
    assert at.query_params["b_bulk"] == "3"  # kept for the pages that show B


def test_control_move_reruns_only_views():
    """Moving a model control reruns the page's live area and the sidebar's link box, nothing else:
    no other control is re-sent, yet the metrics, the chart and the URL follow the new value."""
    at = _app(cls=AppTest)
    _open(at, "slub")
    n_widgets = len(at.slider)
    assert n_widgets >= 10
    at.slider(key="bulk").set_value(100).run()
    assert not at.exception, at.exception
    assert len(at.slider) == 0 and len(at.selectbox) == 0 and len(at.radio) == 0  # controls not re-sent
    assert not at.title  # nor the page's static text
    st = _state(at)
    assert st["bulk"] == 100 and at.query_params["bulk"] == "100"
    out = _eval(at)
    assert _metric(at, "Bulk API") == _fmt4(float(out['slub.bulk_cycles']))
    spec = _spec(at, 0)
    cur = [t for t in spec["data"] if str(t.get("name", "")).startswith("current bulk")][0]
    assert _arr(cur["x"])[0] == 100
    assert copied(at.sidebar)[0].endswith(shortlink.shorten(answers.share_query(st)))  # the share link follows
    # the CPU selectbox also sets the clock slider: that one reruns the whole app
    at.run()
    at.selectbox(key="cpu").set_value("xeon-platinum-iavf").run()
    assert len(at.slider) == n_widgets and at.slider(key="ghz").value == load_profile("xeon-platinum-iavf").ghz


def _live_controls(at: AppTest) -> dict:
    """``{control key: (scenario id, whether its payload came with this render)}`` of the live controls drawn."""
    args = [json.loads(e.proto.json) for e in at.get("bidi_component")
            if e.proto.component_name == "skbmodel_live_control"]
    return {a["control"]: (a["sid"], a.get("payload") is not None) for a in args}


def test_a_live_control_gets_its_payload_with_its_first_render_on_each_page():
    """A page switch mounts the live control afresh in the browser: its payload comes with that render (a
    request for it would run and draw the page's live area a second time); a rerun of the same page sends
    none again."""
    at = _app(cls=AppTest)
    _open(at, "slub")
    (first,) = _live_controls(at).values()
    assert first[1]
    at.run()
    assert _live_controls(at) == {k: (first[0], False) for k in _live_controls(at)}
    _open(at, "veth")
    assert all(sent for _, sent in _live_controls(at).values())
    _open(at, "compare")  # a page without a live control
    assert not _live_controls(at)
    _open(at, "slub")
    assert list(_live_controls(at).values()) == [first]


# --------------------------------------------------------------------------- pages
def test_overview_breakdown_and_headline():
    at = _app()
    at.slider(key="xdp_batch").set_value(4).run()
    at.radio(key="path").set_value("veth").run()
    st = _state(at)
    p = sk_state.scenario(st)
    out = _eval(at)
    parts = model.breakdown_ns(p, load_profile(p["cpu"]))
    assert _metric(at, "Cost") == _fmt4(float(out['path.ns_per_packet']))
    assert _metric(at, "Budget used") == _fmt4(float(out['path.budget_pct']))
    spec = _spec(at, 0)
    _check_chart_basics(spec)
    # left, zoomed: the steps the model costs one by one; a 0 says whether the fitted rest holds it
    steps = [k for k in model.COMPONENTS if k != "rest of path"]
    np.testing.assert_allclose(_arr(spec["data"][0]["y"]), [float(parts[k]) for k in steps])
    text = dict(zip(steps, spec["data"][0]["text"]))
    assert text["skb free"] == text["page alloc/recycle"] == "0<br>(in the rest)"  # the veth rest holds them
    assert text["cross-CPU transfer"] == "0<br>(not on<br>this path)"
    # right: the same steps stacked, the fitted rest on top of them, and the total, on an axis of its own
    by_name = {t["name"]: t for t in spec["data"] if t.get("yaxis") == "y2" and t["type"] == "bar"}
    # the rest in the named stages of the path's published profile, stacked from the steps' top, summing to it;
    # what the profile does not name is "rest, unnamed" (hatched, with what the fitted constant holds)
    split = perfprofile.breakdown_stages_ns(p, load_profile(p["cpu"]))
    rest_x = "rest of path<br>(fitted)"
    segs = [t for t in spec["data"] if t.get("yaxis") == "y2" and t["type"] == "bar" and _arr(t["x"])[0] == rest_x]
    assert [t["name"] for t in segs] == [perfprofile.stage_label(s) for s in split["stages"]]
    assert segs[-1]["name"] == "rest, unnamed" and "veth_base_cycles" in segs[-1]["hovertemplate"]
    assert {"XDP program run", "GRO", "veth transmit and ptr_ring"} <= {t["name"] for t in segs}
    ys = [float(_arr(t["y"])[0]) for t in segs]
    assert sum(ys) == pytest.approx(float(parts["rest of path"]), rel=1e-9)
    assert float(_arr(segs[0]["base"])[0]) == pytest.approx(sum(float(parts[k]) for k in steps))
    np.testing.assert_allclose([float(_arr(t["base"])[0]) for t in segs[1:]],
                               sum(float(parts[k]) for k in steps) + np.cumsum(ys)[:-1], rtol=1e-9)
    src = "veth-mlx5-e5-1650v4-5.11-baseline"
    assert all(src in t["hovertemplate"] for t in segs[:-1]) and src in spec["layout"]["meta"]["caption"]
    assert "veth_base_cycles" in spec["layout"]["meta"]["caption"]
    # the page's text on each rest names the same stages by the same labels
    text = "\n".join(m.value for m in at.markdown)
    assert all(perfprofile.describe_stages(x) in text for x in perfprofile.PATHS)
    assert "XDP program run 14 %" in perfprofile.describe_stages("veth")
    assert float(_arr(by_name["total"]["y"])[0]) == pytest.approx(float(out["path.ns_per_packet"]))
    budget = [s for s in spec["layout"]["shapes"] if s["y0"] == s["y1"] and s["yref"] == "y2"]
    assert budget[0]["y0"] == pytest.approx(float(out["budget.ns_per_packet"]))
    # paths chart: one stacked bar per path, components sum to each path's total
    paths = _chart(at, "paths")
    # a stage of a rest is drawn on the paths it is part of only: each bar's segments by its x
    xs = list(_arr(paths["data"][0]["x"]))
    total = np.zeros(len(xs))
    for t in paths["data"]:
        if t["type"] == "bar":
            for x, y in zip(_arr(t["x"]), _arr(t["y"])):
                total[xs.index(x)] += y
    for i, path in enumerate(sk_state.PATHS):
        out = model.evaluate({**p, "path": path}, load_profile(p["cpu"]))
        assert total[i] == pytest.approx(float(out["path.ns_per_packet"]))


def test_slub_page():
    at = _open(_app(), "slub")
    at.slider(key="bulk").set_value(64).run()
    out = _eval(at)
    assert _metric(at, "Bulk API") == _fmt4(float(out['slub.bulk_cycles']))
    spec = _spec(at, 0)
    _check_chart_basics(spec)
    assert list(_arr(spec["data"][0]["x"])) == [64, 64]
    sweep = _eval(at, bulk=np.arange(1, 257))
    np.testing.assert_allclose(_arr(_trace(spec, "one at a time")["y"]), sweep["slub.loop_cycles"])
    np.testing.assert_allclose(_arr(_trace(spec, "bulk API")["y"]), sweep["slub.bulk_cycles"])
    seeds = _trace(spec, "seed 004")
    obs = seed_observations()
    assert sorted(_arr(seeds["y"]).tolist()) == [obs["kfl-03"].value, obs["kfl-01"].value]
    vlines = [s["x0"] for s in spec["layout"]["shapes"] if s["x0"] == s["x1"]]
    assert vlines[:2] == [32, 64]  # per-CPU slab boundaries
    gain = _chart(at, "bulk_gain")
    np.testing.assert_allclose(_arr(_trace(gain, "loop − bulk")["y"]), sweep["slub.bulk_gain_cycles"])


def test_open_chart_tab_is_in_the_link_and_kept_per_page():
    """A page draws only its open chart; the link says which (``chart``), and each page keeps its own tab."""
    at = _app({"page": "slub", "chart": "3"})
    at.run()
    assert _drawn(at) == ["chart_slub_cost_vs_size"]  # the link's tab, and no other chart built
    _chart(at, "bulk_gain")
    assert at.query_params["chart"] == "2" and "&chart=2" in copied(at.sidebar)[0]
    _open(at, "veth")
    assert _drawn(at) == ["chart_veth_mpps_vs_batch"] and "chart" not in at.query_params  # its first: the default
    _open(at, "slub")
    assert _drawn(at) == ["chart_slub_bulk_gain"] and at.query_params["chart"] == "2"
    assert sk_state.decode_strict("page=slub")["chart"] == 1 and sk_state.decode("chart=9")[0]["chart"] == 4


def test_a_typed_path_without_page_opens_the_links_chart_tab():
    """``/slub?chart=3`` typed by hand (no ``page=``): the chart belongs to the page of the path."""
    at = _App(DASHBOARD, default_timeout=APPTEST_TIMEOUT_S)
    at.query_params.update({"chart": "3"})
    at.switch_page("pages/slub.py").run()
    assert not at.exception, at.exception
    assert _drawn(at) == ["chart_slub_cost_vs_size"] and at.query_params["chart"] == "3"
    _open(at, "veth")
    assert _drawn(at) == ["chart_veth_mpps_vs_batch"]  # another page keeps its own first tab


def _drawn(at: AppTest) -> list[str]:
    return [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")]


def test_slub_page_shows_cost_against_object_size():
    at = _open(_app(), "slub")
    at.number_input(key="obj_bytes").set_value(4096).run()
    assert _metric(at, "Objects per slab") == "8"  # kmalloc-4k: an order-3 slab of 8
    spec = _chart(at, "cost_vs_size")
    _check_chart_basics(spec)
    assert "object size" in spec["layout"]["title"]["text"]
    assert list(_arr(spec["data"][0]["x"])) == [4096, 4096]  # the current size
    sizes = _arr(_trace(spec, "one at a time")["x"])
    assert sizes[0] == 8 and sizes[-1] == 1 << 20 and np.all(sizes % 8 == 0)
    sweep = _eval(at, obj_bytes=sizes)
    np.testing.assert_allclose(_arr(_trace(spec, "one at a time")["y"]), sweep["slub.loop_cycles"])
    np.testing.assert_allclose(_arr(_trace(spec, "bulk API")["y"]), sweep["slub.bulk_cycles"])
    assert sum("fillpattern" in t for t in spec["data"]) == 2  # a 90 % band per curve
    assert [s["x0"] for s in spec["layout"]["shapes"] if s["x0"] == s["x1"]] == [8192]  # the page allocator above


def test_zeroing_page():
    at = _open(_app(), "zeroing")
    at.slider(key="zero_bytes").set_value(512).run()
    out = _eval(at)
    assert _metric(at, "memset (ns)") == _fmt4(float(out['zero.memset_ns']))
    assert _metric(at, "Measurable?") == noise.VERDICT_SHORT[noise.VERDICT_SURE]  # 512 B: ~11 ns, interval above 0
    spec = _spec(at, 0)
    _check_chart_basics(spec)
    sweep = _eval(at, zero_bytes=np.arange(8, 1025))
    np.testing.assert_allclose(_arr(_trace(spec, "rep stos")["y"]), sweep["zero.memset_cycles"])
    assert len(_arr(_trace(spec, "seed 002")["y"])) == 6
    delta = _chart(at, "delta_vs_noise")
    seed = _trace(delta, "seed 002 delta")
    assert _arr(seed["y"])[0] == pytest.approx(1.66)
    band = _trace(delta, "noise floor")
    assert _arr(band["y"])[0] == pytest.approx(-2.0)


def test_veth_page():
    at = _open(_app(), "veth")
    at.slider(key="xdp_batch").set_value(8).run()
    at.radio(key="zero").set_value("memset").run()
    out = _eval(at)
    assert _metric(at, "Throughput") == _fmt4(float(out['veth.mpps']))
    spec = _spec(at, 0)
    _check_chart_basics(spec)
    assert _arr(spec["data"][0]["y"])[0] == pytest.approx(float(out["veth.mpps"]))
    sweep = _eval(at, xdp_batch=np.arange(1, 65), zero="gfp_zero")
    np.testing.assert_allclose(_arr(_trace(spec, "__GFP_ZERO", exact=True)["y"]), sweep["veth.mpps"])
    seeds = [t for t in spec["data"] if (t.get("name") or "").startswith("seed 002")]
    assert sum(len(_arr(t["y"])) for t in seeds) == 6
    heat = _chart(at, "batch_heatmap")
    z = _arr(heat["data"][0]["z"])
    assert z.shape == (128, 64)


def test_cpumap_page_with_preset_003_matches_seed():
    at = _app()
    at.button(key="preset_003").click().run()
    _open(at, "cpumap")
    out = _eval(at)
    obs = seed_observations()
    assert float(_metric(at, "Source CPU")) == pytest.approx(obs["cpm-06"].value, rel=0.03)
    assert float(_metric(at, "Destination CPU")) == pytest.approx(obs["cpm-08"].value, rel=0.03)
    spec = _spec(at, 0)
    _check_chart_basics(spec)
    sweep = _eval(at, pp_recycle=np.linspace(0, 1, 101))
    np.testing.assert_allclose(_arr(_trace(spec, "source CPU rx, same L3")["y"]), sweep["cpumap.src_mpps"])
    np.testing.assert_allclose(_arr(_trace(spec, "drops")["y"]), sweep["cpumap.drop_mpps"])
    assert _arr(_trace(spec, "XDP_PASS on one CPU")["y"])[0] == pytest.approx(float(out["xdp_pass.mpps"]))
    assert len(_arr(_trace(spec, "seed 003 (")["y"])) == 6
    at.radio(key="place").set_value("other_socket").run()
    bars = _chart(at, "placement")
    totals = sum(_arr(t["y"]) for t in bars["data"] if t["type"] == "bar")
    assert len(totals) == 2 and totals[1] > totals[0]  # the machine's two levels; another socket costs more


def test_kfree_page():
    at = _open(_app(), "kfree")
    at.slider(key="kfl_bulk").set_value(1).run()
    out = _eval(at)
    assert _metric(at, "Injection rate (Mpps)") == _fmt4(float(out['kfree_skb_list.mpps']))  # the chart's unit
    spec = _spec(at, 0)
    _check_chart_basics(spec)
    seeds = _trace(spec, "seed 000")
    np.testing.assert_allclose(sorted(_arr(seeds["y"])),
                               sorted([seed_observations()[i].value / 1e6 for i in ("kfl-06", "kfl-07")]))
    at.slider(key="drop_batch").set_value(256).run()
    assert list(_arr(_spec(at, 0)["data"][0]["x"])) == [256]
    clones = _chart(at, "clones")
    assert len(_arr(_trace(clones, "no bulk")["y"])) == 51


def test_compare_page_with_preset_002():
    at = _app()
    at.button(key="preset_002").click().run()
    _open(at, "compare")
    st = _state(at)
    assert st["zero"] == "memset" and st["b_zero"] == "gfp_zero"
    a = model.evaluate(sk_state.scenario(st, "a"), load_profile(st["cpu"]))
    b = model.evaluate(sk_state.scenario(st, "b"), sk_state.profile_for(st, "b"))
    d = float(b["path.ns_per_packet"] - a["path.ns_per_packet"])
    assert _metric(at, "Δ B − A") == _fmt4(d, "+")
    lo, hi = uncertainty.delta_interval(sk_state.scenario(st, "a"), sk_state.scenario(st, "b"), load_profile(st["cpu"]),
                                        sk_state.profile_for(st, "b"), "path.ns_per_packet")
    assert _metric(at, "Verdict") == noise.VERDICT_SHORT[noise.verdict(d, st["noise_ns"], lo, hi)]
    df = next(d.value for d in at.dataframe if "output" in d.value.columns)
    assert "veth.ns_per_packet" in set(df["output"])
    assert "slub.bulk_ns" not in set(df["output"])  # the change cannot move it: folded away
    diff = _spec(at, 0)  # the difference chart: A, B, then B − A with its paired interval
    _check_chart_basics(diff)
    assert _arr(diff["data"][2]["x"])[0] == pytest.approx(d)
    spec = _chart(at, "ab_delta")
    _check_chart_basics(spec)
    x = _arr(spec["data"][0]["x"])
    assert x[0] == pytest.approx(d)
    at.button(key="copy_a_to_b").click().run()  # "B = A": every difference removed
    assert not [m for m in at.metric if m.label == "Verdict"]
    assert any("nothing to compare" in i.value for i in at.info)


def test_compare_verdict_is_about_what_changed():
    """50 % recycling across NUMA nodes (a two-node machine) while A shows veth: the verdict is about cpumap,
    which moves, with the constants it rests on; setting A's path on the page follows it."""
    at = _open(_app({"cpu": "xeon-platinum-iavf", "b_pp_recycle": "0.5", "b_place": "other_socket"}), "compare")
    assert any("does not move" in i.value for i in at.info)
    prof = load_profile("xeon-platinum-iavf")  # two NUMA nodes: a cross-node destination exists
    st = _state(at)
    head = answers.of_state(st).differences[0].output
    assert head.startswith("cpumap.")  # the path that moves, not A's veth
    d = float(model.evaluate(sk_state.scenario(st, "b"), prof)[head]
              - model.evaluate(sk_state.scenario(st, "a"), prof)[head])
    assert _metric(at, "Δ B − A") == _fmt4(d, "+")
    assert any("line_other_socket_ns" in w.value.replace("\\", "") and "assumed" in w.value for w in at.warning)
    drivers = next(x.value for x in at.dataframe if "constant" in x.value.columns)  # the headline's, first
    assert len(drivers) and drivers.iloc[0]["source"]  # ranked, each with its source
    at.radio(key="path").set_value("cpumap").run()
    assert not at.exception, at.exception
    assert at.query_params["path"] == "cpumap"
    assert not any("does not move" in i.value for i in at.info)
    st = _state(at)
    d = float(model.evaluate(sk_state.scenario(st, "b"), prof)["path.ns_per_packet"]
              - model.evaluate(sk_state.scenario(st, "a"), prof)["path.ns_per_packet"])  # now A's own path
    assert _metric(at, "Δ B − A") == _fmt4(d, "+")
    table = next(x.value for x in at.dataframe if "output" in x.value.columns)
    runs = table.set_index("output")["runs_needed"]
    assert runs.get("slub.bulk_ns") is None or np.isnan(runs.get("slub.bulk_ns", np.nan))


def test_validation_page():
    at = _open(_app(), "validation")
    rows = validation.validate()
    ev = validation.evidence_counts(rows)
    assert _metric(at, "Predicted, in tolerance") == f"{ev['predicted']['ok']} / {ev['predicted']['rows']}"
    built = ev["reproduced by construction"]
    assert _metric(at, "Reproduced by construction") == f"{built['ok']} / {built['rows']}"
    assert _metric(at, "Restate an input") == str(ev["restates an input"]["rows"])
    # the differences first: their figures, then the seed rows' table with each row's evidence
    d = outofsample.load_report()["differences"]
    assert _metric(at, "Right sign") == f"{d['sign_agreement'] * 100:.0f} %"
    assert _metric(at, "Inside the paired interval") == f"{d['coverage'] * 100:.0f} %"
    # a group short of the goals is said so on the page, by name and figure
    misses = protocols.differences.difference_goal_misses(d)
    warned = [w.value for w in at.warning if "Short of the goals" in w.value]
    assert len(warned) == (1 if misses else 0) and all(m in warned[0] for m in misses), (warned, misses)
    frames = [f.value for f in at.dataframe]
    assert "sign_agreement" in frames[0].columns
    table = next(f for f in frames if "tolerance" in f.columns)
    assert len(table) == len(rows) and set(table["evidence"]) == set(validation.EVIDENCE_KINDS)
    spec = _spec(at, 0)
    _check_chart_basics(spec)
    pts = sum(len(_arr(t["x"])) for t in spec["data"] if t.get("mode") == "markers")
    assert pts == len([r for r in rows if r["measured"] > 0 and r["predicted"] > 0])
    # leave one CPU out: the derived profile's MAPE next to the naive baseline's, as metrics and as bars
    others = [s for s in outofsample.load_report()["summary"] if s["protocol"] == "other CPU"]
    (other,) = [s for s in others if s["subsystem"] == "page_pool"]
    assert _metric(at, "page_pool: MAPE, derived") == f"{other['mape'] * 100:.1f} %"
    assert _metric(at, "page_pool: MAPE, naive baseline") == f"{other['baseline_mape'] * 100:.1f} %"
    summary = next(_spec(at, i) for i in range(len(at.get("plotly_chart")))
                   if "error of predictions no fit saw" in str(_spec(at, i)["layout"].get("title")))
    label = f"page_pool · other CPU ({other['points']})"
    naive, model_mape = _trace(summary, "naive baseline MAPE"), _trace(summary, "MAPE", exact=True)
    assert _arr(naive["x"])[list(naive["y"]).index(label)] == pytest.approx(other["baseline_mape"] * 100)
    assert _arr(model_mape["x"])[list(model_mape["y"]).index(label)] == pytest.approx(other["mape"] * 100)
    with_naive = [s for s in outofsample.load_report()["summary"] if "baseline_mape" in s]
    assert sum(x is not None and not np.isnan(x) for x in _arr(naive["x"])) == len(with_naive)


# --------------------------------------------------------------------------- calibrate
def test_calibrate_two_kernels_choose_a_run_clock_inferred_and_stderr_shown():
    """A notebook with two kernels is not refused: the page lists the runs, the clock field shows the
    clock inferred from the chosen run's cycles/ns pairs, and the fit reports each constant's error."""
    at = _app()
    at.switch_page("pages/calibrate.py").run()  # not a model page: no ``page`` in the link
    assert not at.exception, at.exception
    text = (Path(__file__).with_name("data") / "page_pool_two_kernels.org").read_text()
    at.text_area(key="cal_text").input(text).run()
    assert not at.exception, at.exception
    pick = [s for s in at.selectbox if (s.key or "").startswith("cal_run_")]
    assert len(pick) == 1
    # the runs measure the same tests: no "all runs together", and the page says how to choose
    assert list(pick[0].options) == [
        'run 1: lines 7-20 "baseline 6.15.0"', 'run 2: lines 24-37 "patched 6.15.0-pp-refill+"']
    assert any("2 runs that measure the same tests" in i.body and "Choose the run" in i.body for i in at.info)
    pick[0].select_index(1).run()
    assert not at.exception, at.exception
    assert at.number_input(key="cal_ghz").value == pytest.approx(2.9941, rel=5e-3)
    assert any(c.body.startswith("inferred from 8 cycles/ns pairs") for c in at.caption)
    assert sorted(at.multiselect(key="cal_free").value) == ["page_slow_cycles", "pp_fast_cycles", "pp_ring_cycles"]
    at.button(key="cal_fit").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.body for e in at.error]
    table = next(d.value for d in at.dataframe if "constant" in d.value.columns).set_index("constant")
    assert table.loc["pp_fast_cycles", "value"] == pytest.approx(24.0)  # the patched kernel's fast path
    assert table.loc["ghz", "value"] == pytest.approx(2.9941, rel=5e-3)
    assert "inferred from 8 cycles/ns pairs" in table.loc["ghz", "source"]
    err = table.loc[["pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles"], "stderr"]
    assert (err > 0).all() and np.isfinite(err).all()


def test_calibrate_starts_from_the_cpu_the_input_names():
    """cpuinfo pasted with the measurements moves "Start from" to that CPU's profile and says so; a CPU
    typed into "Your CPU" wins; an unknown one leaves the default with one line."""
    at = _app()
    at.switch_page("pages/calibrate.py").run()
    assert not at.exception, at.exception
    lines = ("model name\t: AMD EPYC 7763 64-Core Processor\n"
             "[  1.3] time_bench: Type:no-softirq-page_pool01 Per elem: 14 cycles(tsc) 5.833 ns (step:0)\n")
    at.text_area(key="cal_text").input(lines).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="cal_base").value == "derived-zen3-milan"
    captions = [c.body.replace("\\", "") for c in at.caption]  # md_escape: a backslash before - ( ) :
    assert any(c.startswith("CPU 'AMD EPYC 7763 64-Core Processor' is Zen 3") for c in captions)
    at.text_input(key="cal_cpu").input("Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz").run()
    assert at.selectbox(key="cal_base").value == "xeon-gold-6140"
    at.text_input(key="cal_cpu").input("Apple M2").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="cal_base").value == "e5-1650v4"
    assert any(c.body.replace("\\", "").startswith("unknown CPU 'Apple M2'") for c in at.caption)


def test_calibrate_mail_archive_repeats_and_measured_noise():
    """Real archive text: the three-kernel notebook lists three runs; a quoted-printable mail says in one
    line what was repaired; repeats show in the run list with their spread, and a fit of one run stores
    that spread as the profile's noise, shown on the page and used as the verdicts' noise floor."""
    data = Path(__file__).with_name("data") / "mail"
    at = _app()
    at.switch_page("pages/calibrate.py").run()
    at.text_area(key="cal_text").input((data / "page_pool07_bench_DMA_fix.org").read_text()).run()
    assert not at.exception, at.exception
    pick = next(s for s in at.selectbox if (s.key or "").startswith("cal_run_"))
    assert [o.split(" \"")[0] for o in pick.options] == ["run 1: lines 31-61", "run 2: lines 63-95",
                                                         "run 3: lines 135-170"]
    at.text_area(key="cal_text").input((data / "qp_pipe_quoted_page_pool_stats.eml").read_text()).run()
    assert not at.exception, at.exception
    from skbview.safe_text import md_escape  # user text is shown escaped
    assert [i.body for i in at.info if "Repaired" in i.body] == ["Repaired mail-archive text: " + md_escape(
        "pasted text: quoted-printable undone (25 soft line breaks joined, 6 =XX codes decoded); quote prefixes "
        "'|' stripped")]
    at.text_area(key="cal_text").input((data / "repeats_three_setups_page_pool_arm64.txt").read_text()).run()
    assert not at.exception, at.exception
    pick = next(s for s in at.selectbox if (s.key or "").startswith("cal_run_"))
    assert pick.options[4] == 'run 5: lines 108-163 "2. raw performance data after this patchset" — ' \
                              '7 tests × 3 repeats, spread 0.804 ns'
    pick.select_index(4).run()
    assert not at.exception, at.exception
    at.multiselect(key="cal_free").set_value(["pp_fast_cycles"]).run()
    at.button(key="cal_fit").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.body for e in at.error]
    noise = [m.body for m in at.markdown if m.body.startswith("**Measured noise:**")]
    assert noise == ["**Measured noise:** " + md_escape("0.804 ns: pooled standard deviation of 21 repeated values "
                                                        "of 7 tests (pasted text, run 5)")
                     + ". Stored in the profile (`noise_floor_ns`); the A/B verdicts use 0.8 ns as their noise floor "
                       "while it is in use."]
    assert at.session_state["noise_ns"] == 0.8
    residuals = next(d.value for d in at.dataframe if "z_after" in d.value.columns)
    fast = residuals[residuals.test == "tasklet_page_pool01_fast_path"]
    assert fast[["line", "measured"]].values.tolist() == [[140, 2.0]]  # the line of the minimum, 27.484 ns


# --------------------------------------------------------------------------- chart module
@pytest.mark.parametrize("page", sk_state.PAGES)
def test_figures_are_valid_plotly_with_units(page):
    from skbview import charts
    from skbview.app.appstate import preset_state

    for st in (sk_state.defaults(), preset_state("003")):
        figs = charts.figures_for_page(page, Question.of_state(st))
        assert len(figs) >= 2
        for name, fig in figs:
            go.Figure(fig.to_dict())  # full validation (builders skip it for speed)
            d = fig.to_plotly_json()
            numeric_x = not isinstance(np.asarray(d["data"][0].get("x", [0])).flat[0], str)
            numeric_y = not isinstance(np.asarray(d["data"][0].get("y", [0])).flat[0], str)
            # every numeric axis names its unit in parentheses; category axes name what they list
            for numeric, axis in ((numeric_x, fig.layout.xaxis), (numeric_y, fig.layout.yaxis)):
                assert axis.title.text, (page, name)
                if numeric:
                    assert "(" in axis.title.text, (page, name, axis.title.text)


# --------------------------------------------------------------------------- links made with other versions
def test_old_profile_version_link_shows_its_numbers_a_notice_and_use_current(old_e5_version):
    from skbmodel.machine import profile as P
    ver, old = old_e5_version
    cur = P.profile_version("e5-1650v4")
    q = dict(parse_qsl(answers.share_query({**sk_state.defaults(), "page": "overview", "pv": ver})))
    at = _app(q)
    info = " ".join(i.value for i in at.info).replace("\\", "")
    assert f"This link was made with profile e5-1650v4 version {ver} (archived); current version {cur} gives " \
           f"Throughput (Mpps) = " in info, info
    want_old = float(model.evaluate({}, old)["path.mpps"])
    want_cur = float(model.evaluate({}, load_profile("e5-1650v4"))["path.mpps"])
    assert f"= {want_cur:.4g} instead of {want_old:.4g}" in info
    assert _metric(at, "Throughput") == _fmt4(want_old)  # the page shows the link's numbers
    assert at.query_params["pv"] == ver and at.query_params["mv"] == q["mv"] and at.query_params["h"] == q["h"]
    assert not at.warning
    at.button(key="use_current_versions").click().run()
    assert not at.exception
    assert not at.info and at.query_params["pv"] == cur
    assert _metric(at, "Throughput") == _fmt4(want_cur)


def test_old_model_version_link_notice_until_the_scenario_moves():
    import skbmodel
    q = dict(parse_qsl(sk_state.encode({**sk_state.defaults(), "page": "slub", "bulk": 32})))
    q["mv"], q["h"] = "0.0.1", "150"
    at = _app(q)
    info = " ".join(i.value for i in at.info).replace("\\", "")
    now = float(model.evaluate({"bulk": 32.0}, load_profile("e5-1650v4"))["slub.loop_cycles"])
    change = f"{(now / 150 - 1) * 100:+.1f} %"
    assert (f"This link was made with model 0.0.1; this is model {skbmodel.__version__}: One at a time "
            f"(cycles/object) is {now:.4g} now, 150 when the link was made ({change}).") in info, info
    assert at.query_params["mv"] == "0.0.1" and at.query_params["h"] == "150"  # a reload shows it again
    at.slider(key="bulk").set_value(40).run()
    assert not at.exception
    assert not at.info
    assert at.query_params["mv"] == skbmodel.__version__ and at.query_params["h"] != "150"


def test_link_without_versions_gets_a_quiet_caption_and_the_url_gains_them():
    import skbmodel
    at = _app({"bulk": "20", "page": "slub"})
    assert not at.info and not at.warning
    caps = " ".join(c.value for c in at.caption)
    assert "made before versions were recorded" in caps
    assert at.query_params["mv"] == skbmodel.__version__ and "pv" in at.query_params and "h" in at.query_params


def test_unknown_profile_version_warns_and_keeps_the_rest():
    at = _app({"v": "1", "pv": "deadbeef", "bulk": "32", "page": "slub"})
    text = " ".join(w.value for w in at.warning)
    assert "pv" in text and "deadbeef" in text and "unknown" in text
    assert at.slider(key="bulk").value == 32


@pytest.mark.parametrize("slug", ["overview", "slub", "zeroing", "veth", "cpumap", "kfree", "compare"])
def test_the_headline_a_link_records_is_the_page_s_first_metric(slug):
    """skbmodel.links.versions.HEADLINES (the h of a share link) names the output of each page's first metric."""
    from skbmodel.links import versions as V
    at = _app({"page": slug, "bulk": "24", "zero": "memset"})
    st = _state(at)
    assert st["page"] == slug
    out, _label = V.HEADLINES[slug]
    v = float(_eval(at)[out])
    first = at.metric[0].value
    assert first == _fmt4(v), (slug, out, first)
    assert float(at.query_params["h"]) == float(format(v, ".6g"))


def test_grid_page_answers_the_free_bulk_question_in_one_view():
    """VETH_XDP_BATCH × zeroing × skb free: one page, a table and two charts, each cell with its
    interval, paired difference to A and verdict; the link carries the grid."""
    from skbmodel import grid

    at = _open(_app(), "grid")
    df = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    assert len(df) == 18
    cell = df[(df["xdp_batch"] == "16") & (df["zero"] == "__GFP_ZERO") & (df["d_free"] == "kmem_cache_free_bulk")]
    assert float(cell["delta"].iloc[0]) == pytest.approx(-6.16, abs=0.01)
    assert cell["verdict"].iloc[0] == noise.VERDICT_SURE
    assert at.query_params["g1"] == "xdp_batch" and at.query_params["g3"] == "d_free"
    _check_chart_basics(_spec(at, 0))
    # what the lowest difference rests on: the SLUB constants of the bulk free, each with kind and source
    why = next(d.value for d in at.dataframe if "constant" in d.value.columns)
    assert {"kind", "source", "value_share", "variance_share"} <= set(why.columns)
    assert "slub_bulk_obj_pair_cycles" in set(why["constant"])
    at.selectbox(key="g3").set_value("none").run()
    assert not at.exception, at.exception
    assert at.query_params["g3"] == "none"
    df = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    assert len(df) == len(grid.AXES["xdp_batch"]) * 2


def test_calibrate_before_and_after_runs_become_a_and_b_on_compare():
    """Fit the baseline kernel's run as A and the patched one's as B, open Compare: each measurement both
    runs made shows the measured difference next to the model's."""
    at = _app()
    at.switch_page("pages/calibrate.py").run()
    text = (Path(__file__).with_name("data") / "page_pool_two_kernels.org").read_text()
    at.text_area(key="cal_text").input(text).run()
    pick = next(s for s in at.selectbox if (s.key or "").startswith("cal_run_"))
    pick.select_index(0).run()
    at.button(key="cal_fit").click().run()
    pick = next(s for s in at.selectbox if (s.key or "").startswith("cal_run_"))
    pick.select_index(1).run()
    at.button(key="cal_fit_b").click().run()
    assert not at.exception, at.exception
    _open(at, "compare")  # the link of a page with B carries both fits
    st = _state(at)
    assert st["prof"] and st["b_prof"] and st["prof"] != st["b_prof"]
    runs = next(d.value for d in at.dataframe if "measured_delta" in d.value.columns)
    assert len(runs) >= 3
    fast = runs[runs["test"].str.contains("fast", case=False)].iloc[0]
    assert fast["measured_delta"] != 0
    assert fast["model_delta"] == pytest.approx(fast["measured_delta"], rel=0.05)


def test_a_patch_link_names_its_patch_until_the_scenario_moves():
    """A Compare link made from a patch (``patch``/``phash``) says which mail its A and B stand for, and its
    share link and URL keep saying it; once A moves, the view is no longer the patch's and both drop it."""
    subject = "[PATCH net-next 2/2] net: kfree_skb_list use kmem_cache_free_bulk"
    at = _app({"page": "compare", "path": "kfree_skb_list", "kfl_bulk": "1", "b_kfl_bulk": "16",
               "patch": subject, "phash": "df607ab40919"})
    named = [i.value for i in at.info]
    assert any(md_escape(subject) in v and "df607ab40919" in v for v in named), named  # user text: escaped
    assert at.query_params["patch"] == subject and at.query_params["phash"] == "df607ab40919"
    at.slider(key="bulk").set_value(32).run()
    assert not any(md_escape(subject) in i.value for i in at.info)
    assert "patch" not in at.query_params and "phash" not in at.query_params


def test_compare_says_one_run_as_a_reviewer_would_quote_it():
    """A difference far above the noise needs one run per variant: the page's verdict line says "1 run", the
    answer's own words, not "1 runs"."""
    at = _open(_app({"path": "design", "b_d_rx": "pp_ring"}), "compare")
    assert not at.exception, at.exception
    lines = " ".join(m.value for m in at.markdown)
    assert "1 run per variant" in lines and "1 runs" not in lines
