"""Every Plotly figure of the dashboard, built from :mod:`skbmodel` (one module, one template).

Each builder takes the scenario ``state`` (see :mod:`skbmodel.state`) and returns a ``go.Figure`` with
a title, axis titles with units, a legend and a caption line (scenario parameters, model version and
CPU profile) at the bottom.  Sweeps are single vectorised :func:`skbmodel.model.evaluate` calls and
traces get numpy arrays.  Figures use :data:`TEMPLATE` explicitly, so the browser (``theme=None``) and
a static export (kaleido) render the same picture.

Seed measurements are overlaid where the model has a matching output (positions from
:data:`skbmodel.validation.ROWS`, values from :func:`skbmodel.observations.seed_observations`).

Every model curve carries its 90 % prediction interval (:mod:`skbmodel.uncertainty`) as a light
filled band of the curve's colour (legend entry :data:`BAND_NAME`, once per figure; the bands toggle
together), bar charts carry it as error bars on the totals and the A/B delta chart on each delta.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

import skbmodel
from skbmodel import model, noise, outofsample, state as st_mod, uncertainty, units, validation
from skbmodel.observations import seed_observations
from skbmodel.profile import load_profile

__all__ = ["TEMPLATE", "PAGE_CHARTS", "figures_for_page"] + [
    "overview_breakdown", "overview_paths", "slub_per_object", "slub_gain", "zeroing_cost",
    "zeroing_delta", "veth_batch", "veth_heatmap", "cpumap_rates", "cpumap_numa", "kfree_drop_batch",
    "kfree_clones", "compare_delta", "compare_breakdown", "validation_parity", "validation_errors", "oos_summary",
    "oos_curve",
]

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
HEIGHT = 460
COLORS = {
    "a": "#1f77b4", "b": "#ff7f0e", "memset": "#d62728", "gfp_zero": "#2ca02c", "seed": "#111111",
    "budget": "#7f7f7f", "noise": "rgba(127,127,127,0.18)", "src": "#1f77b4", "dst": "#2ca02c",
    "drop": "#d62728", "xdp_pass": "#9467bd", "current": "#111111",
}
COMPONENT_COLORS = dict(zip(model.COMPONENTS, ("#4e79a7", "#e15759", "#59a14f", "#b07aa1", "#bab0ac", "#f28e2b")))

_BASE = pio.templates["plotly_white"]
# Only the trace types the charts use: every figure carries (and Plotly deep-copies) its template.
TEMPLATE = go.layout.Template(layout=_BASE.layout,
                              data={t: getattr(_BASE.data, t) for t in ("scatter", "bar", "heatmap", "waterfall")})
TEMPLATE.layout.update(
    font=dict(family=FONT, size=13, color="#222"),
    title=dict(font=dict(family=FONT, size=16), x=0.01, xanchor="left", y=0.98, yanchor="top"),
    legend=dict(font=dict(size=12), orientation="v", x=1.01, xanchor="left", y=1.0, yanchor="top",
                bgcolor="rgba(255,255,255,0.8)", tracegroupgap=2),
    hoverlabel=dict(font=dict(family=FONT, size=12)),
    colorway=["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"],
    xaxis=dict(showline=True, linecolor="#888", ticks="outside", zeroline=False, title=dict(standoff=8)),
    yaxis=dict(showline=True, linecolor="#888", ticks="outside", zeroline=False, title=dict(standoff=8)),
)

SEED_MARKER = dict(symbol="diamond", size=11, color=COLORS["seed"], line=dict(color="white", width=1))
CURRENT_MARKER = dict(symbol="circle-open", size=14, line=dict(width=2.5), color=COLORS["current"])


BAND_NAME = "90 % interval"


def _current(x, ys, name: str, hovertemplate: str) -> dict:
    """The trace marking the current setting: an open circle at ``x`` on each of the values ``ys``."""
    return Scatter(x=np.array([x] * len(ys)), y=np.array([_f(y) for y in ys]), mode="markers", name=name,
                   marker=CURRENT_MARKER, hovertemplate=hovertemplate)


# ---------------------------------------------------------------- helpers
def _params(state: Mapping, which: str = "a", **override) -> dict:
    p = st_mod.scenario(state, which)
    p.update(override)
    return p


def _prof(state: Mapping, which: str = "a"):
    """The scenario's CPU profile: a custom one (``prof`` key) or the shipped ``cpu``."""
    return st_mod.profile_for(state, which)


def _eval(state: Mapping, which: str = "a", **override) -> dict:
    p = _params(state, which, **override)
    return model.evaluate(p, _prof(state, which))


def _eval_iv(state: Mapping, outputs, which: str = "a", **override):
    """``(outputs, intervals)`` of the scenario (with ``override``): see
    :func:`skbmodel.uncertainty.evaluate_with_intervals`."""
    p = _params(state, which, **override)
    return uncertainty.evaluate_with_intervals(p, _prof(state, which), outputs)


def _band(fig, x, interval, color: str, row=None, alpha: float = 0.15, legend: bool | None = None) -> None:
    """The prediction interval of one curve as a light filled band (one closed trace, no hover).

    ``interval`` is ``(lo, hi)``; ``row`` picks one row of 2-D sweeps; ``alpha`` the fill's opacity
    (lower where many bands overlap).  The first band of a figure carries the legend entry
    :data:`BAND_NAME` (or the one given ``legend=True``); all bands toggle together.
    """
    lo, hi = (np.asarray(a, dtype=float) for a in interval)
    if row is not None:
        lo, hi = lo[row], hi[row]
    x = np.asarray(x, dtype=float)
    lo, hi = np.broadcast_to(lo, x.shape), np.broadcast_to(hi, x.shape)
    first = not any(t.get("legendgroup") == "interval" for t in fig.traces) if legend is None else legend
    fig.add_trace(Scatter(x=np.concatenate([x, x[::-1]]), y=np.concatenate([hi, lo[::-1]]), mode="lines",
                          fill="toself", fillcolor=_rgba(color, alpha), line=dict(width=0), name=BAND_NAME,
                          legendgroup="interval", showlegend=first, hoverinfo="skip"))


def _error_bars(fig, x, y, interval, orientation: str = "v", color: str = "#333", showlegend: bool = True) -> None:
    """The prediction interval of bar totals ``y`` at ``x`` as error bars (legend entry :data:`BAND_NAME`)."""
    y = np.atleast_1d(np.asarray(y, dtype=float))
    lo, hi = (np.broadcast_to(np.asarray(a, dtype=float), y.shape) for a in interval)
    err = dict(type="data", symmetric=False, array=hi - y, arrayminus=y - lo, color=color, thickness=1.5, width=6)
    pos = dict(x=x, y=y, error_y=err) if orientation == "v" else dict(x=y, y=x, error_x=err)
    fig.add_trace(Scatter(**pos, mode="markers", marker=dict(size=4, color=color), name=BAND_NAME,
                          legendgroup="interval", showlegend=showlegend, customdata=np.stack([lo, hi], axis=-1),
                          hovertemplate="90 % interval: %{customdata[0]:.2f} to %{customdata[1]:.2f}<extra></extra>"))


def _line_color(trace_index: int) -> str:
    """The colour Plotly gives the ``trace_index``-th trace by default (the template's colorway), made
    explicit so that a band added before a line does not shift the line's colour."""
    colorway = TEMPLATE.layout.colorway
    return colorway[trace_index % len(colorway)]


def _f(x) -> float:
    return float(np.asarray(x))


def caption(state: Mapping, keys=(), which: str = "a") -> str:
    """One line: the scenario parameters that matter for the chart, model version and profile."""
    p = _params(state, which)
    parts = [f"cpu {p['cpu']} @ {st_mod._fmt(float(p['ghz']))} GHz"]
    parts += [f"{k}={st_mod._fmt(p[k])}" for k in keys if k not in ("cpu", "ghz")]
    parts.append(f"skbmodel {skbmodel.__version__}, profile {_prof(state, which).id}")
    return " · ".join(parts)


_MAGIC = ("line", "marker", "textfont", "colorbar", "title", "font")


def _expand(kw: dict) -> dict:
    """Plotly's magic underscores (``line_shape=`` -> ``line.shape``) for plain dicts."""
    out: dict = {}
    for k, v in kw.items():
        head, _, rest = k.partition("_")
        if rest and head in _MAGIC:
            out.setdefault(head, {})
            out[head] = {**out[head], **_expand({rest: v})}
        else:
            out[k] = {**out.get(k, {}), **v} if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def Scatter(**kw) -> dict:  # noqa: N802 - mirrors go.Scatter
    return {"type": "scatter", **_expand(kw)}


