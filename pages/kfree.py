"""kfree_skb_list: injection rate vs fq_codel drop_batch and KFREE_SKB_BULK_SIZE; clones."""
import streamlit as st

from skbmodel.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import ui

st.title(PAGE_BY_SLUG["kfree"].heading)


def _headline(params: dict, out: dict, iv: dict) -> list:
    """The metric row above the charts (parameters and model outputs of the scenario)."""
    return [
        ("Injection rate (Mpps)", ui.fmt(out["kfree_skb_list.mpps"], 4), None, ui.pm(iv, "kfree_skb_list.mpps")),
        ("Cost (ns/packet)", ui.fmt(out["kfree_skb_list.ns_per_packet"], 4), None,
         ui.pm(iv, "kfree_skb_list.ns_per_packet")),
        ("Dropped (fraction)", f"{float(out['kfree_skb_list.drop_fraction']):.3f}", None,
         ui.pm(iv, "kfree_skb_list.drop_fraction")),
        ("Saving vs no bulk (ns/packet)", f"{float(out['kfree_skb_list.saving_ns']):.2f}", None,
         ui.pm(iv, "kfree_skb_list.saving_ns")),
    ]


ui.model_view("kfree", _headline)
