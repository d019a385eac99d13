"""In headless Chromium: the Overview draws a path's fitted rest as the named stages of its published perf profile."""
from __future__ import annotations

import pytest

from skbmodel import model
from skbmodel.evidence import perfprofile
from tests.browser_util import WAIT_MS, launch_chromium, shared_server, wait_for_app, wait_for_plotly

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")

_REST_BARS = """() => { const gd = document.querySelector('.st-key-chart_overview_breakdown .js-plotly-plot');
    return gd._fullData.filter(t => t.type === 'bar' && String(t.x[0]).startsWith('rest of path'))
        .map(t => ({name: t.name, y: Number(t.y[0]), hover: t.hovertemplate, text: t.text ? t.text[0] : ''})); }"""


@pytest.mark.parametrize("path", ["veth", "xdp_pass"])
def test_overview_draws_the_rest_in_named_stages(path):
    url = shared_server("dashboard.py")
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(WAIT_MS)
            page.goto(f"{url}/?path={path}")
            wait_for_app(page)
            page.locator(".st-key-chart_overview_breakdown .js-plotly-plot").wait_for(state="attached")
            wait_for_plotly(page, 0)
            bars = page.evaluate(_REST_BARS)
        finally:
            browser.close()
    split = perfprofile.breakdown_stages_ns({**model.default_params(None), "path": path})
    assert [b["name"] for b in bars] == [perfprofile.stage_label(s) for s in split["stages"]]
    assert bars[-1]["name"] == "rest, unnamed"
    assert sum(b["y"] for b in bars) == pytest.approx(float(split["parts"]["rest of path"]), rel=1e-6)
    src = perfprofile.default_for(path).id
    assert all(src in b["hover"] for b in bars[:-1])
    # the largest stage is labelled in its segment, with its name
    assert bars[0]["text"].startswith(bars[0]["name"])
