"""veth: Mpps vs VETH_XDP_BATCH for both zeroing methods, noise band, batch heatmap."""
import streamlit as st

from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import ui

st.title(PAGE_BY_SLUG["veth"].heading)



ui.model_view("veth")
st.caption("In the model the skb bulk size of veth *is* VETH_XDP_BATCH (one kmem_cache_alloc_bulk per batch), "
           "so the heatmap spans the batch against the other input of the veth cost, the bytes zeroed by memset.")
