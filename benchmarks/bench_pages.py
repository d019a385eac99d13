"""Page switch and a new visitor's first chart, dashboard vs a bare three-page app, in one run.

For each app (the dashboard on three of its pages, and benchmarks/bare_pages_app.py: three pages of one
slider and two charts each), in headless Chromium and measured in the page's own clock:

  * first load: a fresh browser context opens the first page; time from the navigation's start to the
    first animation frame at which the page's first Plotly chart has data, and the CPU time the browser's
    renderer processes spent until then (Chromium's SystemInfo.getProcessInfo): the work a new visitor's
    browser does for the first chart, which the machine's load does not stretch as it stretches the wall time;
  * page switch: a click on the next page's link in the sidebar navigation; time from the click to the
    first frame at which the new page's first chart has data (a chart element that was not on the old
    page).

With --blocks N the apps take turns block by block, so that changes of the machine's load hit both; with
--base DIR a third app, another commit's dashboard, takes its turn too.

    python benchmarks/bench_pages.py --switches 30 --loads 10 --blocks 3 [--base /tmp/base]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402 - after the sys.path set-up above
from playwright.sync_api import sync_playwright  # noqa: E402 - after the sys.path set-up above

from tests.browser_util import launch_chromium, streamlit_server, wait_for_app  # noqa: E402

APPS = {"dashboard": ("dashboard.py", ("slub", "veth", "zeroing")),
        "bare": ("benchmarks/bare_pages_app.py", ("a", "b", "c"))}

_FIRST_CHART_MS = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  return gd && gd._fullData && gd._fullData.length ? performance.now() : false;
}"""
_MARK_OLD = """() => { document.querySelectorAll('.js-plotly-plot').forEach(g => { g.__old = true; });
                     return performance.now(); }"""
_NEW_CHART_MS = """(slug) => {
  if (!location.pathname.endsWith('/' + slug)) return false;
  const gd = document.querySelector('.js-plotly-plot');
  return gd && !gd.__old && gd._fullData && gd._fullData.length ? performance.now() : false;
}"""


def renderer_cpu_s(cdp) -> dict:
    """CPU seconds of every renderer process so far, by process id (``cdp``: a browser-level CDP session)."""
    return {p["id"]: p["cpuTime"] for p in cdp.send("SystemInfo.getProcessInfo")["processInfo"]
            if p["type"] == "renderer"}


def first_loads(browser, base: str, slug: str, n: int) -> tuple[list[float], list[float]]:
    """``n`` first loads of ``slug``: (ms to the first chart, renderer CPU ms until then) of each."""
    cdp = browser.new_browser_cdp_session()
    out, cpu = [], []
    for _ in range(n):
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        before = renderer_cpu_s(cdp)
        page.goto(f"{base}/{slug}")
        out.append(float(page.wait_for_function(_FIRST_CHART_MS, timeout=180_000).json_value()))
        # a fresh context has its own renderer: the new process, plus what any other renderer did meanwhile
        cpu.append(1000 * sum(v - before.get(k, 0.0) for k, v in renderer_cpu_s(cdp).items()))
        ctx.close()
    cdp.detach()
    return out, cpu


def switches(browser, base: str, slugs, n: int) -> list[float]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.goto(f"{base}/{slugs[0]}")
    page.wait_for_function(_FIRST_CHART_MS, timeout=180_000)
    wait_for_app(page)
    out = []
    for i in range(n):
        target = slugs[(i + 1) % len(slugs)]
        # Streamlit's own navigation links carry an absolute href, st.page_link's (the dashboard's) a relative one
        link = page.locator(f'a[href$="/{target}"], a[href="{target}"]').first
        t0 = float(page.evaluate(_MARK_OLD))
        link.click()
        t1 = float(page.wait_for_function(_NEW_CHART_MS, arg=target, timeout=180_000).json_value())
        out.append(t1 - t0)
        wait_for_app(page)
    ctx.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--switches", type=int, default=30, help="page switches per app")
    ap.add_argument("--loads", type=int, default=10, help="first loads per app")
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--base", type=Path, help="a copy of another commit (e.g. `git archive C | tar -x -C DIR`, "
                                              "its .venv linked): its dashboard.py is measured too, as 'base'")
    ap.add_argument("--base-own-nav", action="store_true",
                    help="show Streamlit's own page navigation in the base too (a dashboard from before it drew "
                         "its own links); by default the base runs as the dashboard does")
    args = ap.parse_args()
    apps = dict(APPS)
    if args.base:
        apps["base"] = (str(args.base.resolve() / "dashboard.py"), APPS["dashboard"][1])
    res = {name: {"switch": [], "load": [], "load_cpu": []} for name in apps}
    # the repository's .streamlit/config.toml hides Streamlit's own navigation (the dashboard draws its links);
    # the bare app keeps it, as a bare st.navigation app has it, and so does a dashboard from before its links
    own_nav = {"STREAMLIT_CLIENT_SHOW_SIDEBAR_NAVIGATION": "true"}
    env = {"dashboard": None, "bare": own_nav, "base": own_nav if args.base_own_nav else None}
    with sync_playwright() as pw, contextlib.ExitStack() as stack:
        browser = launch_chromium(pw)
        bases = {name: stack.enter_context(streamlit_server(script, env=env[name]))
                 for name, (script, _) in apps.items()}
        for name, (_, slugs) in apps.items():  # warm-up: the first run of each page script
            switches(browser, bases[name], slugs, len(slugs))
        for _ in range(args.blocks):
            for name, (_, slugs) in apps.items():
                wall, cpu = first_loads(browser, bases[name], slugs[0], max(args.loads // args.blocks, 1))
                res[name]["load"] += wall
                res[name]["load_cpu"] += cpu
                res[name]["switch"] += switches(browser, bases[name], slugs, max(args.switches // args.blocks, 1))
        browser.close()
    print(f"# page switch and first chart, headless Chromium, {args.blocks} interleaved blocks")
    print(f"# load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for what in ("switch", "load", "load_cpu"):
        p50 = {n: float(np.percentile(res[n][what], 50)) for n in apps}
        p95 = {n: float(np.percentile(res[n][what], 95)) for n in apps}
        print(f"{what:>6}: " + ", ".join(f"{n} p50/p95 {p50[n]:.0f}/{p95[n]:.0f} ms (n={len(res[n][what])})"
                                         for n in apps)
              + "; ratio p50 to bare: " + ", ".join(f"{n} {p50[n] / p50['bare']:.2f}x" for n in apps if n != "bare"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