def Bar(**kw) -> dict:  # noqa: N802 - mirrors go.Bar
    return {"type": "bar", **_expand(kw)}


def Waterfall(**kw) -> dict:  # noqa: N802 - mirrors go.Waterfall
    return {"type": "waterfall", **_expand(kw)}


def Heatmap(**kw) -> dict:  # noqa: N802 - mirrors go.Heatmap
    return {"type": "heatmap", **_expand(kw)}


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


class _Fig:
    """Collects traces, shapes, annotations and layout as plain dicts; :meth:`build` makes one
    ``go.Figure`` without per-property validation (20-50x faster than incremental ``add_*`` calls;
    the builders are checked against plotly's validators in the tests)."""

    def __init__(self, *traces):
        self.traces = list(traces)
        self.shapes: list[dict] = []
        self.annotations: list[dict] = []
        self.layout: dict = {"xaxis": {}, "yaxis": {}}

    def add_trace(self, trace: dict):
        self.traces.append(trace)

    def add_hline(self, y, line=None, layer="above"):
        self.shapes.append(dict(type="line", xref="paper", x0=0, x1=1, y0=float(y), y1=float(y),
                                line=line or {}, layer=layer))

    def add_vline(self, x, line=None, layer="above"):
        self.shapes.append(dict(type="line", yref="paper", y0=0, y1=1, x0=float(x), x1=float(x),
                                line=line or {}, layer=layer))

    def add_shape(self, **kw):
        self.shapes.append(_expand(kw))

    def add_annotation(self, **kw):
        self.annotations.append({"showarrow": False, **_expand(kw)})

    def update_xaxes(self, **kw):
        self.layout["xaxis"] = _merge(self.layout["xaxis"], _expand(kw))

    def update_yaxes(self, **kw):
        self.layout["yaxis"] = _merge(self.layout["yaxis"], _expand(kw))

    def update_layout(self, **kw):
        self.layout = _merge(self.layout, _expand(kw))

    def build(self) -> go.Figure:
        layout = dict(self.layout, shapes=self.shapes, annotations=self.annotations)
        return go.Figure(data=self.traces, layout=layout, _validate=False)


def _wrap(text: str, width: int = 115) -> str:
    """Break a ' · '-separated caption into lines of at most ``width`` characters."""
    lines, cur = [], ""
    parts = []
    for part in text.split(" · "):  # a single part longer than a line is cut at spaces
        while len(part) > width and " " in part[:width]:
            cut = part[:width].rfind(" ")
            parts.append(part[:cut])
            part = part[cut + 1:]
        parts.append(part)
    for part in parts:
        cand = part if not cur else cur + " · " + part
        if len(cand) > width and cur:
            lines.append(cur)
            cur = part
        else:
            cur = cand
    lines.append(cur)
    return "<br>".join(lines)


def _finish(fig: _Fig, title: str, xtitle: str, ytitle: str, cap: str, height: int = HEIGHT) -> go.Figure:
    cap = _wrap(cap)
    extra = 14 * cap.count("<br>")
    bottom = 105 + extra
    fig.update_layout(
        template=TEMPLATE, title=dict(text=title), height=height,
        margin=dict(l=80, r=30, t=60, b=bottom),
        meta=dict(caption=cap.replace("<br>", " · ")),
    )
    fig.update_xaxes(title=dict(text=xtitle), automargin=False)
    fig.update_yaxes(title=dict(text=ytitle))
    # the caption sits at the very bottom of the figure, below tick labels and the x-axis title
    plot_h = height - 60 - bottom
    fig.annotations.append(dict(text=cap, showarrow=False, xref="paper", yref="paper", x=0, xanchor="left",
                                y=-(bottom - 6) / plot_h, yanchor="bottom", align="left",
                                font=dict(size=11, color="#555"), name="caption"))
    return fig.build()


def _rows_for(outputs) -> list:
    outputs = {outputs} if isinstance(outputs, str) else set(outputs)
    obs = seed_observations()
    return [(r, obs[r.id]) for r in validation.ROWS if r.output in outputs and r.id in obs]


def _seed_value(row_obs, unit: str) -> float:
    r, o = row_obs
    return float(units.convert(o.value, o.unit, unit))


def _add_seed_points(fig, outputs, xkey: str, unit: str, name: str, text=None, **kw) -> None:
    """Overlay the seed rows measuring ``outputs`` as diamonds at their own condition ``xkey``.

    ``text(row, obs) -> str`` labels each point (default: the row id); ``kw`` goes to the trace
    (``mode``, ``textposition``, ``hovertemplate``).
    """
    seeds = _rows_for(outputs)
    if not seeds:
        return
    label = text or (lambda r, o: r.id)
    fig.add_trace(Scatter(
        x=np.array([r.state[xkey] for r, _ in seeds], dtype=float),
        y=np.array([_seed_value(s, unit) for s in seeds]),
        text=[label(r, o) for r, o in seeds], name=name, marker=SEED_MARKER,
        **{"mode": "markers+text", **{k: (v(seeds) if callable(v) else v) for k, v in kw.items()}}))


def seed_zero_delta_ns() -> float:
    """The seed's memset vs __GFP_ZERO delta [ns], read from row veth-n1's condition text (1.66)."""
    o = seed_observations().get("veth-n1")
    m = re.search(r"(\d+(?:\.\d+)?) ns memset", o.condition if o else "")
    if m:
        return float(m.group(1))
    a, b = seed_observations()["mem-01"], seed_observations()["mem-03"]  # fallback: cycles at 3.6 GHz
    return float(units.cycles_to_ns(a.value - b.value, load_profile("e5-1650v4").ghz))


def _vlines(fig, xs, text=None, color="#999", log=False):
    for x in xs:
        fig.add_vline(x=float(x), line=dict(color=color, width=1, dash="dot"), layer="below")
    if text is not None and len(xs):
        x0 = float(np.log10(xs[0])) if log else float(xs[0])  # annotations on a log axis take log10(x)
        fig.add_annotation(x=x0, y=1, yref="paper", text=text, showarrow=False, xanchor="right",
                           yanchor="top", xshift=-4, font=dict(size=11, color="#555"))


# ---------------------------------------------------------------- overview
PATH_LABELS = {c: st_mod.PARAMS["path"].label_of(c) for c in st_mod.PARAMS["path"].choices}


def overview_breakdown(state: Mapping) -> go.Figure:
    """Waterfall of the chosen path's per-packet components [ns] against the line-rate budget."""
    p = _params(state)
    prof = _prof(state)
    parts = model.breakdown_ns(p, prof)
    out = model.evaluate(p, prof)
    keys = list(model.COMPONENTS)
    names = [k.replace(" ", "<br>", 1) if len(k) > 10 else k for k in keys]
    vals = np.array([_f(parts[k]) for k in keys])
    total = _f(out["path.ns_per_packet"])
    iv = uncertainty.intervals(p, prof, ["path.ns_per_packet"])["path.ns_per_packet"]
    hw = (_f(iv[1]) - _f(iv[0])) / 2
    budget = _f(out["budget.ns_per_packet"])
    fig = _Fig(Waterfall(
        name="per-packet cost", orientation="v", measure=["relative"] * len(names) + ["total"],
        x=names + ["total"], y=np.append(vals, total),
        text=[f"{v:.1f}" if abs(v) >= 0.05 else "" for v in vals] + [f"{total:.1f} ± {hw:.2g} ns"],
        textposition="outside", cliponaxis=False,
        connector=dict(line=dict(color="#bbb", width=1)),
        increasing=dict(marker=dict(color="#4e79a7")), decreasing=dict(marker=dict(color="#59a14f")),
        totals=dict(marker=dict(color="#f28e2b")),
        hovertemplate="%{x}: %{y:.2f} ns/packet<extra></extra>",
    ))
    # no legend on this chart: the total's label carries the ± and the bar its 90 % interval
    _error_bars(fig, ["total"], total, iv, showlegend=False)
    fig.add_hline(y=budget, line=dict(color=COLORS["budget"], dash="dash", width=2))
    fig.add_annotation(x=0, xref="paper", y=budget, xanchor="left", yanchor="bottom", font=dict(size=12, color="#444"),
                       text=f"line-rate budget {budget:.1f} ns/packet "
                            f"({st_mod._fmt(float(p['link_gbps']))} Gbit/s, {p['frame_bytes']} B frames)")
    fig.update_yaxes(rangemode="tozero", range=[0, max(total, budget) * 1.15])
    fig.update_xaxes(tickangle=0)
    fig.update_layout(showlegend=False)
    pct = _f(out["path.budget_pct"])
    return _finish(fig, f"Per-packet cost: {PATH_LABELS[p['path']]} — {total:.1f} ns = {pct:.0f} % of budget",
                   "cost component", "time per packet (ns)",
                   caption(state, ("path", "bulk", "zero", "zero_bytes", "xdp_batch", "kfl_bulk", "drop_batch",
                                   "pp_recycle", "numa", "link_gbps", "frame_bytes")))


