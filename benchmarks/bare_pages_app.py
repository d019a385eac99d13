"""Bare Streamlit app with a home page and three pages (st.navigation), each with one slider and two Plotly charts.

Baseline of benchmarks/bench_pages.py for the dashboard's page switch and a new visitor's first chart.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st


def _page(name: str):
    def draw():
        st.title(f"Page {name}")
        x_value = st.slider("x", 1, 256, 16, key=f"x_{name}")
        xs = np.arange(200, dtype=float)
        for i in range(2):
            ys = x_value * np.sin(xs / (10.0 + i)) + x_value
            fig = go.Figure(go.Scatter(x=xs, y=ys, mode="lines"), layout=dict(template="plotly_white", height=350))
            st.plotly_chart(fig, theme=None, key=f"chart_{name}_{i}")
    return draw


def _home():
    st.title("Home")


# The default page lives at "/" (Streamlit gives it no path of its own), so the three measured pages are
# not the default one, as the dashboard's SLUB, veth and zeroing pages are not.
st.navigation([st.Page(_home, title="Home", url_path="home", default=True),
               *[st.Page(_page(n), title=f"Page {n}", url_path=n) for n in ("a", "b", "c")]]).run()
