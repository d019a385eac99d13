"""SLUB: per-object cost vs kmem_cache bulk size, one at a time vs bulk, slab boundaries."""
import streamlit as st

from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import ui

st.title(PAGE_BY_SLUG["slub"].heading)



ui.model_view("slub")
