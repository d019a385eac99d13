"""The Validation page: the seed rows (parity, errors) and the out-of-sample report."""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go

import skbmodel
from skbmodel import model
from skbmodel.evidence import outofsample, protocols, validation
from skbmodel.question import Question

from .base import (
    COLORS, Scatter, Bar, band, Fig, finish,
)


# ---------------------------------------------------------------- validation
def _validation_rows():
    return validation.validate()


def validation_parity(q: Question, rows=None) -> go.Figure:
    """Predicted vs measured for every covered seed row (log-log; mixed units, so one point each)."""
    rows = rows if rows is not None else _validation_rows()
    rows = [r for r in rows if r["measured"] > 0 and r["predicted"] > 0]
    fig = Fig()
    systems = sorted({r["system"] for r in rows})
    for s in systems:
        rs = [r for r in rows if r["system"] == s]
        fig.add_trace(Scatter(
            x=np.array([r["measured"] for r in rs]), y=np.array([r["predicted"] for r in rs]), mode="markers",
            name=s, marker=dict(size=10, symbol=["circle" if r["ok"] else "x" for r in rs]),
            text=[f"{r['id']} ({r['unit']})" for r in rs],
            customdata=np.array([r["rel_error"] * 100 for r in rs]),
            hovertemplate="%{text}: measured %{x:.4g}, predicted %{y:.4g} (%{customdata:+.2f} %)<extra></extra>"))
    lo = min(min(r["measured"], r["predicted"]) for r in rows) / 1.5
    hi = max(max(r["measured"], r["predicted"]) for r in rows) * 1.5
    fig.add_trace(Scatter(x=np.array([lo, hi]), y=np.array([lo, hi]), mode="lines", name="predicted = measured",
                             line=dict(color="#888", dash="dash"), hoverinfo="skip"))
    rng = [float(np.log10(lo)), float(np.log10(hi))]
    fig.update_xaxes(type="log", range=rng)
    fig.update_yaxes(type="log", range=rng)
    c = validation.evidence_counts(rows)["predicted"]  # the headline counts the evidence, as the page's metrics do
    return finish(fig, f"Validation: model vs seed measurements ({c['ok']} of {c['rows']} predicted rows within "
                       "tolerance)",
                   "measured (row's own unit, log scale)", "predicted (same unit, log scale)",
                   f"each row evaluated under its own conditions and profile · skbmodel {skbmodel.__version__}, "
                   f"profiles {', '.join(sorted({r['profile'] for r in rows}))}", height=560)


def validation_errors(q: Question, rows=None) -> go.Figure:
    """Relative error [%] of every covered seed row."""
    rows = rows if rows is not None else _validation_rows()
    ids = np.array([r["id"] for r in rows])
    err = np.array([r["rel_error"] * 100 for r in rows])
    ok = np.array([r["ok"] for r in rows])
    fig = Fig(Bar(x=ids, y=err, name="relative error (predicted − measured) / measured",
                           marker_color=["#59a14f" if o else "#e15759" for o in ok],
                           customdata=np.array([r["tolerance"] for r in rows]),
                           hovertemplate="%{x}: %{y:+.2f} % (tolerance %{customdata})<extra></extra>"))
    for y in (-5, -3, 3, 5):
        fig.add_hline(y=y, line=dict(color="#aaa", dash="dot", width=1))
    fig.add_annotation(x=1, xref="paper", y=5, text="±3 % / ±5 % tolerances", showarrow=False, xanchor="right",
                       yanchor="bottom", font=dict(size=11, color="#666"))
    fig.update_xaxes(tickangle=-60)
    return finish(fig, "Validation: relative error per seed row (green = within its tolerance)", "seed row id",
                   "relative error (%)", f"skbmodel {skbmodel.__version__} · veth rows are judged in ns/packet (±2 ns)",
                   height=480)


# ---------------------------------------------------------------- out of sample
def _oos_report(rep):
    return rep if rep is not None else outofsample.load_report()


