"""Overview: the chosen path's per-packet cost breakdown against the line-rate budget."""
import streamlit as st

from skbmodel.evidence import perfprofile
from skbmodel.physics import rest
from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import appstate, ui

st.title(PAGE_BY_SLUG["overview"].heading)
appstate.param_widget("path")



ui.model_view("overview", note=ui.path_note)
with st.expander("What “rest of path” contains, per path"):
    st.markdown("\n".join(f"- {rest.describe(p)} {perfprofile.describe_stages(p)}" for p in rest.CONTENTS))
