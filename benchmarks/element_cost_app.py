"""The bare app plus N static elements of one kind: what an element that is NOT re-sent costs.

The slider (`x`, in the sidebar) reruns only a keyed fragment holding the bare chart, so the
`SKB_N` (default 8) elements of kind `SKB_KIND` (radio, select, number, button, markdown, slider;
default none) are neither re-executed nor re-sent on a move.  Any latency above the bare app is
their cost in the browser on each rerun.

    SKB_KIND=radio SKB_N=8 python benchmarks/bench_latency.py --app benchmarks/element_cost_app.py --key x --moves 40
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import streamlit as st  # noqa: E402 - after the sys.path set-up above

from benchmarks.bare_chart import bare_figure  # noqa: E402 - after the sys.path set-up above
from skbview.app import ui  # noqa: E402 - after the sys.path set-up above


ui.freeze_gc_once()
KIND = os.environ.get("SKB_KIND", "none")
N = int(os.environ.get("SKB_N", "8")) if KIND != "none" else 0
MAKE = {
    "radio": lambda i: st.radio(f"radio {i}", ["memset", "gfp_zero"], key=f"e{i}", horizontal=True),
    "select": lambda i: st.selectbox(f"select {i}", ["a", "b"], key=f"e{i}"),
    "number": lambda i: st.number_input(f"number {i}", 1.0, 100.0, 10.0, key=f"e{i}"),
    "button": lambda i: st.button(f"button {i}", key=f"e{i}"),
    "markdown": lambda i: st.markdown(f"**group {i}**"),
    "slider": lambda i: st.slider(f"slider {i}", 0, 100, 50, key=f"e{i}"),
}
with st.sidebar:
    st.slider("x", 1, 256, 16, key="x", on_change=lambda: st.rerun("chart"))
    for i in range(N):
        MAKE[KIND](i)


@st.fragment(key="chart")
def _chart() -> None:
    st.plotly_chart(bare_figure(st.session_state["x"]), theme=None, key="bare_chart")


_chart()
