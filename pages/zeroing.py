"""Zeroing: memset (rep stos) vs __GFP_ZERO cost vs size and the delta against the noise floor."""
import streamlit as st

from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import ui

st.title(PAGE_BY_SLUG["zeroing"].heading)



ui.model_view("zeroing")
