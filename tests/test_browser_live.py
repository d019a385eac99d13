"""The pages' live controls in a real browser (headless system Chromium + the real dashboard).

* A drag moves the chart's marker and the metric row at every step, with nothing sent to the server;
  at release the parameter takes the value: the sidebar slider, the address bar, the share link (opened
  in a fresh browser context) and the text block carry it.
* Keys (arrows, Page Up/Down, Home/End) move the chart at once and reach the server once they pause.
* The sidebar slider moves the live control; a control mounted again (another page and back) gets its
  payload and follows a drag.
"""
from __future__ import annotations

import contextlib
from urllib.parse import parse_qs, urlsplit

import pytest

from skbmodel import answers, model
from skbmodel.question import Question
from skbmodel.links import state as sk_state
from skbview import charts
from skbview.app import live, ui
from tests.browser_util import (NAV_LINK, WAIT_MS, app_and_browser, eventually, focus_slider, live_control,
                                live_thumb_x, live_value, plotly_trace_in, slider_value, wait_for_app, wait_for_plotly)

pytestmark = pytest.mark.browser

LIVE = sorted(charts.LIVE_CONTROLS)
#: The pages a drag walks: the control and its script are one for every page, and each page's live values
#: are checked against the model without a browser (tests/test_live_payload.py); what differs in the browser
#: is an integer parameter with two live charts (SLUB), a float parameter (cpumap's recycle share) and a page
#: whose live values also depend on a second key (veth: the zeroing).
DRAGGED = ["slub", "cpumap", "veth"]
#: The keys' steps: whole numbers (SLUB's bulk) and a fractional step (cpumap's recycle share).
KEYED = ["slub", "cpumap"]
assert set(DRAGGED) | set(KEYED) <= set(LIVE)


@pytest.fixture(scope="module")
def app():
    with app_and_browser("dashboard.py") as url_and_browser:
        yield url_and_browser


def _first_chart(slug: str) -> str:
    """The element key of the page's first chart tab (open by default), which must be live."""
    name = next(iter(charts.chart_labels(slug)))
    assert name in charts.LIVE_CONTROLS[slug][2], f"{slug}: its first chart {name} has no live patch"
    return f"chart_{slug}_{name}"


def _open(browser, url: str, path: str, width: int = 1280, height: int = 800):
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    page.set_default_timeout(WAIT_MS)  # a limit for a hung run, not a wait
    page._skb_errors = []  # noqa: SLF001 - test bookkeeping
    page._skb_sent = []  # noqa: SLF001 - frames sent to the server over the WebSocket
    page.on("pageerror", lambda e: page._skb_errors.append(str(e)))
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: page._skb_sent.append(len(payload))))
    page.goto(url + path)
    wait_for_app(page)
    wait_for_plotly(page, 0)  # a loaded machine (2 cores, several sessions) is slow to a first chart
    return ctx, page


def _marker_x(page, chart: str) -> float:
    return round(float(plotly_trace_in(page, chart, 0)["x"][0]), 9)


def _wait_marker(page, chart: str, value: float, timeout: float = WAIT_MS) -> None:
    page.wait_for_function(
        """([key, v]) => { const gd = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
             return !!(gd && gd._fullData && gd._fullData[0]
                       && Math.abs(Number(gd._fullData[0].x[0]) - v) < 1e-9); }""",
        arg=[chart, value], timeout=timeout)


def _metric_texts(page) -> list[list[str]]:
    """``[label, value, interval]`` of each card of the page's metric row, as drawn."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.st-key-headline [data-testid="stMetric"]'))
        .map(card => ['stMetricLabel', 'stMetricValue', 'stMetricDelta'].map(t => {
            const e = card.querySelector('[data-testid="' + t + '"]'); return e ? e.innerText.trim() : null; }))""")


def _metrics_at(slug: str, key: str, value) -> list[list[str]]:
    """The metric row the page draws with ``key`` at ``value`` (the answers engine's texts)."""
    state = {**sk_state.defaults(), "page": slug, key: value}
    return [[label, text, rest[1] if len(rest) > 1 else None]
            for label, text, *rest in ui.answer_metrics(answers.of_state(state))]


def _query_value(url: str, key: str):
    return parse_qs(urlsplit(url).query).get(key, [None])[0]


