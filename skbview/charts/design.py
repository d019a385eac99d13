"""The Design page: a composed path (A) against a comparison (B), and the NAPI skb cache.

The numbers behind the page's metrics and this chart (totals, intervals, the paired delta and its
verdict) are :func:`skbview.tables.design_summary`.
"""
from __future__ import annotations

from collections.abc import Mapping

import re

import numpy as np
import plotly.graph_objects as go

from skbmodel import answers, composer, model, uncertainty
from skbmodel.evidence import perfprofile
from skbmodel.links import state as sk_state
from skbmodel.physics import units
from skbmodel.question import Question
from skbview import tables

from .live import Sweep
from .base import (
    _wrap,
    COLORS, COMPONENT_COLORS, REST_FILL, STAGE_COLORS, caption, Bar, params, profile, error_bars, num, Fig, finish,
    add_seed_points, delta_note, delta_text,
)


def _design_caption(q: Question, **at) -> str:
    """The footer of the Design page's charts; ``at``: composition A's stage sizes at other values than the
    question's (a live control's sweep: B's composition reads none of them)."""
    keys = [k for k in composer.KEY_NAMES if at.get(k, q.get(k)) != composer.DEFAULTS[k] or k == "d_from"]
    _, pb = tables.design_params_ab(q)
    parts = [f"{sk_state.key_of('path', 'b')}={pb['path']}"]
    if pb["path"] == "design":
        parts += [f"{sk_state.key_of(k, 'b')}={sk_state.fmt_value(pb[k])}" for k in composer.KEY_NAMES
                  if pb[k] != composer.DEFAULTS[k] or k == "d_from"]
    return " · ".join([caption(q, ("pp_recycle", "place", "link_gbps", "frame_bytes", *keys), **at), *parts])


STAGE = answers.STAGE  # a bar row that is a stage of the rest, and its key in the sweep (``"a:stage:<id>"``)


def _rows(stages_a, stages_b) -> list[str]:
    """The breakdown's bars, bottom to top: the components in their order, the rest of path as the stages of
    A's and B's rests (:func:`skbmodel.evidence.perfprofile.breakdown_stages_ns`, in its order), unnamed last."""
    stages = [s for s in dict.fromkeys([*stages_a, *stages_b]) if s != perfprofile.UNNAMED]
    return [r for c in model.COMPONENTS
            for r in ([STAGE + s for s in (*stages, perfprofile.UNNAMED)] if c == "rest of path" else [c])]


def _row_of(split: Mapping, row: str):
    """A bar row's value [ns] in one side's :func:`~skbmodel.evidence.perfprofile.breakdown_stages_ns`."""
    if row.startswith(STAGE):
        return split["stages"].get(row[len(STAGE):], 0.0)
    return split["parts"][row]


