"""The kfree_skb_list page: injection rate vs drop_batch and vs cloned skbs."""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go

from skbmodel import model, uncertainty
from skbmodel.question import Question

from .live import Sweep, live_caption, live_marker
from .base import (
    caption, Scatter, params, profile, band, line_color, current_trace, Fig, finish, add_seed_points,
)


# ---------------------------------------------------------------- kfree_skb_list
DROP_X = np.unique(np.round(np.logspace(0, np.log10(1024), 160)).astype(int))


def _kfl_lines(q) -> list[int]:
    return sorted({1, 8, 16, 64, int(q["kfl_bulk"])})


DASHES = ("solid", "dash", "dot", "dashdot", "longdash")
#: Lines closer than this everywhere (relative) look like one line at the chart's size: the chart says so
COINCIDE_REL = 0.01


def coincide_note(bulks, mpps) -> str:
    """A note when the lines of the bulk sizes above 1 (rows of ``mpps`` [Mpps] over :data:`DROP_X`) lie
    within :data:`COINCIDE_REL` of each other at every drop_batch: which ones, how close, and up to which
    drop_batch they are the same (a drop list no longer than the smallest bulk fills none of them)."""
    rows = np.asarray(bulks) > 1
    if rows.sum() < 2:
        return ""
    m = mpps[rows]
    spread = (m.max(axis=0) - m.min(axis=0)) / m.min(axis=0)
    if spread.max() >= COINCIDE_REL:
        return ""
    n_same = int(np.argmax(spread > 1e-12)) if (spread > 1e-12).any() else len(DROP_X)  # the same from the start
    upto = f";<br>the same up to drop_batch {DROP_X[n_same - 1]}" if n_same else ""
    names = ", ".join(str(int(b)) for b in np.asarray(bulks)[rows])
    return (f"KFREE_SKB_BULK_SIZE {names}: within {spread.max() * 100:.1g} %<br>of each other at every "
            f"drop_batch{upto}")


def kfree_drop_batch(q: Question) -> go.Figure:
    """pktgen qdisc injection rate [Mpps] vs fq_codel drop_batch, one line per KFREE_SKB_BULK_SIZE."""
    p = params(q)
    prof = profile(q)
    bulks = np.array(_kfl_lines(p))
    out, iv = uncertainty.evaluate_with_intervals({**p, "kfl_bulk": bulks[:, None], "drop_batch": DROP_X[None, :]},
                                                  prof, ("kfree_skb_list.mpps",))
    cur = model.evaluate(p, prof, outputs=("kfree_skb_list.mpps",))
    fig = Fig()
    fig.add_trace(current_trace(int(p["drop_batch"]), (cur["kfree_skb_list.mpps"],),
                           f"current: drop_batch {p['drop_batch']}, bulk {p['kfl_bulk']}",
                           "drop_batch %{x}: %{y:.4f} Mpps<extra></extra>"))
    for i, kb in enumerate(bulks):
        cur_line = int(kb) == int(p["kfl_bulk"])
        name = "no bulk free (1)" if kb == 1 else f"KFREE_SKB_BULK_SIZE {kb}"
        color = line_color(i + 1)
        # up to five overlapping bands: the current line's stands out, the others stay faint
        band(fig, DROP_X, iv["kfree_skb_list.mpps"], color, row=i, alpha=0.15 if cur_line else 0.05, name=name)
        # the bulk sizes' lines lie close together: each its own dash, so that each stays visible where they meet
        fig.add_trace(Scatter(x=DROP_X, y=np.asarray(out["kfree_skb_list.mpps"][i], dtype=float), mode="lines",
                                 name=name + (" (current)" if cur_line else ""), legendgroup=name,
                                 line=dict(color=color, width=3.5 if cur_line else 1.8, dash=DASHES[i % len(DASHES)]),
                                 hovertemplate="drop_batch %{x}: %{y:.4f} Mpps<extra>" + name + "</extra>"))
    note = coincide_note(bulks, np.asarray(out["kfree_skb_list.mpps"], dtype=float))
    if note:
        fig.add_annotation(x=0.99, xref="paper", y=0.03, yref="paper", xanchor="right", yanchor="bottom", align="right",
                           text=note, font=dict(size=12, color="#333"), bgcolor="rgba(255,255,255,0.85)")
    add_seed_points(fig, q, "kfree_skb_list.mpps", "drop_batch", "Mpps", "seed 000 pktgen queue_xmit (E5)",
                    free={"drop_batch": None, "kfl_bulk": bulks.tolist()},
                    text=lambda r, o: f"{r.id} (bulk {r.state['kfl_bulk']})", textposition="middle right",
                    hovertemplate="%{text}: %{y:.4f} Mpps<extra></extra>")
    fig.update_xaxes(type="log", tickvals=2 ** np.arange(11))
    return finish(fig, "kfree_skb_list: qdisc injection rate vs fq_codel drop_batch",
                   "fq_codel drop_batch (packets, log scale)",
                   "pktgen injection rate (Mpps)", caption(q, ("kfl_bulk", "drop_batch", "clone_frac")))


