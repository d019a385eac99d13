"""Small Streamlit helpers shared by the pages: charts (with export config), headline metrics."""
from __future__ import annotations

from collections.abc import Mapping

import gc

import numpy as np
import pandas as pd
import streamlit as st

from skbmodel import design, uncertainty
from skbmodel.pages import DEFAULT_PAGE
from skbmodel import state as sk_state
from skbview import charts, tables
from skbview.app import appstate
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


def live(draw) -> None:
    """The page's live area: ``draw(state)`` (metrics, charts, downloads) as the view fragment "live".

    A moved control reruns only this and the sidebar's link box (see :func:`appstate.view_fragment`);
    the page's title and static text stay as drawn by the last full run.
    """

    @appstate.view_fragment("live")
    def _live() -> None:
        draw(appstate.url_state(appstate.get_state()))

    _live()


def model_view(slug: str, headline, note=None, refuse=None) -> None:
    """The live area of a model page: headline metrics, then every chart of the page.

    ``headline(params, out, iv)`` turns the scenario's parameters, its ``model.evaluate`` outputs and
    their 90 % intervals (:func:`skbmodel.uncertainty.evaluate_with_intervals`) into the metric row
    (see :func:`metrics`, :func:`pm`); ``note(state)``, a line above it or None; ``refuse(state)``, why
    the scenario has no numbers (shown instead of the metrics and charts) or None.  Records the page
    (:func:`appstate.page_state`) first.
    """
    appstate.page_state(slug)

    def draw(state: dict) -> None:
        text = note(state) if note else None
        if text:
            with st.container(key="view_note"):
                st.caption(text)
        refused = refuse(state) if refuse else None
        if refused:
            with st.container(key="view_refused"):
                st.error(refused)
            return
        params = sk_state.scenario(state)
        out, iv = uncertainty.evaluate_with_intervals(params, sk_state.profile_for(state))
        metrics(headline(params, out, iv))
        chart_tabs(slug, state)

    live(draw)


def chart_tabs(page: str, state: Mapping, names=None) -> None:
    """``page``'s charts (or those of ``names``) as tabs: only the open one is built, drawn and exported.

    A browser draws a Plotly chart in 40-65 ms on a shared 2-core machine, so a page that redrew all its
    charts on every slider move would take two to three times as long to answer as one that redraws the
    chart being looked at.  The other charts are one click away (and all of them are in the report and the
    PNG zip).  The open tab is kept per page for the session and is the link's ``chart``.
    """
    labels = {n: lab for n, lab in charts.chart_labels(page).items() if names is None or n in names}
    if len(labels) == 1:
        (name,) = labels
        show_chart(charts.figure_for(page, name, state), name, state)
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
                show_chart(charts.figure_for(page, name, state), name, state)


def metrics(items) -> None:
    """A row of headline numbers: ``[(label, value text, help or None[, ± text or None]), ...]``.

    The optional fourth element (:func:`pm`) is shown as the metric's delta line, without colour
    or arrow: it is the value's uncertainty, not a change.
    """
    cols = st.columns(len(items))
    for col, (label, value, help_, *rest) in zip(cols, items):
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
    """The constants one answer rests on (:func:`skbmodel.drivers.drivers`): kind, shares, source."""
    st.dataframe(pd.DataFrame(tables.driver_rows(report)), hide_index=True, width="stretch", key=key,
                 column_config={"value_share": st.column_config.NumberColumn("share of the value", format="%+.0f %%"),
                                "variance_share": st.column_config.NumberColumn("share of the variance",
                                                                                format="%.0f %%"),
                                "plus_10pct": st.column_config.NumberColumn("+10 % of it moves Δ by",
                                                                            format="%+.3g")})


def composition_text(state: Mapping, prefix: str = "") -> str:
    """The composed path of the Design page in words: its start and every stage it changes."""
    params = sk_state.scenario(state, "a" if not prefix else "b")
    start = params["d_from"]
    opts = design.resolved(params)
    as_start = design.resolved({**params, **{k: "from" for k in design.STAGE_CHOICES}})
    start_label = sk_state.PARAMS["path"].label_of(start)
    used = design.keys_in_use(params)
    changed = []
    for k, v in opts.items():
        num = design.OPTION_NUMBERS.get((k, v))
        num = num if num in used else None
        if v == as_start[k] and num is None:
            continue
        text = f"{design.STAGE_CHOICES[k][0] if k != 'd_free_where' else 'slab of the free'}: " \
               f"{design.OPTION_LABELS.get(v, v)}"
        if num:
            p = sk_state.PARAMS[num]
            text += f", {p.label.split(': ')[-1].split(' (')[0]} = {params[num]:g} {p.unit}"
        changed.append(text)
    if not changed:
        return f"from {start_label}, every stage as in it: the numbers are those of {start_label}"
    return f"from {start_label} with " + "; ".join(changed)


def path_note(state: Mapping) -> str | None:
    """Above the Overview's numbers when it shows the composed path: which composition they are."""
    if state.get("path") != "design":
        return None
    return "Composed path (Design page): " + composition_text(state)
