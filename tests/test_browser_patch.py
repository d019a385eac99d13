"""The Patch page in a real browser: paste a posted series (several mails, as copied from an archive), read the
verdict and the hunk table, follow its link, and find the same comparison on the Compare page, with the numbers
``python -m skbmodel patch`` prints."""
from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from skbmodel.links import state as sk_state
from tests.browser_util import WAIT_MS, app_and_browser, eventually, focus_slider, wait_for_app, wait_for_plotly
from tests.cli_util import skbmodel_cli

pytestmark = pytest.mark.browser

SERIES = "tests/data/patches/sample/cpumap-napi-skb-cache-get-bulk.diff"  # three mails, no mbox From lines


def _metric(page, label: str) -> str:
    card = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return card.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_paste_a_patch_read_its_verdict_and_open_its_comparison():
    from tests.browser_util import REPO_ROOT

    cli = json.loads(skbmodel_cli("patch", SERIES, "--json", cwd=REPO_ROOT).stdout)
    with app_and_browser("dashboard.py") as (url, browser):
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.set_default_timeout(WAIT_MS)  # a limit for a hung run, not a wait
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/patch")
        wait_for_app(page)
        page.locator("textarea").fill((REPO_ROOT / SERIES).read_text())
        page.keyboard.press("Control+Enter")
        eventually(lambda: _metric(page, "B − A (ns/packet)") == f"{cli['answer']['value']:+.2f}")
        assert _metric(page, "Path") == "cpumap"
        # every mail read, and the hunk table as the command line has it
        assert "Read 3 mail(s), 3 with a diff, 16 hunks" in page.get_by_text("Read 3 mail(s)").inner_text()
        eventually(lambda: page.locator('[data-testid="stDataFrame"]').count() >= 1)  # the hunk table
        eventually(lambda: "Hunks:" in page.locator(".st-key-patch_text_block code").inner_text())
        code = " ".join(page.locator(".st-key-patch_text_block code").inner_text().split())
        assert "Hunks:" in code and "napi-skb-cache" in code and "napi_skb_cache_get_bulk: helper" in code
        href = page.get_by_role("link", name="Open this comparison").get_attribute("href")
        st = sk_state.decode_strict(urlsplit(href).query)
        assert st["page"] == "compare" and sk_state.b_overrides(st) == cli["b"] and st["d_from"] == "cpumap"
        assert st["patch"] == cli["subject"] and st["phash"] == cli["hash"]  # the link names the patch
        # the link is the question: the Compare page shows the same difference and interval
        page.goto(href)
        wait_for_app(page)
        wait_for_plotly(page, 0)
        eventually(lambda: _metric(page, "Δ B − A (ns)") == f"{cli['answer']['value']:+.2f}")
        named = page.locator(".st-key-patch_named").inner_text()
        assert cli["subject"] in named and cli["hash"] in named
        # a move of A: the view is no longer the patch's, and neither the page nor the URL names it
        focus_slider(page, "bulk")
        page.keyboard.press("ArrowRight")


        def unnamed():
            assert "patch=" not in page.evaluate("location.href")
            assert page.locator(".st-key-patch_named").count() == 0
        eventually(unnamed)
        assert errors == [], errors
