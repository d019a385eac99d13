"""What the browser's main thread does between a click on a page's link and the new page's first chart.

For the dashboard (its three pages of ``bench_pages.py``) and the bare three-page app, in headless system
Chromium, with the V8 sampling profiler (CDP ``Profiler``) running over ``--switches`` switches: a 3 ms marker
function runs at the click and another at the first animation frame in which the new page's first chart has
data (``bench_pages.py``'s condition), and every sample between the two is charged to the first script file
on its stack: Streamlit loads each element's code as a chunk of its own (``Slider``, ``Metric``,
``BidiComponent``, ``PlotlyChart``, ...), so the split names the elements a switch pays for; ``index`` is
Streamlit's core (messages, the React tree), ``react-dom`` React itself, ``(program)`` the browser's style,
layout and paint, ``(idle)`` waiting for the server.

The profiler slows the page: the times are longer than ``bench_pages.py``'s; the split is what this is for.

    python benchmarks/bench_switch_profile.py --switches 12
"""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402 - after the sys.path set-up above
from playwright.sync_api import sync_playwright  # noqa: E402 - after the sys.path set-up above

from benchmarks.bench_move_profile import split_moves  # noqa: E402 - after the sys.path set-up above
from benchmarks.bench_pages import APPS, _FIRST_CHART_MS, _NEW_CHART_MS  # noqa: E402
from tests.browser_util import launch_chromium, streamlit_server, wait_for_app  # noqa: E402

# busy-wait markers at the click and at the first frame that shows the new page's chart
_MARK_JS = """(slug) => {
  const spin = () => { const t = performance.now(); while (performance.now() - t < 3) {} };
  window.__skbMarkKey = function __skbMarkKey() { spin(); };
  window.__skbMarkChart = function __skbMarkChart() { spin(); };
  document.querySelectorAll('.js-plotly-plot').forEach(g => { g.__old = true; });
  window.__skbT0 = null; window.__skbT1 = null;
  document.addEventListener('click', () => { window.__skbT0 = performance.now(); window.__skbMarkKey(); },
                            { capture: true, once: true });
  const done = """ + _NEW_CHART_MS + """;
  const loop = () => { const t = done(slug); if (t) { window.__skbT1 = t; window.__skbMarkChart(); }
                       else requestAnimationFrame(loop); };
  requestAnimationFrame(loop);
}"""


def measure(browser, app: str, slugs, n: int) -> dict:
    env = None if app == APPS["dashboard"][0] else {"STREAMLIT_CLIENT_SHOW_SIDEBAR_NAVIGATION": "true"}
    with streamlit_server(app, env=env) as base:
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        page.goto(f"{base}/{slugs[0]}")
        page.wait_for_function(_FIRST_CHART_MS, timeout=180_000)
        wait_for_app(page)
        cdp = ctx.new_cdp_session(page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 250})
        lat = []
        for i in range(len(slugs) + n):  # the first round of switches warms every page up, unprofiled
            if i == len(slugs):
                cdp.send("Profiler.start")
            target = slugs[(i + 1) % len(slugs)]
            page.evaluate(_MARK_JS, target)
            page.locator(f'a[href$="/{target}"], a[href="{target}"]').first.click()
            page.wait_for_function("() => window.__skbT1 !== null", timeout=180_000)
            if i >= len(slugs):
                lat.append(page.evaluate("() => window.__skbT1 - window.__skbT0"))
            wait_for_app(page)
        profile = cdp.send("Profiler.stop")["profile"]
        ctx.close()
    per = split_moves(profile)
    total = collections.Counter()
    for m in per:
        total.update(m)
    k = max(len(per), 1)
    return dict(app=app, switches=len(per), latency=float(np.median(lat)), bundles={b: v / k for b, v in total.items()})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--switches", type=int, default=12)
    ap.add_argument("--top", type=int, default=16, help="script files listed, by the dashboard's time")
    args = ap.parse_args()
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        res = [measure(browser, script, slugs, args.switches) for script, slugs in APPS.values()]
        browser.close()
    print(f"# click -> the new page's first chart, under the profiler: mean ms per switch over {args.switches} "
          "switches, by the script file first on the stack")
    names = sorted(res[0]["bundles"], key=lambda b: -res[0]["bundles"][b])[:args.top]
    print("| file | " + " | ".join(r["app"] for r in res) + " |")
    print("|---|" + "---:|" * len(res))
    print("| switch, median (ms) | " + " | ".join(f"{r['latency']:.0f}" for r in res) + " |")
    print("| all samples | " + " | ".join(f"{sum(r['bundles'].values()):.0f}" for r in res) + " |")
    for b in names:
        print(f"| {b} | " + " | ".join(f"{r['bundles'].get(b, 0.0):.1f}" for r in res) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
