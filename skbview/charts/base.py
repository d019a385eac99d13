"""The charts' shared template and helpers: one explicit Plotly template, the figure builder
:class:`Fig` (plain dicts, one ``go.Figure`` at the end), the caption line, prediction-interval bands and
error bars, seed-point overlays.

Each builder in this package takes the question ``q`` (:class:`skbmodel.question.Question`, read as the
state it was asked with, see :mod:`skbmodel.links.state`) and returns a
``go.Figure`` with a title, axis titles with units, a legend and a caption line (scenario parameters,
model version and CPU profile) at the bottom.  Sweeps are single vectorised :func:`skbmodel.model.evaluate`
calls and traces get numpy arrays.  Figures use :data:`TEMPLATE` explicitly, so the browser
(``theme=None``) and a static export (kaleido) render the same picture.

Seed measurements are overlaid where the model has a matching output (positions from
:data:`skbmodel.evidence.validation.ROWS`, values from :func:`skbmodel.evidence.observations.seed_observations`),
as measurements only where they were measured under the scenario's conditions
(:func:`skbmodel.evidence.conditions.matches`), faded with their own conditions named otherwise.

Every model curve carries its 90 % prediction interval (:mod:`skbmodel.uncertainty`) as a light
filled band of the curve's colour (legend entry :data:`BAND_NAME`, once per figure; the bands toggle
together), bar charts carry it as error bars on the totals and the A/B delta chart on each delta.
"""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

import skbmodel
from skbmodel import answers, model
from skbmodel.links import state as sk_state
from skbmodel.physics import units
from skbmodel.evidence import conditions, kstages, seed_checks
from skbmodel.evidence.observations import seed_observations
from skbmodel.question import Question

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
HEIGHT = 460
#: Curves that a chart shows together differ in lightness, not only in hue, so they stay apart in a
#: greyscale print and for red-green colour blindness (Paul Tol's "high contrast" and "muted" schemes).
COLORS = {
    "a": "#004488", "b": "#DDAA33", "memset": "#882255", "gfp_zero": "#DDAA33", "seed": "#111111",
    "budget": "#7f7f7f", "noise": "rgba(127,127,127,0.18)", "src": "#004488", "dst": "#DDAA33",
    "drop": "#BB5566", "xdp_pass": "#44AA99", "current": "#111111",
}
#: Fill patterns of the bands of one figure, in order: where two bands overlap both stay visible (no
#: mixed colour), also in greyscale.
BAND_PATTERNS = ("/", "\\", "x", ".", "|", "-", "+")
COMPONENT_COLORS = dict(zip(model.COMPONENTS, ("#4e79a7", "#e15759", "#59a14f", "#b07aa1", "#bab0ac", "#f28e2b")))
#: the named stages of a fitted rest (kernel-symbols.toml), in light tones: parts of the rest, not modelled steps
STAGE_COLORS = dict(zip(kstages.load().stages, (
    "#a0cbe8", "#ffbe7d", "#8cd17d", "#f1ce63", "#86bcb6", "#ff9d9a", "#d4a6c8", "#fabfd2", "#d7b5a6",
    "#9edae5", "#c5b0d5", "#c49c94", "#dbdb8d", "#b5cf6b", "#e7cb94", "#cedb9c")))
#: a fitted rest that no published profile names: hatched, a residual
REST_FILL = dict(color="#d9d4d0", line=dict(color="#8c8580", width=1),
                 pattern=dict(shape="/", fgcolor="#8c8580", size=8, solidity=0.3))

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
    colorway=["#004488", "#DDAA33", "#BB5566", "#44AA99", "#882255", "#999933", "#88CCEE", "#555555"],
    xaxis=dict(showline=True, linecolor="#888", ticks="outside", zeroline=False, title=dict(standoff=8)),
    yaxis=dict(showline=True, linecolor="#888", ticks="outside", zeroline=False, title=dict(standoff=8)),
)

SEED_MARKER = dict(symbol="diamond", size=11, color=COLORS["seed"], line=dict(color="white", width=1))
#: a seed point measured under other conditions than the scenario's: an open marker at this opacity
FADED_OPACITY = 0.45
CURRENT_MARKER = dict(symbol="circle-open", size=14, line=dict(width=2.5), color=COLORS["current"])


BAND_NAME = "90 % interval"


def current_trace(x, ys, name: str, hovertemplate: str) -> dict:
    """The trace marking the current setting: an open circle at ``x`` on each of the values ``ys``."""
    return Scatter(x=np.array([x] * len(ys)), y=np.array([num(y) for y in ys]), mode="markers", name=name,
                   marker=CURRENT_MARKER, hovertemplate=hovertemplate)


