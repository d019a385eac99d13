"""Exports of the real dashboard charts with the real kaleido + system Chromium.

PNG: magic bytes and the requested pixel size (2x); SVG: parses as XML and carries the title and
caption; HTML report: opens in headless Chromium offline with every chart drawn; PNG zip; file names;
``python -m skbmodel export``; the download buttons in a Streamlit app (AppTest).
"""
from __future__ import annotations

import io
import re
import struct
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

import skbmodel
from skbmodel.links import state as sk_state
from skbmodel.question import Question
from skbview import charts, exporter, report
from tests.browser_util import REPO_ROOT
from tests.limits import APPTEST_TIMEOUT_S
from tests.cli_util import skbmodel_cli

pytestmark = pytest.mark.export

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SVG_NS = "{http://www.w3.org/2000/svg}"
QUERY = "v=1&page=kfree&bulk=32&zero=memset&kfl_bulk=8&drop_batch=128&clone_frac=0.25&b_bulk=4&b_place=other_socket"
STATE, _W = sk_state.decode(QUERY)
assert not _W, _W
PAGES = list(sk_state.PAGES)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC, data[:8]
    length, ctype = struct.unpack(">I4s", data[8:16])
    assert ctype == b"IHDR" and length == 13
    return struct.unpack(">II", data[16:24])


def _svg_text(data: bytes) -> str:
    root = ET.fromstring(data)
    assert root.tag == SVG_NS + "svg"
    return " ".join("".join(el.itertext()) for el in root.iter(SVG_NS + "text"))


def _caption(fig) -> str:
    caps = [a.text for a in fig.layout.annotations if a.name == "caption"]
    assert len(caps) == 1, [a.name for a in fig.layout.annotations]
    return caps[0]


@pytest.fixture(scope="module")
def page_figures():
    return {page: charts.figures_for_page(page, Question.of_state({**STATE, "page": page})) for page in PAGES}


# ---------------------------------------------------------------- figures stand alone
@pytest.mark.parametrize("page", PAGES)
def test_every_chart_stands_alone(page, page_figures):
    figs = page_figures[page]
    assert figs, page
    for name, fig in figs:
        assert re.fullmatch(r"[a-z0-9_]+", name), name
        assert fig.layout.title.text, (page, name)
        assert fig.layout.xaxis.title.text, (page, name)
        # y axis titles carry a unit "(...)"; the A/B delta bars and difference charts label the categories
        # on y instead
        if (page, name) not in {("compare", "ab_delta"), ("compare", "ab_difference"), ("design", "difference")}:
            assert re.search(r"\(.+\)", fig.layout.yaxis.title.text or ""), (page, name, fig.layout.yaxis.title.text)
        # a legend whenever more than one series is drawn (a single series is named by title/axes)
        series = [t for t in fig.data if t.name and t.showlegend is not False]
        assert series, (page, name)
        if len(series) > 1:
            assert fig.layout.showlegend is not False, (page, name)
        cap = _caption(fig)
        assert f"skbmodel {skbmodel.__version__}" in cap, cap
        # explicit template: kaleido and the browser (theme=None) draw the same style
        assert fig.layout.template.layout.font.family, (page, name)


# ---------------------------------------------------------------- PNG / SVG
@pytest.mark.parametrize("page", PAGES)
def test_png_is_png_at_2x_the_export_size(page, page_figures):
    for name, fig in page_figures[page]:
        w, h = report.export_size(fig)
        data = report.figure_png(fig)
        assert _png_size(data) == (2 * w, 2 * h), (page, name)


@pytest.mark.parametrize("page", PAGES)
def test_svg_parses_and_carries_title_and_caption(page, page_figures):
    for name, fig in page_figures[page]:
        data = report.figure_svg(fig)
        root = ET.fromstring(data)
        w, h = report.export_size(fig)
        assert float(root.get("width")) == w and float(root.get("height")) == h
        text = _svg_text(data)
        # plotly may break long titles/captions into several <text>/<tspan>: compare word by word
        for word in re.findall(r"[A-Za-z]{4,}", fig.layout.title.text)[:4]:
            assert word in text, (page, name, word)
        assert f"skbmodel {skbmodel.__version__}" in text, (page, name)


