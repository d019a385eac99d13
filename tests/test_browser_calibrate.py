"""Calibrate page in a real browser (headless system Chromium + the real dashboard).

Paste the seed 004 time_bench lines, fit, see the new profile in use (page and sidebar), and open
its share link in a fresh browser context: the same custom profile, the same numbers.
Screenshots go to artifacts/ (git-ignored).
"""
from __future__ import annotations

import re

import pytest

from skbmodel import model
from skbmodel.evidence import parsers, userfit
from skbmodel.machine.profile import load_profile
from tests.limits import BROWSER_WAIT_S
from tests.browser_util import (WAIT_MS, app_and_browser, page_with_errors, plotly_y, REPO_ROOT, wait_for_app,
                                wait_for_plotly)

pytestmark = pytest.mark.browser

SEED_004_LINES = (" kmem-in-loop Per elem: 109 cycles(tsc) 30.532 ns (step:16)\n"
                  " kmem-bulk    Per elem: 64 cycles(tsc) 17.905 ns (step:16)\n")
ARTIFACTS = REPO_ROOT / "artifacts"


@pytest.fixture(scope="module")
def app():
    with app_and_browser("dashboard.py") as url_and_browser:
        yield url_and_browser


def _in_use_text(page) -> str:
    return page.locator(".st-key-cal_in_use").inner_text()


_PICK_JS = """() => { const el = document.querySelector('.st-key-custom_profile_pick');
    if (!el) return '';
    const inp = el.querySelector('input');
    return (el.textContent || '') + ' ' + (inp ? (inp.value || inp.getAttribute('aria-label') || '') : ''); }"""


def _sidebar_custom_pick(page, want: str = "custom-", timeout_s: float = BROWSER_WAIT_S) -> str:
    """What the sidebar's custom-profile selectbox shows (waits until it shows ``want``)."""
    try:
        page.wait_for_function(f"() => ({_PICK_JS})().includes({want!r})", timeout=timeout_s * 1000)
    except Exception:  # noqa: BLE001 - the assertion below reports what is shown
        pass
    return page.evaluate(_PICK_JS)


def test_paste_fit_select_and_share(app):
    url, browser = app
    ARTIFACTS.mkdir(exist_ok=True)
    ctx, page, errors = page_with_errors(browser, 1400, 1100)
    page.goto(url + "/calibrate")
    wait_for_app(page)
    assert "shipped `e5-1650v4`" in _in_use_text(page) or "shipped e5-1650v4" in _in_use_text(page)

    area = page.locator(".st-key-cal_text textarea")
    area.fill(SEED_004_LINES)
    area.press("Control+Enter")  # commit the text area
    wait_for_app(page)
    page.get_by_text("Map each measurement to a model output").wait_for(timeout=WAIT_MS)
    fit = page.get_by_role("button", name="Fit", exact=True)
    fit.click()
    page.locator(".st-key-cal_fit_ok").wait_for(timeout=WAIT_MS)
    wait_for_app(page)

    # the clock inferred from the two lines' cycles/ns pairs becomes the profile's clock; the cycles
    # values are fitted (their ns twins convert through that clock)
    # (the same fit as the page's, done here: the profile the page must end up using)
    ms = parsers.parse_text(SEED_004_LINES, "pasted text").measurements
    e5 = load_profile("e5-1650v4")
    want = userfit.fit(ms, e5, userfit.suggest_free(ms, e5), label="my-lab", ghz=parsers.infer_clock(ms).ghz).profile
    assert want.value("ghz") == 3.5944
    in_use = _in_use_text(page)
    assert want.id in in_use and "my-lab" in in_use
    assert "fitted from: pasted text, lines 1, 2" in in_use
    # the sidebar selects the new profile
    assert want.id in _sidebar_custom_pick(page, want.id)
    # residual table, parity plot and the fitted constants are shown
    wait_for_plotly(page, 1)  # residuals before/after and the parity plot
    assert plotly_y(page, 0, 1) and all(abs(z) < 1 for z in plotly_y(page, 0, 1))  # residuals after the fit
    assert len(plotly_y(page, 1, 2)) == 2  # parity: the 2 lines (cycles; the ns twins set the clock)
    page.screenshot(path=str(ARTIFACTS / "calibrate_fitted.png"), full_page=True)

    link = page.locator(".st-key-cal_share_link code").inner_text().strip().replace("\n", "")
    assert "/calibrate?" in link and "prof=1~e5-1650v4~" in link
    # numbers the fitted profile gives (shown on the page)
    cap = re.search(r"one-at-a-time ([\d.]+) cycles, bulk ([\d.]+) cycles", in_use)
    assert cap
    out = model.evaluate({"bulk": 16}, want)
    assert float(cap.group(1)) == pytest.approx(float(out["slub.loop_cycles"]), abs=0.006)
    assert not errors
    ctx.close()

    # a fresh browser context (no session, no cookies) opens the share link: same profile, same numbers
    ctx2 = browser.new_context(viewport={"width": 1400, "height": 1100})
    page2 = ctx2.new_page()
    page2.set_default_timeout(WAIT_MS)  # a limit for a hung run, not a wait
    page2.goto(link)
    wait_for_app(page2)
    page2.locator(".st-key-cal_in_use").wait_for(timeout=WAIT_MS)
    in_use2 = _in_use_text(page2)
    assert want.id in in_use2 and "my-lab" in in_use2
    cap2 = re.search(r"one-at-a-time ([\d.]+) cycles, bulk ([\d.]+) cycles", in_use2)
    assert cap2 and cap2.groups() == cap.groups()
    assert want.id in _sidebar_custom_pick(page2, want.id)
    # no "link parameters were ignored" warning
    assert "were ignored or adjusted" not in page2.locator('[data-testid="stMain"]').inner_text()
    page2.screenshot(path=str(ARTIFACTS / "calibrate_shared.png"), full_page=True)
    # the same link on a chart page uses the custom profile too
    page2.goto(link.replace("/calibrate?", "/slub?"))
    wait_for_app(page2)
    assert want.id in _sidebar_custom_pick(page2, want.id)
    ctx2.close()