def overview_paths(state: Mapping) -> go.Figure:
    """Stacked per-packet components [ns] of every path, with the budget line."""
    p = _params(state)
    prof = _prof(state)
    paths = np.array(st_mod.PATHS)
    parts = model.breakdown_ns({**p, "path": paths}, prof)
    budget = _f(model.evaluate(p, prof)["budget.ns_per_packet"])
    labels = [PATH_LABELS[x].replace(" (", "<br>(") for x in paths]
    fig = _Fig()
    for comp in model.COMPONENTS:
        y = np.broadcast_to(np.asarray(parts[comp], dtype=float), paths.shape)
        fig.add_trace(Bar(x=labels, y=np.array(y), name=comp, marker_color=COMPONENT_COLORS[comp],
                             hovertemplate=comp + ": %{y:.1f} ns/packet<extra></extra>"))
    tot, iv = uncertainty.evaluate_with_intervals({**p, "path": paths}, prof, ["path.ns_per_packet"])
    _error_bars(fig, labels, tot["path.ns_per_packet"], iv["path.ns_per_packet"])
    fig.add_hline(y=budget, line=dict(color=COLORS["budget"], dash="dash", width=2))
    fig.add_annotation(x=1, xref="paper", y=budget, text=f"line-rate budget {budget:.1f} ns", showarrow=False,
                       xanchor="right", yanchor="bottom", font=dict(size=11, color="#333"),
                       bgcolor="rgba(255,255,255,0.85)")
    fig.update_layout(barmode="stack")
    fig.update_xaxes(tickangle=0)
    return _finish(fig, "All paths: per-packet cost by component", "path (CPU that limits the rate)",
                   "time per packet (ns)",
                   caption(state, ("zero", "zero_bytes", "xdp_batch", "kfl_bulk", "drop_batch", "pp_recycle",
                                   "numa", "link_gbps", "frame_bytes")))


# ---------------------------------------------------------------- SLUB
BULK_X = np.arange(1, 257)


def slub_per_object(state: Mapping) -> go.Figure:
    """Alloc+free cost per object [cycles] vs bulk size: one at a time vs kmem_cache_*_bulk."""
    p = _params(state)
    out, iv = _eval_iv(state, ("slub.loop_cycles", "slub.bulk_cycles"), bulk=BULK_X)
    cur = _eval(state)
    ghz = float(p["ghz"])
    b = int(p["bulk"])
    fig = _Fig()
    fig.add_trace(_current(b, (cur["slub.loop_cycles"], cur["slub.bulk_cycles"]), f"current bulk = {b}",
                           "bulk %{x}: %{y:.1f} cycles/object<extra></extra>"))
    for key, name, color in (("slub.loop_cycles", "one at a time (kmem_cache_alloc/free)", COLORS["memset"]),
                             ("slub.bulk_cycles", "bulk API (kmem_cache_alloc_bulk/free_bulk)", COLORS["a"])):
        y = np.asarray(out[key], dtype=float)
        _band(fig, BULK_X, iv[key], color)
        fig.add_trace(Scatter(x=BULK_X, y=y, mode="lines", name=name, line=dict(color=color, width=2.5),
                                 customdata=y / ghz,
                                 hovertemplate="bulk %{x}: %{y:.1f} cycles = %{customdata:.2f} ns<extra></extra>"))
    _add_seed_points(fig, ("slub.loop_cycles", "slub.bulk_cycles"), "bulk", "cycles",
                     "seed 004 slab_bulk_test01 (E5-1650 v4)", text=lambda r, o: f"{r.id}: {o.value:g}",
                     textposition="top center", hovertemplate="%{text} cycles<extra></extra>")
    ops = int(_f(cur["slub.objects_per_slab"]))
    _vlines(fig, np.arange(ops, 257, ops), f"per-CPU slab boundaries (dotted): every {ops} objects", log=True)
    fig.update_xaxes(type="log", tickvals=2 ** np.arange(9), range=[-0.05, np.log10(300)])
    fig.update_yaxes(rangemode="tozero")
    return _finish(fig, "SLUB: alloc+free cost per object vs bulk size", "bulk size (objects, log scale)",
                   "alloc+free per object (cycles)", caption(state, ("bulk",)))


def slub_gain(state: Mapping) -> go.Figure:
    """Saving of the bulk API per object [ns and cycles] vs bulk size."""
    p = _params(state)
    out, iv = _eval_iv(state, ("slub.bulk_gain_cycles",), bulk=BULK_X)
    cur = _eval(state)
    b = int(p["bulk"])
    gain = np.asarray(out["slub.bulk_gain_cycles"], dtype=float)
    fig = _Fig()
    fig.add_trace(_current(b, (cur["slub.bulk_gain_cycles"],), f"current bulk = {b}",
                           "bulk %{x}: %{y:.1f} cycles<extra></extra>"))
    _band(fig, BULK_X, iv["slub.bulk_gain_cycles"], COLORS["a"])
    fig.add_trace(Scatter(x=BULK_X, y=gain, mode="lines", name="loop − bulk (model)",
                             line=dict(color=COLORS["a"], width=2.5), customdata=gain / float(p["ghz"]),
                             hovertemplate="bulk %{x}: %{y:.1f} cycles = %{customdata:.2f} ns<extra></extra>"))
    _add_seed_points(fig, "slub.bulk_gain_cycles", "bulk", "cycles", "seed 000 best-case gain",
                     text=lambda r, o: f"{r.id}: {o.value:g}", textposition="middle right",
                     hovertemplate="%{text} cycles<extra></extra>")
    ops = int(_f(cur["slub.objects_per_slab"]))
    _vlines(fig, np.arange(ops, 257, ops), f"per-CPU slab boundaries: every {ops} objects", log=True)
    fig.update_xaxes(type="log", tickvals=2 ** np.arange(9), range=[-0.05, np.log10(300)])
    fig.update_yaxes(rangemode="tozero")
    return _finish(fig, "SLUB: per-object saving of the bulk API", "bulk size (objects, log scale)",
                   "saving per object (cycles)", caption(state, ("bulk",)))


# ---------------------------------------------------------------- zeroing
ZERO_X = np.arange(8, 1025)


def zeroing_cost(state: Mapping) -> go.Figure:
    """memset (rep stos) vs memset_erms (what __GFP_ZERO calls) [cycles] vs bytes zeroed."""
    p = _params(state)
    out, iv = _eval_iv(state, ("zero.memset_cycles", "zero.erms_cycles"), zero_bytes=ZERO_X)
    cur = _eval(state)
    zb = int(p["zero_bytes"])
    ghz = float(p["ghz"])
    fig = _Fig()
    fig.add_trace(_current(zb, (cur["zero.memset_cycles"], cur["zero.erms_cycles"]), f"current size = {zb} B",
                           "%{x} B: %{y:.1f} cycles<extra></extra>"))
    for key, name, color in (("zero.memset_cycles", "memset, constant size (rep stos)", COLORS["memset"]),
                             ("zero.erms_cycles", "memset_erms, variable size (__GFP_ZERO)", COLORS["gfp_zero"])):
        y = np.asarray(out[key], dtype=float)
        _band(fig, ZERO_X, iv[key], color)
        fig.add_trace(Scatter(x=ZERO_X, y=y, mode="lines", line_shape="hv", name=name,
                                 line=dict(color=color, width=2.5), customdata=y / ghz,
                                 hovertemplate="%{x} B: %{y:.1f} cycles = %{customdata:.2f} ns<extra></extra>"))
    gfp = _f(cur["zero.gfp_zero_cycles"])
    obj = int(_prof(state).value("slub_object_bytes"))
    fig.add_hline(y=gfp, line=dict(color=COLORS["gfp_zero"], dash="dash", width=1.5))
    fig.add_annotation(x=1, xref="paper", y=gfp, text=f"__GFP_ZERO clears the whole {obj} B object: {gfp:.1f} cycles",
                       showarrow=False, xanchor="right", yanchor="top", font=dict(size=11, color=COLORS["gfp_zero"]))
    _add_seed_points(fig, ("zero.memset_cycles", "zero.erms_cycles"), "zero_bytes", "cycles",
                     "seed 002 time_bench_memset (E5-1650 v4)", mode="markers",
                     hovertemplate="%{text}: %{x} B, %{y} cycles<extra></extra>")
    fig.update_xaxes(dtick=64, range=[0, 1032])
    fig.update_yaxes(rangemode="tozero")
    return _finish(fig, "Zeroing an skb: cost vs size (steps of one 64 B cacheline)", "bytes zeroed (bytes)",
                   "cost per skb (cycles)", caption(state, ("zero", "zero_bytes")))


