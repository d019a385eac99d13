"""The Overview page: the chosen path's per-packet cost and every path side by side."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from skbmodel import model, rest, state as st_mod, uncertainty

from .base import (
    COLORS, COMPONENT_COLORS, PATH_LABELS, caption, Bar, Waterfall, params, profile, error_bars, num, Fig,
    finish,
)


def _rest_hover(path: str) -> str:
    """The rest of ``path``'s contents for a hover box (wrapped lines), or nothing."""
    r = rest.CONTENTS.get(str(path))
    if r is None:
        return ""
    words, lines, cur = r.contains.split(), [], ""
    for w in words:
        if len(cur) + len(w) > 70:
            lines.append(cur)
            cur = ""
        cur = f"{cur} {w}".strip()
    return "<br>" + r.constant + ":<br>" + "<br>".join(lines + [cur])


def overview_breakdown(state: Mapping) -> go.Figure:
    """Waterfall of the chosen path's per-packet components [ns] against the line-rate budget."""
    p = params(state)
    prof = profile(state)
    parts = model.breakdown_ns(p, prof)
    out = model.evaluate(p, prof, outputs=("path.ns_per_packet", "path.budget_pct", "budget.ns_per_packet"))
    keys = list(model.COMPONENTS)
    names = [k.replace(" ", "<br>", 1) if len(k) > 10 else k for k in keys]
    vals = np.array([num(parts[k]) for k in keys])
    total = num(out["path.ns_per_packet"])
    iv = uncertainty.intervals(p, prof, ["path.ns_per_packet"])["path.ns_per_packet"]
    hw = (num(iv[1]) - num(iv[0])) / 2
    budget = num(out["budget.ns_per_packet"])
    fig = Fig(Waterfall(
        name="per-packet cost", orientation="v", measure=["relative"] * len(names) + ["total"],
        x=names + ["total"], y=np.append(vals, total),
        text=[f"{v:.1f}" if abs(v) >= 0.05 else "" for v in vals] + [f"{total:.1f} ± {hw:.2g} ns"],
        textposition="outside", cliponaxis=False,
        connector=dict(line=dict(color="#bbb", width=1)),
        increasing=dict(marker=dict(color="#4e79a7")), decreasing=dict(marker=dict(color="#59a14f")),
        totals=dict(marker=dict(color="#f28e2b")),
        # each bar's own value (a waterfall's y is the running total), and what the rest of the path holds
        customdata=np.stack([np.append(vals, total).astype(object),
                             [_rest_hover(p["path"]) if k == "rest of path" else "" for k in keys] + [""]], axis=-1),
        hovertemplate="%{x}: %{customdata[0]:.2f} ns/packet%{customdata[1]}<extra></extra>",
    ))
    # no legend on this chart: the total's label carries the ± and the bar its 90 % interval
    error_bars(fig, ["total"], total, iv, showlegend=False)
    fig.add_hline(y=budget, line=dict(color=COLORS["budget"], dash="dash", width=2))
    fig.add_annotation(x=0, xref="paper", y=budget, xanchor="left", yanchor="bottom", font=dict(size=12, color="#444"),
                       text=f"line-rate budget {budget:.1f} ns/packet "
                            f"({st_mod.fmt_value(float(p['link_gbps']))} Gbit/s, {p['frame_bytes']} B frames)")
    fig.update_yaxes(rangemode="tozero", range=[0, max(total, budget) * 1.15])
    fig.update_xaxes(tickangle=0)
    fig.update_layout(showlegend=False)
    pct = num(out["path.budget_pct"])
    return finish(fig, f"Per-packet cost: {PATH_LABELS[p['path']]} — {total:.1f} ns = {pct:.0f} % of budget",
                   "cost component", "time per packet (ns)",
                   caption(state, ("path", "bulk", "zero", "zero_bytes", "xdp_batch", "kfl_bulk", "drop_batch",
                                   "pp_recycle", "numa", "link_gbps", "frame_bytes")))


def overview_paths(state: Mapping) -> go.Figure:
    """Stacked per-packet components [ns] of every path, with the budget line."""
    p = params(state)
    prof = profile(state)
    paths = np.array(st_mod.PATHS)
    parts = model.breakdown_ns({**p, "path": paths}, prof)
    budget = num(model.evaluate(p, prof, outputs=("budget.ns_per_packet",))["budget.ns_per_packet"])
    labels = [PATH_LABELS[x].replace(" (", "<br>(") for x in paths]
    fig = Fig()
    for comp in model.COMPONENTS:
        y = np.broadcast_to(np.asarray(parts[comp], dtype=float), paths.shape)
        fig.add_trace(Bar(x=labels, y=np.array(y), name=comp, marker_color=COMPONENT_COLORS[comp],
                             hovertemplate=comp + ": %{y:.1f} ns/packet<extra></extra>"))
    tot, iv = uncertainty.evaluate_with_intervals({**p, "path": paths}, prof, ["path.ns_per_packet"])
    error_bars(fig, labels, tot["path.ns_per_packet"], iv["path.ns_per_packet"])
    fig.add_hline(y=budget, line=dict(color=COLORS["budget"], dash="dash", width=2))
    fig.add_annotation(x=1, xref="paper", y=budget, text=f"line-rate budget {budget:.1f} ns", showarrow=False,
                       xanchor="right", yanchor="bottom", font=dict(size=11, color="#333"),
                       bgcolor="rgba(255,255,255,0.85)")
    fig.update_layout(barmode="stack")
    fig.update_xaxes(tickangle=0)
    return finish(fig, "All paths: per-packet cost by component", "path (CPU that limits the rate)",
                   "time per packet (ns)",
                   caption(state, ("zero", "zero_bytes", "xdp_batch", "kfl_bulk", "drop_batch", "pp_recycle",
                                   "numa", "link_gbps", "frame_bytes")))
