"""Slider -> chart-updated latency of a Streamlit app in headless Chromium.

For the app under test AND the bare baseline (benchmarks/bare_app.py, slider "x",
chart 0), in the same run:

  * start `streamlit run <app>` on a free port, open <base URL><path> in headless
    system Chromium, wait until the app is idle and the chart has data;
  * focus the slider thumb (`.st-key-<key>`), then for each of --moves moves press
    ArrowRight/ArrowLeft (alternating; "step" keeps one direction and turns at the
    end of the range) and measure, in the page's own clock, from the keydown event
    to the first animation frame / DOM mutation at which `gd._fullData[trace].y`
    of the chart differs from its value before the key press;
  * report p50 and p95 in ms, then the ratio app / bare.

With --blocks N the moves are split into N blocks and the apps take turns block by block, so a
change of the machine's load during the run hits every app alike.  With --decompose two more apps
are measured in the same run: benchmarks/shell_app.py (the dashboard's sidebar and live-view
mechanism around the bare chart) and benchmarks/rich_chart_app.py (one slider and the page's
first real chart).

    python benchmarks/bench_latency.py --app dashboard.py --path "/" --key bulk --chart 0 --moves 20
    python benchmarks/bench_latency.py --app dashboard.py --path /slub --key bulk --moves 60 --blocks 4 --decompose
    python benchmarks/bench_latency.py --app benchmarks/bare_app.py --key x   # bare vs bare, ratio ~1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402 - after the sys.path set-up above
from playwright.sync_api import sync_playwright  # noqa: E402 - after the sys.path set-up above

from tests.browser_util import (  # noqa: E402 - after the sys.path set-up above
    focus_slider,
    launch_chromium,
    slider_selector,
    slider_value,
    streamlit_server,
    wait_for_app,
    wait_for_plotly,
)

BARE_APP = "benchmarks/bare_app.py"

# Installs (once per page) a probe: keydown on the document records t0; a
# requestAnimationFrame loop plus a MutationObserver record t1 at the first moment
# the chart's y differs from the value captured when the move was armed.
_PROBE_JS = """
([chartIndex, traceIndex]) => {
  const getY = () => {
    const gd = document.querySelectorAll('.js-plotly-plot')[chartIndex];
    if (!gd || !gd._fullData || !gd._fullData[traceIndex]) return null;
    return gd._fullData[traceIndex].y;
  };
  const same = (a, b) => {
    if (a === b) return true;
    if (!a || !b || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      const x = a[i], y = b[i];
      if (x !== y && !(Number.isNaN(x) && Number.isNaN(y))) return false;
    }
    return true;
  };
  const copy = (y) => (y ? Array.from(y) : null);
  const B = window.__skbBench = {armed: false, y0: null, t0: null, t1: null, frames: 0};
  const check = () => {
    if (!B.armed || B.t0 === null || B.t1 !== null) return;
    const y = getY();
    if (y && !same(y, B.y0)) { B.t1 = performance.now(); B.armed = false; }
  };
  document.addEventListener('keydown', () => {
    if (B.armed && B.t0 === null) B.t0 = performance.now();
  }, true);
  const loop = () => { B.frames++; check(); requestAnimationFrame(loop); };
  requestAnimationFrame(loop);
  new MutationObserver(check).observe(document.body,
      {subtree: true, childList: true, attributes: true, characterData: true});
  B.arm = () => { B.y0 = copy(getY()); B.t0 = null; B.t1 = null; B.armed = true; return B.y0 !== null; };
  return true;
}
"""


@dataclass
class Result:
    label: str
    app: str
    url: str
    key: str
    chart: int
    samples_ms: list[float] = field(default_factory=list)
    wall_ms: list[float] = field(default_factory=list)
    timeouts: int = 0
    first_load_ms: float = 0.0

    def pct(self, q: float, values: list[float] | None = None) -> float:
        v = self.samples_ms if values is None else values
        return float(np.percentile(v, q)) if v else float("nan")


def move_key(page, key: str, i: int, mode: str = "alternate", last: str = "ArrowRight") -> str:
    """The key press of move ``i`` of slider ``key``: right and left in turn (``alternate``) or ``last``'s
    direction (``step``), turned at either end of the slider's range so that every press moves it."""
    lo, hi = page.evaluate(
        """(sel) => { const el = document.querySelector(sel);
            const g = (a, b) => el.getAttribute(a) ?? el.getAttribute(b);
            return [parseFloat(g('min', 'aria-valuemin')), parseFloat(g('max', 'aria-valuemax'))]; }""",
        slider_selector(key),
    )
    value = slider_value(page, key)
    direction = ("ArrowRight" if i % 2 == 0 else "ArrowLeft") if mode == "alternate" else last
    if value >= hi:
        return "ArrowLeft"
    if value <= lo:
        return "ArrowRight"
    return direction

