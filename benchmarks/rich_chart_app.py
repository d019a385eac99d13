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

from skbmodel.links import state as sk_state  # noqa: E402 - after the sys.path set-up above
from skbmodel.question import Question  # noqa: E402
from skbview import charts  # noqa: E402 - after the sys.path set-up above
from skbview.app import ui


def run(draw) -> None:
    """The app: the slider in the sidebar, and ``draw(fig, key)`` of the page's first chart in a keyed
    fragment the slider reruns (benchmarks/inplace_chart_app.py passes another ``draw``)."""
    ui.freeze_gc_once()
    page = os.environ.get("SKB_PAGE", "slub")
    key = os.environ.get("SKB_KEY", "bulk")
    p = sk_state.PARAMS[key]
    with st.sidebar:
        st.slider(p.label, int(p.lo), int(p.hi), int(sk_state.defaults()[key]), key=key,
                  on_change=lambda: st.rerun("chart"))

    @st.fragment(key="chart")
    def _chart() -> None:
        state = {**sk_state.defaults(), key: st.session_state[key], "page": page}
        name, fig = charts.figures_for_page(page, Question.of_state(state))[0]
        draw(fig, f"chart_{page}_{name}")

    _chart()


if __name__ == "__main__":  # streamlit run benchmarks/rich_chart_app.py
    run(lambda fig, key: st.plotly_chart(fig, theme=None, key=key))
