"""End to end in headless Chromium: the real `streamlit run dashboard.py` server on 127.0.0.1.

Opens every page (first request directly on a page URL of a fresh server), checks there is no
error box, moves a slider with the keyboard and sees the chart data change, and saves a
screenshot of every page to artifacts/screenshots/.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from skbmodel.links import state as sk_state
from skbview import charts
from tests.browser_util import (
    REPO_ROOT,
    WAIT_MS,
    focus_slider,
    launch_chromium,
    plotly_y,
    slider_selector,
    slider_value,
    shared_server,
    wait_for_app,
    wait_for_plotly,
)

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")

SHOTS = REPO_ROOT / "artifacts" / "screenshots"
ERROR_SELECTOR = '[data-testid="stException"], [data-testid="stAlertContentError"]'


@pytest.fixture(scope="module")
def browser_page():
    url = shared_server("dashboard.py")
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(WAIT_MS)  # a limit for a hung run, not a wait
            yield url, page
        finally:
            browser.close()


_CHART_KEYS = """() => Array.from(document.querySelectorAll('[class*="st-key-chart_"]'))
    .map(e => Array.from(e.classList).find(c => c.startsWith('st-key-chart_')).slice('st-key-'.length))"""


def _drawn_charts(slug: str) -> list[str]:
    """The charts a page draws on its defaults (the Validation page draws its own, one at a time per curve)."""
    return [] if slug == "validation" else list(charts.chart_labels(slug))


_CHARTS_FIT_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).every(gd => {
    const w = gd.getBoundingClientRect().width;
    return w === 0 || !!(gd._fullLayout && Math.abs(gd._fullLayout.width - w) < 2); })"""


def _screenshot(page, path: Path) -> None:
    """Whole page: Streamlit scrolls inside stMain, so grow the viewport to its height first."""
    h = page.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                      " return m ? m.scrollHeight : 1000; }")
    page.set_viewport_size({"width": 1400, "height": min(int(h) + 40, 6000)})
    # the resize's relayout: every shown chart as wide as its box again, then two frames painted
    page.wait_for_function(_CHARTS_FIT_JS)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.screenshot(path=str(path))
    page.set_viewport_size({"width": 1400, "height": 1000})


def test_every_page_opens_without_error_and_is_screenshotted(browser_page):
    url, page = browser_page
    SHOTS.mkdir(parents=True, exist_ok=True)
    # a page URL first, on a fresh server: must still run through st.navigation (sidebar present)
    for slug in ("veth",) + tuple(s for s in sk_state.PAGES if s != "veth"):
        page.goto(f"{url}/{'' if slug == 'overview' else slug}")
        wait_for_app(page)
        # the page's first chart, and the sidebar after the page: wait for both, not for idle
        wait_for_plotly(page, 0)
        page.locator(".st-key-share_link").wait_for(state="attached", timeout=WAIT_MS)
        assert page.locator(ERROR_SELECTOR).count() == 0, slug
        assert page.locator(".st-key-bulk").count() == 1, f"{slug}: sidebar controls missing"
        assert page.locator(".st-key-share_link").count() == 1
        assert f"page={slug}" in page.url and "v=2" in page.url
        # a page with several charts shows them as tabs: each tab, clicked, draws its own chart
        seen = set(page.evaluate(_CHART_KEYS))
        tabs = page.locator('[data-testid="stMain"] [role="tab"]')
        expected = {lab: n for n, lab in charts.chart_labels(slug).items() if n in _drawn_charts(slug)}
        for i in reversed(range(tabs.count())):
            tab = tabs.nth(i)
            label = tab.inner_text().strip()
            tab.click()
            # the click starts a rerun that builds the tab's chart: wait for that chart itself, since
            # an idle app seen before the rerun has begun (a loaded machine) still shows the old tab
            if label in expected:
                page.locator(f".st-key-chart_{slug}_{expected[label]} .js-plotly-plot").wait_for(
                    state="attached", timeout=WAIT_MS)
            wait_for_app(page)
            wait_for_plotly(page, 0)
            seen |= set(page.evaluate(_CHART_KEYS))
        assert page.locator(ERROR_SELECTOR).count() == 0, slug
        assert seen >= {f"chart_{slug}_{n}" for n in _drawn_charts(slug)}, (slug, seen)
        for i in range(page.locator(".js-plotly-plot").count()):
            wait_for_plotly(page, i)
        _screenshot(page, SHOTS / f"{slug}.png")
        assert (SHOTS / f"{slug}.png").stat().st_size > 20_000


def _wait_slider(page, key: str) -> None:
    page.locator(slider_selector(key)).first.wait_for(state="attached", timeout=WAIT_MS)


def _wait_change(page, chart: int, trace: int, before):
    page.wait_for_function(
        """([c, t, y0]) => { const gd = document.querySelectorAll('.js-plotly-plot')[c];
             if (!gd || !gd._fullData || !gd._fullData[t] || !gd._fullData[t].y) return false;
             return JSON.stringify(Array.from(gd._fullData[t].y)) !== JSON.stringify(y0); }""",
        arg=[chart, trace, before], timeout=WAIT_MS)
    wait_for_app(page)


def test_slider_moves_chart_data_and_url(browser_page):
    url, page = browser_page
    page.goto(f"{url}/slub")
    wait_for_app(page)
    wait_for_plotly(page, 0)
    _wait_slider(page, "bulk")
    assert slider_value(page, "bulk") == 16
    before = plotly_y(page, 0, 0)  # the "current bulk" marker: [loop, bulk] cycles at bulk 16
    focus_slider(page, "bulk")
    page.keyboard.press("ArrowRight")
    _wait_change(page, 0, 0, before)
    _wait_slider(page, "bulk")
    assert slider_value(page, "bulk") == 17
    after = plotly_y(page, 0, 0)
    assert after != before and after[1] < before[1]  # bulk API gets cheaper per object
    assert "bulk=17" in page.url
    assert page.locator(ERROR_SELECTOR).count() == 0
    # the overview chart follows VETH_XDP_BATCH (skb alloc share of the waterfall)
    page.goto(f"{url}/?{sk_state.encode({**sk_state.defaults(), 'xdp_batch': 2})}")
    wait_for_app(page)
    wait_for_plotly(page, 0)
    _wait_slider(page, "xdp_batch")
    before = plotly_y(page, 0, 0)
    focus_slider(page, "xdp_batch")
    page.keyboard.press("ArrowLeft")
    _wait_change(page, 0, 0, before)
    _wait_slider(page, "xdp_batch")
    assert slider_value(page, "xdp_batch") == 1
    assert plotly_y(page, 0, 0)[0] > before[0]  # one-at-a-time alloc costs more per skb