def design_breakdown(q: Question) -> go.Figure:
    """Per-packet components [ns] of the composition (A) and the comparison (B), stacked, the rest of path in
    the named stages of the path it is taken from (its published perf profile in the hover) and what no
    profile names, with the 90 % interval of each total and the line-rate budget."""
    pa, pb = tables.design_params_ab(q)
    prof = profile(q)
    sa, sb = perfprofile.breakdown_stages_ns(pa, prof), perfprofile.breakdown_stages_ns(pb, prof)
    s = tables.design_summary(q)
    labels = [tables.design_a_label(q), tables.design_b_label(q)]
    labels = [x.replace(" (", "<br>(") for x in labels]
    sources = [perfprofile.profile_source(perfprofile.default_for(str(x["paths"])) if str(x["paths"]) else None)
               for x in (sa, sb)]
    fig = Fig()
    for row in _rows(sa["stages"], sb["stages"]):
        y = np.array([num(_row_of(sa, row)), num(_row_of(sb, row))])
        if not row.startswith(STAGE):
            fig.add_trace(Bar(x=labels, y=y, name=row, marker_color=COMPONENT_COLORS[row],
                              hovertemplate=row + ": %{y:.2f} ns/packet<extra></extra>"))
            continue
        stage = row[len(STAGE):]
        label = perfprofile.stage_label(stage)
        unnamed = stage == perfprofile.UNNAMED
        fig.add_trace(Bar(x=labels, y=y, name=label, legendgroup="rest of path",
                          legendgrouptitle_text="rest of path" if stage == next(iter(sa["stages"])) else None,
                          marker=REST_FILL if unnamed else dict(color=STAGE_COLORS[stage]),
                          customdata=["what no published profile names" if unnamed else "from " + src
                                      for src in sources],
                          hovertemplate=label + ": %{y:.2f} ns/packet (rest of path)<br>%{customdata}<extra></extra>"))
    tot = [num(s["a"]["path.ns_per_packet"]), num(s["b"]["path.ns_per_packet"])]
    error_bars(fig, labels, tot, tuple(np.array([num(iv["path.ns_per_packet"][j]) for iv in (s["iv_a"], s["iv_b"])])
                                          for j in (0, 1)))
    budget = num(s["a"]["budget.ns_per_packet"])
    fig.add_hline(y=budget, line=dict(color=COLORS["budget"], dash="dash", width=2))
    fig.add_annotation(x=1, xref="paper", y=budget, showarrow=False, xanchor="right", yanchor="bottom",
                       font=dict(size=11, color="#333"), bgcolor="rgba(255,255,255,0.85)",
                       text=f"line-rate budget {budget:.1f} ns ({num(s['a']['budget.line_rate_mpps']):.3g} Mpps)")
    for x, t, mpps, name in zip(labels, tot, (s["a"]["path.mpps"], s["b"]["path.mpps"]), ("total_a", "total_b")):
        fig.add_annotation(x=x, y=t, yshift=4, xshift=-8, showarrow=False, xanchor="right", yanchor="bottom",
                           font=dict(size=12, color="#222"), name=name, text=_total_text(t, mpps))
    if not (s["problems_a"] or s["problems_b"]):
        delta_note(fig, labels[1], tot[0], tot[1], "B − A", "ns/packet", digits=2, corner="upper center")
    fig.update_layout(barmode="stack")
    fig.update_yaxes(rangemode="tozero", range=[0, max(max(tot), budget) * 1.2])
    title = _title(tot[0], s["delta_ns"], s["verdict"])
    if s["problems_a"]:
        title = "Composition not usable: " + "; ".join(stage for stage, _ in s["problems_a"])
    return finish(fig, title, "composition", "time per packet (ns)", _design_caption(q))


def _total_text(ns, mpps) -> str:
    return f"{num(ns):.1f} ns · {num(mpps):.3g} Mpps"


def _title(ns_a, delta_ns, verdict: str) -> str:
    return f"Composed path: {num(ns_a):.1f} ns/packet; B − A {num(delta_ns):+.1f} ns ({verdict})"


def _captions(sweep: Sweep) -> list[str]:
    """The caption at each value of the sweep: the stage size is named only where it is not the default, and
    the lines break by the length of its text, so one caption per length is made and the value put in."""
    key, default = sweep.key, composer.DEFAULTS[sweep.key]
    made, out = {}, []
    for v in sweep.values.tolist():
        v = int(v)
        if v == default:
            out.append(_wrap(_design_caption(sweep.state, **{key: v})))
            continue
        n = len(str(v))
        if n not in made:
            made[n] = (v, _wrap(_design_caption(sweep.state, **{key: v})))
        r, cap = made[n]
        out.append(re.sub(rf"(?<!b_){key}={r}(?!\d)", f"{key}={v}", cap))
    return out


