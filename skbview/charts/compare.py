"""The A/B page: the change of every per-packet time, and both paths' components."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from skbmodel import answers, model, schema
from skbmodel.physics import noise
from skbmodel.links import state as sk_state
from skbmodel.question import Question

from .base import (
    COLORS, COMPONENT_COLORS, PATH_LABELS, Bar, params, profile, evaluate_iv, error_bars, num,
    Fig, finish, rgba, delta_note, caption,
)


# ---------------------------------------------------------------- compare A/B
#: Per-packet (or per-object) time outputs shown in the A/B delta chart: those a verdict may speak of.
TIME_OUTPUTS = schema.VERDICT_OUTPUTS
TIME_LABELS = {k: schema.BY_NAME[k].label for k in TIME_OUTPUTS}


def compare_delta(q: Question) -> go.Figure:
    """B − A per-packet time of every path/microbenchmark [ns], against the ±noise floor, with the
    paired 90 % interval of each difference as error bars: the question's paired propagation and the
    answer's verdicts (:func:`skbmodel.answers.every_difference`, the A/B table's rows)."""
    cq = q.on_page("compare")
    rows = {r["output"]: r for r in answers.every_difference(cq)}
    nf = float(cq.a.params["noise_ns"])
    d = np.array([rows[k]["delta"] for k in TIME_OUTPUTS])
    lo = np.array([rows[k]["delta_lo"] for k in TIME_OUTPUTS])
    hi = np.array([rows[k]["delta_hi"] for k in TIME_OUTPUTS])
    verdicts = [rows[k]["verdict"] for k in TIME_OUTPUTS]
    color = {noise.VERDICT_SURE: COLORS["b"], noise.VERDICT_UNSURE: rgba(COLORS["b"], 0.45),
             noise.VERDICT_NOISE: "#c7c7c7"}
    note = {noise.VERDICT_SURE: "", noise.VERDICT_UNSURE: " (sign unsure)", noise.VERDICT_NOISE: " (noise)"}
    names = [TIME_LABELS[k] for k in TIME_OUTPUTS]
    fig = Fig()
    fig.add_trace(Bar(y=names, x=d, orientation="h", name="B − A (ns)",
                         marker_color=[color[v] for v in verdicts],
                         error_x=dict(type="data", symmetric=False, array=hi - d, arrayminus=d - lo, color="#444",
                                      thickness=1.5, width=4),
                         text=[f"{v:+.2f} ns" + note[m] for v, m in zip(d, verdicts)],
                         textposition="outside", cliponaxis=False,
                         customdata=np.stack([lo, hi], axis=-1),
                         hovertemplate="%{y}: %{x:+.2f} ns (90 % interval %{customdata[0]:+.2f} to "
                                       "%{customdata[1]:+.2f})<extra></extra>"))
    lim = max(float(np.abs(d).max()) * 1.3, nf * 2.5, float(np.max(np.abs(np.concatenate([lo, hi])))) * 1.1)
    fig.add_shape(type="rect", x0=-nf, x1=nf, y0=0, y1=1, yref="paper", fillcolor=COLORS["noise"],
                  line=dict(width=0), layer="below")
    fig.add_annotation(x=0, xref="paper", y=1, yref="paper", xanchor="left", yanchor="bottom",
                       font=dict(size=11, color="#555"),
                       text=f"grey band: ±{nf:g} ns noise floor (not measurable) · error bars: 90 % interval (paired)")
    fig.update_layout(showlegend=False)
    fig.update_xaxes(range=[-lim, lim], zeroline=True, zerolinecolor="#888")
    fig.update_yaxes(autorange="reversed", ticks="", showline=False)
    return finish(fig, "A/B: change in time per packet (B − A)", "B − A (ns per packet or object)", "model output",
                   _ab_caption(q), height=520, cap_width=75)


def _ab_caption(q: Question) -> str:
    """A's footer (what differs from the defaults, the versions), then what B changes and B's profile version."""
    pa, pb = q.scenario("a").params, q.scenario("b").params
    diff = [k for k in sk_state.MODEL_KEYS if pa[k] != pb[k]]
    fv = sk_state.fmt_value
    txt = " · ".join(f"{k}: {fv(pa[k])}→{fv(pb[k])}" for k in diff) or "A = B"
    return f"{caption(q, ('noise_ns',))} · A→B {txt} · B: profile {answers.identity(q.scenario('b')).text()}"


def compare_breakdown(q: Question) -> go.Figure:
    """The chosen path's per-packet components [ns] for A and B side by side."""
    fig = Fig()
    pa, pb = params(q, "a"), params(q, "b")
    ba = model.breakdown_ns(pa, profile(q, "a"))
    bb = model.breakdown_ns(pb, profile(q, "b"))
    labels = [f"A: {PATH_LABELS[pa['path']]}".replace(" (", "<br>("),
              f"B: {PATH_LABELS[pb['path']]}".replace(" (", "<br>(")]
    for comp in model.COMPONENTS:
        fig.add_trace(Bar(x=labels, y=np.array([num(ba[comp]), num(bb[comp])]), name=comp,
                             marker_color=COMPONENT_COLORS[comp],
                             hovertemplate=comp + ": %{y:.2f} ns/packet<extra></extra>"))
    ends = [evaluate_iv(q, ("path.ns_per_packet",), w) for w in ("a", "b")]
    error_bars(fig, labels, [num(o["path.ns_per_packet"]) for o, _ in ends],
                tuple(np.array([num(iv["path.ns_per_packet"][j]) for _, iv in ends]) for j in (0, 1)))
    tot = [num(o["path.ns_per_packet"]) for o, _ in ends]
    delta_note(fig, labels[1], tot[0], tot[1], "B − A", "ns/packet", digits=2, corner="upper center")
    fig.update_yaxes(range=[0, max(tot) * 1.2])
    fig.update_layout(barmode="stack")
    return finish(fig, "A/B: per-packet cost of the overview path", "scenario", "time per packet (ns)",
                   _ab_caption(q))
