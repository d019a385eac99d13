"""The page_pool + cpumap page: rates vs the recycle ratio and the placement's effect."""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go

from skbmodel import model, params as _params, schema, uncertainty
from skbmodel.question import Question

from .live import Sweep, live_caption, live_marker
from .base import (
    COLORS, COMPONENT_COLORS, SEED_MARKER, caption, Scatter, Bar, params, profile, band, error_bars, num,
    current_trace, Fig, finish, add_seed_points, marked,
)


# ---------------------------------------------------------------- cpumap
RECYCLE_X = np.linspace(0.0, 1.0, 101)


def cpumap_rates(q: Question) -> go.Figure:
    """Source, destination and drop Mpps vs page_pool recycle ratio; XDP_PASS; the other placement (the same L3,
    or from there the farthest level the machine has)."""
    p = params(q)
    prof = profile(q)
    have = model.available_placements(prof)
    other = "same_l3" if p["place"] != "same_l3" else (have[-1] if len(have) > 1 else "same_l3")
    places = np.array([p["place"], other])
    label = _params.BY_KEY["place"].label_of
    here, there = label(p["place"]), label(other)
    out, iv = uncertainty.evaluate_with_intervals({**p, "pp_recycle": RECYCLE_X[None, :], "place": places[:, None]},
                                                  prof,
                                                  ("cpumap.src_mpps", "cpumap.dst_mpps", "cpumap.drop_mpps"))
    cur, cur_iv = uncertainty.evaluate_with_intervals(p, prof, ("cpumap.src_mpps", "cpumap.dst_mpps", "xdp_pass.mpps"))
    r = float(p["pp_recycle"])
    fig = Fig()
    fig.add_trace(current_trace(r, (cur["cpumap.src_mpps"], cur["cpumap.dst_mpps"]), f"current ratio = {r:g}",
                           "ratio %{x}: %{y:.2f} Mpps<extra></extra>"))
    # the destination's two placements and XDP_PASS run within a fraction of a Mpps of each other: each also
    # carries a marker of its own (the shared template's), which a greyscale print keeps apart where dashes merge
    for key, name, color, mark in (("cpumap.src_mpps", "source CPU rx", COLORS["src"], {}),
                                   ("cpumap.dst_mpps", "destination CPU rx", COLORS["dst"], marked(0, COLORS["dst"])),
                                   ("cpumap.drop_mpps", "drops (src − dst)", COLORS["drop"], {})):
        band(fig, RECYCLE_X, iv[key], color, row=0, name=f"{name}, {here}")
        fig.add_trace(Scatter(x=RECYCLE_X, y=np.asarray(out[key][0], dtype=float),
                                 name=f"{name}, {here}", line=dict(color=color, width=2.5),
                                 legendgroup=f"{name}, {here}",
                                 hovertemplate="ratio %{x:.2f}: %{y:.2f} Mpps<extra>" + name + "</extra>",
                                 **{"mode": "lines", **mark}))
    if other != p["place"]:  # a machine with one level (one L3) has no other placement to draw
        fig.add_trace(Scatter(x=RECYCLE_X, y=np.asarray(out["cpumap.dst_mpps"][1], dtype=float),
                              name=f"destination CPU rx, {there}", line=dict(color=COLORS["dst"], dash="dot"),
                              legendgroup=f"destination CPU rx, {there}",
                              hovertemplate="ratio %{x:.2f}: %{y:.2f} Mpps<extra>" + there + "</extra>",
                              **marked(1, COLORS["dst"])))
        band(fig, RECYCLE_X, iv["cpumap.dst_mpps"], COLORS["dst"], row=1, name=f"destination CPU rx, {there}")
    xp = num(cur["xdp_pass.mpps"])
    band(fig, np.array([0.0, 1.0]), cur_iv["xdp_pass.mpps"], COLORS["xdp_pass"], name="XDP_PASS on one CPU")
    fig.add_trace(Scatter(x=RECYCLE_X, y=np.broadcast_to(xp, RECYCLE_X.shape),
                             name=f"XDP_PASS on one CPU ({xp:.2f} Mpps)",
                             line=dict(color=COLORS["xdp_pass"], dash="dash", width=2),
                             hovertemplate="XDP_PASS one CPU: %{y:.2f} Mpps<extra></extra>",
                             **marked(2, COLORS["xdp_pass"])))
    add_seed_points(fig, q, ("cpumap.src_mpps", "cpumap.dst_mpps", "cpumap.drop_mpps"), "pp_recycle", "Mpps",
                     "seed 003 (Xeon Platinum, same node)",
                     textposition=lambda seeds: ["middle right" if r_.state["pp_recycle"] < 0.5 else "middle left"
                                                 for r_, _ in seeds],
                     hovertemplate="%{text}: %{y} Mpps<extra></extra>")
    add_seed_points(fig, q, "xdp_pass.mpps", "pp_recycle", "Mpps", "seed 003 XDP_PASS one CPU", free={},
                    x=lambda r: 1.0, mode="markers",
                    marker={**SEED_MARKER, "color": COLORS["xdp_pass"], "symbol": "square"},
                    hovertemplate="XDP_PASS seed %{text}: %{y} Mpps<extra></extra>")
    fig.update_xaxes(range=[-0.04, 1.04], tickformat=".0%")
    fig.update_yaxes(rangemode="tozero")
    return finish(fig, "cpumap redirect: throughput vs page_pool recycle ratio",
                   "page_pool recycle ratio (% of pages)",
                   "rate (Mpps)", caption(q, ("pp_recycle", "place")))


