"""kfree_skb_list: injection rate vs fq_codel drop_batch and KFREE_SKB_BULK_SIZE; clones."""
import streamlit as st

from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import ui

st.title(PAGE_BY_SLUG["kfree"].heading)



ui.model_view("kfree")
