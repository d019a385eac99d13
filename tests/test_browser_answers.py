"""Two reviewers' questions answered in at most three actions each, in a real browser, each answer with
its verdict and what it rests on."""
from __future__ import annotations

import pytest

from skbmodel import noise
from tests.browser_util import (NAV_LINK, app_and_browser, eventually, focus_slider, page_with_errors,
                                wait_for_app)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app():
    with app_and_browser("dashboard.py") as url_and_browser:
        yield url_and_browser


def _nav(page, title: str) -> None:
    page.locator(NAV_LINK).first.wait_for(timeout=60000)
    page.locator(NAV_LINK, has_text=title).first.click()
    wait_for_app(page)


def test_free_bulk_for_veth_batch_and_zeroing_in_two_actions(app):
    """"Is kmem_cache_free_bulk worth it for veth at VETH_XDP_BATCH 16 vs 64, memset vs __GFP_ZERO?":
    open the dashboard, open the Question grid."""
    url, browser = app
    ctx, page, errors = page_with_errors(browser, 1500, 1400)
    page.goto(url)  # 1
    wait_for_app(page)
    _nav(page, "Question grid")  # 2

    def answered():
        # the grid's table (a dataframe carries no st-key class) and its CSV download
        assert page.locator("[data-testid='stMain'] [data-testid='stDataFrame']").count() >= 1
        assert page.locator(".st-key-grid_csv").count() == 1
        text = page.locator("section.main, [data-testid='stMain']").first.inner_text()
        assert "Measurable and sure" in text and "rests on" in text
        return text

    text = eventually(answered, timeout=90)
    assert "kmem_cache_free_bulk" in text and "slub_free_share" in text
    assert not errors, errors
    ctx.close()


def test_cross_numa_recycling_on_cpumap_in_three_actions(app):
    """"50 % recycling, cross-NUMA, on cpumap": Compare, B's recycle ratio, B's node.  The verdict is
    about the cpumap destination, which moves, and names the assumed constants it rests on."""
    url, browser = app
    ctx, page, errors = page_with_errors(browser, 1500, 1400)
    page.goto(url)
    wait_for_app(page)
    _nav(page, "Compare A/B")  # 1
    focus_slider(page, "b_pp_recycle")  # 2
    for _ in range(10):
        page.keyboard.press("ArrowLeft")
    wait_for_app(page)
    page.locator(".st-key-b_numa label", has_text="cross NUMA node").first.click()  # 3
    wait_for_app(page)

    def answered():
        text = page.locator(".st-key-ab_verdict").inner_text()
        assert "cpumap destination CPU" in text and "+98.04" in text, text
        assert noise.VERDICT_SHORT[noise.VERDICT_SURE] in text
        main = page.locator("[data-testid='stMain']").first.inner_text()
        assert "numa_remote_factor" in main and "rests on assumptions" in main
        return text

    eventually(answered, timeout=90)
    assert not errors, errors
    ctx.close()
