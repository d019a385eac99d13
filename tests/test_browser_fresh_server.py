"""The first request of a fresh server opening a link at a page URL (``/compare?...``): the page script runs
alone once before the navigation takes over; scenario B must still be the link's, not the controls' minimums."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from skbmodel import shortlink, state as S, versions as V
from tests.browser_util import app_and_browser, wait_for_app, wait_for_plotly

pytestmark = pytest.mark.browser


def test_a_compare_link_as_the_first_request_keeps_scenario_b():
    st, _ = S.decode("page=compare&zero=memset&b_zero=gfp_zero&b_bulk=8")
    with app_and_browser("dashboard.py") as (url, browser):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(f"{url}/compare?{S.encode(st)}")
            wait_for_app(page, timeout=120)
            wait_for_plotly(page, 0, timeout=120)
            page.locator(".st-key-share_link").wait_for(state="attached", timeout=60_000)
            wait_for_app(page, timeout=120)
            got, warnings = S.decode(urlsplit(page.url).query)
            assert warnings == [] and got == st
            assert urlsplit(page.url).query == shortlink.shorten(V.share_query(st))
        finally:
            page.close()
