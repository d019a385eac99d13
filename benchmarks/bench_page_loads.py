"""The machine's busy CPU of one page load in headless Chromium, three ways: a new browser context each
time (as a test that opens a link "in a fresh browser"), ``goto`` again in the same tab (a walk), and a new
tab in the same context.  Start the dashboard first (``streamlit run dashboard.py --server.port 8699``):

    python benchmarks/bench_page_loads.py [URL]

Busy CPU is read from /proc/stat around each load, so the server's work and every Chromium process
count; run it on an otherwise idle machine.
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from playwright.sync_api import sync_playwright
from tests.browser_util import launch_chromium, wait_for_app, wait_for_plotly  # noqa: E402

HZ = 100  # USER_HZ of /proc/stat on Linux


def busy() -> float:
    """Busy core-seconds of the whole machine since boot (all but idle and iowait)."""
    with open("/proc/stat") as f:
        v = list(map(int, f.readline().split()[1:]))
    return (sum(v) - v[3] - v[4]) / HZ


URL = sys.argv[1] if len(sys.argv) > 1 else "http://localhost:8699/slub"
with sync_playwright() as p:
    b = launch_chromium(p)
    for mode in ("new context", "same page", "new page, same context"):
        ctx = b.new_context(viewport={"width": 1400, "height": 1000})
        pg = ctx.new_page()
        out = []
        for i in range(4):
            if mode == "new context" and i:
                ctx.close()
                ctx = b.new_context(viewport={"width": 1400, "height": 1000})
                pg = ctx.new_page()
            if mode.startswith("new page") and i:
                pg.close()
                pg = ctx.new_page()
            c0, t0 = busy(), time.time()
            pg.goto(URL)
            wait_for_app(pg)
            wait_for_plotly(pg, 0)
            out.append((round(busy() - c0, 2), round(time.time() - t0, 2)))
        ctx.close()
        print(mode, "busy CPU s, wall s per load:", out)
    b.close()
