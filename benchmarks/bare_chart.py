"""The bare app's chart: one 200-point Plotly line whose y follows a slider value.

Shared by benchmarks/bare_app.py (the latency baseline) and the apps that put the same chart into
other surroundings (shell_app.py, element_cost_app.py), so that they differ from the baseline only
in what surrounds the chart.
"""
import numpy as np
import plotly.graph_objects as go


def bare_figure(x_value: float) -> go.Figure:
    xs = np.arange(200, dtype=float)
    ys = x_value * np.sin(xs / 10.0) + x_value
    return go.Figure(go.Scatter(x=xs, y=ys, mode="lines"), layout=dict(template="plotly_white", height=350))
