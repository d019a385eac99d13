"""The Design page in a real browser: build a composition with the controls, open its share link in a
fresh browser context and see the same numbers (and the CLI's numbers for the same query)."""
from __future__ import annotations

import json
import math
from urllib.parse import urlsplit

import pytest

from skbmodel import design
from skbmodel.links import state as sk_state
from tests.browser_util import (REPO_ROOT, app_and_browser, eventually, page_with_errors, wait_for_app,
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


def _pick(page, key: str, label: str) -> None:
    page.locator(f".st-key-{key} input[role='combobox']").click()
    page.locator("[role='option']", has_text=label).first.click()
    wait_for_app(page)


def _numbers(page) -> dict:
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
    wait_for_plotly(page, 0, timeout=120)  # a first load of the plotly bundle on a busy machine
    _pick(page, "d_from", design.START_SHORT["cpumap"])
    _pick(page, "d_skb", design.OPTION_SHORT["napi_cache"])
    _pick(page, "d_free", design.OPTION_SHORT["napi_cache"])
    page.locator(".st-key-b_path label", has_text="cpumap (destination CPU)").first.click()  # a radio
    wait_for_app(page)

    def composed():
        st, warnings = sk_state.decode(urlsplit(page.url).query)
        assert not warnings and st["d_from"] == "cpumap" and st["d_skb"] == "napi_cache"
        assert st["d_free"] == "napi_cache" and st["b_path"] == "cpumap" and st["path"] == "design"
        nums = _numbers(page)
        assert nums["_chart"] and nums["Δ B − A (ns/packet)"] != "+0.00"
        return st, nums

    st, before = eventually(composed)
    link = page.locator(".st-key-share_link code").inner_text().strip()
    assert "d_skb=napi_cache" in link and "page=design" in link
    assert not errors and page.locator('[data-testid="stException"]').count() == 0
    ctx.close()

    fresh = browser.new_context(viewport={"width": 1500, "height": 1100})
    page2 = fresh.new_page()
    page2.goto(link)
    wait_for_app(page2)
    page2.wait_for_function("() => location.pathname.replace(/\\/+$/, '').endsWith('/design')", timeout=30_000)
    wait_for_app(page2)
    wait_for_plotly(page2, 0, timeout=120)
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