def zeroing_delta(state: Mapping) -> go.Figure:
    """memset(zero_bytes) − __GFP_ZERO(object) per skb [ns] vs size, against the noise floor."""
    p = _params(state)
    out, iv = _eval_iv(state, ("zero.delta_ns",), zero_bytes=ZERO_X)
    cur = _eval(state)
    zb = int(p["zero_bytes"])
    nf = float(p["noise_ns"])
    d = np.asarray(out["zero.delta_ns"], dtype=float)
    fig = _Fig()
    fig.add_trace(_current(zb, (cur["zero.delta_ns"],), f"current size = {zb} B",
                           "%{x} B: %{y:.2f} ns<extra></extra>"))
    fig.add_trace(Scatter(x=np.array([0, 1032]), y=np.array([nf, nf]), mode="lines", line=dict(width=0),
                             showlegend=False, hoverinfo="skip"))
    fig.add_trace(Scatter(x=np.array([0, 1032]), y=np.array([-nf, -nf]), mode="lines", line=dict(width=0),
                             fill="tonexty", fillcolor=COLORS["noise"],
                             name=f"noise floor ±{nf:g} ns (not measurable inside)", hoverinfo="skip"))
    _band(fig, ZERO_X, iv["zero.delta_ns"], COLORS["memset"])
    fig.add_trace(Scatter(x=ZERO_X, y=d, mode="lines", line_shape="hv", name="memset − __GFP_ZERO (model)",
                             line=dict(color=COLORS["memset"], width=2.5),
                             hovertemplate="%{x} B: %{y:.2f} ns per skb<extra></extra>"))
    seed = seed_zero_delta_ns()
    seed_x = validation.ROWS[[r.id for r in validation.ROWS].index("mem-01")].state["zero_bytes"]
    fig.add_trace(Scatter(x=np.array([seed_x], dtype=float), y=np.array([seed]), mode="markers+text",
                             text=[f"seed 002: {seed:g} ns < {nf:g} ns → judged noise"], textposition="middle right",
                             name=f"seed 002 delta ({seed:g} ns at {seed_x} B)", marker=SEED_MARKER,
                             hovertemplate="%{y} ns<extra>seed</extra>"))
    fig.update_xaxes(dtick=64, range=[0, 1032])
    return _finish(fig, f"memset vs __GFP_ZERO: difference per skb vs the {nf:g} ns noise floor",
                   "bytes zeroed by memset (bytes)", "memset − __GFP_ZERO (ns per skb)",
                   caption(state, ("zero_bytes", "noise_ns")))


# ---------------------------------------------------------------- veth
BATCH_X = np.arange(1, 65)


def veth_batch(state: Mapping) -> go.Figure:
    """veth XDP_PASS Mpps vs VETH_XDP_BATCH for both zeroing methods, with a ±noise band."""
    p = _params(state)
    prof = _prof(state)
    methods = np.array(["memset", "gfp_zero"])
    out, iv = uncertainty.evaluate_with_intervals({**p, "xdp_batch": BATCH_X[None, :], "zero": methods[:, None]}, prof,
                                                  ("veth.mpps", "veth.ns_per_packet"))
    cur = model.evaluate(p, prof)
    nf = float(p["noise_ns"])
    b = int(p["xdp_batch"])
    fig = _Fig()
    fig.add_trace(_current(b, (cur["veth.mpps"],), f"current: batch {b}, {p['zero']}",
                           "batch %{x}: %{y:.3f} Mpps<extra></extra>"))
    names = {m: st_mod.PARAMS["zero"].label_of(m) for m in methods}
    for i, m in enumerate(methods):
        ns = np.asarray(out["veth.ns_per_packet"][i], dtype=float)
        hi = 1e3 / np.maximum(ns - nf, 1e-9)
        lo = 1e3 / (ns + nf)
        color = COLORS[m]
        fig.add_trace(Scatter(x=BATCH_X, y=hi, mode="lines", line=dict(width=0), showlegend=False,
                                 hoverinfo="skip", legendgroup=m))
        fig.add_trace(Scatter(x=BATCH_X, y=lo, mode="lines", line=dict(width=0), fill="tonexty",
                                 fillcolor=_rgba(color, 0.15), name=f"{names[m]}: ±{nf:g} ns noise",
                                 hoverinfo="skip", legendgroup=m))
        _band(fig, BATCH_X, iv["veth.mpps"], color, row=i)
        fig.add_trace(Scatter(x=BATCH_X, y=np.asarray(out["veth.mpps"][i], dtype=float), mode="lines",
                                 name=names[m], line=dict(color=color, width=2.5), legendgroup=m,
                                 hovertemplate="batch %{x}: %{y:.3f} Mpps<extra>" + names[m] + "</extra>"))
    seeds = _rows_for("veth.mpps")
    for m in methods:
        ss = [s for s in seeds if s[0].state.get("zero") == m]
        if ss:
            fig.add_trace(Scatter(
                x=np.array([r.state["xdp_batch"] for r, _ in ss], dtype=float),
                y=np.array([_seed_value(s, "Mpps") for s in ss]), mode="markers+text",
                text=[r.id for r, _ in ss], textposition="bottom right",
                name=f"seed 002, {names[m]}", marker={**SEED_MARKER, "color": COLORS[m]},
                hovertemplate="%{text}: batch %{x}, %{y} Mpps<extra></extra>"))
    fig.update_xaxes(range=[0, 65], dtick=8)
    return _finish(fig, "veth XDP_PASS throughput vs VETH_XDP_BATCH", "VETH_XDP_BATCH (skbs per bulk alloc)",
                   "throughput (Mpps)", caption(state, ("zero_bytes", "xdp_batch", "noise_ns")))


def veth_heatmap(state: Mapping) -> go.Figure:
    """veth Mpps over VETH_XDP_BATCH × bytes zeroed by memset (the skb bulk size *is* VETH_XDP_BATCH)."""
    p = _params(state)
    prof = _prof(state)
    zb = np.arange(8, 1025, 8)
    out = model.evaluate({**p, "zero": "memset", "xdp_batch": BATCH_X[None, :], "zero_bytes": zb[:, None]}, prof)
    z = np.asarray(out["veth.mpps"], dtype=float)
    fig = _Fig(Heatmap(x=BATCH_X, y=zb, z=z, colorscale="Viridis", name="memset",
                               colorbar=dict(title=dict(text="Mpps", side="right"), thickness=14),
                               hovertemplate="batch %{x}, %{y} B zeroed: %{z:.3f} Mpps<extra></extra>"))
    fig.add_trace(Scatter(x=np.array([int(p["xdp_batch"])]), y=np.array([int(p["zero_bytes"])]),
                             mode="markers", name="current setting",
                             marker=dict(symbol="x", size=12, color="white", line=dict(color="black", width=1.5))))
    return _finish(fig, "veth with memset: throughput over VETH_XDP_BATCH × bytes zeroed",
                   "VETH_XDP_BATCH = kmem_cache_alloc_bulk size (skbs)", "bytes zeroed by memset (bytes)",
                   caption(state, ("zero_bytes", "xdp_batch")))


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"


# ---------------------------------------------------------------- cpumap
RECYCLE_X = np.linspace(0.0, 1.0, 101)


