"""The question grid: one output over up to three parameters, and its paired difference to scenario A.

The numbers are :func:`skbview.tables.grid_result` (one vectorised evaluation, :mod:`skbmodel.grid`).
The first parameter runs along x; every combination of the other two is one series.
"""
from __future__ import annotations

import itertools

import numpy as np
import plotly.graph_objects as go

from skbmodel import grid
from skbmodel.physics import noise
from skbmodel.links import state as sk_state
from skbmodel.question import Question
from skbview import tables

from .base import COLORS, Fig, Scatter, caption, finish, line_color

SYMBOLS = {grid.SURE: "circle", grid.UNSURE: "circle-open", grid.NOISE: "x-thin-open"}


def _series(res):
    """``[(name, index into the grid along the first axis)]`` for every combination of the other axes."""
    axes = res["axes"]
    rest = axes[1:]
    combos = itertools.product(*[range(len(v)) for _, v in rest]) if rest else [()]
    out = []
    for combo in combos:
        name = " · ".join(grid.label_of(k, v[i]) for (k, v), i in zip(rest, combo)) or "value"
        out.append((name, (slice(None),) + tuple(combo)))
    return out


def _x(res):
    k, vals = res["axes"][0]
    return [grid.label_of(k, v) for v in vals], sk_state.PARAMS[k].label


def _caption(q: Question, res) -> str:
    axes = " × ".join(f"{k} ({', '.join(grid.label_of(k, v) for v in vals)})" for k, vals in res["axes"])
    tied = [f"{t} follows {f}" for t, f in grid.TIED.items() if f in dict(res["axes"]) and t not in dict(res["axes"])]
    path = "composed path from " + str(q.get("d_from")) if any(k.startswith("d_") for k, _ in res["axes"]) \
        else "path " + str(q.get("path"))
    return " · ".join([caption(q), path, f"grid: {axes}", *tied,
                       f"baseline: scenario A ({res['base_value']:.4g} {res['unit']})"])


def grid_values(q: Question) -> go.Figure:
    """The output over the grid, each point with its 90 % interval."""
    res = tables.grid_result(q)
    x, xtitle = _x(res)
    fig = Fig()
    for i, (name, idx) in enumerate(_series(res)):
        v, lo, hi = res["value"][idx], res["lo"][idx], res["hi"][idx]
        fig.add_trace(Scatter(x=x, y=v, mode="lines+markers", name=name, line=dict(color=line_color(i)),
                              error_y=dict(type="data", symmetric=False, array=hi - v, arrayminus=v - lo,
                                           color=line_color(i), thickness=1.2, width=4),
                              customdata=np.stack([lo, hi], axis=-1),
                              hovertemplate=f"{name} %{{x}}: %{{y:.4g}} {res['unit']} (90 % %{{customdata[0]:.4g}} "
                                            "to %{customdata[1]:.4g})<extra></extra>"))
    fig.add_hline(y=res["base_value"], line=dict(color=COLORS["budget"], dash="dot", width=1.5))
    return finish(fig, f"{res['output']} over the grid (90 % intervals; dotted: scenario A)", xtitle,
                  f"{res['output']} ({res['unit']})", _caption(q, res))


def grid_delta(q: Question) -> go.Figure:
    """The paired difference of every cell to scenario A, its 90 % interval, the noise floor and the
    verdict (filled: measurable and sure of the sign; open: cannot tell; cross: below noise)."""
    res = tables.grid_result(q)
    x, xtitle = _x(res)
    fig = Fig()
    for i, (name, idx) in enumerate(_series(res)):
        d, lo, hi, vd = res["delta"][idx], res["delta_lo"][idx], res["delta_hi"][idx], res["verdict"][idx]
        fig.add_trace(Scatter(x=x, y=d, mode="lines+markers", name=name, line=dict(color=line_color(i)),
                              marker=dict(size=10, symbol=[SYMBOLS[int(c)] for c in vd]),
                              error_y=dict(type="data", symmetric=False, array=hi - d, arrayminus=d - lo,
                                           color=line_color(i), thickness=1.2, width=4),
                              customdata=np.stack([lo, hi, vd], axis=-1),
                              text=[noise.VERDICTS[int(c)] for c in vd],
                              hovertemplate=f"{name} %{{x}}: %{{y:+.3g}} {res['unit']} (paired 90 % "
                                            "%{customdata[0]:+.3g} to %{customdata[1]:+.3g}) · %{text}"
                                            "<extra></extra>"))
    if res["unit"] == "ns":
        nf = res["noise_ns"]
        fig.add_shape(type="rect", xref="paper", x0=0, x1=1, y0=-nf, y1=nf, fillcolor=COLORS["noise"],
                      line=dict(width=0), layer="below")
    fig.add_hline(y=0, line=dict(color="#888", width=1))
    return finish(fig, "Difference to scenario A (paired 90 %; ● measurable and sure · ○ cannot tell · × noise)",
                  xtitle, f"B − A ({res['unit']})", _caption(q, res))