def test_png_requested_size_and_scale():
    fig = charts.figures_for_page("slub", Question.of_state(STATE))[0][1]
    assert _png_size(exporter.figure_to_png(fig, width=640, height=400, scale=2)) == (1280, 800)
    assert _png_size(report.figure_png(fig, scale=1)) == report.export_size(fig)


# ---------------------------------------------------------------- names
def test_file_names_carry_page_chart_and_key_parameters():
    stem = report.file_stem("kfree", "clones", STATE)
    assert re.fullmatch(r"[A-Za-z0-9.+_-]+", stem), stem
    assert stem.startswith("kfree_clones_cpu-e5-1650v4_")
    for part in ("kfl-bulk-8", "drop-batch-128", "clone-frac-0.25"):
        assert part in stem, stem
    other, _ = sk_state.decode(QUERY.replace("b_bulk=4", "b_bulk=5"))
    assert report.file_stem("kfree", "clones", other) != stem  # hash of the full scenario
    # the same chart of the same scenario is named the same whichever page is open
    assert report.file_stem("kfree", "clones", {**STATE, "page": "slub"}) == stem
    cmp = report.file_stem("compare", "ab_delta", STATE)
    # compare: A and B of (up to 4 of) the parameters that differ
    assert "bulk-32" in cmp and "b-bulk-4" in cmp and "b-zero" not in cmp, cmp  # B is A but for bulk and numa


def test_camera_button_config_is_2x_png_with_the_file_name():
    cfg = report.camera_config("slub", "per_object", STATE)
    opts = cfg["toImageButtonOptions"]
    assert opts["format"] == "png" and opts["scale"] == 2
    assert opts["filename"] == report.file_stem("slub", "per_object", STATE)
    assert cfg["displaylogo"] is False


# ---------------------------------------------------------------- PNG zip
def test_png_zip_has_every_chart(page_figures):
    data = report.build_png_zip(STATE)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        expected = {report.file_stem(p, n, STATE) + ".png" for p in PAGES for n, _ in page_figures[p]}
        assert set(names) == expected | {"share-link.txt"}
        for n in expected:
            assert zf.read(n)[:8] == PNG_MAGIC, n
        assert zf.read("share-link.txt").decode().strip() == report.share_link(STATE)


# ---------------------------------------------------------------- HTML report
@pytest.fixture(scope="module")
def html_report(tmp_path_factory):
    text = report.build_html_report(STATE, base_url="http://dash.example:8501/slub?x=1",
                                    warnings=["bulk: '999' outside ..., clamped to 256"])
    path = tmp_path_factory.mktemp("report") / report.report_file_name(STATE)
    path.write_text(text, encoding="utf-8")
    return text, path


def test_html_report_is_self_contained_and_complete(html_report, page_figures):
    text, _ = html_report
    # plotly.js inlined exactly once, nothing fetched from the network
    assert text.count("plotly.js v") >= 1
    assert len(re.findall(r"<script[^>]*\bsrc=", text)) == 0
    assert text.count("<script type=\"text/javascript\">/**\n* plotly.js") == 1
    outside_js = re.sub(r"<script type=\"text/javascript\">/\*\*\n\* plotly\.js.*?</script>", "", text, flags=re.S)
    assert "cdn.plot.ly" not in outside_js and "https://" not in outside_js
    link = report.share_link(STATE, "http://dash.example:8501/slub?x=1")
    assert link.startswith("http://dash.example:8501/slub?v=2&")
    assert sk_state.decode(link.split("?", 1)[1]) == (sk_state.without_b(STATE), [])  # kfree shows no B: its link none
    assert link.replace("&", "&amp;") in text
    for p in sk_state.MODEL_PARAMS:
        assert f"<code>{p.key}</code>" in text
    n_ok = sum(r["ok"] for r in skbmodel.evidence.validation.validate())
    assert re.search(rf"{n_ok} of \d+ covered seed rows within tolerance", text)
    assert "clamped to 256" in text
    n_charts = sum(len(v) for v in page_figures.values())
    assert text.count('class=chart data-page=') == n_charts