# ---------------------------------------------------------------- helpers
def params(q: Question, which: str = "a", **override) -> dict:
    """Scenario ``which``'s model parameters as the state gives them (with ``override``)."""
    return {**q.scenario(which).params, **override}


def profile(q: Question, which: str = "a"):
    """The scenario's CPU profile: a custom one (``prof`` key) or the shipped ``cpu``."""
    return q.scenario(which).profile


def evaluate(q: Question, which: str = "a", outputs=None, **override) -> dict:
    """The scenario's ``outputs`` (default: every output; a chart asks for those it draws)."""
    return q.scenario(which).replace(**override).evaluate(outputs)


def evaluate_iv(q: Question, outputs, which: str = "a", **override):
    """``(outputs, intervals)`` of the scenario (with ``override``): see
    :func:`skbmodel.uncertainty.evaluate_with_intervals`."""
    return q.scenario(which).replace(**override).with_intervals(outputs)


def band(fig, x, interval, color: str, row=None, alpha: float = 0.15, name: str | None = None,
         what: str = BAND_NAME) -> None:
    """One band around a curve (its prediction interval, or a noise band) as a hatched fill (one closed
    trace, no hover) with a legend entry of its own: ``"<name>: <what>"`` (``what`` alone without a name).

    ``interval`` is ``(lo, hi)``; ``row`` picks one row of 2-D sweeps; ``alpha`` the opacity of the light
    background under the hatching.  Each band of a figure gets the next of :data:`BAND_PATTERNS`, so
    overlapping bands stay distinguishable, in colour and in greyscale.  A named band toggles with the
    curve of the same legend group (``name``).
    """
    lo, hi = (np.asarray(a, dtype=float) for a in interval)
    if row is not None:
        lo, hi = lo[row], hi[row]
    x = np.asarray(x, dtype=float)
    lo, hi = np.broadcast_to(lo, x.shape), np.broadcast_to(hi, x.shape)
    shape = BAND_PATTERNS[sum("fillpattern" in t for t in fig.traces) % len(BAND_PATTERNS)]
    fig.add_trace(Scatter(x=np.concatenate([x, x[::-1]]), y=np.concatenate([hi, lo[::-1]]), mode="lines",
                          fill="toself", fillcolor=rgba(color, alpha * 0.5), line=dict(width=0),
                          fillpattern=dict(shape=shape, fgcolor=color, fgopacity=0.55, bgcolor=rgba(color, alpha * 0.5),
                                           size=7, solidity=0.25),
                          name=_band_label(name, what), legendgroup=name or "interval",
                          showlegend=True, hoverinfo="skip"))


def zero_based(fig: go.Figure) -> None:
    """Start every y axis of ``fig`` that shows a quantity at zero (the link's ``yzero=1``), so that a 1 %
    spread looks like 1 %.  Left alone: log and category axes, and a figure with a heatmap (its y is a grid)."""
    if any(t.type == "heatmap" for t in fig.data):
        return
    for name in [k for k in fig.layout.to_plotly_json() if k.startswith("yaxis")] or ["yaxis"]:
        axis = fig.layout[name]
        on_axis = [t for t in fig.data if (getattr(t, "yaxis", None) or "y") == "y" + name[len("yaxis"):]]
        if axis.type in ("log", "category") or axis.autorange == "reversed" or any(
                t.y is not None and len(t.y) and isinstance(t.y[0], str) for t in on_axis):
            continue
        if axis.range is not None:
            lo, hi = axis.range
            axis.range = [min(0.0, lo), hi] if hi > 0 else [lo, max(0.0, hi)]
        else:
            axis.rangemode = "tozero"


def _band_label(name: str | None, what: str) -> str:
    """A band's legend text; on two lines when one would widen the legend (and narrow the plot) beyond the
    curve's own entry."""
    if not name:
        return what
    return f"{name}: {what}" if len(name) + len(what) <= 40 else f"{name}:<br>{what}"


