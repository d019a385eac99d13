"""The dashboard's shell around a bare chart: a floor for benchmarks/bench_latency.py --decompose.

Same sidebar as dashboard.py (every control, presets, custom-profile selector, share link box,
report buttons; `appstate.render_sidebar`) and the same live-view mechanism (`ui.live`: a moved
control reruns only the keyed view fragments), but the live area draws the bare app's chart
(one 200-point line whose y follows the moved control, `SKB_KEY`, default `bulk`) instead of the model's metrics and charts.

The latency of this app over the bare app is what the controls the issue asks for cost in the
browser by themselves, before any model output is drawn.  `SKB_SHELL_NO_LINK=1` leaves the
sidebar's link box (share link, report buttons, URL write-back) out of a move, to measure its share.
"""
import gc
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import plotly.graph_objects as go  # noqa: E402
import streamlit as st  # noqa: E402

from skbview import appstate, ui  # noqa: E402


@st.cache_resource
def _freeze_gc() -> bool:
    gc.collect()
    gc.freeze()
    return True


_freeze_gc()
st.set_page_config(page_title="shell floor", layout="wide")
appstate.init()
appstate.begin_full_run()
appstate.set_page("slub")


KEY = os.environ.get("SKB_KEY", "bulk")  # the control bench_latency moves


def _draw(state: dict) -> None:
    x_value = float(state[KEY])
    xs = np.arange(200, dtype=float)
    ys = x_value * np.sin(xs / 10.0) + x_value
    fig = go.Figure(go.Scatter(x=xs, y=ys, mode="lines"), layout=dict(template="plotly_white", height=350))
    st.plotly_chart(fig, theme=None, key="bare_chart")


ui.live(_draw)
appstate.render_sidebar()
if os.environ.get("SKB_SHELL_NO_LINK"):  # decomposition: leave the link box (share link, URL write-back) out of a move
    st.session_state[appstate.VIEWS] = [v for v in st.session_state[appstate.VIEWS] if v != "link"]