def cpumap_placement(q: Question) -> go.Figure:
    """Destination-CPU per-packet components [ns] at each placement the machine has, at the current ratio."""
    p = params(q)
    prof = profile(q)
    numas = np.array(model.available_placements(prof))
    parts = model.cpumap_breakdown_ns({**p, "place": numas}, prof)["destination"]
    out, iv = uncertainty.evaluate_with_intervals({**p, "place": numas}, prof,
                                                  ("cpumap.dst_mpps", "cpumap.dst_ns", "cpumap.bottleneck"))
    labels = np.array([_params.BY_KEY["place"].label_of(str(v)) for v in numas])
    fig = Fig()
    for comp in model.COMPONENTS:
        y = np.broadcast_to(np.asarray(parts[comp], dtype=float), numas.shape)
        fig.add_trace(Bar(x=labels, y=np.array(y), name=comp, marker_color=COMPONENT_COLORS[comp],
                             hovertemplate=comp + ": %{y:.1f} ns/packet<extra></extra>"))
    dst = np.asarray(out["cpumap.dst_mpps"], dtype=float)
    ns = np.asarray(out["cpumap.dst_ns"], dtype=float)
    error_bars(fig, labels, ns, iv["cpumap.dst_ns"])
    limit = np.broadcast_to(np.asarray(out["cpumap.bottleneck"], dtype=float), numas.shape)
    for i, lab in enumerate(labels):
        # the destination's rate is its own where it limits, else the rate the source (or the load) gives it
        why = "" if limit[i] == 1 else f" ({schema.BY_NAME['cpumap.bottleneck'].codes[int(limit[i])]} limits)"
        fig.add_annotation(x=lab, y=float(ns[i]), text=f"{ns[i]:.0f} ns → {dst[i]:.2f} Mpps{why}", showarrow=False,
                           yanchor="bottom", font=dict(size=12))
    fig.update_layout(barmode="stack")
    fig.update_yaxes(range=[0, max(float(ns.max()) * 1.15, float(np.max(iv["cpumap.dst_ns"][1])) * 1.05)])
    return finish(fig, "cpumap destination CPU: the placement's effect on the per-packet cost",
                  "where the destination CPU is",
                   "time per packet on the destination CPU (ns)", caption(q, ("pp_recycle",)))


# ---------------------------------------------------------------- live (skbview.charts.live)
def cpumap_rates_live(sweep: Sweep) -> dict:
    """What of :func:`cpumap_rates` moves with the recycle ratio: marker and caption."""
    return {"traces": [live_marker(sweep, (sweep.row("cpumap.src_mpps"), sweep.row("cpumap.dst_mpps")),
                                   lambda r: f"current ratio = {r:g}")],
            "annotations": [live_caption(sweep, ("pp_recycle", "place"))]}


cpumap_rates_live.outputs = ("cpumap.src_mpps", "cpumap.dst_mpps")