def cpumap_rates(state: Mapping) -> go.Figure:
    """Source, destination and drop Mpps vs page_pool recycle ratio; XDP_PASS; the other NUMA case."""
    p = _params(state)
    prof = _prof(state)
    other = "cross" if p["numa"] == "same" else "same"
    numas = np.array([p["numa"], other])
    out, iv = uncertainty.evaluate_with_intervals({**p, "pp_recycle": RECYCLE_X[None, :], "numa": numas[:, None]}, prof,
                                                  ("cpumap.src_mpps", "cpumap.dst_mpps", "cpumap.drop_mpps"))
    cur, cur_iv = uncertainty.evaluate_with_intervals(p, prof, ("cpumap.src_mpps", "cpumap.dst_mpps", "xdp_pass.mpps"))
    r = float(p["pp_recycle"])
    fig = _Fig()
    fig.add_trace(_current(r, (cur["cpumap.src_mpps"], cur["cpumap.dst_mpps"]), f"current ratio = {r:g}",
                           "ratio %{x}: %{y:.2f} Mpps<extra></extra>"))
    for key, name, color in (("cpumap.src_mpps", "source CPU rx", COLORS["src"]),
                             ("cpumap.dst_mpps", "destination CPU rx", COLORS["dst"]),
                             ("cpumap.drop_mpps", "drops (src − dst)", COLORS["drop"])):
        _band(fig, RECYCLE_X, iv[key], color, row=0)
        fig.add_trace(Scatter(x=RECYCLE_X, y=np.asarray(out[key][0], dtype=float), mode="lines",
                                 name=f"{name}, {p['numa']} node", line=dict(color=color, width=2.5),
                                 hovertemplate="ratio %{x:.2f}: %{y:.2f} Mpps<extra>" + name + "</extra>"))
    fig.add_trace(Scatter(x=RECYCLE_X, y=np.asarray(out["cpumap.dst_mpps"][1], dtype=float), mode="lines",
                             name=f"destination CPU rx, {other} node", line=dict(color=COLORS["dst"], dash="dot"),
                             hovertemplate="ratio %{x:.2f}: %{y:.2f} Mpps<extra>" + other + " node</extra>"))
    _band(fig, RECYCLE_X, iv["cpumap.dst_mpps"], COLORS["dst"], row=1)
    xp = _f(cur["xdp_pass.mpps"])
    _band(fig, np.array([0.0, 1.0]), cur_iv["xdp_pass.mpps"], COLORS["xdp_pass"])
    fig.add_trace(Scatter(x=np.array([0.0, 1.0]), y=np.array([xp, xp]), mode="lines",
                             name=f"XDP_PASS on one CPU ({xp:.2f} Mpps)",
                             line=dict(color=COLORS["xdp_pass"], dash="dash", width=2),
                             hovertemplate="XDP_PASS one CPU: %{y:.2f} Mpps<extra></extra>"))
    _add_seed_points(fig, ("cpumap.src_mpps", "cpumap.dst_mpps", "cpumap.drop_mpps"), "pp_recycle", "Mpps",
                     "seed 003 (Xeon Platinum, same node)",
                     textposition=lambda seeds: ["middle right" if r_.state["pp_recycle"] < 0.5 else "middle left"
                                                 for r_, _ in seeds],
                     hovertemplate="%{text}: %{y} Mpps<extra></extra>")
    xps = _rows_for("xdp_pass.mpps")
    if xps:
        fig.add_trace(Scatter(x=np.array([1.0] * len(xps)), y=np.array([_seed_value(s, "Mpps") for s in xps]),
                                 mode="markers", name="seed 003 XDP_PASS one CPU",
                                 marker={**SEED_MARKER, "color": COLORS["xdp_pass"], "symbol": "square"},
                                 hovertemplate="XDP_PASS seed: %{y} Mpps<extra></extra>"))
    fig.update_xaxes(range=[-0.04, 1.04], tickformat=".0%")
    fig.update_yaxes(rangemode="tozero")
    return _finish(fig, "cpumap redirect: throughput vs page_pool recycle ratio",
                   "page_pool recycle ratio (% of pages)",
                   "rate (Mpps)", caption(state, ("pp_recycle", "numa")))


def cpumap_numa(state: Mapping) -> go.Figure:
    """Destination-CPU per-packet components [ns], same vs cross NUMA node, at the current ratio."""
    p = _params(state)
    prof = _prof(state)
    numas = np.array(["same", "cross"])
    parts = model.breakdown_ns({**p, "path": "cpumap", "numa": numas}, prof)
    out, iv = uncertainty.evaluate_with_intervals({**p, "numa": numas}, prof, ("cpumap.dst_mpps", "cpumap.dst_ns"))
    labels = np.array(["same NUMA node", "cross NUMA node"])
    fig = _Fig()
    for comp in model.COMPONENTS:
        y = np.broadcast_to(np.asarray(parts[comp], dtype=float), numas.shape)
        fig.add_trace(Bar(x=labels, y=np.array(y), name=comp, marker_color=COMPONENT_COLORS[comp],
                             hovertemplate=comp + ": %{y:.1f} ns/packet<extra></extra>"))
    dst = np.asarray(out["cpumap.dst_mpps"], dtype=float)
    ns = np.asarray(out["cpumap.dst_ns"], dtype=float)
    _error_bars(fig, labels, ns, iv["cpumap.dst_ns"])
    for i, lab in enumerate(labels):
        fig.add_annotation(x=lab, y=float(ns[i]), text=f"{ns[i]:.0f} ns → {dst[i]:.2f} Mpps", showarrow=False,
                           yanchor="bottom", font=dict(size=12))
    fig.update_layout(barmode="stack")
    fig.update_yaxes(range=[0, max(float(ns.max()) * 1.15, float(np.max(iv["cpumap.dst_ns"][1])) * 1.05)])
    return _finish(fig, "cpumap destination CPU: NUMA effect on the per-packet cost", "destination CPU placement",
                   "time per packet on the destination CPU (ns)", caption(state, ("pp_recycle",)))


# ---------------------------------------------------------------- kfree_skb_list
DROP_X = np.unique(np.round(np.logspace(0, np.log10(1024), 160)).astype(int))


def _kfl_lines(state) -> list[int]:
    return sorted({1, 8, 16, 64, int(state["kfl_bulk"])})


def kfree_drop_batch(state: Mapping) -> go.Figure:
    """pktgen qdisc injection rate [Mpps] vs fq_codel drop_batch, one line per KFREE_SKB_BULK_SIZE."""
    p = _params(state)
    prof = _prof(state)
    bulks = np.array(_kfl_lines(p))
    out, iv = uncertainty.evaluate_with_intervals({**p, "kfl_bulk": bulks[:, None], "drop_batch": DROP_X[None, :]},
                                                  prof, ("kfree_skb_list.mpps",))
    cur = model.evaluate(p, prof)
    fig = _Fig()
    fig.add_trace(_current(int(p["drop_batch"]), (cur["kfree_skb_list.mpps"],),
                           f"current: drop_batch {p['drop_batch']}, bulk {p['kfl_bulk']}",
                           "drop_batch %{x}: %{y:.4f} Mpps<extra></extra>"))
    for i, kb in enumerate(bulks):
        cur_line = int(kb) == int(p["kfl_bulk"])
        name = "no bulk free (1)" if kb == 1 else f"KFREE_SKB_BULK_SIZE {kb}"
        color = _line_color(i + 1)
        # up to five overlapping bands: the current line's stands out, the others stay faint
        _band(fig, DROP_X, iv["kfree_skb_list.mpps"], color, row=i, alpha=0.15 if cur_line else 0.05, legend=cur_line)
        fig.add_trace(Scatter(x=DROP_X, y=np.asarray(out["kfree_skb_list.mpps"][i], dtype=float), mode="lines",
                                 name=name + (" (current)" if cur_line else ""),
                                 line=dict(color=color, width=3.5 if cur_line else 1.8),
                                 hovertemplate="drop_batch %{x}: %{y:.4f} Mpps<extra>" + name + "</extra>"))
    _add_seed_points(fig, "kfree_skb_list.mpps", "drop_batch", "Mpps", "seed 000 pktgen queue_xmit (E5)",
                     text=lambda r, o: f"{r.id} (bulk {r.state['kfl_bulk']})", textposition="middle right",
                     hovertemplate="%{text}: %{y:.4f} Mpps<extra></extra>")
    fig.update_xaxes(type="log", tickvals=2 ** np.arange(11))
    return _finish(fig, "kfree_skb_list: qdisc injection rate vs fq_codel drop_batch",
                   "fq_codel drop_batch (packets, log scale)",
                   "pktgen injection rate (Mpps)", caption(state, ("kfl_bulk", "drop_batch", "clone_frac")))


CLONE_X = np.linspace(0.0, 1.0, 51)