def delta_note(fig, x, y_from, y_to, label: str, unit: str, digits: int = 3, corner: str = "lower right",
               where: str = "") -> None:
    """Annotate the difference of two curves (or bars) at ``x``: an arrow from ``y_from`` to ``y_to`` and, in a
    ``corner`` of the plot (``"lower right"``, ``"upper center"``, ...) where it hides no data, the box
    ``Δ <label> at <where>: +d unit (+p %)`` (``d = y_to - y_from``, ``p`` relative to ``y_from``)."""
    y0, y1 = float(np.asarray(y_from)), float(np.asarray(y_to))
    fig.annotations.append(dict(x=x, y=y1, ax=x, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="",
                                showarrow=True, arrowhead=2, arrowsize=1, arrowwidth=2, arrowcolor="#222",
                                name="delta_arrow"))
    vert, horiz = corner.split()
    px = {"left": 0.01, "center": 0.5, "right": 0.99}[horiz]
    fig.annotations.append(dict(
        x=px, y=0.03 if vert == "lower" else 0.97, xref="paper", yref="paper", showarrow=False,
        xanchor=horiz, yanchor="bottom" if vert == "lower" else "top",
        text=delta_text(y0, y1, label, unit, digits, where),
        font=dict(size=12, color="#222"),
        bgcolor="rgba(255,255,255,0.9)", bordercolor="#666", borderwidth=1, name="delta"))


def delta_text(y0: float, y1: float, label: str, unit: str, digits: int = 3, where: str = "") -> str:
    """The box text of :func:`delta_note`: ``Δ <label> at <where>: +d unit (+p %)``."""
    d = y1 - y0
    pct = f" ({(y1 / y0 - 1) * 100:+.1f} %)" if y0 else ""
    return f"Δ {label}{' at ' + where if where else ''}: {d:+.{digits}f} {unit}{pct}"


def error_bars(fig, x, y, interval, orientation: str = "v", color: str = "#333", showlegend: bool = True) -> None:
    """The prediction interval of bar totals ``y`` at ``x`` as error bars (legend entry :data:`BAND_NAME`)."""
    y = np.atleast_1d(np.asarray(y, dtype=float))
    lo, hi = (np.broadcast_to(np.asarray(a, dtype=float), y.shape) for a in interval)
    err = dict(type="data", symmetric=False, array=hi - y, arrayminus=y - lo, color=color, thickness=1.5, width=6)
    pos = dict(x=x, y=y, error_y=err) if orientation == "v" else dict(x=y, y=x, error_x=err)
    fig.add_trace(Scatter(**pos, mode="markers", marker=dict(size=4, color=color), name=BAND_NAME,
                          legendgroup="interval", showlegend=showlegend, customdata=np.stack([lo, hi], axis=-1),
                          hovertemplate="90 % interval: %{customdata[0]:.2f} to %{customdata[1]:.2f}<extra></extra>"))


def line_color(trace_index: int) -> str:
    """The colour Plotly gives the ``trace_index``-th trace by default (the template's colorway), made
    explicit so that a band added before a line does not shift the line's colour."""
    colorway = TEMPLATE.layout.colorway
    return colorway[trace_index % len(colorway)]


def num(x) -> float:
    return float(np.asarray(x))


def caption(q: Question, keys=(), which: str = "a", **override) -> str:
    """The footer: CPU and clock, the parameters the chart varies with (``keys``), every other parameter that
    differs from its default, the model version and the profile with its version (what a share link records).
    ``override``: parameters of the scenario at other values than the question's (a live control's sweep)."""
    p = params(q, which, **override)
    parts = [f"cpu {p['cpu']} @ {sk_state.fmt_value(float(p['ghz']))} GHz"]
    parts += [f"{k}={sk_state.fmt_value(p[k])}" for k in keys if k not in ("cpu", "ghz")]
    parts += [f"{m.key}={sk_state.fmt_value(p[m.key])}" for m in sk_state.MODEL_PARAMS
              if m.key not in ("cpu", "ghz", *keys) and p[m.key] != m.default]
    parts.append(f"skbmodel {skbmodel.__version__}, profile {answers.identity(q.scenario(which)).full_text()}")
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


class Fig:
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


#: line dashes in the order a chart's lines take them where colour alone would tell them apart
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


#: marker symbols of lines that run close together: where their dashes merge into one grey stroke in a
#: greyscale print, a shape every few points still names each line (:func:`marked`)
LINE_SYMBOLS = ("circle", "square", "triangle-up", "diamond", "triangle-down", "star")
#: how many markers a marked line shows
MARKS_PER_LINE = 9


