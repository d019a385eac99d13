"""Where a slider move's time goes in the browser: the phases of one move, the messages and the chart's node.

For each app (the dashboard page and the bare one-slider app, in the same run), in headless system
Chromium, every move (an arrow key on the slider) is split by timestamps taken in the page's own clock:

  * ``key->send``: from the keydown to the browser sending the rerun request over the WebSocket;
  * ``send->1st``: to the first reply (the server has started the run);
  * ``1st->last``: to the last reply before the chart changed (the server's run, as the page received it:
    a page busy drawing receives the rest of the replies late);
  * ``last->chart``: from that reply to the frame in which the chart's y differs (the page's own work:
    React, then Plotly);
  * the number of replies (ForwardMsgs) before the chart changed;
  * whether the chart's ``.js-plotly-plot`` node after the move is the one before it (``kept``) or a new
    one (``new``: the chart was mounted again and Plotly drew it from scratch, not by ``Plotly.react``).

    python benchmarks/bench_move_phases.py --path /slub --key bulk --moves 16
    python benchmarks/bench_move_phases.py --path /design --key xdp_batch --moves 16

Medians over the moves; the first two moves of each app are not counted.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402 - after the sys.path set-up above
from playwright.sync_api import sync_playwright  # noqa: E402 - after the sys.path set-up above

from benchmarks.bench_latency import BARE_APP, _PROBE_JS, move_key  # noqa: E402 - after the sys.path set-up above
from tests.browser_util import (  # noqa: E402 - after the sys.path set-up above
    focus_slider,
    launch_chromium,
    streamlit_server,
    wait_for_app,
    wait_for_plotly,
)

# Wraps the page's WebSocket before the app opens it: the time of every frame sent and received.
_WS_JS = """
(() => {
  const Native = window.WebSocket;
  window.__skbWs = {sent: [], recv: []};
  function Wrapped(...args) {
    const ws = new Native(...args);
    const send = ws.send.bind(ws);
    ws.send = (data) => { window.__skbWs.sent.push(performance.now()); return send(data); };
    ws.addEventListener('message', () => window.__skbWs.recv.push(performance.now()));
    return ws;
  }
  Wrapped.prototype = Native.prototype;
  Object.assign(Wrapped, Native);
  window.WebSocket = Wrapped;
})();
"""
_TAG_JS = "() => { const g = document.querySelectorAll('.js-plotly-plot')[0]; g.__skbTag = 1; }"
_KEPT_JS = "() => document.querySelectorAll('.js-plotly-plot')[0].__skbTag === 1"
PHASES = ("key->send", "send->1st", "1st->last", "last->chart", "total")


def measure(browser, app: str, path: str, key: str, moves: int, warmup: int = 2) -> dict:
    rows, kept = [], []
    with streamlit_server(app) as base:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.add_init_script(_WS_JS)
        page.goto(base.rstrip("/") + (path if path not in ("", "/") else "/"))
        wait_for_app(page)
        wait_for_plotly(page, 0)
        page.evaluate(_PROBE_JS, [0, 0])
        for i in range(warmup + moves):
            focus_slider(page, key)
            page.evaluate("() => window.__skbBench.arm()")
            page.evaluate("() => { window.__skbWs.sent = []; window.__skbWs.recv = []; }")
            page.evaluate(_TAG_JS)
            page.keyboard.press(move_key(page, key, i))
            page.wait_for_function("() => window.__skbBench.t1 !== null", timeout=15000, polling="raf")
            wait_for_app(page, settle_ms=100)
            t0, t1, sent, recv = page.evaluate(
                "() => [window.__skbBench.t0, window.__skbBench.t1, window.__skbWs.sent, window.__skbWs.recv]")
            before = [t for t in recv if t <= t1]
            if i < warmup or not sent or not before:
                continue
            rows.append((sent[0] - t0, before[0] - sent[0], before[-1] - before[0], t1 - before[-1], t1 - t0,
                         len(before)))
            kept.append(bool(page.evaluate(_KEPT_JS)))
        page.close()
    med = np.median(np.array(rows), axis=0)
    return dict(app=app, n=len(rows), **dict(zip(PHASES, med[:5])), replies=med[5],
                chart="kept" if all(kept) else ("new" if not any(kept) else "mixed"))


def app_and_bare(measure_one, doc: str, moves: int) -> tuple[argparse.Namespace, list[dict]]:
    """Parse ``--app --path --key --moves`` and run ``measure_one(browser, app, path, key, moves)`` on the
    app, then on the bare one-slider app, in one headless Chromium: the results in that order."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--app", default="dashboard.py")
    ap.add_argument("--path", default="/slub")
    ap.add_argument("--key", default="bulk")
    ap.add_argument("--moves", type=int, default=moves)
    args = ap.parse_args()
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            return args, [measure_one(browser, args.app, args.path, args.key, args.moves),
                          measure_one(browser, BARE_APP, "/", "x", args.moves)]
        finally:
            browser.close()


def main() -> int:
    args, results = app_and_bare(measure, __doc__, moves=16)
    print(f"# one slider move in phases (median of {args.moves} moves, ms; page clock)")
    print("| app | " + " | ".join(PHASES) + " | replies | chart node |")
    print("|---|" + "---:|" * (len(PHASES) + 1) + "---|")
    for r in results:
        label = f"{r['app']} {args.path}" if r["app"] != BARE_APP else r["app"]
        print(f"| {label} | " + " | ".join(f"{r[k]:.0f}" for k in PHASES) + f" | {r['replies']:.0f} | {r['chart']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
