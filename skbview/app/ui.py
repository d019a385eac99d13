"""Small Streamlit helpers shared by the pages: charts (with export config), headline metrics."""
from __future__ import annotations

from collections.abc import Mapping

import gc

import numpy as np
import pandas as pd
import streamlit as st

from skbmodel import answers, composer, schema
from skbmodel.physics import noise
from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG, DEFAULT_PAGE
from skbmodel.links import state as sk_state
from skbmodel.question import Question
from skbview import charts, tables
from skbview.app import appstate
from skbview.app import live as live_control
from skbview.app.downloads import download_buttons
from skbview.report import camera_config  # same file name as the PNG/SVG download buttons


@st.cache_resource
def freeze_gc_once() -> bool:
    """Move everything imported so far (plotly, numpy, streamlit) out of the GC's reach, once per process.

    Together with ``runner.postScriptGC = false`` (.streamlit/config.toml) this keeps the
    per-rerun garbage collection from scanning the big import graph on every slider move.
    """
    gc.collect()
    gc.freeze()
    return True


def show_chart(fig, name: str, state: Mapping) -> None:
    """Draw the Plotly figure ``fig`` exactly as exported (theme=None) and its PNG/SVG download buttons."""
    page = state.get("page", DEFAULT_PAGE)
    st.plotly_chart(fig, theme=None, key=f"chart_{page}_{name}", config=camera_config(page, name, state))
    download_buttons(fig, name, state)


def live(draw, key: str = "live") -> None:
    """A live area of the page: ``draw(q)`` (metrics, charts, downloads) as the view fragment ``key``
    (every page has the one called "live").

    The page's start: the view's state asks its question here (:func:`appstate.question`), once per run, and
    every surface of the area renders that question and its answer.  A moved control
    reruns only these and the sidebar's link box (see :func:`appstate.view_fragment`); the page's title and
    static text stay as drawn by the last full run.
    """

    @appstate.view_fragment(key)
    def _live() -> None:
        draw(appstate.question())

    _live()


def model_view(slug: str, note=None) -> None:
    """The live area of a model page: the page's numbers (:func:`skbmodel.answers.of_question`, the same
    answers the text block, the report and ``eval`` give), then every chart of the page.

    ``note(q)``: a line above the numbers, or None.  Records the page (:func:`appstate.page_state`) first.
    """
    appstate.page_state(slug)

    def draw(q: Question) -> None:
        text = note(q) if note else None
        if text:
            with st.container(key="view_note"):
                st.caption(text)
        res = answers.of_question(q)
        if res.problem:
            with st.container(key="view_refused"):
                st.error(f"No numbers: {res.problem}.")
            return
        with st.container(key=live_control.METRICS_KEY):  # the live control rewrites its texts while dragged
            metrics(answer_metrics(res))
        for left_out in res.notes:  # what the numbers leave out (a frame larger than the calibration's)
            st.caption(left_out)
        controls = controls_slot()
        chart_tabs(slug, q)
        # the page's main control, followed in the browser: the metric row of every value is rendered from
        # the same answers (one vectorised evaluation of the control's range)
        out = {a.output: a.value for a in res.values}
        iv = {a.output: (a.lo, a.hi) for a in res.values}
        with controls:
            live_control.control(slug, q, page_metrics(slug), out, iv)

    live(draw)


def controls_slot():
    """The place of a page's live controls, above its charts, filled after them (``with slot: ...``).

    A new visitor's browser loads each kind of element's code when it first meets one.  Sent before the
    chart, the control made the browser ask for the chart's code (4.6 MB) after the control's and the
    sidebar's, about 0.1 s later (docs/benchmarks.md, the live control in the page).
    """
    return st.empty()


def page_metrics(slug: str):
    """``headline(params, out, iv)``: the metric row of the page's answers from outputs ``out`` and intervals
    ``iv`` (scalars: one value; arrays: every value of a sweep at once, what the live control precomputes;
    :func:`skbmodel.answers.texts_of`)."""
    spec = PAGE_BY_SLUG[slug]
    outs, labels = [o for o, _ in spec.summary], dict(spec.summary)
    specs = [(o, labels.get(o, schema.BY_NAME[o].label), schema.BY_NAME[o].kind) for o in outs]

    def headline(params: Mapping, out: Mapping, iv: Mapping) -> list:
        texts = answers.texts_of(outs, out, iv, float(params["noise_ns"]))
        if np.ndim(out[outs[0]]) == 0:
            texts = {o: {k: (v[0] if v is not None else None) for k, v in t.items()} for o, t in texts.items()}
        return metric_items(specs, texts)
    return headline


