"""Bare Streamlit app: one slider and one Plotly line chart whose y depends on it.

Baseline for benchmarks/bench_latency.py and the browser-harness test.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

x_value = st.slider("x", 1, 256, 16, key="x")
xs = np.arange(200, dtype=float)
ys = x_value * np.sin(xs / 10.0) + x_value
fig = go.Figure(go.Scatter(x=xs, y=ys, mode="lines"), layout=dict(template="plotly_white", height=350))
st.plotly_chart(fig, theme=None, key="bare_chart")
