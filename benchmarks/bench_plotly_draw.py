"""How long Plotly takes to draw one of the dashboard's charts, and what each of its features costs.

No Streamlit: the chart's figure (``skbview.charts.figure_for`` at the default scenario) is drawn with
``Plotly.newPlot`` on a fresh node in headless system Chromium, with the installed plotly package's
plotly.js, ``--draws`` times per variant, the variants taking turns ``--rounds`` times.  A variant
drops one feature of the figure (the legend, the annotations, the hatching of the 90 % bands, ...), so
the difference to ``full`` is what that feature costs the browser on every slider move (Streamlit
mounts the chart again when its figure changes).  ``bare line`` is the bare app's one 200-point line.

    python benchmarks/bench_plotly_draw.py --page slub --chart per_object
"""
from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import plotly  # noqa: E402 - after the sys.path set-up above
from playwright.sync_api import sync_playwright  # noqa: E402 - after the sys.path set-up above

from benchmarks.bare_chart import bare_figure  # noqa: E402 - after the sys.path set-up above
from skbmodel.links import state as sk_state  # noqa: E402 - after the sys.path set-up above
from skbmodel.question import Question  # noqa: E402
from skbview import charts  # noqa: E402 - after the sys.path set-up above
from tests.browser_util import launch_chromium  # noqa: E402 - after the sys.path set-up above

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

_DRAW_JS = """
async ([fig, draws]) => {
  const out = [];
  for (let i = 0; i < draws; i++) {
    const old = document.getElementById('g'); Plotly.purge(old); old.remove();
    const node = document.createElement('div'); node.id = 'g'; node.style.width = '1100px';
    document.body.appendChild(node);
    const f = JSON.parse(JSON.stringify(fig));
    const t0 = performance.now();
    await Plotly.newPlot(node, f.data, f.layout, {responsive: true});
    node.getBoundingClientRect();
    await new Promise((r) => requestAnimationFrame(() => r()));
    out.push(performance.now() - t0);
  }
  return out;
}
"""


def _without(fig: dict, *drop: str) -> dict:
    d = copy.deepcopy(fig)
    lay = d["layout"]
    for what in drop:
        if what == "legend":
            lay["showlegend"] = False
        elif what == "annotations":
            lay["annotations"] = []
        elif what == "shapes":
            lay["shapes"] = []
        elif what == "title":
            lay["title"] = {}
        elif what == "hatching":
            for t in d["data"]:
                t.pop("fillpattern", None)
        elif what == "point text":
            for t in d["data"]:
                if t.get("mode") == "markers+text":
                    t["mode"] = "markers"
    return d


def variants(page: str, chart: str) -> dict[str, dict]:
    state = {**sk_state.defaults(), "page": page}
    fig = json.loads(charts.figure_for(page, chart, Question.of_state(state)).to_json())
    every = ("legend", "annotations", "shapes", "title", "hatching", "point text")
    out = {"full": fig}
    out.update({f"no {w}": _without(fig, w) for w in every})
    out["none of these"] = _without(fig, *every)
    out["bare line"] = json.loads(bare_figure(16.0).to_json())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--page", default="slub")
    ap.add_argument("--chart", default="per_object")
    ap.add_argument("--draws", type=int, default=8, help="draws per variant and round (the first is not counted)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    figs = variants(args.page, args.chart)
    times: dict[str, list[float]] = {k: [] for k in figs}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_content("<html><body><div id='g'></div></body></html>")
            page.add_script_tag(content=PLOTLY_JS.read_text())
            for _ in range(args.rounds):
                for name, fig in figs.items():
                    times[name] += page.evaluate(_DRAW_JS, [fig, args.draws])[1:]
        finally:
            browser.close()
    full = statistics.median(times["full"])
    print(f"# Plotly.newPlot of {args.page}/{args.chart}, median of {args.rounds} x {args.draws - 1} draws (ms)")
    print("| figure | median | min | vs full |")
    print("|---|---:|---:|---:|")
    for name, v in times.items():
        med = statistics.median(v)
        print(f"| {name} | {med:.1f} | {min(v):.1f} | {med - full:+.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