def design_metrics(q: Question):
    """``headline(params, out, iv)`` of the Design page: composition A's answers (:func:`page_metrics`), then
    B's cost and the paired ``B - A`` when ``out`` has them (``answers.B_COST``, ``answers.AB_DELTA``: scalars,
    or arrays along a sweep of one of A's stage sizes, :func:`skbmodel.answers.design_sweep`)."""
    base, b_label = page_metrics("design"), tables.design_b_label(q)
    o = "path.ns_per_packet"

    def headline(params: Mapping, out: Mapping, iv: Mapping) -> list:
        items = base(params, out, iv)
        if live_control.B_COST not in out or live_control.AB_DELTA not in out:
            return items
        nf = float(params["noise_ns"])
        tb = answers.texts_of([o], {o: out[live_control.B_COST]}, {o: iv[live_control.B_COST]}, nf)[o]
        td = answers.texts_of([o], {o: out[live_control.AB_DELTA]}, {o: iv[live_control.AB_DELTA]}, nf,
                              kind="difference")[o]
        if np.ndim(out[live_control.B_COST]) == 0:
            tb, td = ({k: (v[0] if v is not None else None) for k, v in t.items()} for t in (tb, td))
        return items + [("B (ns/packet)", tb["value"], b_label, tb["interval"]),
                        ("Δ B − A (ns/packet)", td["value"], "paired 90 % interval: A and B see the same constants",
                         td["interval"])]
    return headline


def design_live(q: Question, res: answers.Answers):
    """The Design page's metric row (:func:`design_metrics` of its answers ``res``), and under it the place of
    a live control for each of composition A's stage sizes in bulk that it uses (``charts.LIVE_DESIGN``).

    Returns the function that draws those controls there: call it after the page's charts
    (:func:`controls_slot`)."""
    o = "path.ns_per_packet"
    out = {a.output: a.value for a in res.values}
    iv = {a.output: (a.lo, a.hi) for a in res.values}
    b = next((v for v in res.b_values if v.output == o), None)
    d = next((v for v in res.differences if v.output == o), None)
    if b is not None and d is not None:
        out[live_control.B_COST], iv[live_control.B_COST] = b.value, (b.lo, b.hi)
        out[live_control.AB_DELTA], iv[live_control.AB_DELTA] = d.value, (d.lo, d.hi)
    headline = design_metrics(q)
    a = q.compare_a.params  # scenario A as the state gives it (the composition's own keys)
    with st.container(key=live_control.METRICS_KEY):  # the live controls rewrite its texts while dragged
        metrics(headline(a, out, iv))
    used = composer.keys_in_use(a)
    slot = controls_slot()

    def draw_controls() -> None:
        with slot:
            for key in charts.LIVE_DESIGN[0]:
                if key in used:
                    live_control.control("design", q, headline, out, iv, key=key)
    return draw_controls


def answer_metrics(res: answers.Answers) -> list:
    """The metric row of the page's answers: each value with its unit and 90 % interval; a signed difference
    measured per packet is followed by its verdict against the noise floor."""
    return metric_items([(a.output, a.label, a.kind) for a in res.values],
                        {a.output: {"value": a.value_text(), "interval": a.interval_text(), "verdict": a.verdict}
                         for a in res.values})


def metric_items(specs, texts: Mapping) -> list:
    """The metric row of ``specs`` ``[(output, label, kind), ...]`` from their ``texts`` (``{output: {"value",
    "interval", "verdict"}}``, each a text, or a list of texts: one per value of a sweep)."""
    items = []
    for output, label, kind in specs:
        t = texts[output]
        unit = "" if kind in ("count", "exact") else schema.BY_NAME[output].unit_text  # a count names its unit
        items.append((f"{label} ({unit})" if unit else label, t["value"], schema.BY_NAME[output].label,
                      t["interval"]))
        verdict = t["verdict"]
        if isinstance(verdict, list):
            items.append(("Measurable?", [noise.VERDICT_SHORT[v] for v in verdict], None))
        elif verdict:
            items.append(("Measurable?", noise.VERDICT_SHORT[verdict],
                          f"{verdict}; sure of the sign when the 90 % interval of the difference excludes 0"))
    return items


def chart_tabs(page: str, q: Question, names=None) -> None:
    """``page``'s charts (or those of ``names``) as tabs: only the open one is built, drawn and exported.

    A browser draws a Plotly chart in 40-65 ms on a shared 2-core machine, so a page that redrew all its
    charts on every slider move would take two to three times as long to answer as one that redraws the
    chart being looked at.  The other charts are one click away (and all of them are in the report and the
    PNG zip).  The open tab is kept per page for the session and is the link's ``chart``.
    """
    labels = {n: lab for n, lab in charts.chart_labels(page).items() if names is None or n in names}
    if len(labels) == 1:
        (name,) = labels
        show_chart(charts.figure_for(page, name, q), name, q)
        return
    shown = list(labels.values())
    key = f"chart_tab_{page}"
    current = st.session_state.get(key)  # the tab the user has open, while the page is on screen
    index = shown.index(current) + 1 if current in shown else appstate.open_chart(page, len(shown))
    appstate.set_open_chart(page, index)
    tabs = st.tabs(shown, key=key, default=shown[index - 1], on_change=appstate.chart_tab_changed,
                   args=(page, key, shown))
    for name, tab in zip(labels, tabs):
        if tab.open:
            with tab:
                show_chart(charts.figure_for(page, name, q), name, q)


