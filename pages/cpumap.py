"""page_pool + cpumap: source, destination and drop rates vs recycle ratio; XDP_PASS; NUMA."""
import streamlit as st

from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import ui

st.title(PAGE_BY_SLUG["cpumap"].heading)



ui.model_view("cpumap")