@pytest.mark.browser
def test_html_report_opens_in_chromium_with_all_charts_drawn(html_report, page_figures):
    from playwright.sync_api import sync_playwright

    from tests.browser_util import launch_chromium

    _, path = html_report
    n_charts = sum(len(v) for v in page_figures.values())
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            requests = []
            page.on("request", lambda r: requests.append(r.url))
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            page.wait_for_function(
                """(n) => { const g = document.querySelectorAll('.js-plotly-plot');
                            return g.length === n && Array.from(g).every(
                              d => d._fullData && d._fullData.length > 0 && d.querySelector('.main-svg')); }""",
                arg=n_charts, timeout=60_000)
            drawn = page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(d => ({
                id: d.id, traces: d._fullData.length,
                title: (d.querySelector('.gtitle') || {}).textContent || '',
                marks: d.querySelectorAll('.trace, .point, path.js-line, .bars path, .hm image').length }))""")
            assert len(drawn) == n_charts
            for d in drawn:
                assert d["traces"] > 0 and d["title"] and d["marks"] > 0, d
            ids = {f"{pg}-{n}" for pg in PAGES for n, _ in page_figures[pg]}
            assert {d["id"] for d in drawn} == ids
            assert not errors, errors
            assert all(u.startswith(("file:", "data:", "blob:", "about:")) for u in requests), requests
            page.screenshot(path=str(path.with_suffix(".png")), full_page=False)
        finally:
            browser.close()


# ---------------------------------------------------------------- CLI
def _cli(*args, cwd=REPO_ROOT):
    return skbmodel_cli("export", *args, cwd=cwd)


def test_cli_export_png_svg_html(tmp_path):
    r = _cli(QUERY, "--page", "slub", "--format", "png", "--out", str(tmp_path / "png"))
    assert r.returncode == 0, r.stderr
    paths = [Path(x) for x in r.stdout.split()]
    assert {p.name for p in paths} == {report.file_stem("slub", n, STATE) + ".png"
                                       for n, _ in charts.figures_for_page("slub", Question.of_state(STATE))}
    for p in paths:
        assert p.read_bytes()[:8] == PNG_MAGIC
    r = _cli("http://host:8501/?" + QUERY, "--page", "zeroing", "--format", "svg", "--out", str(tmp_path / "svg"))
    assert r.returncode == 0, r.stderr
    for x in r.stdout.split():
        ET.parse(x)
    r = _cli(QUERY, "--page", "all", "--format", "html", "--out", str(tmp_path / "html"))
    assert r.returncode == 0, r.stderr
    (html_path,) = r.stdout.split()
    text = Path(html_path).read_text()
    q = Question.of_state(STATE)
    assert text.count("class=chart data-page=") == sum(len(charts.figures_for_page(p, q)) for p in PAGES)


@pytest.mark.parametrize("query,page,key", [
    ("bulk=999", "all", "bulk"), ("bulk=abc", "all", "bulk"), ("nosuch=1", "all", "nosuch"),
    ("v=7", "all", "v"), ("bulk=3", "nope", "--page"),
])
def test_cli_export_bad_input_is_one_line_exit_2(tmp_path, query, page, key):
    r = _cli(query, "--page", page, "--out", str(tmp_path))
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ") and key in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------- download buttons (AppTest)
_APP = """
import streamlit as st
from skbmodel.links import state as sk_state
from skbmodel.question import Question
from skbview import charts
from skbview.app import downloads
state, warnings = sk_state.decode(dict(st.query_params))
for name, fig in charts.figures_for_page(state["page"], Question.of_state(state)):
    st.plotly_chart(fig, theme=None, key="chart_" + name, config=downloads.camera_config(state["page"], name, state))
    downloads.download_buttons(fig, name, state)
