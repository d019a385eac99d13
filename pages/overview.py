"""Overview: the chosen path's per-packet cost breakdown against the line-rate budget."""
import streamlit as st

from skbmodel import model, state as sk_state
from skbview import appstate, charts, ui

st.title("SKB memory lifecycle: per-packet cost")
appstate.param_widget("path")
appstate.page_state("overview")


def _draw(state: dict) -> None:
    """Metrics and charts: the live area, redrawn alone when a control moves."""
    params = sk_state.scenario(state)
    out = model.evaluate(params, sk_state.profile_for(state))
    ui.metrics([
        ("Throughput (Mpps)", ui.fmt(out["path.mpps"], 4), "packets per second one CPU of this path sustains"),
        ("Cost (ns/packet)", ui.fmt(out["path.ns_per_packet"], 4), "sum of the breakdown below"),
        ("Budget used (%)", f"{float(out['path.budget_pct']):.0f}", "cost / time between packets at line rate"),
        ("Line rate (Mpps)", ui.fmt(out["budget.line_rate_mpps"], 4),
         f"budget {float(out['budget.ns_per_packet']):.1f} ns per packet"),
    ])
    ui.show_charts(charts.figures_for_page("overview", state), state)


ui.live(_draw)
