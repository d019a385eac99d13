"""The Overview page: the chosen path's per-packet cost and every path side by side."""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go

from skbmodel import model, uncertainty
from skbmodel.params import OPTION_SHORT, REST_STAGE_OPTIONS
from skbmodel.evidence import perfprofile
from skbmodel.physics import rest
from skbmodel.links import state as sk_state
from skbmodel.question import Question

from .base import (
    COLORS, COMPONENT_COLORS, REST_FILL, STAGE_COLORS, HEIGHT, PATH_LABELS, caption, Bar, params, profile, error_bars,
    num, Fig, finish,
)


def _lines(text: str, width: int = 70) -> list[str]:
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + len(w) > width:
            lines.append(cur)
            cur = ""
        cur = f"{cur} {w}".strip()
    return lines + [cur]


def _rest_hover(path: str) -> str:
    """The rest of ``path``'s contents for a hover box (wrapped lines), or nothing."""
    r = rest.CONTENTS.get(str(path))
    if r is None:
        return ""
    return "<br>" + r.constant + " (fitted), holds:<br>" + "<br>".join(_lines(r.contains))


def _zero_label(path: str, comp: str) -> str:
    """The label of a component the path costs at 0: inside its fitted rest, or not a step of the path."""
    r = rest.CONTENTS.get(str(path))
    if r is None:
        return "0"
    return "0<br>(in the rest)" if comp in r.holds else "0<br>(not on<br>this path)"


#: a named stage of a rest in a few words (the Design page's short option names of the stages)
_SHORT_STAGE = {sid: OPTION_SHORT[o] for o, sid in REST_STAGE_OPTIONS.items()}
#: The steps of the lifecycle the model costs one by one (the sliders move them); the rest is one fitted constant
STEPS = tuple(c for c in model.COMPONENTS if c != "rest of path")
_STEPS_X = dict(domain=[0.0, 0.55])
TOTAL_COLOR = "#9c755f"  # none of the steps' colours (COMPONENT_COLORS)
_PATH_X = dict(domain=[0.67, 1.0])


def _budget_line(fig: Fig, axis: str, budget: float) -> None:
    fig.shapes.append(dict(type="line", xref=f"x{axis} domain", x0=0, x1=1, yref=f"y{axis}", y0=budget, y1=budget,
                           line=dict(color=COLORS["budget"], dash="dash", width=2), layer="above"))


