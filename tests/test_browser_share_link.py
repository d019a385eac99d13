"""Share links in a real browser (headless system Chromium + the real dashboard).

* A link with non-default values on a non-default page opens that page, the controls show the
  link's values, and the chart's numbers equal ``python -m skbmodel eval`` for the same query.
* A/B: the ``b_`` keys restore scenario B's controls on the compare page.
* A link with garbage shows one warning naming every ignored/clamped parameter and a working page.
* The URL follows every change and the sidebar's share link reproduces the view.
"""
from __future__ import annotations

import json
import math
from urllib.parse import parse_qsl, urlsplit

import pytest

from skbmodel import answers
from skbmodel.links import shortlink, state as sk_state
from skbview.app import ui
from tests.browser_util import (WAIT_MS, app_and_browser, eventually, focus_slider, REPO_ROOT, slider_value,
                                wait_for_app, wait_for_metrics, wait_for_plotly)
from tests.cli_util import skbmodel_cli

pytestmark = pytest.mark.browser

QUERY = "v=1&page=kfree&bulk=32&kfl_bulk=8&drop_batch=128&clone_frac=0.25&zero=memset&b_bulk=4"
ALERT = '[data-testid="stAlert"], [data-testid="stAlertContainer"]'


@pytest.fixture(scope="module")
def app():
    with app_and_browser("dashboard.py") as url_and_browser:
        yield url_and_browser


def _open(app, query: str, path: str = "/"):
    url, browser = app
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(WAIT_MS)  # a limit for a hung run, not a wait (a loaded 2-core machine)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + path + ("?" + query if query else ""))
    wait_for_app(page)
    # a link naming another page switches to it in a second run: wait for that page, not the first one
    want = dict(parse_qsl(query, keep_blank_values=True)).get("page") if query else None
    if want in sk_state.PAGES and want != "overview" and path in ("", "/"):
        page.wait_for_function("(slug) => location.pathname.replace(/\\/+$/, '').endsWith('/' + slug)",
                               arg=want, timeout=WAIT_MS)
    wait_for_app(page)
    wait_for_plotly(page, 0)
    page.locator(".st-key-share_link").wait_for(state="attached", timeout=WAIT_MS)
    wait_for_app(page)
    page._skb_errors = errors  # noqa: SLF001 - test bookkeeping
    return page


def _eval(query: str) -> dict:
    r = skbmodel_cli("eval", query, "--json", cwd=REPO_ROOT)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


_TRACE_Y = """([title, prefix]) => {
    for (const gd of document.querySelectorAll('.js-plotly-plot')) {
        const t = (gd.layout && gd.layout.title && gd.layout.title.text) || '';
        if (!t.includes(title)) continue;
        // the curve itself, not its 90 % band (a trace of its own name in the legend)
        const tr = gd._fullData.find(d => (d.name || '').startsWith(prefix) && !(d.name || '').includes('interval'));
        return tr ? {x: Array.from(tr.x), y: Array.from(tr.y)} : null;
    }
    return null;
}"""


def _url_state(page) -> dict:
    state, warnings = sk_state.decode(urlsplit(page.url).query)
    assert warnings == [], warnings
    return state


def _assert_equal(got, want) -> None:
    assert got == want, (got, want)


def _no_exception(page):
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not page._skb_errors, page._skb_errors  # noqa: SLF001 - the errors the harness collected on the page object


def test_share_link_restores_page_controls_and_chart(app):
    page = _open(app, QUERY)
    try:
        _no_exception(page)

        def on_kfree_with_link_values():
            assert urlsplit(page.url).path.rstrip("/").endswith("/kfree"), page.url
            assert _url_state(page) == sk_state.without_b(sk_state.decode(QUERY)[0])  # kfree shows no B: none of it
            assert page.locator(".js-plotly-plot").count() >= 1
            assert page.evaluate(_TRACE_Y, ["drop_batch", "current"])

        eventually(on_kfree_with_link_values)
        wait_for_app(page)
        assert page.locator(ALERT).count() == 0
        for key, want in (("bulk", 32), ("kfl_bulk", 8), ("drop_batch", 128), ("clone_frac", 0.25)):
            assert slider_value(page, key) == want, key
        assert page.locator(".st-key-zero input[type=radio]:checked").first.evaluate(
            "el => el.closest('label').innerText").startswith("memset")
        # the URL is the short link (v=2) and means the same state as the link
        want = sk_state.without_b(sk_state.decode(QUERY)[0])
        assert _url_state(page) == want
        assert urlsplit(page.url).query.startswith("v=2&")
        # the chart's numbers are the CLI's numbers for the same query
        ref = _eval(QUERY)["outputs"]
        cur = page.evaluate(_TRACE_Y, ["drop_batch", "current"])
        assert cur and cur["x"] == [128]
        assert math.isclose(cur["y"][0], ref["kfree_skb_list.mpps"], rel_tol=1e-9), (cur, ref["kfree_skb_list.mpps"])
        line = page.evaluate(_TRACE_Y, ["drop_batch", "KFREE_SKB_BULK_SIZE 8"])
        # a point of the swept line (its x grid need not contain 128): the same query at that x
        i = min(range(len(line["x"])), key=lambda j: abs(line["x"][j] - 300))
        x = int(line["x"][i])
        ref_x = _eval(QUERY.replace("drop_batch=128", f"drop_batch={x}"))["outputs"]
        assert math.isclose(line["y"][i], ref_x["kfree_skb_list.mpps"], rel_tol=1e-9), (x, line["y"][i])
        metric = page.locator('[data-testid="stMetricValue"]').first.inner_text()
        assert float(metric) == pytest.approx(ref["kfree_skb_list.mpps"], rel=1e-3), metric  # Mpps, as the chart
    finally:
        page.close()


