"""kfree_skb_list: injection rate vs fq_codel drop_batch and KFREE_SKB_BULK_SIZE; clones."""
import streamlit as st

from skbmodel import model, state as sk_state
from skbview import appstate, charts, ui

st.title("kfree_skb_list bulk free on the qdisc drop path")
appstate.page_state("kfree")


def _draw(state: dict) -> None:
    """Metrics and charts: the live area, redrawn alone when a control moves."""
    params = sk_state.scenario(state)
    out = model.evaluate(params, sk_state.profile_for(state))
    ui.metrics([
        ("Injection rate (pps)", f"{float(out['kfree_skb_list.mpps']) * 1e6:,.0f}", None),
        ("Cost (ns/packet)", ui.fmt(out["kfree_skb_list.ns_per_packet"], 4), None),
        ("Dropped (fraction)", f"{float(out['kfree_skb_list.drop_fraction']):.3f}", None),
        ("Saving vs no bulk (ns/packet)", f"{float(out['kfree_skb_list.saving_ns']):.2f}", None),
    ])
    ui.show_charts(charts.figures_for_page("kfree", state), state)


ui.live(_draw)