#: metrics side by side at most: a 1,400-pixel window shows four labels like "Source CPU rx (Mpps)" whole
METRICS_PER_ROW = 4


def metrics(items) -> None:
    """A row of headline numbers: ``[(label, value text, help or None[, ± text or None]), ...]``.

    The optional fourth element (:func:`pm`) is shown as the metric's delta line, without colour
    or arrow: it is the value's uncertainty, not a change.
    """
    # more than METRICS_PER_ROW in a row cut their labels and values short ("Source CPU rx (Mp…"): as
    # many rows as that takes, of equal length, in the same order (the live control finds the cards by it)
    rows = -(-len(items) // METRICS_PER_ROW)
    per_row = -(-len(items) // rows) if items else 0
    for r in range(rows):
        row = items[r * per_row:(r + 1) * per_row]
        for col, (label, value, help_, *rest) in zip(st.columns(per_row), row):
            pm_ = rest[0] if rest else None
            col.metric(label, value, delta=pm_, delta_color="off", delta_arrow="off", help=help_)


def pm_text(half_width: float, scale: float = 1.0, digits: int = 2) -> str | None:
    """``"± x (90 %)"`` for a half-width [the metric's unit after ``scale``]; None when it is 0."""
    hw = abs(float(half_width)) * scale
    if not np.isfinite(hw) or hw == 0:
        return None
    # ``digits`` significant digits, never an exponent: 99.6 -> 100, 123,456 -> 120,000, 0.0123 -> 0.012
    decimals = digits - 1 - int(np.floor(np.log10(hw)))
    hw = round(hw, decimals)
    return f"± {hw:,.{max(decimals, 0)}f} (90 %)"


def pm(iv: Mapping, output: str, scale: float = 1.0, digits: int = 2) -> str | None:
    """The ± text of one output's interval in ``iv`` (:func:`skbmodel.uncertainty.evaluate_with_intervals`)."""
    lo, hi = iv[output]
    return pm_text((float(np.asarray(hi)) - float(np.asarray(lo))) / 2, scale, digits)


def fmt(x: float, digits: int = 3) -> str:
    return f"{float(x):.{digits}g}"


def driver_table(report: Mapping, key: str) -> None:
    """The constants one answer rests on (:func:`skbmodel.attribution.drivers`): kind, shares, source."""
    st.dataframe(pd.DataFrame(tables.driver_rows(report)), hide_index=True, width="stretch", key=key,
                 column_config={"value_share": st.column_config.NumberColumn("share of the value", format="%+.0f %%"),
                                "variance_share": st.column_config.NumberColumn("share of the variance",
                                                                                format="%.0f %%"),
                                "plus_10pct": st.column_config.NumberColumn("+10 % of it moves Δ by",
                                                                            format="%+.3g")})


def composition_text(q: Question) -> str:
    """The composed path of scenario A in words: its start and every stage it changes."""
    params = q.scenario("a").params
    start = params["d_from"]
    opts = composer.resolved(params)
    as_start = composer.resolved({**params, **{k: "from" for k in composer.STAGE_CHOICES}})
    start_label = sk_state.PARAMS["path"].label_of(start)
    used = composer.keys_in_use(params)
    changed = []
    for k, v in opts.items():
        num = composer.OPTION_NUMBERS.get((k, v))
        num = num if num in used else None
        if v == as_start[k] and num is None:
            continue
        text = f"{composer.STAGE_CHOICES[k][0] if k != 'd_free_where' else 'slab of the free'}: " \
               f"{composer.OPTION_LABELS.get(v, v)}"
        if num:
            p = sk_state.PARAMS[num]
            text += f", {p.label.split(': ')[-1].split(' (')[0]} = {params[num]:g} {p.unit}"
        changed.append(text)
    if not changed:
        return f"from {start_label}, every stage as in it: the numbers are those of {start_label}"
    return f"from {start_label} with " + "; ".join(changed)


def path_note(q: Question) -> str | None:
    """Above the Overview's numbers when it shows the composed path: which composition they are."""
    if q.get("path") != "design":
        return None
    return "Composed path (Design page): " + composition_text(q)