def measure(browser, app: str, path: str, key: str, chart: int, trace: int, moves: int,
            warmup: int, mode: str, timeout_s: float, label: str) -> Result:
    with streamlit_server(app) as base:
        url = base.rstrip("/") + "/" + path.lstrip("/") if path not in ("", "/") else base + "/"
        res = Result(label=label, app=app, url=url, key=key, chart=chart)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            t0 = time.perf_counter()
            page.goto(url)
            wait_for_app(page)
            wait_for_plotly(page, chart)
            res.first_load_ms = (time.perf_counter() - t0) * 1000
            page.locator(slider_selector(key)).first.wait_for(state="attached", timeout=30000)
            page.evaluate(_PROBE_JS, [chart, trace])
            direction = "ArrowRight"
            for i in range(warmup + moves):
                direction = move_key(page, key, i, mode, direction)
                focus_slider(page, key)
                if not page.evaluate("() => window.__skbBench.arm()"):
                    raise RuntimeError(f"chart {chart} has no trace {trace} at {url}")
                w0 = time.perf_counter()
                page.keyboard.press(direction)
                try:
                    page.wait_for_function("() => window.__skbBench.t1 !== null",
                                           timeout=timeout_s * 1000, polling="raf")
                except Exception:  # noqa: BLE001 - playwright TimeoutError
                    res.timeouts += 1
                    print(f"  [{label}] move {i}: chart did not change within {timeout_s:.0f} s "
                          f"(slider {slider_value(page, key)} after {direction})", file=sys.stderr)
                    wait_for_app(page)
                    continue
                wall = (time.perf_counter() - w0) * 1000
                lat = page.evaluate("() => window.__skbBench.t1 - window.__skbBench.t0")
                if i >= warmup:
                    res.samples_ms.append(float(lat))
                    res.wall_ms.append(wall)
                wait_for_app(page, settle_ms=100)  # let the rerun finish before the next move
        finally:
            page.close()
    return res