def kfree_clones(state: Mapping) -> go.Figure:
    """Injection rate [Mpps] vs fraction of cloned skbs in the drop list (bulk vs no bulk)."""
    p = _params(state)
    prof = _prof(state)
    bulks = np.array(sorted({1, int(p["kfl_bulk"])}))
    out, iv = uncertainty.evaluate_with_intervals({**p, "kfl_bulk": bulks[:, None], "clone_frac": CLONE_X[None, :]},
                                                  prof, ("kfree_skb_list.mpps",))
    cur = model.evaluate(p, prof)
    fig = _Fig()
    fig.add_trace(_current(float(p["clone_frac"]), (cur["kfree_skb_list.mpps"],), "current setting",
                           "clones %{x:.0%}: %{y:.4f} Mpps<extra></extra>"))
    for i, kb in enumerate(bulks):
        name = "no bulk free (1)" if kb == 1 else f"KFREE_SKB_BULK_SIZE {kb}"
        color = _line_color(i + 1)
        _band(fig, CLONE_X, iv["kfree_skb_list.mpps"], color, row=i)
        fig.add_trace(Scatter(x=CLONE_X, y=np.asarray(out["kfree_skb_list.mpps"][i], dtype=float), mode="lines",
                                 name=name, line=dict(color=color, width=2.5),
                                 hovertemplate="clones %{x:.0%}: %{y:.4f} Mpps<extra>" + name + "</extra>"))
    fig.update_xaxes(tickformat=".0%")
    return _finish(fig, "kfree_skb_list: effect of cloned skbs in the drop list",
                   "cloned skbs in the drop list (% of drops)",
                   "pktgen injection rate (Mpps)", caption(state, ("kfl_bulk", "drop_batch", "clone_frac")))


# ---------------------------------------------------------------- compare A/B
#: Per-packet (or per-object) time outputs shown in the A/B delta chart.
TIME_LABELS = {
    "path.ns_per_packet": "overview path (ns/packet)", "veth.ns_per_packet": "veth XDP_PASS (ns/packet)",
    "cpumap.src_ns": "cpumap source CPU (ns/packet)", "cpumap.dst_ns": "cpumap destination CPU (ns/packet)",
    "xdp_pass.ns_per_packet": "XDP_PASS one CPU (ns/packet)",
    "kfree_skb_list.ns_per_packet": "kfree_skb_list drop path (ns/packet)",
    "zero.memset_ns": "memset zeroing (ns/skb)", "zero.gfp_zero_ns": "__GFP_ZERO zeroing (ns/skb)",
    "slub.loop_ns": "SLUB one at a time (ns/object)", "slub.bulk_ns": "SLUB bulk API (ns/object)",
}
TIME_OUTPUTS = tuple(TIME_LABELS)


def compare_delta(state: Mapping) -> go.Figure:
    """B − A per-packet time of every path/microbenchmark [ns], against the ±noise floor, with the
    paired 90 % interval of each difference as error bars."""
    a, b = _eval(state, "a"), _eval(state, "b")
    nf = float(state["noise_ns"])
    d = np.array([_f(b[k]) - _f(a[k]) for k in TIME_OUTPUTS])
    from skbview.tables import paired_deltas  # shared with the A/B table (one propagation per scenario)
    _, div = paired_deltas(state)
    lo = np.array([_f(div[k][0]) for k in TIME_OUTPUTS])
    hi = np.array([_f(div[k][1]) for k in TIME_OUTPUTS])
    verdicts = [noise.verdict(v, nf, l_, h_) for v, l_, h_ in zip(d, lo, hi)]
    color = {noise.VERDICT_SURE: COLORS["b"], noise.VERDICT_UNSURE: _rgba(COLORS["b"], 0.45),
             noise.VERDICT_NOISE: "#c7c7c7"}
    note = {noise.VERDICT_SURE: "", noise.VERDICT_UNSURE: " (sign unsure)", noise.VERDICT_NOISE: " (noise)"}
    names = [TIME_LABELS[k] for k in TIME_OUTPUTS]
    fig = _Fig()
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
    return _finish(fig, "A/B: change in time per packet (B − A)", "B − A (ns per packet or object)", "model output",
                   _ab_caption(state), height=520)


def _ab_caption(state) -> str:
    diff = [k for k in st_mod.MODEL_KEYS if state[k] != state[st_mod.B_PREFIX + k]]
    txt = " · ".join(f"{k}: {st_mod._fmt(state[k])}→{st_mod._fmt(state[st_mod.B_PREFIX + k])}" for k in diff) or "A = B"
    return (f"A→B {txt} · noise_ns={st_mod._fmt(state['noise_ns'])} · skbmodel {skbmodel.__version__}, "
            f"profiles {_prof(state, 'a').id}/{_prof(state, 'b').id}")


def compare_breakdown(state: Mapping) -> go.Figure:
    """The chosen path's per-packet components [ns] for A and B side by side."""
    fig = _Fig()
    pa, pb = _params(state, "a"), _params(state, "b")
    ba = model.breakdown_ns(pa, _prof(state, "a"))
    bb = model.breakdown_ns(pb, _prof(state, "b"))
    labels = [f"A: {PATH_LABELS[pa['path']]}".replace(" (", "<br>("),
              f"B: {PATH_LABELS[pb['path']]}".replace(" (", "<br>(")]
    for comp in model.COMPONENTS:
        fig.add_trace(Bar(x=labels, y=np.array([_f(ba[comp]), _f(bb[comp])]), name=comp,
                             marker_color=COMPONENT_COLORS[comp],
                             hovertemplate=comp + ": %{y:.2f} ns/packet<extra></extra>"))
    ends = [_eval_iv(state, ("path.ns_per_packet",), w) for w in ("a", "b")]
    _error_bars(fig, labels, [_f(o["path.ns_per_packet"]) for o, _ in ends],
                tuple(np.array([_f(iv["path.ns_per_packet"][j]) for _, iv in ends]) for j in (0, 1)))
    fig.update_layout(barmode="stack")
    return _finish(fig, "A/B: per-packet cost of the overview path", "scenario", "time per packet (ns)",
                   _ab_caption(state))


# ---------------------------------------------------------------- validation
def _validation_rows():
    return validation.validate()


def validation_parity(state: Mapping, rows=None) -> go.Figure:
    """Predicted vs measured for every covered seed row (log-log; mixed units, so one point each)."""
    rows = rows if rows is not None else _validation_rows()
    rows = [r for r in rows if r["measured"] > 0 and r["predicted"] > 0]
    fig = _Fig()
    systems = sorted({r["system"] for r in rows})
    for s in systems:
        rs = [r for r in rows if r["system"] == s]
        fig.add_trace(Scatter(
            x=np.array([r["measured"] for r in rs]), y=np.array([r["predicted"] for r in rs]), mode="markers",
            name=s, marker=dict(size=10, symbol=["circle" if r["ok"] else "x" for r in rs]),
            text=[f"{r['id']} ({r['unit']})" for r in rs],
            customdata=np.array([r["rel_error"] * 100 for r in rs]),
            hovertemplate="%{text}: measured %{x:.4g}, predicted %{y:.4g} (%{customdata:+.2f} %)<extra></extra>"))
    lo = min(min(r["measured"], r["predicted"]) for r in rows) / 1.5
    hi = max(max(r["measured"], r["predicted"]) for r in rows) * 1.5
    fig.add_trace(Scatter(x=np.array([lo, hi]), y=np.array([lo, hi]), mode="lines", name="predicted = measured",
                             line=dict(color="#888", dash="dash"), hoverinfo="skip"))
    rng = [float(np.log10(lo)), float(np.log10(hi))]
    fig.update_xaxes(type="log", range=rng)
    fig.update_yaxes(type="log", range=rng)
    n_ok = sum(r["ok"] for r in rows)
    return _finish(fig, f"Validation: model vs seed measurements ({n_ok}/{len(rows)} within tolerance)",
                   "measured (row's own unit, log scale)", "predicted (same unit, log scale)",
                   f"each row evaluated under its own conditions and profile · skbmodel {skbmodel.__version__}, "
                   f"profiles {', '.join(sorted({r['profile'] for r in rows}))}", height=560)


def validation_errors(state: Mapping, rows=None) -> go.Figure:
    """Relative error [%] of every covered seed row."""
    rows = rows if rows is not None else _validation_rows()
    ids = np.array([r["id"] for r in rows])
    err = np.array([r["rel_error"] * 100 for r in rows])
    ok = np.array([r["ok"] for r in rows])
    fig = _Fig(Bar(x=ids, y=err, name="relative error (predicted − measured) / measured",
                           marker_color=["#59a14f" if o else "#e15759" for o in ok],
                           customdata=np.array([r["tolerance"] for r in rows]),
                           hovertemplate="%{x}: %{y:+.2f} % (tolerance %{customdata})<extra></extra>"))
    for y in (-5, -3, 3, 5):
        fig.add_hline(y=y, line=dict(color="#aaa", dash="dot", width=1))
    fig.add_annotation(x=1, xref="paper", y=5, text="±3 % / ±5 % tolerances", showarrow=False, xanchor="right",
                       yanchor="bottom", font=dict(size=11, color="#666"))
    fig.update_xaxes(tickangle=-60)
    return _finish(fig, "Validation: relative error per seed row (green = within its tolerance)", "seed row id",
                   "relative error (%)", f"skbmodel {skbmodel.__version__} · veth rows are judged in ns/packet (±2 ns)",
                   height=480)


