"""The SLUB bulk page: alloc+free cost per object and the bulk API's saving vs bulk size."""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go


from skbmodel.physics import slub
from skbmodel.question import Question

from .live import Sweep, live_caption, live_delta, live_marker

from .base import (
    COLORS, caption, Scatter, params, evaluate, evaluate_iv, band, num, current_trace, Fig, finish,
    add_seed_points, vlines, delta_note, cycle_curves,
)


# ---------------------------------------------------------------- SLUB
BULK_X = np.arange(1, 257)


def slub_per_object(q: Question) -> go.Figure:
    """Alloc+free cost per object [cycles] vs bulk size: one at a time vs kmem_cache_*_bulk."""
    p = params(q)
    out, iv = evaluate_iv(q, ("slub.loop_cycles", "slub.bulk_cycles"), bulk=BULK_X)
    cur = evaluate(q, outputs=("slub.loop_cycles", "slub.bulk_cycles", "slub.objects_per_slab"))
    ghz = float(p["ghz"])
    b = int(p["bulk"])
    fig = Fig()
    fig.add_trace(current_trace(b, (cur["slub.loop_cycles"], cur["slub.bulk_cycles"]), f"current bulk = {b}",
                           "bulk %{x}: %{y:.1f} cycles/object<extra></extra>"))
    cycle_curves(fig, BULK_X, out, iv, (("slub.loop_cycles", "one at a time (kmem_cache_alloc/free)", COLORS["b"]),
                                        ("slub.bulk_cycles", "bulk API (kmem_cache_alloc_bulk/free_bulk)",
                                         COLORS["a"])),
                 ghz, "bulk %{x}")
    add_seed_points(fig, q, ("slub.loop_cycles", "slub.bulk_cycles"), "bulk", "cycles",
                     "seed 004 slab_bulk_test01 (E5-1650 v4)", text=lambda r, o: f"{r.id}: {o.value:g}",
                     textposition="top center", hovertemplate="%{text} cycles<extra></extra>")
    # an annotation on a log axis takes log10(x)
    delta_note(fig, float(np.log10(b)), cur["slub.loop_cycles"], cur["slub.bulk_cycles"], "bulk API − one at a time",
               "cycles/object", digits=1, where=f"bulk {b}", corner="lower left")
    ops = int(num(cur["slub.objects_per_slab"]))
    vlines(fig, np.arange(ops, 257, ops), f"per-CPU slab boundaries (dotted): every {ops} objects", log=True)
    fig.update_xaxes(type="log", tickvals=2 ** np.arange(9), range=[-0.05, np.log10(300)])
    fig.update_yaxes(rangemode="tozero")
    return finish(fig, "SLUB: alloc+free cost per object vs bulk size", "bulk size (objects, log scale)",
                   "alloc+free per object (cycles)", caption(q, ("bulk",)))


def slub_gain(q: Question) -> go.Figure:
    """Saving of the bulk API per object [ns and cycles] vs bulk size."""
    p = params(q)
    out, iv = evaluate_iv(q, ("slub.bulk_gain_cycles",), bulk=BULK_X)
    cur = evaluate(q, outputs=("slub.bulk_gain_cycles", "slub.objects_per_slab"))
    b = int(p["bulk"])
    gain = np.asarray(out["slub.bulk_gain_cycles"], dtype=float)
    fig = Fig()
    fig.add_trace(current_trace(b, (cur["slub.bulk_gain_cycles"],), f"current bulk = {b}",
                           "bulk %{x}: %{y:.1f} cycles<extra></extra>"))
    band(fig, BULK_X, iv["slub.bulk_gain_cycles"], COLORS["a"])
    fig.add_trace(Scatter(x=BULK_X, y=gain, mode="lines", name="loop − bulk (model)",
                             line=dict(color=COLORS["a"], width=2.5), customdata=gain / float(p["ghz"]),
                             hovertemplate="bulk %{x}: %{y:.1f} cycles = %{customdata:.2f} ns<extra></extra>"))
    add_seed_points(fig, q, "slub.bulk_gain_cycles", "bulk", "cycles", "seed 000 best-case gain",
                     text=lambda r, o: f"{r.id}: {o.value:g}", textposition="middle right",
                     hovertemplate="%{text} cycles<extra></extra>")
    ops = int(num(cur["slub.objects_per_slab"]))
    vlines(fig, np.arange(ops, 257, ops), f"per-CPU slab boundaries: every {ops} objects", log=True)
    fig.update_xaxes(type="log", tickvals=2 ** np.arange(9), range=[-0.05, np.log10(300)])
    fig.update_yaxes(rangemode="tozero")
    return finish(fig, "SLUB: per-object saving of the bulk API", "bulk size (objects, log scale)",
                   "saving per object (cycles)", caption(q, ("bulk",)))


