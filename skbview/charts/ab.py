"""The difference itself, wherever A and B are shown: A and B with their own 90 % intervals (left)
next to B − A with its paired 90 % interval against the noise floor (right).

Each side's interval holds every uncertainty of that side, most of which A and B share; the
difference's interval holds only what does not cancel.  Drawn together, a wide bar interval
around a narrow, measurable difference reads as what it is.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from skbmodel.physics import noise
from skbmodel.question import Question
from skbview import tables

from .base import COLORS, HEIGHT, Bar, Fig, Scatter, finish, num, rgba
from .compare import _ab_caption
from .design import _design_caption

VERDICT_COLORS = {noise.VERDICT_SURE: COLORS["b"], noise.VERDICT_UNSURE: rgba(COLORS["b"], 0.45),
                  noise.VERDICT_NOISE: "#c7c7c7", "—": "#c7c7c7"}


def difference(items, noise_ns: float, title: str, cap: str, unit: str = "ns") -> go.Figure:
    """``items``: ``[{label, a, b, a_iv, b_iv, delta, delta_iv, verdict}]`` (values [unit], intervals
    ``(lo, hi)``).  Left panel: A and B with their own intervals; right panel: B − A with its paired
    interval, the ±``noise_ns`` band and the verdict."""
    labels = [it["label"] for it in items]
    fig = Fig()
    for side, color in (("a", COLORS["a"]), ("b", COLORS["b"])):
        v = np.array([it[side] for it in items])
        lo = np.array([it[f"{side}_iv"][0] for it in items])
        hi = np.array([it[f"{side}_iv"][1] for it in items])
        fig.add_trace(Scatter(x=v, y=labels, mode="markers", name=side.upper(), marker=dict(size=10, color=color),
                              error_x=dict(type="data", symmetric=False, array=hi - v, arrayminus=v - lo, color=color,
                                           thickness=1.5, width=5),
                              customdata=np.stack([lo, hi], axis=-1), xaxis="x", yaxis="y",
                              hovertemplate=f"{side.upper()} %{{y}}: %{{x:.2f}} {unit} (90 % %{{customdata[0]:.2f}} "
                                            "to %{customdata[1]:.2f})<extra></extra>"))
    d = np.array([it["delta"] for it in items])
    dlo = np.array([it["delta_iv"][0] for it in items])
    dhi = np.array([it["delta_iv"][1] for it in items])
    verdicts = [it["verdict"] for it in items]
    fig.add_trace(Bar(x=d, y=labels, orientation="h", name="B − A (paired 90 %)", xaxis="x2", yaxis="y",
                      marker_color=[VERDICT_COLORS.get(v, "#c7c7c7") for v in verdicts],
                      error_x=dict(type="data", symmetric=False, array=dhi - d, arrayminus=d - dlo, color="#333",
                                   thickness=1.5, width=5),
                      customdata=np.stack([dlo, dhi], axis=-1),
                      hovertemplate=f"B − A %{{y}}: %{{x:+.2f}} {unit} (paired 90 % %{{customdata[0]:+.2f}} to "
                                    "%{customdata[1]:+.2f})<extra></extra>"))
    reach = float(np.max(np.abs(np.concatenate([dlo, dhi, d])))) if len(d) else 0.0
    lim = max(reach * 1.15, noise_ns * 2.5)
    # the number and verdict beside each bar; the half-width to 2 significant digits, never as 4.4e+02
    for y, x, lo_, hi_, v in zip(labels, d, dlo, dhi, verdicts):
        fig.add_annotation(x=lim, xref="x2", y=y, yref="y", xanchor="left", xshift=8, font=dict(size=12, color="#222"),
                           align="left", text=f"{x:+.2f} ± {float(f'{(hi_ - lo_) / 2:.2g}'):g} {unit}<br>"
                                              f"{noise.VERDICT_SHORT.get(v, v)}")
    fig.add_shape(type="rect", xref="x2", yref="paper", x0=-noise_ns, x1=noise_ns, y0=0, y1=1,
                  fillcolor=COLORS["noise"], line=dict(width=0), layer="below")
    fig.add_annotation(x=0.55, xref="paper", y=1, yref="paper", xanchor="left", yanchor="bottom",
                       font=dict(size=11, color="#555"), text=f"grey: ±{noise_ns:g} {unit} noise floor")
    fig.update_layout(xaxis2=dict(domain=[0.55, 0.84], anchor="y", range=[-lim, lim], zeroline=True,
                                  zerolinecolor="#888", showline=True, linecolor="#888", ticks="outside",
                                  title=dict(text=f"B − A ({unit}), paired 90 %")),
                      legend=dict(orientation="h", x=0, y=1.0, xanchor="left", yanchor="bottom"))
    fig.update_xaxes(domain=[0.0, 0.47])
    fig.update_yaxes(autorange="reversed", ticks="", showline=False)
    height = max(HEIGHT, 200 + 80 * len(items))
    return finish(fig, title, f"A and B ({unit}), own 90 % intervals", "output", cap, height=height, cap_width=60)


def compare_difference(q: Question) -> go.Figure:
    """The outputs the A/B verdict is about (:func:`skbview.tables.compare_verdicts`): A, B and B − A."""
    verdicts = tables.compare_verdicts(q)
    nf = float(q["noise_ns"])
    title = None
    if not verdicts:  # nothing moves: the chosen path, at a difference of 0
        verdicts = [r for r in tables.compare_rows(q) if r["output"] == "path.ns_per_packet"]
        title = "A/B: A and B agree on every output"
    outs = [v["output"] for v in verdicts[:4]]
    sides = {w: q.on_page("compare").own(w, outs)[1] for w in ("a", "b")}
    items = [dict(label=tables.ab_label(v["output"], q, short=True).replace(" (", "<br>("), a=v["A"], b=v["B"],
                  a_iv=tuple(num(x) for x in sides["a"][v["output"]]),
                  b_iv=tuple(num(x) for x in sides["b"][v["output"]]),
                  delta=v["delta"], delta_iv=(v["delta_lo"], v["delta_hi"]), verdict=v["verdict"])
             for v in verdicts[:4]]
    h = verdicts[0]
    title = title or f"A/B: B − A {h['delta']:+.2f} {h['unit']} ({h['verdict']})"
    return difference(items, nf, title, _ab_caption(q), unit=h["unit"])


def design_difference(q: Question) -> go.Figure:
    """The composition (A) and its comparison (B) with their own intervals, next to the paired B − A."""
    s = tables.design_summary(q)
    o = "path.ns_per_packet"
    item = dict(label="per-packet cost", a=num(s["a"][o]), b=num(s["b"][o]),
                a_iv=tuple(num(x) for x in s["iv_a"][o]), b_iv=tuple(num(x) for x in s["iv_b"][o]),
                delta=s["delta_ns"], delta_iv=(s["delta_lo"], s["delta_hi"]), verdict=s["verdict"])
    nf = float(q.get("noise_ns", 2.0))
    return difference([item], nf, f"Design: B − A {s['delta_ns']:+.2f} ns ({s['verdict']})",
                      f"{tables.design_a_label(q)} vs {tables.design_b_label(q)} · {_design_caption(q)}")