# ---------------------------------------------------------------- out of sample
def _oos_report(rep):
    return rep if rep is not None else outofsample.load_report()


def oos_summary(state: Mapping, rep=None) -> go.Figure:
    """MAPE and max |error| [%] per subsystem and protocol, out of sample (horizontal bars, log x)."""
    rep = _oos_report(rep)
    rows = rep["summary"][::-1]
    labels = [f"{r['subsystem']} · {r['protocol']} ({r['points']})" for r in rows]
    fig = _Fig()
    for key, name, color in (("max_error", "max |error|", "#f28e2b"), ("mape", "MAPE", "#4e79a7")):
        v = np.array([r[key] * 100 for r in rows])
        fig.add_trace(Bar(y=labels, x=np.maximum(v, 0.01), orientation="h", name=name, marker_color=color,
                          text=[f"{x:.1f} %" for x in v], textposition="outside", cliponaxis=False,
                          hovertemplate="%{y}: " + name + " %{text}<extra></extra>"))
    fig.add_vline(x=10, line=dict(color="#59a14f", dash="dot", width=1))
    fig.update_xaxes(type="log")
    fig.update_layout(barmode="group", margin=dict(l=330))
    return _finish(fig, "Out of sample: error of predictions no fit saw", "error (%, log scale; dotted: 10 %)",
                   "subsystem · protocol (points predicted)",
                   "curves: each published curve fitted on 3 points, the rest predicted · seed rows: a source or a "
                   f"row left out and refitted · skbmodel {skbmodel.__version__}", height=560)


def oos_curve_names(rep=None) -> list[str]:
    """Series of the out-of-sample curves, upstream-design SLUB curves first."""
    rep = _oos_report(rep)
    return [c["series"] for c in sorted(rep["curves"], key=lambda c: (c["group"] != "slub", c["series"]))]


def oos_curve(state: Mapping, rep=None, series: str | None = None) -> go.Figure:
    """One published curve: measured points, the 3 fitted, and the model's prediction of the others."""
    rep = _oos_report(rep)
    by = {c["series"]: c for c in rep["curves"]}
    c = by[series or oos_curve_names(rep)[0]]
    pts = c["points"]
    x = np.array([p["x"] for p in pts])
    fit = np.array([p["fit"] for p in pts])
    meas = np.array([p["measured"] for p in pts])
    pred = np.array([p["predicted"] for p in pts])
    err = np.array([p["rel_error"] * 100 for p in pts])
    # the 90 % interval: the fitted constants' share and the structural sd of the curve's subsystem
    s_m = rep["structural_rel_sd"].get(outofsample.STRUCTURAL_PREFIX.get(c["group"], ""), 0.0)
    fig = _Fig()
    _band(fig, x, outofsample.point_interval(pred, [p["constants_rel_sd"] for p in pts], s_m), COLORS["a"])
    for trace in (
            Scatter(x=x, y=pred, mode="lines+markers", name="model (fitted on the 3 filled points)",
                    line=dict(color=COLORS["a"]), marker=dict(size=5), customdata=err,
                    hovertemplate=c["x_name"] + " %{x}: predicted %{y:.1f} (%{customdata:+.1f} %)<extra></extra>"),
            Scatter(x=x[~fit], y=meas[~fit], mode="markers", name="measured, predicted out of sample",
                    marker=dict(size=9, symbol="circle-open", color=COLORS["seed"], line=dict(width=2)),
                    hovertemplate=c["x_name"] + " %{x}: measured %{y}<extra></extra>"),
            Scatter(x=x[fit], y=meas[fit], mode="markers", name="measured, used by the fit",
                    marker=dict(size=10, color=COLORS["seed"]),
                    hovertemplate=c["x_name"] + " %{x}: measured %{y} (fitted)<extra></extra>")):
        fig.add_trace(trace)
    fig.update_xaxes(type="log")
    unit = model.OUTPUT_UNITS.get(c["output"], "")
    title = f"Out of sample: {c['series']} (MAPE {c['mape'] * 100:.1f} %, max {c['max_error'] * 100:.1f} %)"
    return _finish(fig, title,
                   f"{c['x_name']} (log scale)", f"{c['output']} ({unit})",
                   f"{c['cpu'][:60]} @ {c['ghz']:g} GHz · design {c['design'] or 'not stated'} · free: "
                   f"{', '.join(c['free'])} · {c['source'][:100]} · skbmodel {skbmodel.__version__}", height=500)


# ---------------------------------------------------------------- calibrate (a user's fit)
def fit_residuals(rows, names, label: str = "") -> go.Figure:
    """Residual / tolerance of each fitted measurement before and after the fit (``rows``: userfit rows)."""
    # short ticks (the row number of the table above), the file and line in the hover
    x = np.array([f"#{i + 1}" for i in range(len(names))])
    text = np.array(names)
    fig = _Fig(Bar(x=x, y=rows.z_before.to_numpy(), name="before the fit", marker_color="#bab0ac", text=text,
                   textposition="none", hovertemplate="%{text}: z = %{y:+.2f}<extra></extra>"),
               Bar(x=x, y=rows.z_after.to_numpy(), name="after the fit", marker_color=COLORS["a"], text=text,
                   textposition="none", hovertemplate="%{text}: z = %{y:+.2f}<extra></extra>"))
    fig.add_shape(type="rect", xref="paper", x0=0, x1=1, y0=-1, y1=1, fillcolor="rgba(44,160,44,0.08)",
                  line=dict(width=0), layer="below")
    fig.update_layout(barmode="group")
    return _finish(fig, "Fit: residual / tolerance before and after (green: within tolerance)",
                   "measurement (row of the table above; hover: file and line)",
                   "residual / tolerance (z)", f"{label} · skbmodel {skbmodel.__version__}".lstrip(" ·"), height=420)


def fit_parity(rows, names, label: str = "") -> go.Figure:
    """Predicted vs measured before and after the fit, each row in its own unit (log-log)."""
    lo = float(min(rows.measured.min(), rows.before.min(), rows.after.min())) / 1.2
    hi = float(max(rows.measured.max(), rows.before.max(), rows.after.max())) * 1.2
    text = np.array(names)
    fig = _Fig(
        Scatter(x=np.array([lo, hi]), y=np.array([lo, hi]), mode="lines", name="predicted = measured",
                line=dict(color="#999", dash="dash"), hoverinfo="skip"),
        Scatter(x=rows.measured.to_numpy(), y=rows.before.to_numpy(), mode="markers", name="before the fit",
                text=text, marker=dict(symbol="circle-open", size=10, color="#7f7f7f"),
                hovertemplate="%{text}: measured %{x:.4g}, predicted %{y:.4g}<extra></extra>"),
        Scatter(x=rows.measured.to_numpy(), y=rows.after.to_numpy(), mode="markers", name="after the fit",
                text=text, marker=dict(size=8, color=COLORS["a"]),
                hovertemplate="%{text}: measured %{x:.4g}, predicted %{y:.4g}<extra></extra>"))
    rng = [float(np.log10(lo)), float(np.log10(hi))]
    fig.update_xaxes(type="log", range=rng)
    fig.update_yaxes(type="log", range=rng)
    return _finish(fig, "Fit: predicted vs measured (each measurement in its own unit)",
                   "measured (its unit, log scale)", "predicted (same unit, log scale)",
                   f"{label} · skbmodel {skbmodel.__version__}".lstrip(" ·"), height=480)


# ---------------------------------------------------------------- registry
#: The figure builders of each page, keyed by the slugs of :data:`skbmodel.pages.PAGES` (every page there
#: has an entry here: tests/test_layers.py checks it).
PAGE_CHARTS = {
    "overview": (("breakdown", overview_breakdown), ("paths", overview_paths)),
    "slub": (("per_object", slub_per_object), ("bulk_gain", slub_gain)),
    "zeroing": (("cost_vs_size", zeroing_cost), ("delta_vs_noise", zeroing_delta)),
    "veth": (("mpps_vs_batch", veth_batch), ("batch_heatmap", veth_heatmap)),
    "cpumap": (("rates_vs_recycle", cpumap_rates), ("numa", cpumap_numa)),
    "kfree": (("pps_vs_drop_batch", kfree_drop_batch), ("clones", kfree_clones)),
    "compare": (("ab_delta", compare_delta), ("ab_breakdown", compare_breakdown)),
    "validation": (("parity", validation_parity), ("errors", validation_errors), ("oos_summary", oos_summary),
                   ("oos_curve", oos_curve)),
}