def marked(i: int, color: str) -> dict:
    """Properties of a scatter trace that mark its line with the ``i``-th symbol of :data:`LINE_SYMBOLS`,
    white inside and outlined in the line's colour (in the legend too), at :data:`MARKS_PER_LINE` points.
    Plotly's ``marker.maxdisplayed`` draws only those points and shifts each further marked trace of the
    figure by a third of the spacing, so that the markers of lines that run together do not cover each
    other (and a static SVG holds only the markers that are seen)."""
    return dict(mode="lines+markers",
                marker=dict(symbol=LINE_SYMBOLS[i % len(LINE_SYMBOLS)], size=11, color="white",
                            line=dict(width=2, color=color), maxdisplayed=MARKS_PER_LINE))


def _symbols(t: dict):
    if "markers" not in str(t.get("mode", "")):
        return None
    sym = (t.get("marker") or {}).get("symbol", "circle")
    return tuple(np.asarray(sym).reshape(-1).tolist()) if not isinstance(sym, str) else sym


def tell_apart(traces: list[dict]) -> None:
    """Give each legend line of one subplot a dash (and marker) no other line there has: a chart printed
    in greyscale, or read by a reviewer who does not see its colours, still tells its lines apart.  A
    line styled apart already keeps its style; the next free dash of :data:`DASHES` goes to the others."""
    used: dict[tuple, set] = {}
    for t in traces:
        if (t.get("type") != "scatter" or "lines" not in str(t.get("mode", "lines"))
                or t.get("fill") not in (None, "none") or t.get("showlegend") is False):
            continue
        taken = used.setdefault((t.get("xaxis", "x"), t.get("yaxis", "y")), set())
        sym = _symbols(t)
        style = ((t.get("line") or {}).get("dash", "solid"), sym)
        if style in taken:
            dash = next((d for d in DASHES if (d, sym) not in taken), style[0])
            t["line"] = {**(t.get("line") or {}), "dash": dash}
            style = (dash, sym)
        taken.add(style)


#: Height of a vertical legend [px]: per entry, and per further line of a two-line entry (legend font 12 px).
#: Read off Plotly's own legends of every chart (``_fullLayout.legend._height``): 21 px an entry (19-22 by the
#: group gaps), 15-18 px a second line; the larger figures, so an estimate is never short.
LEGEND_ENTRY_PX, LEGEND_LINE_PX, LEGEND_PAD_PX = 22, 18, 10


def legend_height(traces: list[dict]) -> int:
    """The height a vertical legend of ``traces`` takes [px] (``LEGEND_ENTRY_PX`` an entry, ``LEGEND_LINE_PX``
    each further line of one, ``LEGEND_PAD_PX`` around them)."""
    names = [t.get("name") or "" for t in traces if t.get("showlegend") is not False]
    return (LEGEND_ENTRY_PX * len(names) + LEGEND_LINE_PX * sum(n.count("<br>") for n in names)
            + LEGEND_PAD_PX) if names else 0


def finish(fig: Fig, title: str, xtitle: str, ytitle: str, cap: str, height: int = HEIGHT,
           cap_width: int = 115) -> go.Figure:
    """``cap_width``: characters per caption line; narrower where long category labels push the plot
    area (where the caption starts) to the right.  Lines are told apart without colour (:func:`tell_apart`).

    A figure is made taller than ``height`` where its legend would not fit beside the plot area: Plotly
    scrolls such a legend on the page and cuts it off in a PNG, SVG or report, which then names fewer
    lines than it draws."""
    tell_apart(fig.traces)
    cap = _wrap(cap, cap_width)
    extra = 14 * cap.count("<br>")
    bottom = 105 + extra
    if (fig.layout.get("legend") or {}).get("orientation") != "h":
        height = max(height, 60 + bottom + legend_height(fig.traces))
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


def seed_rows(outputs) -> list:
    outputs = {outputs} if isinstance(outputs, str) else set(outputs)
    obs = seed_observations()
    return [(r, obs[r.id]) for r in seed_checks.ROWS if r.output in outputs and r.id in obs]


def seed_value(row_obs, unit: str) -> float:
    r, o = row_obs
    return float(units.convert(o.value, o.unit, unit))


