"""The Zeroing page: memset vs __GFP_ZERO cost and their difference against the noise floor."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import plotly.graph_objects as go

from skbmodel.physics import units
from skbmodel.evidence import seed_checks
from skbmodel.evidence.observations import seed_observations
from skbmodel.machine.profile import load_profile
from skbmodel.question import Question

from .live import Sweep, live_caption, live_delta, live_marker
from .base import (
    COLORS, caption, Scatter, params, profile, evaluate, evaluate_iv, band, num, current_trace,
    Fig, finish, add_seed_points, delta_note, cycle_curves,
)


# ---------------------------------------------------------------- zeroing
ZERO_X = np.arange(8, 1025)


def seed_zero_delta_ns() -> float:
    """The seed's memset vs __GFP_ZERO delta [ns], read from row veth-n1's condition text (1.66)."""
    o = seed_observations().get("veth-n1")
    m = re.search(r"(\d+(?:\.\d+)?) ns memset", o.condition if o else "")
    if m:
        return float(m.group(1))
    a, b = seed_observations()["mem-01"], seed_observations()["mem-03"]  # fallback: cycles at 3.6 GHz
    return float(units.cycles_to_ns(a.value - b.value, load_profile("e5-1650v4").ghz))



def zeroing_cost(q: Question) -> go.Figure:
    """memset (rep stos) vs memset_erms (what __GFP_ZERO calls) [cycles] vs bytes zeroed."""
    p = params(q)
    out, iv = evaluate_iv(q, ("zero.memset_cycles", "zero.erms_cycles"), zero_bytes=ZERO_X)
    cur = evaluate(q, outputs=("zero.memset_cycles", "zero.erms_cycles", "zero.gfp_zero_cycles"))
    zb = int(p["zero_bytes"])
    ghz = float(p["ghz"])
    fig = Fig()
    fig.add_trace(current_trace(zb, (cur["zero.memset_cycles"], cur["zero.erms_cycles"]), f"current size = {zb} B",
                           "%{x} B: %{y:.1f} cycles<extra></extra>"))
    cycle_curves(fig, ZERO_X, out, iv, (("zero.memset_cycles", "memset, constant size (rep stos)", COLORS["memset"]),
                                        ("zero.erms_cycles", "memset_erms, variable size (__GFP_ZERO)",
                                         COLORS["gfp_zero"])),
                 ghz, "%{x} B", line_shape="hv")
    gfp = num(cur["zero.gfp_zero_cycles"])
    obj = int(profile(q).value("slub_object_bytes"))
    fig.add_hline(y=gfp, line=dict(color=COLORS["gfp_zero"], dash="dash", width=1.5))
    fig.add_annotation(x=1, xref="paper", y=gfp, text=f"__GFP_ZERO clears the whole {obj} B object: {gfp:.1f} cycles",
                       showarrow=False, xanchor="right", yanchor="top", font=dict(size=11, color=COLORS["gfp_zero"]))
    add_seed_points(fig, q, ("zero.memset_cycles", "zero.erms_cycles"), "zero_bytes", "cycles",
                     "seed 002 time_bench_memset (E5-1650 v4)", mode="markers",
                     hovertemplate="%{text}: %{x} B, %{y} cycles<extra></extra>")
    mem = num(cur["zero.memset_cycles"])  # memset of K bytes against __GFP_ZERO of the whole object
    delta_note(fig, zb, gfp, mem, "memset − __GFP_ZERO", "cycles", digits=1, where=f"{zb} B")
    fig.update_xaxes(dtick=64, range=[0, 1032])
    fig.update_yaxes(rangemode="tozero")
    return finish(fig, "Zeroing an skb: cost vs size (steps of one 64 B cacheline)", "bytes zeroed (bytes)",
                   "cost per skb (cycles)", caption(q, ("zero", "zero_bytes")))


def zeroing_delta(q: Question) -> go.Figure:
    """memset(zero_bytes) − __GFP_ZERO(object) per skb [ns] vs size, against the noise floor."""
    p = params(q)
    out, iv = evaluate_iv(q, ("zero.delta_ns",), zero_bytes=ZERO_X)
    cur = evaluate(q, outputs=("zero.delta_ns",))
    zb = int(p["zero_bytes"])
    nf = float(p["noise_ns"])
    d = np.asarray(out["zero.delta_ns"], dtype=float)
    fig = Fig()
    fig.add_trace(current_trace(zb, (cur["zero.delta_ns"],), f"current size = {zb} B",
                           "%{x} B: %{y:.2f} ns<extra></extra>"))
    fig.add_trace(Scatter(x=np.array([0, 1032]), y=np.array([nf, nf]), mode="lines", line=dict(width=0),
                             showlegend=False, hoverinfo="skip"))
    fig.add_trace(Scatter(x=np.array([0, 1032]), y=np.array([-nf, -nf]), mode="lines", line=dict(width=0),
                             fill="tonexty", fillcolor=COLORS["noise"],
                             name=f"noise floor ±{nf:g} ns (not measurable inside)", hoverinfo="skip"))
    band(fig, ZERO_X, iv["zero.delta_ns"], COLORS["memset"])
    fig.add_trace(Scatter(x=ZERO_X, y=d, mode="lines", line_shape="hv", name="memset − __GFP_ZERO (model)",
                             line=dict(color=COLORS["memset"], width=2.5),
                             hovertemplate="%{x} B: %{y:.2f} ns per skb<extra></extra>"))
    seed = seed_zero_delta_ns()
    # the delta was measured with mem-01's build (its zero_bytes, on its machine): that row's conditions
    row = dataclasses.replace(next(r for r in seed_checks.ROWS if r.id == "mem-01"), output="zero.delta_ns")
    seed_x = row.state["zero_bytes"]
    add_seed_points(fig, q, (), "zero_bytes", "ns", f"seed 002 delta ({seed:g} ns at {seed_x} B)",
                    rows=[(row, seed_observations()["veth-n1"])], y=lambda r, o: seed,
                    text=lambda r, o: f"seed 002: {seed:g} ns < {nf:g} ns → judged noise", textposition="middle right",
                    hovertemplate="%{y} ns<extra>seed</extra>")
    fig.update_xaxes(dtick=64, range=[0, 1032])
    return finish(fig, f"memset vs __GFP_ZERO: difference per skb vs the {nf:g} ns noise floor",
                   "bytes zeroed by memset (bytes)", "memset − __GFP_ZERO (ns per skb)",
                   caption(q, ("zero_bytes", "noise_ns")))


# ---------------------------------------------------------------- live (skbview.charts.live)
def zeroing_cost_live(sweep: Sweep) -> dict:
    """What of :func:`zeroing_cost` moves with the bytes zeroed: marker, delta note, caption."""
    memset, gfp = sweep.row("zero.memset_cycles"), sweep.row("zero.gfp_zero_cycles")
    name = "current size = {} B".format
    return {"traces": [live_marker(sweep, (memset, sweep.row("zero.erms_cycles")), name)],
            "annotations": [*live_delta(sweep, sweep.values, gfp, memset, "memset − __GFP_ZERO", "cycles", digits=1,
                                        where=lambda zb: f"{zb} B"),
                            live_caption(sweep, ("zero", "zero_bytes"))]}


zeroing_cost_live.outputs = ("zero.memset_cycles", "zero.erms_cycles", "zero.gfp_zero_cycles")


def zeroing_delta_live(sweep: Sweep) -> dict:
    """What of :func:`zeroing_delta` moves with the bytes zeroed: marker and caption."""
    return {"traces": [live_marker(sweep, (sweep.row("zero.delta_ns"),), lambda zb: f"current size = {zb} B")],
            "annotations": [live_caption(sweep, ("zero_bytes", "noise_ns"))]}


zeroing_delta_live.outputs = ("zero.delta_ns",)