def figures_for_page(page: str, state: Mapping) -> list[tuple[str, go.Figure]]:
    """``[(short chart name, figure), ...]`` for every chart of ``page`` (a slug of ``skbmodel.pages.PAGES``)."""
    if page not in PAGE_CHARTS:
        raise ValueError(f"unknown page {page!r}; pages: {', '.join(PAGE_CHARTS)}")
    full = st_mod.defaults(state.get("cpu"))
    full.update(state)
    return [(name, fn(full)) for name, fn in PAGE_CHARTS[page]]


# ---------------------------------------------------------------- Design page
# A composed path (skbmodel.design, path=design) against a comparison B: the same scenario (sidebar)
# with b_path, a modelled path or "design" for the composition of the b_d_* keys.  And the NAPI skb
# cache (same-CPU deferred free) with its seed points.
from skbmodel import design as _design  # noqa: E402

_B = st_mod.B_PREFIX


def design_params_ab(state: Mapping) -> tuple[dict, dict]:
    """``(A, _B)`` model parameters: A the composition, B the comparison (same scenario otherwise)."""
    a = {**st_mod.scenario(state, "a"), "path": "design"}
    b = {**a, "path": state.get(_B + "path", "veth")}
    b.update({k: state.get(_B + k, _design.DEFAULTS[k]) for k in _design.KEY_NAMES})
    return a, b


def design_b_label(state: Mapping) -> str:
    bp = state.get(_B + "path", "veth")
    if bp == "design":
        return f"B: second composition (from {state.get(_B + 'd_from', 'veth')})"
    return f"B: {PATH_LABELS[bp]}"


def design_a_label(state: Mapping) -> str:
    return f"A: composition (from {state.get('d_from', 'veth')})"


def design_summary(state: Mapping) -> dict:
    """Totals, intervals, the paired delta B − A and its verdict for the page's metrics and charts."""
    pa, pb = design_params_ab(state)
    prof_a = _prof(state, "a")
    outs = ("path.ns_per_packet", "path.mpps", "path.budget_pct", "budget.ns_per_packet", "budget.line_rate_mpps")
    va, ia = uncertainty.evaluate_with_intervals(pa, prof_a, outs)
    vb, ib = uncertainty.evaluate_with_intervals(pb, prof_a, outs)
    delta, div = uncertainty.delta_intervals(pa, pb, prof_a, prof_a, ["path.ns_per_packet", "path.mpps"])
    d = float(np.asarray(delta["path.ns_per_packet"]))
    lo, hi = (float(np.asarray(v)) for v in div["path.ns_per_packet"])
    nf = float(state.get("noise_ns", 2.0))
    return dict(a=va, b=vb, iv_a=ia, iv_b=ib, delta_ns=d, delta_lo=lo, delta_hi=hi,
                delta_mpps=float(np.asarray(delta["path.mpps"])), verdict=noise.verdict(d, nf, lo, hi),
                runs=int(noise.runs_needed(d, nf)), problems_a=_design.problems(state),
                problems_b=_design.problems(state, _B) if state.get(_B + "path") == "design" else [])


def _design_caption(state: Mapping) -> str:
    keys = [k for k in _design.KEY_NAMES if state.get(k) != _design.DEFAULTS[k] or k == "d_from"]
    parts = [f"{k}={st_mod._fmt(state[k])}" for k in keys]
    parts.append(f"b_path={state.get(_B + 'path')}")
    if state.get(_B + "path") == "design":
        parts += [f"b_{k}={st_mod._fmt(state[_B + k])}" for k in _design.KEY_NAMES
                  if state.get(_B + k) != _design.DEFAULTS[k] or k == "d_from"]
    return " · ".join([caption(state, ("pp_recycle", "numa", "link_gbps", "frame_bytes")), *parts])


def design_breakdown(state: Mapping) -> go.Figure:
    """Per-packet components [ns] of the composition (A) and the comparison (B), stacked, with the
    90 % interval of each total and the line-rate budget."""
    pa, pb = design_params_ab(state)
    prof = _prof(state)
    ba, bb = model.breakdown_ns(pa, prof), model.breakdown_ns(pb, prof)
    s = design_summary(state)
    labels = [design_a_label(state), design_b_label(state)]
    labels = [x.replace(" (", "<br>(") for x in labels]
    fig = _Fig()
    for comp in model.COMPONENTS:
        fig.add_trace(Bar(x=labels, y=np.array([_f(ba[comp]), _f(bb[comp])]), name=comp,
                            marker_color=COMPONENT_COLORS[comp],
                            hovertemplate=comp + ": %{y:.2f} ns/packet<extra></extra>"))
    tot = [_f(s["a"]["path.ns_per_packet"]), _f(s["b"]["path.ns_per_packet"])]
    _error_bars(fig, labels, tot, tuple(np.array([_f(iv["path.ns_per_packet"][j]) for iv in (s["iv_a"], s["iv_b"])])
                                          for j in (0, 1)))
    budget = _f(s["a"]["budget.ns_per_packet"])
    fig.add_hline(y=budget, line=dict(color=COLORS["budget"], dash="dash", width=2))
    fig.add_annotation(x=1, xref="paper", y=budget, showarrow=False, xanchor="right", yanchor="bottom",
                       font=dict(size=11, color="#333"), bgcolor="rgba(255,255,255,0.85)",
                       text=f"line-rate budget {budget:.1f} ns ({_f(s['a']['budget.line_rate_mpps']):.3g} Mpps)")
    for x, t, mpps in zip(labels, tot, (s["a"]["path.mpps"], s["b"]["path.mpps"])):
        fig.add_annotation(x=x, y=t, yshift=4, xshift=-8, showarrow=False, xanchor="right", yanchor="bottom",
                           font=dict(size=12, color="#222"),
                           text=f"{t:.1f} ns · {_f(mpps):.3g} Mpps")
    fig.update_layout(barmode="stack")
    fig.update_yaxes(rangemode="tozero", range=[0, max(max(tot), budget) * 1.2])
    title = f"Composed path: {tot[0]:.1f} ns/packet; B − A {s['delta_ns']:+.1f} ns ({s['verdict']})"
    if s["problems_a"]:
        title = "Composition not usable: " + "; ".join(stage for stage, _ in s["problems_a"])
    return _finish(fig, title, "composition", "time per packet (ns)", _design_caption(state))


def napi_defer_rate(state: Mapping) -> go.Figure:
    """Request rate [Krps] of the CPU-bound TCP ping-pong without and with the same-CPU deferred free
    into the NAPI skb cache, with the seed points (rows dfr-01, dfr-02)."""
    p = _params(state)
    prof = _prof(state)
    x = np.array([0, 1])
    names = ["without (kmem_cache_free / kmem_cache_alloc)", "with (NAPI skb cache)"]
    out, iv = uncertainty.evaluate_with_intervals({**p, "defer_cache": x}, prof, ["napi_defer.krps"])
    y = np.asarray(out["napi_defer.krps"], dtype=float)
    fig = _Fig(Bar(x=names, y=y, name="model", marker_color=[COLORS["a"], COLORS["gfp_zero"]],
                       text=[f"{v:.1f} Krps" for v in y], textposition="inside", insidetextanchor="start",
                       hovertemplate="%{x}: %{y:.1f} Krps<extra></extra>"))
    _error_bars(fig, names, y, iv["napi_defer.krps"])
    seeds = _rows_for("napi_defer.krps")
    if seeds:
        fig.add_trace(Scatter(x=[names[int(r.state["defer_cache"])] for r, _ in seeds],
                                y=np.array([_seed_value(s, "Krps") for s in seeds]),
                                text=[r.id for r, _ in seeds], mode="markers+text", textposition="middle right",
                                name="seed 001 measurement", marker=SEED_MARKER,
                                hovertemplate="%{text}: %{y:.1f} Krps<extra></extra>"))
    gain = (y[1] / y[0] - 1.0) * 100.0
    lo = float(np.min(np.asarray(iv["napi_defer.krps"][0]))) * 0.97
    fig.update_yaxes(range=[lo, float(np.max(np.asarray(iv["napi_defer.krps"][1]))) * 1.02])
    per_req = units.cycles_to_ns(prof.value("napi_base_cycles"), float(p["ghz"]))
    return _finish(fig, f"NAPI skb cache: same-CPU deferred free, {gain:+.1f} % requests/s",
                     "skb free on the allocating CPU", "request rate (Krps)",
                     caption(state) + f" · rest of a request {per_req / 1e3:.2f} µs · axis does not start at 0")


PAGE_CHARTS["design"] = (("breakdown", design_breakdown), ("napi_cache", napi_defer_rate))