def overview_breakdown(q: Question) -> go.Figure:
    """The chosen path's per-packet cost [ns] in two panels.  Left, zoomed: the lifecycle steps the model
    costs one by one (the parts the controls move), on an axis of their own, a 0 labelled with why.
    Right: the same steps stacked, the fitted rest of the path on top in the named stages of its published
    perf profile (:func:`skbmodel.evidence.perfprofile.breakdown_stages_ns`, the source in each hover and the
    caption) and what no profile names (hatched, what the fitted constant holds in its hover), the total with
    its 90 % interval, and the line-rate budget."""
    p = params(q)
    prof = profile(q)
    path = str(p["path"])
    split = perfprofile.breakdown_stages_ns(p, prof)
    parts = split["parts"]
    out = model.evaluate(p, prof, outputs=("path.ns_per_packet", "path.budget_pct", "budget.ns_per_packet"))
    vals = np.array([num(parts[k]) for k in STEPS])
    rest_ns = num(parts["rest of path"])
    steps_ns = float(vals.sum())
    total = num(out["path.ns_per_packet"])
    iv = uncertainty.intervals(p, prof, ["path.ns_per_packet"])["path.ns_per_packet"]
    hi = num(iv[1])
    budget = num(out["budget.ns_per_packet"])
    names = [k.replace(" ", "<br>", 1) if len(k) > 10 else k for k in STEPS]
    zero = np.abs(vals) < 0.05
    labels = [_zero_label(path, k) if z else f"{v:.1f}" for k, v, z in zip(STEPS, vals, zero)]
    fig = Fig(Bar(
        name="modelled steps", x=names, y=vals, text=labels, textposition="outside", cliponaxis=False,
        constraintext="none", textfont=dict(size=np.where(zero, 11, 13)),
        marker=dict(color=[COMPONENT_COLORS[k] for k in STEPS]),
        hovertemplate="%{x}: %{y:.2f} ns/packet<extra></extra>",
    ))
    # right: the steps stacked in their colours (the left panel's bars, to scale), the rest on top, the total
    where = ["modelled<br>steps", "rest of path<br>(fitted)", "total"]
    for k, v, b in zip(STEPS, vals, np.cumsum(vals) - vals):
        # named by the left panel's axis (the same colours), the rest and the total by this one's: no legend
        fig.add_trace(Bar(name=k, x=[where[0]], y=[v], base=[b], xaxis="x2", yaxis="y2", showlegend=False,
                          marker=dict(color=COMPONENT_COLORS[k]),
                          hovertemplate=f"{k}: %{{y:.2f}} ns/packet<extra></extra>"))
    # the rest in the named stages of its published perf profile, the largest at the bottom, what no profile
    # names on top (hatched, with what the fitted constant holds)
    rest_of = str(split["paths"])
    source = perfprofile.profile_source(perfprofile.default_for(rest_of) if rest_of else None)
    base = steps_ns
    for s, v in split["stages"].items():
        v = num(v)
        if v <= 0:
            continue
        label = perfprofile.stage_label(s)
        unnamed = s == perfprofile.UNNAMED
        hover = (f"{label}: %{{y:.2f}} ns/packet ({v / rest_ns * 100:.0f} % of the rest)<br>"
                 + ("what no published profile names" + _rest_hover(path) if unnamed else "from " + source))
        marker = REST_FILL if unnamed else dict(color=STAGE_COLORS[s], line=dict(color="#fff", width=1))
        fig.add_trace(Bar(name=label, x=[where[1]], y=[v], base=[base], xaxis="x2", yaxis="y2", showlegend=False,
                          marker=marker,
                          text=[f"{label} {v:.0f}" if v >= 0.06 * rest_ns else ""], textposition="inside",
                          insidetextanchor="middle", textfont=dict(size=10, color="#222"), constraintext="inside",
                          legendgroup="rest of path", hovertemplate=hover + "<extra></extra>"))
        base += v
    fig.add_trace(Bar(name="total", x=[where[2]], y=[total], xaxis="x2", yaxis="y2", showlegend=False,
                      marker=dict(color=TOTAL_COLOR),
                      hovertemplate="total: %{y:.2f} ns/packet<extra></extra>"))
    error_bars(fig, [where[2]], total, iv, showlegend=False)
    fig.traces[-1].update(xaxis="x2", yaxis="y2")
    for x, y, text in ((where[0], steps_ns, f"{steps_ns:.1f}"), (where[1], steps_ns + rest_ns, f"{rest_ns:.1f}"),
                       (where[2], max(hi, total), f"{total:.1f} ± {(hi - num(iv[0])) / 2:.2g} ns")):
        fig.add_annotation(x=x, xref="x2", y=y, yref="y2", yanchor="bottom", text=text, font=dict(size=12))
    _budget_line(fig, "2", budget)
    top = float(vals.max()) * 1.35 or 1.0
    if budget < top:  # the steps alone reach the budget (a fast link, small frames): the line here too
        _budget_line(fig, "", budget)
    link = f"{sk_state.fmt_value(float(p['link_gbps']))} Gbit/s, {p['frame_bytes']} B"
    heads = (f"Modelled lifecycle steps (zoomed): {steps_ns:.1f} ns, {steps_ns / budget * 100:.0f} % of the budget",
             f"The whole path: {total / budget * 100:.0f} % of the budget")
    for head, dom in zip(heads, (_STEPS_X, _PATH_X)):
        fig.add_annotation(x=dom["domain"][0], xref="paper", y=1.0, yref="paper", yshift=8, xanchor="left",
                           yanchor="bottom", align="left", text=head, font=dict(size=13, color="#222"))
    axis = dict(showline=True, linecolor="#888", ticks="outside")
    fig.update_layout(
        showlegend=False, barmode="overlay",
        xaxis=dict(_STEPS_X, tickangle=0),
        yaxis=dict(range=[0, top]),
        xaxis2=dict(**_PATH_X, **axis, anchor="y2", tickangle=0,
                    title=dict(text=f"- - - line-rate budget {budget:.1f} ns ({link})", font=dict(size=11))),
        yaxis2=dict(**axis, anchor="x2", range=[0, max(hi, budget) * 1.2],
                    title=dict(text="whole path (ns/packet)", standoff=4)),
    )
    cap = caption(q, ("path", "bulk", "zero", "zero_bytes", "xdp_batch", "kfl_bulk", "drop_batch", "pp_recycle",
                          "place", "link_gbps", "frame_bytes"))
    rest_r = rest.CONTENTS.get(path)
    if rest_r is not None:
        cap += f" · rest of path = {rest_r.constant}, one constant fitted to the whole path: {rest_r.contains}"
    if rest_r is not None or rest_of:
        cap += f" · the rest's stages: {source}"
    pct = num(out["path.budget_pct"])
    return finish(fig, f"Per-packet cost: {PATH_LABELS[p['path']]} — {total:.1f} ns = {pct:.0f} % of budget",
                  "modelled step", "modelled steps (ns/packet)", cap, height=HEIGHT + 90)