def test_ab_link_restores_scenario_b(app):
    page = _open(app, "v=1&page=compare&bulk=64&b_bulk=4&b_zero=memset&b_drop_batch=256")
    try:
        _no_exception(page)

        def restored():
            assert urlsplit(page.url).path.rstrip("/").endswith("/compare"), page.url
            got = {k: slider_value(page, k) for k in ("bulk", "b_bulk", "b_drop_batch")}
            assert got == {"bulk": 64, "b_bulk": 4, "b_drop_batch": 256}, got
            assert page.locator(".st-key-b_zero input[type=radio]:checked").first.evaluate(
                "el => el.closest('label').innerText").startswith("memset")
            s = _url_state(page)
            assert (s.get("bulk"), s.get("b_bulk"), s.get("b_zero"), s.get("zero")) == (64, 4, "memset", "gfp_zero")

        eventually(restored)
    finally:
        page.close()


def test_garbage_link_warns_naming_each_parameter_and_works(app):
    bad = "page=slub&bulk=abc&clone_frac=-5&nosuch=1&zero=42&v=9&b_bulk=1e9&%ZZ=%00"
    page = _open(app, bad)
    try:
        _no_exception(page)
        assert urlsplit(page.url).path.rstrip("/").endswith("/slub"), page.url
        alert = page.locator(ALERT).first
        alert.wait_for(timeout=WAIT_MS)
        text = alert.inner_text()
        _, warnings = sk_state.decode(bad)
        assert len(warnings) >= 6
        for name in ("bulk", "clone_frac", "nosuch", "zero", "v:", "b_bulk", "%ZZ"):
            assert name in text, (name, text)
        # defaults for the bad parts, clamps where a number was out of range
        assert slider_value(page, "bulk") == 16
        assert slider_value(page, "clone_frac") == 0.0
        s = _url_state(page)
        # the slub page shows no B: b_bulk (clamped to 256) is read but its link carries none of B
        assert sk_state.scenario(sk_state.decode(bad)[0], "b")["bulk"] == 256 and "b_bulk" not in s
        assert (s["bulk"], s["clone_frac"], s["zero"]) == (16, 0.0, "gfp_zero")
        assert page.locator(".js-plotly-plot").count() >= 1
    finally:
        page.close()


#: what only a browser shows: markup in a link drawn as text, not run, and numbers that are not numbers
#: reaching the charts' script (the app's side of bad links, a path outside the pages and a link of
#: hundreds of fields among them, is fuzzed through AppTest in tests/test_robustness.py)
@pytest.mark.parametrize("query", ["%%%&&==;;<script>alert(1)</script>",
                                   "page=validation&ghz=nan&bulk=inf&frame_bytes=-0&v="])
def test_nonsense_links_never_give_an_exception_page(app, query):
    page = _open(app, query)
    try:
        _no_exception(page)
        assert page.locator(".js-plotly-plot").count() >= 1
        assert page.locator(ALERT).count() >= 1
    finally:
        page.close()


def test_url_follows_changes_and_sidebar_link_reproduces_view(app):
    page = _open(app, "v=1&page=slub&bulk=20")
    try:
        focus_slider(page, "bulk")
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => new URL(location.href).searchParams.get('bulk') === '21'", timeout=WAIT_MS)
        wait_for_app(page)
        assert slider_value(page, "bulk") == 21
        link = page.locator(".st-key-share_link code").first.inner_text().strip()
        q = urlsplit(link).query
        pairs = [kv.split("=", 1)[0] for kv in q.split("&")]
        assert pairs[0] == "v" and {"mv", "pv", "h", "page", "bulk"} <= set(pairs) and len(link) <= 200, link
        assert sk_state.decode(q)[0]["bulk"] == 21 and sk_state.decode(q)[0]["page"] == "slub"
        url, _ = app
        other = _open(app, q)
        try:
            assert urlsplit(other.url).path.rstrip("/").endswith("/slub")
            assert slider_value(other, "bulk") == 21
            assert _url_state(other) == _url_state(page)
        finally:
            other.close()
    finally:
        page.close()