def add_seed_points(fig, q: Question, outputs, xkey: str, unit: str, name: str, text=None, free=None, rows=None,
                    x=None, y=None, marker=None, **kw) -> None:
    """Overlay the seed rows measuring ``outputs`` (or the given ``rows``, ``(RowSpec, Observation)`` pairs)
    as diamonds at their own condition ``xkey``, drawn as measurements of the scenario only where
    :func:`skbmodel.evidence.conditions.matches` says they are; the others faded, one legend entry per
    condition they were measured under (``"<name>: measured on ... (other CPU)"``), the condition in
    their hover.

    ``free``: the parameters the chart draws the rows at their own value of (default: ``xkey``, any
    value); ``text(row, obs) -> str`` labels each point (default: the row id); ``x(row)`` / ``y(row, obs)``
    place it (default: its ``xkey`` and its value in ``unit``); ``kw`` goes to the traces (``mode``,
    ``textposition``, ``hovertemplate``; a callable gets the pairs of its trace).  Each trace's
    ``meta`` names its rows (``seed_rows``) and whether they are faded (``seed_faded``, ``seed_reasons``).
    """
    seeds = seed_rows(outputs) if rows is None else list(rows)
    if not seeds:
        return
    free = {xkey: None} if free is None else free
    label = text or (lambda r, o: r.id)
    xof = x or (lambda r: r.state[xkey])
    yof = y or (lambda r, o: seed_value((r, o), unit))
    marker = marker or SEED_MARKER
    groups: dict[str, list] = {}
    for s, m in zip(seeds, conditions.matches_all([r for r, _ in seeds], q.scenario("a"), free=free)):
        groups.setdefault(m.reason, []).append(s)
    hover = kw.pop("hovertemplate", "%{text}: %{y}<extra></extra>")
    for reason, ss in sorted(groups.items(), key=lambda kv: kv[0] != ""):
        xs = [xof(r) for r, _ in ss]
        trace = dict(
            x=np.array(xs, dtype=None if any(isinstance(v, str) for v in xs) else float),
            y=np.array([yof(r, o) for r, o in ss], dtype=float), text=[label(r, o) for r, o in ss],
            **{"mode": "markers+text", **{k: (v(ss) if callable(v) else v) for k, v in kw.items()}})
        ids = [r.id for r, _ in ss]
        if not reason:
            fig.add_trace(Scatter(**trace, name=name, marker=marker, hovertemplate=hover,
                                  meta=dict(seed_rows=ids, seed_faded=False)))
            continue
        faded = {**marker, "symbol": marker.get("symbol", "diamond") + "-open", "opacity": FADED_OPACITY,
                 "line": dict(color=marker.get("color", COLORS["seed"]), width=1.5)}
        fig.add_trace(Scatter(**trace, name=_legend_lines(f"{name}: {reason}"), marker=faded,
                              textfont=dict(color="#999"), customdata=np.array([reason] * len(ss), dtype=object),
                              hovertemplate=hover.replace("<extra>", "<br>%{customdata}, not this scenario<extra>", 1),
                              meta=dict(seed_rows=ids, seed_faded=True, seed_reasons=[reason] * len(ss))))


def _legend_lines(text: str, width: int = 42) -> str:
    """A legend entry broken after its words into lines of about ``width`` characters (a faded seed
    entry names a whole condition and would otherwise narrow the plot)."""
    lines, cur = [], ""
    for word in text.split(" "):
        if cur and len(cur) + 1 + len(word) > width:
            lines.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}" if cur else word
    return "<br>".join([*lines, cur])


def vlines(fig, xs, text=None, color="#999", log=False):
    for x in xs:
        fig.add_vline(x=float(x), line=dict(color=color, width=1, dash="dot"), layer="below")
    if text is not None and len(xs):
        x0 = float(np.log10(xs[0])) if log else float(xs[0])  # annotations on a log axis take log10(x)
        fig.add_annotation(x=x0, y=1, yref="paper", text=text, showarrow=False, xanchor="right",
                           yanchor="top", xshift=-4, font=dict(size=11, color="#555"))


def rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"

#: The modelled paths' labels, by path code.
PATH_LABELS = {c: sk_state.PARAMS["path"].label_of(c) for c in sk_state.PARAMS["path"].choices}


def cycle_curves(fig: Fig, x, out, iv, curves, ghz: float, hover: str, **line_kw) -> None:
    """Each of ``curves`` (``(output, name, color)``) as a line over ``x`` [cycles] with its 90 % band;
    the hover adds the ns at clock ``ghz``.  ``hover`` is the hover's head (``"bulk %{x}"``)."""
    for key, name, color in curves:
        y = np.asarray(out[key], dtype=float)
        band(fig, x, iv[key], color, name=name)
        fig.add_trace(Scatter(x=x, y=y, mode="lines", name=name, legendgroup=name,
                              line=dict(color=color, width=2.5), customdata=y / ghz,
                              hovertemplate=hover + ": %{y:.1f} cycles = %{customdata:.2f} ns<extra></extra>",
                              **line_kw))

