"""Checks the browser harness (tests/browser_util.py) against benchmarks/bare_app.py."""

from __future__ import annotations

import urllib.request

import pytest

from tests.browser_util import (
    focus_slider,
    launch_chromium,
    plotly_y,
    slider_value,
    streamlit_server,
    wait_for_app,
    wait_for_plotly,
)

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def bare_page():
    with streamlit_server("benchmarks/bare_app.py") as url, sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(url)
            wait_for_app(page)
            wait_for_plotly(page, 0)
            yield url, page
        finally:
            browser.close()


def test_server_health_endpoint(bare_page):
    url, _ = bare_page
    with urllib.request.urlopen(url + "/_stcore/health", timeout=5) as r:
        assert r.read().strip() == b"ok"


def test_initial_chart_matches_default_slider(bare_page):
    _, page = bare_page
    assert slider_value(page, "x") == 16
    y = plotly_y(page, 0)
    assert y and len(y) == 200
    assert y[0] == pytest.approx(16.0)  # y = x*sin(0) + x


def test_arrow_key_moves_slider_and_updates_chart(bare_page):
    _, page = bare_page
    before = plotly_y(page, 0)
    focus_slider(page, "x")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        """(y0) => { const gd = document.querySelectorAll('.js-plotly-plot')[0];
                     return gd && gd._fullData && gd._fullData[0].y[0] !== y0; }""",
        arg=before[0],
        timeout=15000,
    )
    wait_for_app(page)
    after = plotly_y(page, 0)
    assert after != before
    assert slider_value(page, "x") == 17
    assert after[0] == pytest.approx(17.0)
    page.keyboard.press("ArrowLeft")
    # Streamlit mounts the chart again on every figure change: for a moment there is no plot node at all
    page.wait_for_function(
        """() => { const gd = document.querySelectorAll('.js-plotly-plot')[0];
                   return !!(gd && gd._fullData && gd._fullData[0].y[0] === 16); }""",
        timeout=15000,
    )
    assert plotly_y(page, 0) == pytest.approx(before)


def test_plotly_y_missing_chart_is_none(bare_page):
    _, page = bare_page
    assert plotly_y(page, 5) is None