with st.sidebar:
    downloads.report_buttons(state, warnings)
"""


def test_download_buttons_in_app():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(_APP, default_timeout=APPTEST_TIMEOUT_S)
    for k, v in sk_state.decode(QUERY)[0].items():
        at.query_params[k] = str(v)
    at.query_params["page"] = "slub"
    at.run()
    assert not at.exception, at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    n = len(charts.figures_for_page("slub", Question.of_state(STATE)))
    assert labels.count("PNG (2×)") == n and labels.count("SVG") == n
    assert "Download report (HTML)" in labels and "Download all charts (PNG zip)" in labels
    specs = at.get("plotly_chart")
    assert len(specs) == n
    import json
    for (name, _), el in zip(charts.figures_for_page("slub", Question.of_state(STATE)), specs):
        cfg = json.loads(el.proto.config) if el.proto.config else {}
        assert cfg.get("toImageButtonOptions", {}).get("scale") == 2
        assert cfg["toImageButtonOptions"]["filename"] == report.file_stem("slub", name, {**STATE, "page": "slub"})


def test_back_to_back_exports_never_mix_figures(page_figures):
    """The exporter returns before kaleido's tab reload finishes (deferred reload): each export must
    still show only its own figure."""
    figs = [fig for page in PAGES for _, fig in page_figures[page]]
    # every figure once, each straight after another one: the previous export's figure is the one to miss
    for i, fig in enumerate(figs):
        text = _svg_text(report.figure_svg(fig))
        own = fig.layout.title.text
        words = set(re.findall(r"[A-Za-z_]{5,}", own))
        assert words and all(w in text for w in list(words)[:3]), (i, own)
        prev = figs[i - 1].layout.title.text
        if i and prev != own:
            assert prev not in text, (i, prev)


@pytest.mark.browser
def test_chart_text_fits_inside_each_chart(html_report):
    """Titles, captions and annotations of every chart lie inside the figure, and every legend is whole: a
    legend taller than the plot area is cut to it (Plotly's ``_effHeight`` below its ``_height``), so a
    printed chart would name fewer lines than it draws (nothing clipped in a report)."""
    from playwright.sync_api import sync_playwright

    from tests.browser_util import launch_chromium

    _, path = html_report
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.goto(path.as_uri())
            page.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
                                   ".every(d => d._fullData && d.querySelector('.main-svg'))", timeout=60_000)
            over = page.evaluate("""() => {
                const out = [];
                for (const gd of document.querySelectorAll('.js-plotly-plot')) {
                    const box = gd.querySelector('.main-svg').getBoundingClientRect();
                    for (const t of gd.querySelectorAll('.infolayer .annotation-text, .infolayer .gtitle')) {
                        const r = t.getBoundingClientRect();
                        if (r.right > box.right + 1 || r.left < box.left - 1)
                            out.push(gd.id + ': ' + t.textContent.slice(0, 60));
                    }
                    const leg = gd._fullLayout.legend;
                    if (leg && leg._effHeight < leg._height - 1)
                        out.push(gd.id + ': legend cut to ' + leg._effHeight + ' of ' + leg._height + ' px');
                }
                return out; }""")
            assert over == [], over
        finally:
            browser.close()


def test_a_parameter_added_later_keeps_the_file_names_made_before():
    """The default scenario's files are named ..._8eeeac (the profile's version is part of the name: the
    recalibration of 0.3.0 renamed them from ..._3422ef); at its default a later parameter (the object size)
    leaves the name as it was, set (for A or B) it gives another."""
    from skbmodel.links import state as sk_state
    from skbview import report
    base = report.state_hash(sk_state.defaults())
    assert base == "8eeeac" == report.state_hash({**sk_state.defaults(), "obj_bytes": 256})
    assert len({base, report.state_hash({**sk_state.defaults(), "obj_bytes": 512}),
                report.state_hash({**sk_state.defaults(), "b_obj_bytes": 512})}) == 3