def test_bad_paste_keeps_the_model_and_names_the_line(app):
    url, browser = app
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(WAIT_MS)  # a limit for a hung run, not a wait
    page.goto(url + "/calibrate")
    wait_for_app(page)
    area = page.locator(".st-key-cal_text textarea")
    area.fill("kmem-in-loop Per elem: 109 cycles(tsc) 30.532 us (step:16)\n")
    area.press("Control+Enter")
    wait_for_app(page)
    warn = page.locator(".st-key-cal_parse_errors").inner_text()
    assert "pasted text, line 1" in warn and "expected 'Per elem: <int> cycles(tsc)" in warn
    assert "shipped" in _in_use_text(page)
    assert page.get_by_role("button", name="Fit", exact=True).is_disabled()
    ctx.close()


def test_a_pasted_perf_report_is_set_beside_the_model(app):
    """A published perf report of the veth path pasted into the perf section: the page names the path from the
    report's header and shows the run's stages beside the model's, as ``python -m skbmodel perf`` prints."""
    from skbmodel import perfin
    from tests.browser_util import eventually

    file = REPO_ROOT / "tests" / "data" / "perf" / "veth-mlx5-e5-1650v4-5.11-baseline.txt"
    doc = perfin.answer(file.read_text(encoding="utf-8"))
    url, browser = app
    ctx, page, errors = page_with_errors(browser)
    page.goto(url + "/calibrate")
    wait_for_app(page)
    page.locator(".st-key-cal_perf_text textarea").fill(file.read_text(encoding="utf-8"))
    page.keyboard.press("Control+Enter")
    summary = f"{len(doc['symbols'])} symbols holding {doc['listed_pct']:.1f} % of the samples; path veth"
    eventually(lambda: summary in page.get_by_text(summary).first.inner_text())
    # the copy block is a component drawn after the page's own elements: wait for its text
    eventually(lambda: "Stages of the run" in page.locator(".st-key-cal_perf_text_block code").inner_text())
    assert "page allocator" in page.locator(".st-key-cal_perf_text_block code").inner_text()
    assert errors == [], errors
    ctx.close()
