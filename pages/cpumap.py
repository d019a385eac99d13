"""page_pool + cpumap: source, destination and drop rates vs recycle ratio; XDP_PASS; NUMA."""
import streamlit as st

from skbmodel import model, state as sk_state
from skbview import appstate, charts, ui

st.title("cpumap redirect and page_pool recycling")
appstate.page_state("cpumap")


def _draw(state: dict) -> None:
    """Metrics and charts: the live area, redrawn alone when a control moves."""
    params = sk_state.scenario(state)
    out = model.evaluate(params, sk_state.profile_for(state))
    ui.metrics([
        ("Source CPU rx (Mpps)", ui.fmt(out["cpumap.src_mpps"], 4), None),
        ("Destination CPU rx (Mpps)", ui.fmt(out["cpumap.dst_mpps"], 4), None),
        ("Drops (Mpps)", ui.fmt(out["cpumap.drop_mpps"], 4), "source − destination"),
        ("XDP_PASS on one CPU (Mpps)", ui.fmt(out["xdp_pass.mpps"], 4), None),
    ])
    ui.show_charts(charts.figures_for_page("cpumap", state), state)


ui.live(_draw)
