"""veth: Mpps vs VETH_XDP_BATCH for both zeroing methods, noise band, batch heatmap."""
import streamlit as st

from skbmodel.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import ui

st.title(PAGE_BY_SLUG["veth"].heading)


def _headline(params: dict, out: dict, iv: dict) -> list:
    """The metric row above the charts (parameters and model outputs of the scenario)."""
    return [
        (f"Throughput, batch {params['xdp_batch']} (Mpps)", ui.fmt(out["veth.mpps"], 4), None, ui.pm(iv, "veth.mpps")),
        ("Cost (ns/packet)", ui.fmt(out["veth.ns_per_packet"], 4), None, ui.pm(iv, "veth.ns_per_packet")),
        ("memset − __GFP_ZERO (ns/packet)", f"{float(out['veth.zero_delta_ns']):+.2f}", None,
         ui.pm(iv, "veth.zero_delta_ns")),
        ("Runs per variant to see it", f"{int(out['veth.zero_delta_runs'])}",
         f"two-sample test, 5 % / 80 % power, noise {params['noise_ns']:g} ns per run"),
    ]


ui.model_view("veth", _headline)
st.caption("In the model the skb bulk size of veth *is* VETH_XDP_BATCH (one kmem_cache_alloc_bulk per batch), "
           "so the heatmap spans the batch against the other input of the veth cost, the bytes zeroed by memset.")