#: object sizes swept [bytes]: four per octave from 8 B to 1 MiB, multiples of 8 (the powers of two exact)
OBJ_X = np.unique(np.round(8 * 2 ** (np.arange(0, 69) / 4) / 8) * 8)


def slub_cost_vs_size(q: Question) -> go.Figure:
    """Alloc+free cost per object [cycles] vs object size at the scenario's bulk: one at a time vs bulk,
    the slab geometry of calculate_order, and the page allocator above the largest kmalloc cache."""
    p = params(q)
    outs = ("slub.loop_cycles", "slub.bulk_cycles")
    out, iv = evaluate_iv(q, outs, obj_bytes=OBJ_X)
    cur = evaluate(q, outputs=outs)
    ghz = float(p["ghz"])
    b, size = int(p["bulk"]), int(p["obj_bytes"])
    fig = Fig()
    fig.add_trace(current_trace(size, (cur["slub.loop_cycles"], cur["slub.bulk_cycles"]), f"current size = {size} B",
                                "%{x} B: %{y:.1f} cycles/object<extra></extra>"))
    cycle_curves(fig, OBJ_X, out, iv, (("slub.loop_cycles", f"one at a time, bulk {b}", COLORS["b"]),
                                       ("slub.bulk_cycles", f"bulk API, bulk {b}", COLORS["a"])),
                 ghz, "%{x} B")
    vlines(fig, [slub.KMALLOC_MAX_CACHE_BYTES], "page allocator above 8 KiB (dotted) ", log=True)
    fig.update_xaxes(type="log", tickvals=4 ** np.arange(2, 11) / 2,
                     ticktext=["8", "32", "128", "512", "2k", "8k", "32k", "128k", "512k"],
                     range=[np.log10(6), np.log10(1.4 * (1 << 20))])
    fig.update_yaxes(type="log")
    return finish(fig, "SLUB: alloc+free cost per object vs object size", "object size (bytes, log scale)",
                  "alloc+free per object (cycles, log scale)", caption(q, ("bulk", "obj_bytes")))


# ---------------------------------------------------------------- live (skbview.charts.live)
def slub_per_object_live(sweep: Sweep) -> dict:
    """What of :func:`slub_per_object` moves with the bulk size: marker, delta note, caption."""
    loop, bulk = sweep.row("slub.loop_cycles"), sweep.row("slub.bulk_cycles")
    return {"traces": [live_marker(sweep, (loop, bulk), lambda b: f"current bulk = {b}")],
            "annotations": [*live_delta(sweep, np.log10(sweep.values), loop, bulk, "bulk API − one at a time",
                                        "cycles/object", digits=1, where=lambda b: f"bulk {b}"),
                            live_caption(sweep, ("bulk",))]}


slub_per_object_live.outputs = ("slub.loop_cycles", "slub.bulk_cycles")


def slub_gain_live(sweep: Sweep) -> dict:
    """What of :func:`slub_gain` moves with the bulk size: marker and caption."""
    gain = sweep.row("slub.bulk_gain_cycles")
    return {"traces": [live_marker(sweep, (gain,), lambda b: f"current bulk = {b}")],
            "annotations": [live_caption(sweep, ("bulk",))]}


slub_gain_live.outputs = ("slub.bulk_gain_cycles",)