def _release_carries(app, page, key: str, final, control: str, check=None) -> None:
    """After a release at ``final``: the address bar, the parameter's Streamlit slider, the chart Python drew
    (``check(page)``), the share link opened in a fresh context (its slider, its live control ``control``) and
    the text block ("Copy as text") carry the value."""
    url, browser = app
    p = sk_state.PARAMS[key]
    shown = sk_state.fmt_value(int(final) if p.kind == "int" else final)
    page.wait_for_function("([k, v]) => new URL(location.href).searchParams.get(k) === v", arg=[key, shown],
                           timeout=WAIT_MS)
    wait_for_app(page)
    assert slider_value(page, key) == final  # the sidebar's (or the stage's) slider is the same parameter
    if check:
        check(page)  # the chart Python drew at release
    link = page.locator(".st-key-share_link code").first.inner_text().strip()
    assert _query_value(link, key) == shown, link
    page.locator(".st-key-copy_as_text").get_by_text("Copy as text").click()
    page.locator(".st-key-copy_text code").first.wait_for(timeout=WAIT_MS)
    assert f"{p.label} = {shown}" in page.locator(".st-key-copy_text code").first.inner_text()
    ctx2, fresh = _open(browser, url, "/" + link.split("/", 3)[3])
    try:
        assert slider_value(fresh, key) == final
        assert live_value(live_control(fresh, control)) == final
        if check:
            check(fresh)
    finally:
        ctx2.close()


@contextlib.contextmanager
def _live_page(app, slug: str):
    """``(parameter, its Param, the first chart's key, page, the control's frame)`` of ``slug`` opened anew."""
    url, browser = app
    key = charts.LIVE_CONTROLS[slug][0]
    ctx, page = _open(browser, url, f"/{slug}")
    try:
        yield key, sk_state.PARAMS[key], _first_chart(slug), page, live_control(page, slug)
    finally:
        ctx.close()


@pytest.mark.parametrize("slug", DRAGGED)
def test_drag_moves_chart_at_every_step_and_release_sets_the_parameter(app, slug):
    url, browser = app
    with _live_page(app, slug) as (key, p, chart, page, frame):
        assert frame.range.get_attribute("aria-label") == p.label
        start = live_value(frame)
        assert start == sk_state.defaults()[key] == _marker_x(page, chart)
        up = p.hi - start >= start - p.lo  # towards the farther end
        span = (p.hi - start) if up else (p.lo - start)
        targets = [start + span * f for f in (0.1, 0.25, 0.4, 0.55, 0.7)]
        page.mouse.move(*live_thumb_x(frame, start))
        page.mouse.down()
        sent_before = len(page._skb_sent)
        seen = [start]
        for t in targets:
            page.mouse.move(*live_thumb_x(frame, t), steps=2)
            v = live_value(frame)
            _wait_marker(page, chart, v)  # the chart's marker is at the thumb's value
            # and the metric row is the page's at that value (a flat stretch of a curve may repeat a text)
            assert _metric_texts(page) == _metrics_at(slug, key, int(v) if p.kind == "int" else v), v
            seen.append(v)
        assert all((b > a) if up else (b < a) for a, b in zip(seen, seen[1:])), seen
        assert len(page._skb_sent) == sent_before, "the drag sent messages to the server"
        page.mouse.up()
        final = seen[-1]
        _release_carries(app, page, key, final, slug, lambda pg: _assert_equal(_marker_x(pg, chart), final))
        assert len(page._skb_sent) >= sent_before + 1
        assert not page._skb_errors, page._skb_errors
        # the control as the rerun left it (Streamlit may have drawn it in a new frame)
        assert live_control(page, slug).error() is None


@pytest.mark.parametrize("slug", KEYED)
def test_keys_move_the_chart_and_reach_the_server_when_they_pause(app, slug):
    with _live_page(app, slug) as (key, p, chart, page, frame):
        frame.range.focus()
        step = p.step or 1
        big = max(step, round((p.hi - p.lo) / 10 / step) * step)
        for press, want in (("Home", p.lo), ("ArrowRight", p.lo + step), ("ArrowUp", p.lo + 2 * step),
                            ("End", p.hi), ("PageDown", p.hi - big), ("ArrowLeft", p.hi - big - step),
                            ("PageUp", p.hi - step), ("ArrowDown", p.hi - 2 * step)):
            want = round(want, 9)
            frame.range.press(press)
            _wait_marker(page, chart, want)
            assert live_value(frame) == want, press
        shown = sk_state.fmt_value(int(want) if p.kind == "int" else want)
        page.wait_for_function("([k, v]) => new URL(location.href).searchParams.get(k) === v", arg=[key, shown],
                               timeout=WAIT_MS)
        wait_for_app(page)
        assert slider_value(page, key) == want
        # the rerun left the keyboard focus on the control
        assert live_control(page, slug).has_focus()