def design_breakdown_live(sweep: Sweep) -> dict:
    """What of :func:`design_breakdown` moves with one of A's stage sizes (the sweep of
    :func:`skbmodel.answers.design_sweep`): A's bars, the totals' error bars, A's total, the delta note,
    the title, the y range and the caption; B's bars stay."""
    o, iv, n = sweep.out, sweep.iv, len(sweep.values)
    col = lambda a: np.broadcast_to(np.asarray(a, dtype=float), (n,))  # noqa: E731
    stages = [[k.split(":", 2)[2] for k in o if k.startswith(f"{side}:{STAGE}")] for side in "ab"]
    rows = _rows(*stages)
    traces = [{"i": j, "y": np.stack([col(o.get("a:" + row, 0.0)), col(o.get("b:" + row, 0.0))], axis=-1)}
              for j, row in enumerate(rows)]
    tot = np.stack([col(o["path.ns_per_packet"]), col(o[answers.B_COST])], axis=-1)
    lo = np.stack([col(iv["path.ns_per_packet"][0]), col(iv[answers.B_COST][0])], axis=-1)
    hi = np.stack([col(iv["path.ns_per_packet"][1]), col(iv[answers.B_COST][1])], axis=-1)
    traces.append({"i": len(rows), "y": tot, "error_y.array": hi - tot, "error_y.arrayminus": tot - lo})
    delta, verdict = col(o[answers.AB_DELTA]), o[answers.AB_VERDICT]
    budget = col(o["budget.ns_per_packet"])
    a_tot, b_tot, mpps = tot[:, 0].tolist(), tot[:, 1].tolist(), col(o["path.mpps"]).tolist()
    notes = [{"name": "total_a", "y": tot[:, 0], "text": [_total_text(t, m) for t, m in zip(a_tot, mpps)]},
             {"name": "delta_arrow", "y": tot[:, 1], "ay": tot[:, 0]},
             {"name": "delta", "text": [delta_text(a, b, "B − A", "ns/packet", 2) for a, b in zip(a_tot, b_tot)]},
             {"name": "caption", "text": _captions(sweep)}]
    top = np.maximum(tot.max(axis=1), budget) * 1.2
    layout = {"title.text": [_title(a, d, v) for a, d, v in zip(a_tot, delta.tolist(), verdict)],
              "yaxis.range": np.stack([np.zeros_like(top), top], axis=-1)}
    return {"traces": traces, "annotations": notes, "layout": layout}


design_breakdown_live.outputs = ()


def napi_defer_rate(q: Question) -> go.Figure:
    """Request rate [Krps] of the CPU-bound TCP ping-pong without and with the same-CPU deferred free
    into the NAPI skb cache, with the seed points (rows dfr-01, dfr-02)."""
    p = params(q)
    prof = profile(q)
    x = np.array([0, 1])
    names = ["without (kmem_cache_free / kmem_cache_alloc)", "with (NAPI skb cache)"]
    out, iv = uncertainty.evaluate_with_intervals({**p, "defer_cache": x}, prof, ["napi_defer.krps"])
    y = np.asarray(out["napi_defer.krps"], dtype=float)
    fig = Fig(Bar(x=names, y=y, name="model", marker_color=[COLORS["a"], COLORS["gfp_zero"]],
                       text=[f"{v:.1f} Krps" for v in y], textposition="inside", insidetextanchor="start",
                       hovertemplate="%{x}: %{y:.1f} Krps<extra></extra>"))
    error_bars(fig, names, y, iv["napi_defer.krps"])
    add_seed_points(fig, q, "napi_defer.krps", "defer_cache", "Krps", "seed 001 measurement",
                    x=lambda r: names[int(r.state["defer_cache"])], textposition="middle right",
                    hovertemplate="%{text}: %{y:.1f} Krps<extra></extra>")
    gain = (y[1] / y[0] - 1.0) * 100.0
    lo = float(np.min(np.asarray(iv["napi_defer.krps"][0]))) * 0.97
    fig.update_yaxes(range=[lo, float(np.max(np.asarray(iv["napi_defer.krps"][1]))) * 1.02])
    per_req = units.cycles_to_ns(prof.value("napi_base_cycles"), float(p["ghz"]))
    return finish(fig, f"NAPI skb cache: same-CPU deferred free, {gain:+.1f} % requests/s",
                     "skb free on the allocating CPU", "request rate (Krps)",
                     caption(q) + f" · rest of a request {per_req / 1e3:.2f} µs · axis does not start at 0")