def oos_summary(q: Question, rep=None) -> go.Figure:
    """MAPE and max |error| [%] per subsystem and protocol, out of sample (horizontal bars, log x)."""
    rep = _oos_report(rep)
    rows = rep["summary"][::-1]
    labels = [f"{r['subsystem']} · {r['protocol']} ({r['points']})" for r in rows]
    fig = Fig()
    for key, name, color in (("max_error", "max |error|", "#f28e2b"), ("mape", "MAPE", "#4e79a7")):
        v = np.array([r[key] * 100 for r in rows])
        fig.add_trace(Bar(y=labels, x=np.maximum(v, 0.01), orientation="h", name=name, marker_color=color,
                          text=[f"{x:.1f} %" for x in v], textposition="outside", cliponaxis=False,
                          hovertemplate="%{y}: " + name + " %{text}<extra></extra>"))
    naive = _baseline_bar(rows, labels)
    if naive is not None:
        fig.add_trace(naive)
    fig.add_vline(x=10, line=dict(color="#59a14f", dash="dot", width=1))
    fig.update_xaxes(type="log")
    fig.update_layout(barmode="group", margin=dict(l=330))
    return finish(fig, "Out of sample: error of predictions no fit saw", "error (%, log scale; dotted: 10 %)",
                   "subsystem · protocol (points predicted)",
                   "curves: each published curve fitted on 3 points, the rest predicted · seed rows: a source or a "
                   "row left out and refitted" + (" · naive baseline: other CPU = the other CPUs' mean ns, same lab = "
                                                  "the lab's earlier rate" if naive is not None else "")
                   + f" · skbmodel {skbmodel.__version__}", height=max(560, 110 + 18 * len(rows)), cap_width=90)


def _baseline_bar(rows, labels):
    """The naive baseline's MAPE [%] next to the model's, for the protocols that report one (other CPU:
    the same ns on every CPU; same lab, other kernel: the lab's earlier rate); None when no row carries
    ``baseline_mape``."""
    if not any("baseline_mape" in r for r in rows):
        return None
    v = [r["baseline_mape"] * 100 if "baseline_mape" in r else None for r in rows]
    return Bar(y=labels, x=[None if x is None else max(x, 0.01) for x in v], orientation="h",
               name="naive baseline MAPE", marker_color="#bab0ac",
               text=["" if x is None else f"{x:.1f} %" for x in v], textposition="outside", cliponaxis=False,
               hovertemplate="%{y}: naive baseline MAPE %{text}<extra></extra>")


def oos_curve_names(rep=None) -> list[str]:
    """Series of the out-of-sample curves, upstream-design SLUB curves first."""
    rep = _oos_report(rep)
    return [c["series"] for c in sorted(rep["curves"], key=lambda c: (c["group"] != "slub", c["series"]))]


def oos_curve(q: Question, rep=None, series: str | None = None) -> go.Figure:
    """One published curve: measured points, the 3 fitted, and the model's prediction of the others."""
    rep = _oos_report(rep)
    by = {c["series"]: c for c in rep["curves"]}
    c = by[series or oos_curve_names(rep)[0]]
    pts = c["points"]
    x = np.array([p["x"] for p in pts])
    fit = np.array([p["fit"] for p in pts])
    meas = np.array([p["measured"] for p in pts])
    pred = np.array([p["predicted"] for p in pts])
    err = np.array([p["rel_error"] * 100 for p in pts])
    # the 90 % interval: the fitted constants' share and the structural sd of the curve's subsystem
    s_m = rep["structural_rel_sd"].get(protocols.curves.STRUCTURAL_PREFIX.get(c["group"], ""), 0.0)
    fig = Fig()
    band(fig, x, protocols.curves.point_interval(pred, [p["constants_rel_sd"] for p in pts], s_m), COLORS["a"])
    for trace in (
            Scatter(x=x, y=pred, mode="lines+markers", name="model (fitted on the 3 filled points)",
                    line=dict(color=COLORS["a"]), marker=dict(size=5), customdata=err,
                    hovertemplate=c["x_name"] + " %{x}: predicted %{y:.1f} (%{customdata:+.1f} %)<extra></extra>"),
            Scatter(x=x[~fit], y=meas[~fit], mode="markers", name="measured, predicted out of sample",
                    marker=dict(size=9, symbol="circle-open", color=COLORS["seed"], line=dict(width=2)),
                    hovertemplate=c["x_name"] + " %{x}: measured %{y}<extra></extra>"),
            Scatter(x=x[fit], y=meas[fit], mode="markers", name="measured, used by the fit",
                    marker=dict(size=10, color=COLORS["seed"]),
                    hovertemplate=c["x_name"] + " %{x}: measured %{y} (fitted)<extra></extra>")):
        fig.add_trace(trace)
    fig.update_xaxes(type="log")
    unit = model.OUTPUT_UNITS.get(c["output"], "")
    title = f"Out of sample: {c['series']} (MAPE {c['mape'] * 100:.1f} %, max {c['max_error'] * 100:.1f} %)"
    return finish(fig, title,
                   f"{c['x_name']} (log scale)", f"{c['output']} ({unit})",
                   f"{c['cpu'][:60]} @ {c['ghz']:g} GHz · design {c['design'] or 'not stated'} · free: "
                   f"{', '.join(c['free'])} · {c['source'][:100]} · skbmodel {skbmodel.__version__}", height=500)
