"""benchmarks/rich_chart_app.py with the chart drawn in place: does ``Plotly.react`` on a kept node help?

``st.plotly_chart`` hashes the figure into its element's identity, so every figure change mounts a new
chart and plotly.js draws it from scratch.  Here the same figure goes to a ``st.components.v2``
component with a fixed key; its JavaScript keeps one node and calls ``Plotly.react`` on it.  The browser
loads the installed plotly package's own plotly.min.js from Streamlit's static route, copied into
benchmarks/static/ on the first run (not in git), so the server needs static serving:

    STREAMLIT_SERVER_ENABLE_STATIC_SERVING=true \\
        python benchmarks/bench_latency.py --app benchmarks/inplace_chart_app.py --key bulk --moves 40 --blocks 4

Compare with the same command for benchmarks/rich_chart_app.py (each against the bare app of its run).
"""
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import plotly  # noqa: E402 - after the sys.path set-up above
import plotly.io as pio  # noqa: E402
import streamlit as st  # noqa: E402

from rich_chart_app import run  # noqa: E402 - the same app around another chart element

_JS = """
function plotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__benchPlotly) {
    window.__benchPlotly = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = new URL("app/static/plotly.min.js", document.baseURI).href;
      s.onload = () => resolve(window.Plotly);
      s.onerror = () => reject(new Error("no plotly.js at " + s.src + ": is static serving on?"));
      document.head.appendChild(s);
    });
  }
  return window.__benchPlotly;
}
export default function ({ data, parentElement }) {
  let gd = parentElement.querySelector("div.inplace-chart");
  if (!gd) {
    gd = document.createElement("div");
    gd.className = "inplace-chart";
    parentElement.appendChild(gd);
  }
  const fig = JSON.parse(data.spec);
  plotly().then((P) => P.react(gd, fig.data, fig.layout, { responsive: true }));
  return () => { if (window.Plotly) window.Plotly.purge(gd); };
}
"""
_chart_component = st.components.v2.component("inplace_chart", js=_JS, isolate_styles=False)


@st.cache_resource
def _serve_plotly_js() -> None:
    src = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    dst = Path(__file__).resolve().parent / "static" / src.name
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        dst.parent.mkdir(exist_ok=True)
        shutil.copyfile(src, dst)


_serve_plotly_js()
run(lambda fig, key: _chart_component(key=key, data={"spec": pio.to_json(fig, validate=False)}, height="content"))