def overview_paths(q: Question) -> go.Figure:
    """Stacked per-packet components [ns] of every path, each path's fitted rest on top in the named stages of
    its published perf profile (:func:`skbmodel.evidence.perfprofile.breakdown_stages_ns`, the profile in each
    hover) and what no profile names (hatched), with the budget line."""
    p = params(q)
    prof = profile(q)
    paths = np.array(sk_state.PATHS)
    split = perfprofile.breakdown_stages_ns({**p, "path": paths}, prof)
    parts = split["parts"]
    rest_of = np.broadcast_to(np.asarray(split["paths"]).astype(str), paths.shape)
    sources = [perfprofile.profile_source(perfprofile.default_for(r) if r else None) for r in rest_of]
    budget = num(model.evaluate(p, prof, outputs=("budget.ns_per_packet",))["budget.ns_per_packet"])
    labels = [PATH_LABELS[x].replace(" (", "<br>(") for x in paths]
    fig = Fig()
    for comp in STEPS:  # the modelled steps at the bottom, the rest's stages above, what stays unnamed on top
        y = np.broadcast_to(np.asarray(parts[comp], dtype=float), paths.shape)
        fig.add_trace(Bar(x=labels, y=np.array(y), name=comp, marker=dict(color=COMPONENT_COLORS[comp]),
                          hovertemplate=comp + ": %{y:.1f} ns/packet<extra></extra>"))
    # the rest's stages named inside their segments (short names; a legend of every stage would crowd the
    # chart), what no profile names hatched, in the legend
    tall = 0.04 * float(np.max(sum(np.asarray(v, dtype=float) for v in parts.values())))
    for s, v in split["stages"].items():
        y = np.broadcast_to(np.asarray(v, dtype=float), paths.shape)
        on = np.flatnonzero(y > 0)  # a stage is drawn on the paths whose rest it is part of (no empty bars)
        unnamed = s == perfprofile.UNNAMED
        label = perfprofile.stage_label(s)
        marker = REST_FILL if unnamed else dict(color=STAGE_COLORS[s])
        why = ["what no published profile names" if unnamed else "from " + sources[j] for j in on]
        text = ["" if unnamed or y[j] < tall else _SHORT_STAGE[s] for j in on]
        fig.add_trace(Bar(x=[labels[j] for j in on], y=y[on], name=label, marker=marker, showlegend=unnamed,
                          legendgroup="rest of path", customdata=why, text=text, textposition="inside",
                          insidetextanchor="middle", textfont=dict(size=10, color="#222"),
                          hovertemplate=label + ": %{y:.1f} ns/packet<br>%{customdata}<extra></extra>"))
    tot, iv = uncertainty.evaluate_with_intervals({**p, "path": paths}, prof, ["path.ns_per_packet"])
    error_bars(fig, labels, tot["path.ns_per_packet"], iv["path.ns_per_packet"])
    fig.add_hline(y=budget, line=dict(color=COLORS["budget"], dash="dash", width=2))
    fig.add_annotation(x=1, xref="paper", y=budget, text=f"line-rate budget {budget:.1f} ns", showarrow=False,
                       xanchor="right", yanchor="bottom", font=dict(size=11, color="#333"),
                       bgcolor="rgba(255,255,255,0.85)")
    fig.update_layout(barmode="stack")
    fig.update_xaxes(tickangle=0)
    return finish(fig, "All paths: per-packet cost by component, each rest in its named stages",
                  "path (CPU that limits the rate)", "time per packet (ns)",
                  caption(q, ("zero", "zero_bytes", "xdp_batch", "kfl_bulk", "drop_batch", "pp_recycle",
                                  "place", "link_gbps", "frame_bytes")))
