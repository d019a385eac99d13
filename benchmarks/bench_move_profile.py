"""What the browser's main thread does between a slider's keydown and the chart's change, by bundle.

For each app (the dashboard page and the bare one-slider app, in the same run), in headless system
Chromium, with the V8 sampling profiler (CDP ``Profiler``) running over ``--moves`` moves:

  * a 3 ms marker function runs at the keydown and another at the first frame in which the chart's y
    differs (the probe of benchmarks/bench_latency.py), so the profile's samples between the two are
    exactly one move, whatever the profiler's clock;
  * each sample is charged to the first script bundle on its stack (``PlotlyChart``: Plotly drawing;
    ``react-dom``, ``emotion-styled``, ``styled-components``, ``index``, ...: Streamlit's React render;
    ``(program)``: the browser's own style, layout and paint; ``(idle)``: waiting for the server);
  * React commits before the chart are counted through a stand-in for the React DevTools hook
    (``onCommitFiberRoot``), and grouped into render passes (commits less than 15 ms apart).

The profiler slows the page, so the move times printed here are longer than bench_latency.py's; the
split between bundles is what this is for.

    python benchmarks/bench_move_profile.py --path /slub --key bulk --moves 10
"""
from __future__ import annotations

import collections
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402 - after the sys.path set-up above

from benchmarks.bench_latency import BARE_APP, _PROBE_JS, move_key  # noqa: E402 - after the sys.path set-up above
from benchmarks.bench_move_phases import app_and_bare  # noqa: E402 - after the sys.path set-up above
from tests.browser_util import (  # noqa: E402 - after the sys.path set-up above
    focus_slider,
    streamlit_server,
    wait_for_app,
    wait_for_plotly,
)

# Before the app loads: React reports every commit to a DevTools hook if one exists.
_HOOK_JS = """
(() => {
  window.__skbCommits = [];
  let id = 0;
  window.__REACT_DEVTOOLS_GLOBAL_HOOK__ = {
    supportsFiber: true, renderers: new Map(), isDisabled: false,
    inject(r) { id += 1; this.renderers.set(id, r); return id; },
    onCommitFiberRoot() { window.__skbCommits.push(performance.now()); },
    onCommitFiberUnmount() {}, onPostCommitFiberRoot() {}, checkDCE() {},
  };
})();
"""
# After the probe: busy-wait markers at the keydown and when the chart changed.
_MARK_JS = """
() => {
  const spin = () => { const t = performance.now(); while (performance.now() - t < 3) {} };
  window.__skbMarkKey = function __skbMarkKey() { spin(); };
  window.__skbMarkChart = function __skbMarkChart() { spin(); };
  document.addEventListener('keydown', () => window.__skbMarkKey(), true);
  const B = window.__skbBench;
  const loop = () => { if (B.t1 !== null && !B.marked) { B.marked = true; window.__skbMarkChart(); }
                       requestAnimationFrame(loop); };
  requestAnimationFrame(loop);
  const arm = B.arm; B.arm = () => { B.marked = false; window.__skbCommits = []; return arm(); };
}
"""
MARKERS = ("__skbMarkKey", "__skbMarkChart")


def _bundle_of(nodes: dict, parent: dict, nid: int) -> str:
    p = nid
    while p is not None:
        frame = nodes[p]["callFrame"]
        if frame["functionName"] in MARKERS:
            return frame["functionName"]
        name = frame["url"].rsplit("/", 1)[-1]
        if name:
            return name.split(".")[0]
        p = parent.get(p)
    return nodes[nid]["callFrame"]["functionName"]


def split_moves(profile: dict) -> list[collections.Counter]:
    """The profile's samples between each key marker and the next chart marker, ms by bundle."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", ())}
    t = profile["startTime"]
    seq = []
    for sample, dt in zip(profile["samples"], profile["timeDeltas"]):
        t += dt
        seq.append((t / 1000.0, _bundle_of(nodes, parent, sample)))
    moves, current = [], None
    for (t0, b), (t1, _) in zip(seq, seq[1:]):
        if b == MARKERS[0]:
            current = collections.Counter()
        elif b == MARKERS[1] and current is not None:
            moves.append(current)
            current = None
        elif current is not None:
            current[b] += t1 - t0
    return moves


def passes(commits: list[float], gap_ms: float = 15.0) -> int:
    """Render passes: runs of React commits less than ``gap_ms`` apart."""
    return sum(1 for i, c in enumerate(commits) if i == 0 or c - commits[i - 1] > gap_ms)


def measure(browser, app: str, path: str, key: str, moves: int, warmup: int = 2) -> dict:
    with streamlit_server(app) as base:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.add_init_script(_HOOK_JS)
        page = context.new_page()
        page.goto(base.rstrip("/") + (path if path not in ("", "/") else "/"))
        wait_for_app(page)
        wait_for_plotly(page, 0)
        page.evaluate(_PROBE_JS, [0, 0])
        page.evaluate(_MARK_JS)
        cdp = context.new_cdp_session(page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 250})
        lat, n_commits, n_passes = [], [], []
        for i in range(warmup + moves):
            if i == warmup:
                cdp.send("Profiler.start")
            direction = move_key(page, key, i)  # a slider at either end of its range moves inwards first
            focus_slider(page, key)
            page.evaluate("() => window.__skbBench.arm()")
            page.keyboard.press(direction)
            page.wait_for_function("() => window.__skbBench.t1 !== null", timeout=15000, polling="raf")
            t0, t1, commits = page.evaluate(
                "() => [window.__skbBench.t0, window.__skbBench.t1, window.__skbCommits]")
            if i >= warmup:
                before = [c for c in commits if c <= t1]
                lat.append(t1 - t0)
                n_commits.append(len(before))
                n_passes.append(passes(before))
            wait_for_app(page, settle_ms=200)
        profile = cdp.send("Profiler.stop")["profile"]
        context.close()
    per_move = split_moves(profile)
    total = collections.Counter()
    for m in per_move:
        total.update(m)
    n = max(len(per_move), 1)
    return dict(app=app, moves=len(per_move), latency=float(np.median(lat)), commits=float(np.median(n_commits)),
                passes=float(np.median(n_passes)), bundles={b: v / n for b, v in total.items()})


GROUPS = {"Plotly": ("PlotlyChart",),
          "React render": ("react-dom", "emotion-styled", "styled-components", "index", "StreamlitMarkdown",
                           "emotion-is-prop-valid", "utils", "useCollection", "useResizeObserver", "protobuf"),
          "browser (style, layout, paint)": ("(program)",), "GC": ("(garbage collector)",), "idle": ("(idle)",)}


def main() -> int:
    args, results = app_and_bare(measure, __doc__, moves=10)
    print(f"# keydown -> chart changed, under the profiler (mean ms per move over {args.moves} moves, "
          "median latency, commits and passes)")
    cols = list(GROUPS) + ["other"]
    print("| app | latency | " + " | ".join(cols) + " | React commits | render passes |")
    print("|---|---:|" + "---:|" * len(cols) + "---:|---:|")
    for r in results:
        grouped = {g: sum(r["bundles"].get(b, 0.0) for b in members) for g, members in GROUPS.items()}
        grouped["other"] = sum(r["bundles"].values()) - sum(grouped.values())
        label = f"{r['app']} {args.path}" if r["app"] != BARE_APP else r["app"]
        print(f"| {label} | {r['latency']:.0f} | " + " | ".join(f"{grouped[c]:.0f}" for c in cols)
              + f" | {r['commits']:.0f} | {r['passes']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
