"""Two reviewers' questions answered in at most three actions each, in a real browser, each answer with
its verdict and what it rests on."""
from __future__ import annotations

import pytest

from skbmodel import provenance
from skbmodel.physics import noise
from tests.browser_util import (NAV_LINK, WAIT_MS, app_and_browser, eventually, focus_slider, page_with_errors,
                                wait_for_app)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app():
    with app_and_browser("dashboard.py") as url_and_browser:
        yield url_and_browser


def _nav(page, title: str) -> None:
    page.locator(NAV_LINK).first.wait_for(timeout=WAIT_MS)
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

    text = eventually(answered)
    assert "kmem_cache_free_bulk" in text and "slub_free_share" in text
    assert not errors, errors
    ctx.close()


def _add_difference(page, label: str) -> None:
    """Compare's "Add a difference…": B now differs from A in the parameter of ``label``."""
    page.locator(".st-key-add_difference input[role='combobox']").click()
    page.keyboard.type(label)
    page.locator("[role='option']", has_text=label).first.click()
    wait_for_app(page)


def test_cross_numa_recycling_on_cpumap_in_three_actions(app):
    """"50 % recycling, cross-NUMA, on cpumap", on a two-socket machine: Compare, B's recycle ratio, B's placement
    on the other socket.
    The verdict is about the cpumap path, which moves, with what it rests on; its numbers are the answer's."""
    from skbmodel import answers
    from skbmodel.links import state as sk_state

    url, browser = app
    ctx, page, errors = page_with_errors(browser, 1500, 1400)
    page.goto(url + "/?cpu=xeon-platinum-iavf")  # the machine (a link), not one of the three actions
    wait_for_app(page)
    _nav(page, "Compare A/B")  # 1
    _add_difference(page, "page_pool recycle")  # 2: B's recycle ratio, from 1.0 down to 0.5
    focus_slider(page, "b_pp_recycle")
    for _ in range(10):
        page.keyboard.press("ArrowLeft")
    wait_for_app(page)
    _add_difference(page, "CPU placement")  # 3: B's placement, then the other socket among its levels
    page.locator(".st-key-b_place label", has_text="another socket").first.click()
    wait_for_app(page)
    q = "page=compare&cpu=xeon-platinum-iavf&b_pp_recycle=0.5&b_place=other_socket"
    want = answers.of_state(provenance.with_link_headline(q, sk_state.decode_strict(q))).differences[0]

    def answered():
        text = page.locator(".st-key-ab_verdict").inner_text()
        assert "cpumap" in text and want.value_text() in text, text
        assert noise.VERDICT_SHORT[want.verdict] in text
        main = page.locator("[data-testid='stMain']").first.inner_text()
        assert "rests on" in main
        return text

    eventually(answered)
    assert not errors, errors
    ctx.close()
