"""The Design page: a composed path (A) against a comparison (B), and the NAPI skb cache.

The numbers behind the page's metrics and this chart (totals, intervals, the paired delta and its
verdict) are :func:`skbview.tables.design_summary`.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from skbmodel import design, model, uncertainty
from skbmodel.links import state as st_mod
from skbmodel.physics import units
from skbview import tables

from .base import (
    COLORS, COMPONENT_COLORS, caption, Bar, params, profile, error_bars, num, Fig, finish,
    add_seed_points, delta_note,
)


def _design_caption(state: Mapping) -> str:
    keys = [k for k in design.KEY_NAMES if state.get(k) != design.DEFAULTS[k] or k == "d_from"]
    _, pb = design.compare_params(st_mod.scenario(state, "a"), st_mod.b_overrides(state))
    parts = [f"b_path={pb['path']}"]
    if pb["path"] == "design":
        parts += [f"b_{k}={st_mod.fmt_value(pb[k])}" for k in design.KEY_NAMES
                  if pb[k] != design.DEFAULTS[k] or k == "d_from"]
    return " · ".join([caption(state, ("pp_recycle", "numa", "link_gbps", "frame_bytes", *keys)), *parts])


def design_breakdown(state: Mapping) -> go.Figure:
    """Per-packet components [ns] of the composition (A) and the comparison (B), stacked, with the
    90 % interval of each total and the line-rate budget."""
    pa, pb = tables.design_params_ab(state)
    prof = profile(state)
    ba, bb = model.breakdown_ns(pa, prof), model.breakdown_ns(pb, prof)
    s = tables.design_summary(state)
    labels = [tables.design_a_label(state), tables.design_b_label(state)]
    labels = [x.replace(" (", "<br>(") for x in labels]
    fig = Fig()
    for comp in model.COMPONENTS:
        fig.add_trace(Bar(x=labels, y=np.array([num(ba[comp]), num(bb[comp])]), name=comp,
                            marker_color=COMPONENT_COLORS[comp],
                            hovertemplate=comp + ": %{y:.2f} ns/packet<extra></extra>"))
    tot = [num(s["a"]["path.ns_per_packet"]), num(s["b"]["path.ns_per_packet"])]
    error_bars(fig, labels, tot, tuple(np.array([num(iv["path.ns_per_packet"][j]) for iv in (s["iv_a"], s["iv_b"])])
                                          for j in (0, 1)))
    budget = num(s["a"]["budget.ns_per_packet"])
    fig.add_hline(y=budget, line=dict(color=COLORS["budget"], dash="dash", width=2))
    fig.add_annotation(x=1, xref="paper", y=budget, showarrow=False, xanchor="right", yanchor="bottom",
                       font=dict(size=11, color="#333"), bgcolor="rgba(255,255,255,0.85)",
                       text=f"line-rate budget {budget:.1f} ns ({num(s['a']['budget.line_rate_mpps']):.3g} Mpps)")
    for x, t, mpps in zip(labels, tot, (s["a"]["path.mpps"], s["b"]["path.mpps"])):
        fig.add_annotation(x=x, y=t, yshift=4, xshift=-8, showarrow=False, xanchor="right", yanchor="bottom",
                           font=dict(size=12, color="#222"),
                           text=f"{t:.1f} ns · {num(mpps):.3g} Mpps")
    if not (s["problems_a"] or s["problems_b"]):
        delta_note(fig, labels[1], tot[0], tot[1], "B − A", "ns/packet", digits=2, corner="upper center")
    fig.update_layout(barmode="stack")
    fig.update_yaxes(rangemode="tozero", range=[0, max(max(tot), budget) * 1.2])
    title = f"Composed path: {tot[0]:.1f} ns/packet; B − A {s['delta_ns']:+.1f} ns ({s['verdict']})"
    if s["problems_a"]:
        title = "Composition not usable: " + "; ".join(stage for stage, _ in s["problems_a"])
    return finish(fig, title, "composition", "time per packet (ns)", _design_caption(state))


def napi_defer_rate(state: Mapping) -> go.Figure:
    """Request rate [Krps] of the CPU-bound TCP ping-pong without and with the same-CPU deferred free
    into the NAPI skb cache, with the seed points (rows dfr-01, dfr-02)."""
    p = params(state)
    prof = profile(state)
    x = np.array([0, 1])
    names = ["without (kmem_cache_free / kmem_cache_alloc)", "with (NAPI skb cache)"]
    out, iv = uncertainty.evaluate_with_intervals({**p, "defer_cache": x}, prof, ["napi_defer.krps"])
    y = np.asarray(out["napi_defer.krps"], dtype=float)
    fig = Fig(Bar(x=names, y=y, name="model", marker_color=[COLORS["a"], COLORS["gfp_zero"]],
                       text=[f"{v:.1f} Krps" for v in y], textposition="inside", insidetextanchor="start",
                       hovertemplate="%{x}: %{y:.1f} Krps<extra></extra>"))
    error_bars(fig, names, y, iv["napi_defer.krps"])
    add_seed_points(fig, state, "napi_defer.krps", "defer_cache", "Krps", "seed 001 measurement",
                    x=lambda r: names[int(r.state["defer_cache"])], textposition="middle right",
                    hovertemplate="%{text}: %{y:.1f} Krps<extra></extra>")
    gain = (y[1] / y[0] - 1.0) * 100.0
    lo = float(np.min(np.asarray(iv["napi_defer.krps"][0]))) * 0.97
    fig.update_yaxes(range=[lo, float(np.max(np.asarray(iv["napi_defer.krps"][1]))) * 1.02])
    per_req = units.cycles_to_ns(prof.value("napi_base_cycles"), float(p["ghz"]))
    return finish(fig, f"NAPI skb cache: same-CPU deferred free, {gain:+.1f} % requests/s",
                     "skb free on the allocating CPU", "request rate (Krps)",
                     caption(state) + f" · rest of a request {per_req / 1e3:.2f} µs · axis does not start at 0")
