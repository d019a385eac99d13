"""The Calibrate page: a user's fit, residuals and parity before and after."""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go

import skbmodel

from .base import (
    COLORS, Scatter, Bar, Fig, finish,
)


# ---------------------------------------------------------------- calibrate (a user's fit)
def fit_residuals(rows, names, label: str = "") -> go.Figure:
    """Residual / tolerance of each fitted measurement before and after the fit (``rows``: userfit rows)."""
    # short ticks (the row number of the table above), the file and line in the hover
    x = np.array([f"#{i + 1}" for i in range(len(names))])
    text = np.array(names)
    fig = Fig(Bar(x=x, y=rows.z_before.to_numpy(), name="before the fit", marker_color="#bab0ac", text=text,
                   textposition="none", hovertemplate="%{text}: z = %{y:+.2f}<extra></extra>"),
               Bar(x=x, y=rows.z_after.to_numpy(), name="after the fit", marker_color=COLORS["a"], text=text,
                   textposition="none", hovertemplate="%{text}: z = %{y:+.2f}<extra></extra>"))
    fig.add_shape(type="rect", xref="paper", x0=0, x1=1, y0=-1, y1=1, fillcolor="rgba(44,160,44,0.08)",
                  line=dict(width=0), layer="below")
    fig.update_layout(barmode="group")
    return finish(fig, "Fit: residual / tolerance before and after (green: within tolerance)",
                   "measurement (row of the table above; hover: file and line)",
                   "residual / tolerance (z)", f"{label} · skbmodel {skbmodel.__version__}".lstrip(" ·"), height=420)


def fit_parity(rows, names, label: str = "") -> go.Figure:
    """Predicted vs measured before and after the fit, each row in its own unit (log-log)."""
    lo = float(min(rows.measured.min(), rows.before.min(), rows.after.min())) / 1.2
    hi = float(max(rows.measured.max(), rows.before.max(), rows.after.max())) * 1.2
    text = np.array(names)
    fig = Fig(
        Scatter(x=np.array([lo, hi]), y=np.array([lo, hi]), mode="lines", name="predicted = measured",
                line=dict(color="#999", dash="dash"), hoverinfo="skip"),
        Scatter(x=rows.measured.to_numpy(), y=rows.before.to_numpy(), mode="markers", name="before the fit",
                text=text, marker=dict(symbol="circle-open", size=10, color="#7f7f7f"),
                hovertemplate="%{text}: measured %{x:.4g}, predicted %{y:.4g}<extra></extra>"),
        Scatter(x=rows.measured.to_numpy(), y=rows.after.to_numpy(), mode="markers", name="after the fit",
                text=text, marker=dict(size=8, color=COLORS["a"]),
                hovertemplate="%{text}: measured %{x:.4g}, predicted %{y:.4g}<extra></extra>"))
    rng = [float(np.log10(lo)), float(np.log10(hi))]
    fig.update_xaxes(type="log", range=rng)
    fig.update_yaxes(type="log", range=rng)
    return finish(fig, "Fit: predicted vs measured (each measurement in its own unit)",
                   "measured (its unit, log scale)", "predicted (same unit, log scale)",
                   f"{label} · skbmodel {skbmodel.__version__}".lstrip(" ·"), height=480)
