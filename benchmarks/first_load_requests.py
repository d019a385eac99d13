"""When a new visitor's browser asks for the code of the chart, the metrics, the sidebar's widgets and the
page's components, and when the first chart has data: a fresh browser context per load, in headless system
Chromium, times from the navigation's start (the Resource Timing entries of the page).

Each app argument is a Streamlit script, optionally followed by ``@NAME=VALUE,...`` environment settings of
its server; the apps take turns, ``--loads`` times each (the first round, a fresh server's, is not counted).

    python benchmarks/first_load_requests.py dashboard.py "dashboard.py@STREAMLIT_SERVER_FILE_WATCHER_TYPE=auto"
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402 - after the sys.path set-up above

from benchmarks.bench_pages import _FIRST_CHART_MS  # noqa: E402 - after the sys.path set-up above
from tests.browser_util import launch_chromium, streamlit_server, wait_for_app  # noqa: E402

#: the script files whose request times are printed (Streamlit names each element's code after it)
CHUNKS = ("Metric", "BidiComponent", "PlotlyChart", "Selectbox", "Slider")
_REQUESTS_JS = """() => performance.getEntriesByType('resource')
    .map(e => [e.name.split('/').pop().split('.')[0], e.startTime])"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("apps", nargs="+", help="SCRIPT[@NAME=VALUE,...]")
    ap.add_argument("--loads", type=int, default=5)
    ap.add_argument("--path", default="/slub")
    args = ap.parse_args()
    apps = {a: (a.split("@")[0], dict(kv.split("=", 1) for kv in a.split("@")[1].split(",")) if "@" in a else None)
            for a in args.apps}
    rows = {a: [] for a in apps}
    with sync_playwright() as pw, contextlib.ExitStack() as stack:
        browser = launch_chromium(pw)
        bases = {a: stack.enter_context(streamlit_server(script, env=env)) for a, (script, env) in apps.items()}
        for n in range(args.loads + 1):
            for a in apps:
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                page = ctx.new_page()
                page.goto(bases[a] + args.path)
                chart = float(page.wait_for_function(_FIRST_CHART_MS, timeout=180_000).json_value())
                asked = {}
                for name, t in page.evaluate(_REQUESTS_JS):
                    asked.setdefault(name, t)
                if n:
                    rows[a].append([chart] + [asked.get(c, float("nan")) for c in CHUNKS])
                wait_for_app(page)
                ctx.close()
        browser.close()
    print(f"# {args.path}, medians of {args.loads} first loads per app, ms from the navigation's start")
    print("| app | first chart | " + " | ".join(f"{c} asked" for c in CHUNKS) + " |")
    print("|---|---:|" + "---:|" * len(CHUNKS))
    for a, r in rows.items():
        print(f"| {a} | " + " | ".join(f"{statistics.median(col):.0f}" for col in zip(*r)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