def test_short_link_in_a_fresh_browser_shows_the_numbers_of_its_long_form(app):
    st, _ = sk_state.decode("page=veth&xdp_batch=8&zero=memset&pp_recycle=0.5&b_zero=gfp_zero")
    long_q = sk_state.encode(st)
    short_q = shortlink.shorten(long_q)
    assert short_q.startswith("v=2&") and len(short_q) < len(long_q) / 4
    # what the page's metric row shows for the state, from the answers the page draws it from: each page
    # is waited on until it shows these (a metric row read before it was drawn had one value of five)
    want = [value for _, value, *_ in ui.answer_metrics(answers.of_state(sk_state.without_b(st)))]
    assert len(want) >= 3 and all(want), want
    for q in (long_q, short_q):
        page = _open(app, q)  # a new page is a new browser context: no cookies, no session
        try:
            wait_for_metrics(page, want, ".st-key-headline")
            _no_exception(page)
            assert page.locator(ALERT).count() == 0
            assert urlsplit(page.url).path.rstrip("/").endswith("/veth")
            eventually(lambda: _assert_equal(_url_state(page), sk_state.without_b(st)))  # veth shows no B
        finally:
            page.close()


def test_downloads_from_the_page(app, tmp_path):
    """Click a chart's PNG and SVG buttons and the sidebar's report button: real files, meaningful names."""
    from skbview import report

    page = _open(app, "v=1&page=slub&bulk=32")
    try:
        state = _url_state(page)
        with page.expect_download(timeout=WAIT_MS) as dl:
            page.locator(".st-key-dl_png_slub_per_object button").first.click()
        png = tmp_path / dl.value.suggested_filename
        dl.value.save_as(png)
        assert png.name == report.file_stem("slub", "per_object", state) + ".png"
        assert "bulk-32" in png.name
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        with page.expect_download(timeout=WAIT_MS) as dl:
            page.locator(".st-key-dl_svg_slub_per_object button").first.click()
        svg = tmp_path / dl.value.suggested_filename
        dl.value.save_as(svg)
        import xml.etree.ElementTree as ET
        assert svg.suffix == ".svg" and ET.parse(svg).getroot().tag.endswith("svg")
        with page.expect_download(timeout=120_000) as dl:
            page.locator(".st-key-dl_report_html button").first.click()
        html = tmp_path / dl.value.suggested_filename
        dl.value.save_as(html)
        text = html.read_text()
        assert html.suffix == ".html" and text.startswith("<!DOCTYPE html>")
        link = page.locator(".st-key-share_link code").first.inner_text().strip()
        assert link.replace("&", "&amp;") in text  # the report carries the sidebar's share link
        _no_exception(page)
    finally:
        page.close()


def test_link_from_another_model_version_shows_the_notice_until_use_current(app):
    """A link made with another model version: the page says how far the headline moved; Use current
    makes the URL record today's versions."""
    import skbmodel
    q = answers.share_query({**sk_state.defaults(), "page": "slub", "bulk": 32}).replace(
        f"mv={skbmodel.__version__}", "mv=0.0.1")
    q = q.replace("&h=" + dict(parse_qsl(q))["h"], "&h=150")
    page = _open(app, q)
    try:
        _no_exception(page)
        box = page.locator(".st-key-version_notice")
        box.wait_for(timeout=WAIT_MS)
        text = box.inner_text()
        assert f"This link was made with model 0.0.1; this is model {skbmodel.__version__}" in text, text
        assert "150 when the link was made" in text
        assert dict(parse_qsl(urlsplit(page.url).query))["mv"] == "0.0.1"  # a reload shows it again
        box.get_by_role("button", name="Use current").click()
        page.wait_for_function(f"() => new URL(location.href).searchParams.get('mv') === '{skbmodel.__version__}'",
                               timeout=WAIT_MS)
        wait_for_app(page)
        assert page.locator(".st-key-version_notice").count() == 0
        _no_exception(page)
    finally:
        page.close()


def test_copy_as_text_shows_the_whole_block_in_the_sidebar_starting_with_the_question_s_number(app):
    """The sidebar's "Copy as text" block: every character visible inside the sidebar (long lines wrap on the
    screen, not cut off), the text the CLI gives for the same view, the kfree_skb_list question's number
    first."""
    from skbmodel import mailtext

    page = _open(app, "page=compare&b_kfl_bulk=1")
    try:
        page.locator(".st-key-copy_as_text").get_by_text("Copy as text").click()
        block = page.locator(".st-key-copy_text pre").first
        block.wait_for()
        link = page.locator(".st-key-share_link code").first.inner_text().strip()
        want = mailtext.summary_text(_url_state(page), link)
        eventually(lambda: _assert_equal(block.inner_text().strip(), want.strip()))
        numbers = want.split("Numbers (90 % prediction interval):\n", 1)[1]
        assert numbers.startswith("  kfree_skb_list drop path (ns/packet), A: "), numbers
        width, shown, sidebar_right, right = block.evaluate(
            """(el) => [el.scrollWidth, el.clientWidth,
                        document.querySelector('[data-testid="stSidebar"]').getBoundingClientRect().right,
                        el.getBoundingClientRect().right]""")
        assert width <= shown + 1, (width, shown)  # nothing scrolled out of sight
        assert right <= sidebar_right + 1, (right, sidebar_right)
        _no_exception(page)
    finally:
        page.close()
