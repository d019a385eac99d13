"""One slider and ONE of the dashboard's real charts: a floor for bench_latency.py --decompose.

Like benchmarks/bare_app.py (a single slider, `bulk` or `xdp_batch`, in the sidebar), but the
chart is the first chart of a dashboard page (`SKB_PAGE`, default slub) built by
`skbview.charts` for the current state, in a keyed fragment the slider reruns.  Its latency over
the bare app is the price of one chart with model curves, seed points, slab boundaries,
hover templates, legend and caption, without the rest of the dashboard.
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import streamlit as st  # noqa: E402 - after the sys.path set-up above

from skbmodel import state as sk_state  # noqa: E402 - after the sys.path set-up above
from skbview import charts  # noqa: E402 - after the sys.path set-up above
from skbview.app import ui


ui.freeze_gc_once()
PAGE = os.environ.get("SKB_PAGE", "slub")
KEY = os.environ.get("SKB_KEY", "bulk")
p = sk_state.PARAMS[KEY]
with st.sidebar:
    st.slider(p.label, int(p.lo), int(p.hi), int(sk_state.defaults()[KEY]), key=KEY,
              on_change=lambda: st.rerun("chart"))


@st.fragment(key="chart")
def _chart() -> None:
    state = {**sk_state.defaults(), KEY: st.session_state[KEY], "page": PAGE}
    name, fig = charts.figures_for_page(PAGE, state)[0]
    st.plotly_chart(fig, theme=None, key=f"chart_{PAGE}_{name}")


_chart()
