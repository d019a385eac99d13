"""Live controls (skbview.app.live) against the bare one-slider app, in headless Chromium, in one run.

For the bare app (benchmarks/bare_app.py: slider "x", one Plotly line) and the dashboard's live pages
(/slub, /veth, /kfree; --pages), taking turns block by block so a change of the machine's load hits every one alike:

  * bare app, key press -> chart: ArrowRight/ArrowLeft on the st.slider thumb, from the keydown to the
    first animation frame / DOM mutation at which the chart's line, as drawn in the SVG, differs;
  * live page, drag step -> chart: the mouse holds the live control's thumb and moves it step by step;
    from the pointermove on the control to the first frame / mutation at which the page's chart
    (its current-setting marker, trace 0, as drawn) differs; the WebSocket frames the page sends during the drag
    are counted (round trips per drag);
  * live page, key press -> chart: ArrowRight/ArrowLeft on the focused live control;
  * live page, release -> state/URL: from the pointerup to the moment the address bar carries the value
    and the sidebar slider (the same parameter) shows it;
  * payload: the bytes of the JSON the control received, and the server time to build it
    (skbview.app.live.payload, in this process, median of 20: wall clock and CPU time).

Times come from the page's clock (performance.timeOrigin + performance.now()).  Ratios are to the bare
app's key press -> chart, same run.

    python benchmarks/bench_scrub.py                    # 3 blocks of 10 steps each
    python benchmarks/bench_scrub.py --blocks 4 --steps 15 --json artifacts/scrub.json
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402 - after the sys.path set-up above
from playwright.sync_api import sync_playwright  # noqa: E402 - after the sys.path set-up above

from tests.browser_util import (  # noqa: E402 - after the sys.path set-up above
    focus_slider, launch_chromium, live_control, live_thumb_x, live_value, slider_selector, slider_value,
    streamlit_server, wait_for_app, wait_for_plotly,
)

BARE_APP = "benchmarks/bare_app.py"
LIVE_PAGES = ("slub", "veth", "kfree")
#: drag stride per page (in the parameter's unit): a few of its steps per mouse move
STRIDES = {"slub": 4, "veth": 2, "kfree": 16, "zeroing": 16, "cpumap": 0.05}

# In the page: t1 = the first animation frame / mutation at which the trace as drawn (its line's SVG path,
# its points' positions) differs from the armed state (absolute ms); t0 = the arming event (keydown or
# pointermove, absolute ms).
_PAGE_PROBE = """
([selector, trace, drawn]) => {
  // drawn: what is drawn of the trace (its line's path, its points' positions in the SVG); else its data y
  // (the bare app's line keeps its drawn shape: the y axis scales with it)
  const getY = () => {
    const gd = document.querySelector(selector);
    if (!gd || !gd._fullData) return null;
    if (!drawn) return gd._fullData[trace] ? Array.from(gd._fullData[trace].y || []) : null;
    const g = Array.from(gd.querySelectorAll('.scatterlayer .trace')).find(
      (e) => e.__data__ && e.__data__[0] && e.__data__[0].trace && e.__data__[0].trace.index === trace);
    if (!g) return null;
    return Array.from(g.querySelectorAll('path.js-line, path.point'))
      .map((e) => (e.getAttribute('d') || '') + '@' + (e.getAttribute('transform') || ''));
  };
  const now = () => performance.timeOrigin + performance.now();
  const B = window.__scrub = {armed: false, y0: null, t1: null, t0: null};
  const check = () => {
    if (!B.armed || B.t1 !== null) return;
    const y = getY();
    if (y && JSON.stringify(y) !== JSON.stringify(B.y0)) { B.t1 = now(); B.armed = false; }
  };
  const loop = () => { check(); requestAnimationFrame(loop); };
  requestAnimationFrame(loop);
  new MutationObserver(check).observe(document.body, {subtree: true, childList: true, attributes: true,
                                                      characterData: true});
  document.addEventListener('keydown', () => { if (B.armed && B.t0 === null) B.t0 = now(); }, true);
  B.arm = () => { B.y0 = getY(); B.t0 = null; B.t1 = null; B.armed = true; return B.y0 !== null; };
  B.urlAt = null;
  B.watchUrl = (key, value) => {
    B.urlAt = null;
    const poll = () => {
      if (new URL(location.href).searchParams.get(key) === value) { B.urlAt = now(); return; }
      requestAnimationFrame(poll);
    };
    poll();
  };
  return true;
}
"""
_FRAME_PROBE = """
() => {
  const now = () => performance.timeOrigin + performance.now();
  const F = window.__scrubFrame = {t0: null, up: null, armed: false};
  const mark = () => { if (F.armed && F.t0 === null) F.t0 = now(); };
  document.addEventListener('pointermove', mark, true);
  document.addEventListener('keydown', mark, true);
  document.addEventListener('pointerup', () => { F.up = now(); }, true);
  F.arm = () => { F.t0 = null; F.armed = true; };
  return true;
}
"""


def _pct(values, q):
    return float(np.percentile(values, q)) if values else float("nan")


def _wait_t1(page, timeout_ms: float = 20_000) -> bool:
    try:
        page.wait_for_function("() => window.__scrub.t1 !== null", timeout=timeout_ms, polling="raf")
        return True
    except Exception:  # noqa: BLE001 - playwright TimeoutError
        return False


def bare_keys(page, n: int, out: list) -> None:
    lo, hi = 1, 256
    for i in range(n):
        v = slider_value(page, "x")
        key = "ArrowRight" if (i % 2 == 0 and v < hi) or v <= lo else "ArrowLeft"
        focus_slider(page, "x")
        page.evaluate("() => window.__scrub.arm()")
        page.keyboard.press(key)
        if _wait_t1(page):
            out.append(page.evaluate("() => window.__scrub.t1 - window.__scrub.t0"))
        wait_for_app(page, settle_ms=100)


def live_drag(page, slug: str, key: str, steps: int, stride: float, res: dict) -> None:
    frame = live_control(page, slug)
    page.evaluate(_FRAME_PROBE)
    p_lo, p_hi = frame.bound("min"), frame.bound("max")
    v = live_value(frame)
    up = v + stride * steps <= p_hi or v - stride * steps < p_lo
    page.mouse.move(*live_thumb_x(frame, v))
    page.mouse.down()
    sent0 = len(page._scrub_sent)  # noqa: SLF001
    for k in range(1, steps + 1):
        target = v + (stride * k if up else -stride * k)
        page.evaluate("() => window.__scrub.arm()")
        page.evaluate("() => window.__scrubFrame.arm()")
        page.mouse.move(*live_thumb_x(frame, target))
        if _wait_t1(page, 10_000):
            t0 = page.evaluate("() => window.__scrubFrame.t0")
            t1 = page.evaluate("() => window.__scrub.t1")
            if t0 is not None:
                res["drag_ms"].append(t1 - t0)
        else:
            res["drag_missed"] += 1
    res["round_trips"].append(len(page._scrub_sent) - sent0)  # noqa: SLF001
    final = live_value(frame)
    shown = str(int(final)) if float(final).is_integer() else repr(final)
    page.evaluate("([k, v]) => window.__scrub.watchUrl(k, v)", [key, shown])
    page.mouse.up()
    page.wait_for_function("() => window.__scrub.urlAt !== null", timeout=60_000, polling="raf")
    url_ms = page.evaluate("() => window.__scrub.urlAt") - page.evaluate("() => window.__scrubFrame.up")
    page.wait_for_function("([sel, v]) => { const el = document.querySelector(sel);"
                           " return el && Number(el.value || el.getAttribute('aria-valuenow')) === v; }",
                           arg=[slider_selector(key), final], timeout=60_000)
    res["release_url_ms"].append(url_ms)
    wait_for_app(page, settle_ms=100)
    res["release_state_ok"].append(slider_value(page, key) == final)


def live_keys(page, slug: str, n: int, res: dict) -> None:
    frame = live_control(page, slug)
    page.evaluate(_FRAME_PROBE)
    rng = frame.range
    for i in range(n):
        v = live_value(frame)
        hi = frame.bound("max")
        key = "ArrowRight" if i % 2 == 0 and v < hi else "ArrowLeft"
        page.evaluate("() => window.__scrub.arm()")
        page.evaluate("() => window.__scrubFrame.arm()")
        rng.press(key)
        if _wait_t1(page, 10_000):
            t0 = page.evaluate("() => window.__scrubFrame.t0")
            res["key_ms"].append(page.evaluate("() => window.__scrub.t1") - t0)
        page.wait_for_timeout(500)  # the control sends the value 400 ms after the last key
        wait_for_app(page, settle_ms=100)
        frame = live_control(page, slug)


def payload_server_ms(slug: str, repeats: int = 20) -> tuple[float, float, int]:
    """Median server time to build ``slug``'s payload (this process, the page's own metric row,
    :func:`skbview.app.ui.page_metrics`): wall clock and this process's CPU time (which the other jobs
    on a loaded machine inflate less), and its bytes."""
    from skbmodel import answers
    from skbmodel.links import state as sk_state
    from skbview.app import live, ui

    state = {**sk_state.defaults(), "page": slug}
    res = answers.of_state(state)
    out, iv = {a.output: a.value for a in res.values}, {a.output: (a.lo, a.hi) for a in res.values}
    headline = ui.page_metrics(slug, state)
    live.payload(slug, state, headline, out, iv)
    wall, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        body = live.payload(slug, state, headline, out, iv)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return statistics.median(wall), statistics.median(cpu), len(body.encode())


def _open(browser, url: str):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page._scrub_sent = []  # noqa: SLF001
    page.on("websocket", lambda ws: ws.on("framesent", lambda p: page._scrub_sent.append(len(p))))
    page.goto(url)
    wait_for_app(page)
    wait_for_plotly(page, 0)
    return page


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10, help="drag steps and key presses per page and block")
    ap.add_argument("--pages", default=",".join(LIVE_PAGES), help="live pages, comma-separated")
    ap.add_argument("--json", help="write the raw samples here")
    a = ap.parse_args()
    live_pages = tuple(a.pages.split(","))
    load0 = os.getloadavg()

    from skbview import charts

    server_ms = {slug: payload_server_ms(slug) for slug in live_pages}
    results = {slug: {"drag_ms": [], "drag_missed": 0, "round_trips": [], "key_ms": [], "release_url_ms": [],
                      "release_state_ok": [], "payload_bytes": None} for slug in live_pages}
    bare: list[float] = []
    with streamlit_server(BARE_APP) as bare_url, streamlit_server("dashboard.py") as dash_url, \
            sync_playwright() as p:
        browser = launch_chromium(p)
        bare_page = _open(browser, bare_url + "/")
        bare_page.evaluate(_PAGE_PROBE, [".js-plotly-plot", 0, False])
        pages = {}
        for slug in live_pages:
            pg = _open(browser, f"{dash_url}/{slug}")
            frame = live_control(pg, slug)
            results[slug]["payload_bytes"] = frame.payload_bytes()
            name = next(iter(charts.chart_labels(slug)))
            pg.evaluate(_PAGE_PROBE, [f".st-key-chart_{slug}_{name} .js-plotly-plot", 0, True])
            pages[slug] = pg
        for _ in range(a.blocks):
            bare_keys(bare_page, a.steps, bare)
            for slug, pg in pages.items():
                key = charts.LIVE_CONTROLS[slug][0]
                live_drag(pg, slug, key, a.steps, STRIDES[slug], results[slug])
                pg.evaluate(_PAGE_PROBE, [f".st-key-chart_{slug}_{next(iter(charts.chart_labels(slug)))} "
                                          ".js-plotly-plot", 0, True])
                live_keys(pg, slug, a.steps, results[slug])
                pg.evaluate(_PAGE_PROBE, [f".st-key-chart_{slug}_{next(iter(charts.chart_labels(slug)))} "
                                          ".js-plotly-plot", 0, True])
        browser.close()

    base = _pct(bare, 50)
    print("load average (1, 5, 15 min) at the start %.1f %.1f %.1f, at the end %.1f %.1f %.1f"
          % (*load0, *os.getloadavg()))
    print(f"bare app, key press -> chart: n={len(bare)} p50 {base:.1f} ms, p90 {_pct(bare, 90):.1f} ms")
    for slug, r in results.items():
        d, k = r["drag_ms"], r["key_ms"]
        print(f"/{slug}: drag step -> chart n={len(d)} (missed {r['drag_missed']}) p50 {_pct(d, 50):.1f} ms "
              f"({_pct(d, 50) / base:.2f}x), p90 {_pct(d, 90):.1f} ms ({_pct(d, 90) / base:.2f}x); "
              f"key press -> chart n={len(k)} p50 {_pct(k, 50):.1f} ms ({_pct(k, 50) / base:.2f}x); "
              f"round trips per drag {r['round_trips']}; release -> URL p50 {_pct(r['release_url_ms'], 50):.0f} ms, "
              f"state right {sum(r['release_state_ok'])}/{len(r['release_state_ok'])}; "
              f"payload {r['payload_bytes']} B, built in {server_ms[slug][0]:.1f} ms wall, "
              f"{server_ms[slug][1]:.1f} ms CPU (server, median)")
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps({"bare_key_ms": bare, "pages": results,
                                            "server_ms": server_ms}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
