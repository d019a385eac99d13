"""The veth XDP_BATCH page: throughput vs VETH_XDP_BATCH and over batch × bytes zeroed."""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go

from skbmodel import model, uncertainty
from skbmodel.links import state as sk_state
from skbmodel.question import Question

from .live import Sweep, live_caption, live_delta, live_marker

from .base import (
    COLORS, SEED_MARKER, caption, Scatter, Heatmap, params, profile, band, current_trace, Fig, finish,
    seed_rows, add_seed_points, delta_note,
)


# ---------------------------------------------------------------- veth
BATCH_X = np.arange(1, 65)


def veth_batch(q: Question) -> go.Figure:
    """veth XDP_PASS Mpps vs VETH_XDP_BATCH for both zeroing methods, with a ±noise band."""
    p = params(q)
    prof = profile(q)
    methods = np.array(["memset", "gfp_zero"])
    out, iv = uncertainty.evaluate_with_intervals({**p, "xdp_batch": BATCH_X[None, :], "zero": methods[:, None]}, prof,
                                                  ("veth.mpps", "veth.ns_per_packet"))
    cur = model.evaluate(p, prof, outputs=("veth.mpps",))
    nf = float(p["noise_ns"])
    b = int(p["xdp_batch"])
    fig = Fig()
    fig.add_trace(current_trace(b, (cur["veth.mpps"],), f"current: batch {b}, {p['zero']}",
                           "batch %{x}: %{y:.3f} Mpps<extra></extra>"))
    names = {m: sk_state.PARAMS["zero"].label_of(m) for m in methods}
    for i, m in enumerate(methods):
        ns = np.asarray(out["veth.ns_per_packet"][i], dtype=float)
        hi = 1e3 / np.maximum(ns - nf, 1e-9)
        lo = 1e3 / (ns + nf)
        color = COLORS[m]
        band(fig, BATCH_X, (lo, hi), color, name=names[m], what=f"±{nf:g} ns noise")
        band(fig, BATCH_X, iv["veth.mpps"], color, row=i, name=names[m])
        fig.add_trace(Scatter(x=BATCH_X, y=np.asarray(out["veth.mpps"][i], dtype=float), mode="lines",
                                 name=names[m], line=dict(color=color, width=2.5), legendgroup=names[m],
                                 hovertemplate="batch %{x}: %{y:.3f} Mpps<extra>" + names[m] + "</extra>"))
    seeds = seed_rows("veth.mpps")
    for m in methods:
        add_seed_points(fig, q, "veth.mpps", "xdp_batch", "Mpps", f"seed 002, {names[m]}",
                        rows=[s for s in seeds if s[0].state.get("zero") == m],
                        free={"xdp_batch": None, "zero": None}, textposition="bottom right",
                        marker={**SEED_MARKER, "color": COLORS[m]},
                        hovertemplate="%{text}: batch %{x}, %{y} Mpps<extra></extra>")
    at_b = model.evaluate({**p, "zero": methods}, prof)["veth.mpps"]  # both methods at the current batch
    delta_note(fig, b, at_b[1], at_b[0], "memset − __GFP_ZERO", "Mpps", where=f"batch {b}")
    fig.update_xaxes(range=[0, 65], dtick=8)
    return finish(fig, "veth XDP_PASS throughput vs VETH_XDP_BATCH", "VETH_XDP_BATCH (skbs per bulk alloc)",
                   "throughput (Mpps)", caption(q, ("zero", "zero_bytes", "xdp_batch", "noise_ns")))


def veth_heatmap(q: Question) -> go.Figure:
    """veth Mpps over VETH_XDP_BATCH × bytes zeroed by memset (the skb bulk size *is* VETH_XDP_BATCH)."""
    p = params(q)
    prof = profile(q)
    zb = np.arange(8, 1025, 8)
    out = model.evaluate({**p, "zero": "memset", "xdp_batch": BATCH_X[None, :], "zero_bytes": zb[:, None]}, prof,
                         outputs=("veth.mpps",))
    z = np.asarray(out["veth.mpps"], dtype=float)
    fig = Fig(Heatmap(x=BATCH_X, y=zb, z=z, colorscale="Viridis", name="memset",
                               colorbar=dict(title=dict(text="Mpps", side="right"), thickness=14),
                               hovertemplate="batch %{x}, %{y} B zeroed: %{z:.3f} Mpps<extra></extra>"))
    fig.add_trace(Scatter(x=np.array([int(p["xdp_batch"])]), y=np.array([int(p["zero_bytes"])]),
                             mode="markers", name="current setting",
                             marker=dict(symbol="x", size=12, color="white", line=dict(color="black", width=1.5))))
    return finish(fig, "veth with memset: throughput over VETH_XDP_BATCH × bytes zeroed",
                   "VETH_XDP_BATCH = kmem_cache_alloc_bulk size (skbs)", "bytes zeroed by memset (bytes)",
                   caption(q, ("zero_bytes", "xdp_batch")))


# ---------------------------------------------------------------- live (skbview.charts.live)
def veth_batch_live(sweep: Sweep) -> dict:
    """What of :func:`veth_batch` moves with VETH_XDP_BATCH: marker, delta note of the two zeroing methods,
    caption (the sweep runs over batch × zeroing method)."""
    zero = sweep.state["zero"]
    memset, gfp = sweep.row("veth.mpps", "memset"), sweep.row("veth.mpps", "gfp_zero")
    return {"traces": [live_marker(sweep, (sweep.row("veth.mpps"),), lambda b: f"current: batch {b}, {zero}")],
            "annotations": [*live_delta(sweep, sweep.values, gfp, memset, "memset − __GFP_ZERO", "Mpps",
                                        where=lambda b: f"batch {b}"),
                            live_caption(sweep, ("zero", "zero_bytes", "xdp_batch", "noise_ns"))]}


veth_batch_live.outputs = ("veth.mpps",)


def veth_heatmap_live(sweep: Sweep) -> dict:
    """What of :func:`veth_heatmap` moves with VETH_XDP_BATCH: the cross of the current setting, caption."""
    zb = float(sweep.state["zero_bytes"]) + 0.0 * np.asarray(sweep.values, dtype=float)  # one value per batch
    return {"traces": [{**live_marker(sweep, (zb,), lambda b: "current setting", index=1)}],
            "annotations": [live_caption(sweep, ("zero_bytes", "xdp_batch"))]}


veth_heatmap_live.outputs = ()