def test_sidebar_slider_moves_the_live_control_and_a_page_switch_brings_its_payload(app):
    url, browser = app
    ctx, page = _open(browser, url, "/slub")
    try:
        frame = live_control(page, "slub")
        focus_slider(page, "bulk")
        page.keyboard.press("ArrowRight")
        eventually(lambda: _assert_equal(live_value(live_control(page, "slub")), 17.0))
        page.locator(NAV_LINK, has_text="veth XDP_BATCH").first.click()
        live_control(page, "veth")
        page.locator(NAV_LINK, has_text="SLUB bulk").first.click()
        wait_for_app(page)
        frame = live_control(page, "slub")  # ready: it holds its payload
        assert live_value(frame) == 17
        assert frame.state()["asked"] is None  # it came with the page, not on request
        chart = _first_chart("slub")
        page.mouse.move(*live_thumb_x(frame, 17))
        page.mouse.down()
        page.mouse.move(*live_thumb_x(frame, 60), steps=2)
        released = live_value(frame)
        _wait_marker(page, chart, released)
        page.mouse.up()
        # the address bar itself (Playwright's page.url can lag a same-document URL change)
        eventually(lambda: _assert_equal(_query_value(page.evaluate("location.href"), "bulk"),
                                         sk_state.fmt_value(int(released))))
        wait_for_app(page)
        assert live_value(live_control(page, "slub")) == released
    finally:
        ctx.close()


def _assert_equal(a, b):
    assert a == b, (a, b)


def _design_row(state: dict) -> list[list[str]]:
    """The Design page's metric row at ``state`` (ui.design_live: A's answers, B, the paired B − A)."""
    q = Question.of_state(state)
    res = answers.of_question(q)
    o = "path.ns_per_packet"
    out, iv = {a.output: a.value for a in res.values}, {a.output: (a.lo, a.hi) for a in res.values}
    b = next(v for v in res.b_values if v.output == o)
    d = next(v for v in res.differences if v.output == o)
    out[live.B_COST], iv[live.B_COST] = b.value, (b.lo, b.hi)
    out[live.AB_DELTA], iv[live.AB_DELTA] = d.value, (d.lo, d.hi)
    return [[label, text, rest[1] if len(rest) > 1 else None]
            for label, text, *rest in ui.design_metrics(q)(q.compare_a.params, out, iv)]


def _wait_total(page, value: float, timeout: float = WAIT_MS) -> None:
    """Until composition A's total as drawn on the Design page's breakdown (its error-bar trace) is ``value``."""
    page.wait_for_function(
        """([t, v]) => { const gd = document.querySelector('.st-key-chart_design_breakdown .js-plotly-plot');
             return !!(gd && gd.data && gd.data[t]
                       && Math.abs(Number(gd.data[t].y[0]) - v) <= 1e-4 * Math.abs(v)); }""",
        arg=[len(model.COMPONENTS), value], timeout=timeout)


def test_design_stage_size_drag_moves_the_breakdown_and_release_sets_it(app):
    url, browser = app
    key, composition = "d_skb_bulk", {"d_skb": "slab_bulk"}
    p = sk_state.PARAMS[key]
    ctx, page = _open(browser, url, "/design?d_skb=slab_bulk")
    try:
        frame = live_control(page, f"design_{key}")
        assert frame.range.get_attribute("aria-label") == p.label
        start = int(live_value(frame))
        state = {**sk_state.defaults(), "page": "design", **composition}
        page.locator(f".st-key-live_design_{key}").scroll_into_view_if_needed()
        page.mouse.move(*live_thumb_x(frame, start))
        page.mouse.down()
        sent_before = len(page._skb_sent)
        seen = [start]
        for t in (start + 20, start + 60, start + 110, start + 170):
            page.mouse.move(*live_thumb_x(frame, t), steps=2)
            v = int(live_value(frame))
            at = {**state, key: v}
            fig = charts.figure_for("design", "breakdown", Question.of_state(at))
            total = float(fig.data[len(model.COMPONENTS)].y[0])
            _wait_total(page, total)  # the chart's bars and totals are those at the thumb's value
            assert _metric_texts(page) == _design_row(at), v
            seen.append(v)
        assert seen == sorted(set(seen)), seen
        assert len(page._skb_sent) == sent_before, "the drag sent messages to the server"
        page.mouse.up()
        _release_carries(app, page, key, seen[-1], f"design_{key}")
        assert not page._skb_errors, page._skb_errors
        assert live_control(page, f"design_{key}").error() is None
    finally:
        ctx.close()
