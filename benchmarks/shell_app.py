"""The dashboard's shell around a bare chart: a floor for benchmarks/bench_latency.py --decompose.

Same sidebar as dashboard.py (every control, presets, custom-profile selector, share link box,
report buttons; `appstate.render_sidebar`) and the same live-view mechanism (`ui.live`: a moved
control reruns only the keyed view fragments), but the live area draws the bare app's chart
(one 200-point line whose y follows the moved control, `SKB_KEY`, default `bulk`) instead of the model's
metrics and charts.

The latency of this app over the bare app is what the shared controls (sidebar, link box) cost in the
browser by themselves, before any model output is drawn.  `SKB_SHELL_NO_LINK=1` leaves the
sidebar's link box (share link, report buttons, URL write-back) out of a move, to measure its share.
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import streamlit as st  # noqa: E402 - after the sys.path set-up above

from benchmarks.bare_chart import bare_figure  # noqa: E402 - after the sys.path set-up above
from skbview.app import appstate, ui  # noqa: E402 - after the sys.path set-up above


ui.freeze_gc_once()
st.set_page_config(page_title="shell floor", layout="wide")
appstate.init()
appstate.begin_full_run()
appstate.set_page("slub")


KEY = os.environ.get("SKB_KEY", "bulk")  # the control bench_latency moves


def _draw(state: dict) -> None:
    st.plotly_chart(bare_figure(float(state[KEY])), theme=None, key="bare_chart")


ui.live(_draw)
appstate.render_sidebar()
if os.environ.get("SKB_SHELL_NO_LINK"):  # decomposition: leave the link box (share link, URL write-back) out of a move
    st.session_state[appstate.VIEWS] = [v for v in st.session_state[appstate.VIEWS] if v != "link"]