def report(r: Result) -> None:
    n = len(r.samples_ms)
    print(f"{r.label:<5} {r.app:<28} key={r.key:<8} chart={r.chart}  n={n:<3} "
          f"p50={r.pct(50):7.1f} ms  p95={r.pct(95):7.1f} ms  "
          f"(min {min(r.samples_ms, default=float('nan')):.1f}, "
          f"max {max(r.samples_ms, default=float('nan')):.1f}; "
          f"Playwright wall p50 {r.pct(50, r.wall_ms):.1f}; first load {r.first_load_ms:.0f} ms"
          f"{'; timeouts ' + str(r.timeouts) if r.timeouts else ''})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--app", default="dashboard.py", help="Streamlit script, relative to the repo root")
    ap.add_argument("--path", default="/", help='URL path and query, e.g. "/" or "/page?bulk=16"')
    ap.add_argument("--key", default="bulk", help="key= of the st.slider to move")
    ap.add_argument("--chart", type=int, default=0, help="index of the .js-plotly-plot element to watch")
    ap.add_argument("--trace", type=int, default=0, help="index into gd._fullData")
    ap.add_argument("--moves", type=int, default=20, help="measured key presses (>= 20 recommended)")
    ap.add_argument("--warmup", type=int, default=2, help="unmeasured key presses first")
    ap.add_argument("--mode", choices=["alternate", "step"], default="alternate")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for one update")
    ap.add_argument("--json", help="also write the raw samples to this JSON file")
    ap.add_argument("--blocks", type=int, default=1,
                    help="split the moves into this many blocks and alternate the apps block by block (more robust "
                         "ratios on a noisy machine)")
    ap.add_argument("--decompose", action="store_true",
                    help="also measure, in the same run, benchmarks/shell_app.py (the dashboard's controls around "
                         "the bare chart) and benchmarks/rich_chart_app.py (one slider and the page's first real "
                         "chart): where the app's ratio comes from")
    args = ap.parse_args()

    if not (REPO_ROOT / args.app).exists() and not Path(args.app).exists():
        print(f"bench_latency: app {args.app!r} not found", file=sys.stderr)
        return 2

    variants = [("app", args.app, args.path, args.key, args.chart, args.trace, {}),
                ("bare", BARE_APP, "/", "x", 0, 0, {})]
    if args.decompose:
        page = args.path.strip("/").split("?")[0] or "overview"
        env = {"SKB_PAGE": page, "SKB_KEY": args.key}
        variants += [("shell", "benchmarks/shell_app.py", "/", args.key, 0, 0, env),
                     ("chart", "benchmarks/rich_chart_app.py", "/", args.key, 0, 0, env)]
    blocks = max(1, args.blocks)
    per_block = max(1, -(-args.moves // blocks))
    print(f"# slider -> chart latency, headless Chromium, {per_block * blocks} moves ({args.mode}) per app"
          f"{f' in {blocks} interleaved blocks of {per_block}' if blocks > 1 else ''}, "
          f"{args.warmup} warm-up per block; {os.cpu_count()} CPUs")
    results: dict[str, Result] = {}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            for _ in range(blocks):  # interleaving spreads drifts of the machine's load over every app alike
                for label, app_path, path, key, chart, trace, env in variants:
                    saved = {k: os.environ.get(k) for k in env}
                    os.environ.update(env)
                    try:
                        r = measure(browser, app_path, path, key, chart, trace, per_block, args.warmup,
                                    args.mode, args.timeout, label)
                    finally:
                        for k, v in saved.items():
                            if v is None:
                                os.environ.pop(k, None)
                            else:
                                os.environ[k] = v
                    if label not in results:
                        results[label] = r
                    else:
                        acc = results[label]
                        acc.samples_ms += r.samples_ms
                        acc.wall_ms += r.wall_ms
                        acc.timeouts += r.timeouts
        finally:
            browser.close()
    for r in results.values():
        report(r)
    app, bare = results["app"], results["bare"]
    r50 = app.pct(50) / bare.pct(50)
    r95 = app.pct(95) / bare.pct(95)
    print(f"ratio app/bare: p50 {r50:.2f}x  p95 {r95:.2f}x")
    what = {"shell": "the dashboard's controls and link box around the bare chart",
            "chart": "one slider and the page's first real chart"}
    for label in ("shell", "chart"):
        if label in results:
            r = results[label]
            print(f"ratio {label}/bare: p50 {r.pct(50) / bare.pct(50):.2f}x  p95 {r.pct(95) / bare.pct(95):.2f}x"
                  f"   ({what[label]})")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(
            {**{k: asdict(v) for k, v in results.items()}, "ratio_p50": r50, "ratio_p95": r95}, indent=2))
    ok = len(app.samples_ms) >= args.moves // 2 and len(bare.samples_ms) >= args.moves // 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
