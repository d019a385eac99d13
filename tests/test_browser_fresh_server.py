"""The first request of a fresh server (Streamlit's legacy pages/ mode until st.navigation runs): a link at a
page URL (``/compare?...``), whose page script runs alone once before the navigation takes over, keeps
scenario B the link's, not the controls' minimums; and no visitor ever sees Streamlit's own page list."""
from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest

from skbmodel import answers
from skbmodel.links import pages, shortlink, state as sk_state
from tests.browser_util import NAV_LINK, WAIT_MS, app_and_browser, eventually, wait_for_app, wait_for_plotly

pytestmark = pytest.mark.browser


def test_a_compare_link_as_the_first_request_keeps_scenario_b():
    st, _ = sk_state.decode("page=compare&zero=memset&b_zero=gfp_zero&b_bulk=8")
    with app_and_browser("dashboard.py", fresh=True) as (url, browser):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(WAIT_MS)  # a limit for a hung run, not a wait
        try:
            page.goto(f"{url}/compare?{sk_state.encode(st)}")
            wait_for_app(page)
            wait_for_plotly(page, 0)
            page.locator(".st-key-share_link").wait_for(state="attached", timeout=WAIT_MS)
            wait_for_app(page)
            got, warnings = sk_state.decode(urlsplit(page.url).query)
            assert warnings == [] and got == st
            assert urlsplit(page.url).query == shortlink.shorten(answers.share_query(st))
        finally:
            page.close()


#: Streamlit's own page lists (the legacy pages/ list, st.navigation's sidebar and top lists): none may show
_STREAMLIT_NAV = ('[data-testid="stSidebarNav"], [data-testid="stSidebarNavLink"], '
                  '[data-testid="stSidebarNavItems"], [data-testid="stTopNavLink"]')
#: Installed before the first byte: records every moment one of Streamlit's own page lists is in the DOM
_WATCH_NAV = """(() => {
  window.__autoNav = [];
  const look = () => {
    const n = document.querySelectorAll(%r).length;
    if (n) window.__autoNav.push([Math.round(performance.now()), n]);
  };
  new MutationObserver(look).observe(document, {childList: true, subtree: true});
})();""" % _STREAMLIT_NAV

_FIRST_CHART = """() => { const gd = document.querySelector('.js-plotly-plot');
                          return !!(gd && gd._fullData && gd._fullData.length); }"""


@pytest.mark.parametrize("path", ["", "veth"])
def test_a_fresh_server_shows_only_its_own_navigation_from_the_first_byte(path):
    """A new visitor on a fresh server (the first run is Streamlit's legacy pages/ mode): no auto-generated
    page list in any frame at any poll from the first response to the first chart and after, and once the app
    is idle the sidebar's own links, one per page, in the registry's order and titles.  (Whether the links
    are drawn before the first chart is a race of two loads the machine's load decides; it is not asserted.)"""
    titles = [p.title for p in (*pages.PAGES, *pages.TOOLS)]
    with app_and_browser("dashboard.py", fresh=True) as (url, browser):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(WAIT_MS)  # a limit for a hung run, not a wait
        page.add_init_script(_WATCH_NAV)
        try:
            page.goto(f"{url}/{path}", wait_until="commit")
            polls, deadline = 0, time.monotonic() + 180
            while True:
                for frame in page.frames:
                    assert frame.locator(_STREAMLIT_NAV).count() == 0, f"poll {polls}, frame {frame.url}"
                polls += 1
                if page.evaluate(_FIRST_CHART):
                    break
                assert time.monotonic() < deadline, "no chart after 180 s"
                time.sleep(0.05)
            wait_for_app(page)
            links = page.locator(NAV_LINK)
            eventually(lambda: _assert_titles(links, titles))
            assert page.evaluate("window.__autoNav") == []
            assert polls > 10  # the polls saw the page being built, not only its end
            for frame in page.frames:
                assert frame.locator(_STREAMLIT_NAV).count() == 0
            assert urlsplit(page.url).path.rstrip("/").endswith(path)
        finally:
            page.close()


def _assert_titles(links, titles) -> None:
    assert [t.strip().split("\n")[-1] for t in links.all_inner_texts()] == titles


#: Streamlit 1.67 draws an element whose code is not loaded yet (each widget type is a chunk of its own) as a
#: grey placeholder with this test id
_SKELETON = '[data-testid="stSkeleton"]'
def test_a_new_visitor_sees_no_grey_placeholder_once_the_app_is_idle():
    """A second visitor (fresh browser context, nothing cached) on /slub: once the app is idle no element is a
    grey placeholder in any frame, the sidebar holds its controls and the first chart has data.  (What the
    sidebar shows at the frame of the first chart is a race of the element code's loads with the chart's,
    which the machine's load decides; benchmarks/bench_pages.py measures a first load, this does not.)"""
    with app_and_browser("dashboard.py") as (url, browser):
        for visitor in range(2):  # the first visitor also runs the fresh server's first, legacy-mode run
            ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = ctx.new_page()
            page.set_default_timeout(WAIT_MS)  # a limit for a hung run, not a wait
            try:
                page.goto(f"{url}/slub")
                wait_for_plotly(page, 0, timeout=180)
                wait_for_app(page)
                if visitor:
                    page.locator('[data-testid="stSidebar"] .st-key-bulk input[type="range"]').wait_for(
                        state="attached", timeout=WAIT_MS)
                    eventually(lambda: _no_skeleton(page))
            finally:
                ctx.close()


def _no_skeleton(page) -> None:
    for frame in page.frames:
        assert frame.locator(_SKELETON).count() == 0, frame.url
