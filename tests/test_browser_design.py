"""The Design page in a real browser: build a composition with the controls, open its share link in a
fresh browser context and see the same numbers (and the CLI's numbers for the same query)."""
from __future__ import annotations

import json
import math
from urllib.parse import urlsplit

import pytest

from skbmodel import composer
from skbmodel.links import state as sk_state
from tests.browser_util import (REPO_ROOT, WAIT_MS, app_and_browser, eventually, page_with_errors, wait_for_app,
                                wait_for_plotly)
from tests.cli_util import skbmodel_cli

pytestmark = pytest.mark.browser

_TOTALS = """() => {
    for (const gd of document.querySelectorAll('.js-plotly-plot')) {
        const t = (gd.layout && gd.layout.title && gd.layout.title.text) || '';
        if (!t.startsWith('Composed path')) continue;
        const y = gd._fullData.filter(d => d.type === 'bar').map(d => Array.from(d.y));
        return {title: t, sums: [0, 1].map(i => y.reduce((s, a) => s + a[i], 0))};
    }
    return null;
}"""


@pytest.fixture(scope="module")
def app():
    with app_and_browser("dashboard.py") as url_and_browser:
        yield url_and_browser


def _url_has(page, key: str, value: str) -> None:
    st, _ = sk_state.decode(urlsplit(page.url).query)
    assert st.get(key) == value, (key, st.get(key), value)


def _until_written(page, key: str, value: str, choose) -> None:
    """``choose()`` until the page has written ``key=value`` to the URL (a choice made while a run redraws its
    control can be lost on a loaded machine: then it is made again)."""
    def chosen():
        wait_for_app(page)
        if sk_state.decode(urlsplit(page.url).query)[0].get(key) != value:
            choose()
            wait_for_app(page)
        _url_has(page, key, value)

    eventually(chosen)


def _pick(page, key: str, value: str, label: str) -> None:
    """Choose ``label`` in the select box of ``key``, the page's ``value``."""
    def choose():
        page.locator(f".st-key-{key} input[role='combobox']").click()
        page.locator("[role='option']", has_text=label).first.click()

    _until_written(page, key, value, choose)


def _numbers(page) -> dict:
    """The metrics (label: value) and the composed chart's totals, once no element of a run is stale."""
    assert page.locator('[data-stale="true"]').count() == 0, "a run is redrawing the page"
    metrics = page.locator('[data-testid="stMetric"]')
    out = {}
    for i in range(metrics.count()):
        m = metrics.nth(i)
        out[m.locator('[data-testid="stMetricLabel"]').inner_text().strip()] = \
            m.locator('[data-testid="stMetricValue"]').inner_text().strip()
    out["_chart"] = page.evaluate(_TOTALS)
    return out


def test_composition_share_link_in_a_fresh_context_shows_the_same_numbers(app):
    url, browser = app
    ctx, page, errors = page_with_errors(browser, 1500, 1100)
    page.goto(url + "/design")
    wait_for_app(page)
    wait_for_plotly(page, 0)  # a first load of the plotly bundle on a busy machine
    _pick(page, "d_from", "cpumap", composer.START_SHORT["cpumap"])
    _pick(page, "d_skb", "napi_cache", composer.OPTION_SHORT["napi_cache"])
    _pick(page, "d_free", "napi_cache", composer.OPTION_SHORT["napi_cache"])
    _until_written(page, "b_path", "cpumap",  # a radio
                   lambda: page.locator(".st-key-b_path label", has_text="cpumap (destination CPU)").first.click())

    want = {"d_from": "cpumap", "d_skb": "napi_cache", "d_free": "napi_cache", "b_path": "cpumap", "path": "design"}

    def composed():
        # what the page wrote, the URL and the share link (drawn after the page), each read until it says the
        # composition: a key the page has not written yet is a wait, not an error
        st, warnings = sk_state.decode(urlsplit(page.url).query)
        assert not warnings and {k: st.get(k) for k in want} == want, st
        link = page.locator(".st-key-share_link code").inner_text().strip()
        assert sk_state.decode(urlsplit(link).query)[0] == st, (link, st)
        nums = _numbers(page)
        assert nums["_chart"] and nums.get("Δ B − A (ns/packet)") not in (None, "+0.00"), nums
        return st, nums, link

    st, before, link = eventually(composed)
    assert "d_skb=napi_cache" in link and "page=design" in link
    assert not errors and page.locator('[data-testid="stException"]').count() == 0
    ctx.close()

    fresh = browser.new_context(viewport={"width": 1500, "height": 1100})
    page2 = fresh.new_page()
    page2.set_default_timeout(WAIT_MS)  # a limit for a hung run, not a wait
    page2.goto(link)
    wait_for_app(page2)
    page2.wait_for_function("() => location.pathname.replace(/\\/+$/, '').endsWith('/design')", timeout=WAIT_MS)
    wait_for_app(page2)
    wait_for_plotly(page2, 0)
    def same():
        nums = _numbers(page2)
        assert nums == before, (nums, before)

    eventually(same)
    # the CLI gives the page's numbers for the same link
    r = skbmodel_cli("eval", urlsplit(link).query, "--json", cwd=REPO_ROOT)
    assert r.returncode == 0, r.stderr
    ns = json.loads(r.stdout)["outputs"]["path.ns_per_packet"]
    assert before["Cost (ns/packet)"] == f"{ns:.4g}"
    assert math.isclose(before["_chart"]["sums"][0], ns, rel_tol=1e-9)
    fresh.close()