def kfree_drop_batch_live(sweep: Sweep) -> dict:
    """What of :func:`kfree_drop_batch` moves with drop_batch: the marker (named with the bulk size) and
    the caption; the lines, one per bulk size, do not depend on it."""
    bulk = sweep.state["kfl_bulk"]
    return {"traces": [live_marker(sweep, (sweep.row("kfree_skb_list.mpps"),),
                                   lambda d: f"current: drop_batch {d}, bulk {bulk}")],
            "annotations": [live_caption(sweep, ("kfl_bulk", "drop_batch", "clone_frac"))]}


kfree_drop_batch_live.outputs = ("kfree_skb_list.mpps",)


CLONE_X = np.linspace(0.0, 1.0, 51)


def kfree_clones(q: Question) -> go.Figure:
    """Injection rate [Mpps] vs fraction of cloned skbs in the drop list (bulk vs no bulk)."""
    p = params(q)
    prof = profile(q)
    bulks = np.array(sorted({1, int(p["kfl_bulk"])}))
    out, iv = uncertainty.evaluate_with_intervals({**p, "kfl_bulk": bulks[:, None], "clone_frac": CLONE_X[None, :]},
                                                  prof, ("kfree_skb_list.mpps",))
    cur = model.evaluate(p, prof, outputs=("kfree_skb_list.mpps",))
    fig = Fig()
    fig.add_trace(current_trace(float(p["clone_frac"]), (cur["kfree_skb_list.mpps"],), "current setting",
                           "clones %{x:.0%}: %{y:.4f} Mpps<extra></extra>"))
    for i, kb in enumerate(bulks):
        name = "no bulk free (1)" if kb == 1 else f"KFREE_SKB_BULK_SIZE {kb}"
        color = line_color(i + 1)
        band(fig, CLONE_X, iv["kfree_skb_list.mpps"], color, row=i, name=name)
        fig.add_trace(Scatter(x=CLONE_X, y=np.asarray(out["kfree_skb_list.mpps"][i], dtype=float), mode="lines",
                                 name=name, legendgroup=name, line=dict(color=color, width=2.5),
                                 hovertemplate="clones %{x:.0%}: %{y:.4f} Mpps<extra>" + name + "</extra>"))
    add_seed_points(fig, q, "kfree_skb_list.mpps", "clone_frac", "Mpps", "seed 000 pktgen queue_xmit (E5)",
                    free={"clone_frac": None, "kfl_bulk": bulks.tolist()},
                    text=lambda r, o: f"{r.id} (bulk {r.state['kfl_bulk']})", textposition="middle right",
                    hovertemplate="%{text}: %{y:.4f} Mpps<extra></extra>")
    fig.update_xaxes(tickformat=".0%")
    return finish(fig, "kfree_skb_list: effect of cloned skbs in the drop list",
                   "cloned skbs in the drop list (% of drops)",
                   "pktgen injection rate (Mpps)", caption(q, ("kfl_bulk", "drop_batch", "clone_frac")))
