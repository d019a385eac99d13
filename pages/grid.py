"""Question grid: up to three parameters swept at once on top of scenario A, one output, each cell
with its 90 % interval, its paired difference to A and a verdict (skbmodel.grid, one evaluation)."""
import numpy as np
import pandas as pd
import streamlit as st

from skbmodel import attribution, grid
from skbmodel.physics import noise
from skbmodel.links import state as sk_state
from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbview import tables
from skbview.app import appstate, ui
from skbview.safe_text import md_escape

appstate.page_state("grid")
_ss = st.session_state
_store = _ss.get(appstate.STORE, {})


def _keep(key: str) -> None:
    """A grid control moved: the state (and so the URL and the share link) follows."""
    _ss.get(appstate.STORE, {})[key] = _ss[key]


st.title(PAGE_BY_SLUG["grid"].heading)
st.caption("Each cell is scenario A (the sidebar) with the chosen parameters set to the cell's values; its "
           "difference to A is paired (A and B share their constants). A Design stage (d_…) sweeps the path "
           "composed on the Design page. Where the kernel frees the batch it allocates, the free bulk size "
           "follows VETH_XDP_BATCH.")


def _axis_label(value: str) -> str:
    return "—" if value == "none" else sk_state.PARAMS[value].label


cols = st.columns(4)
for col, p in zip(cols, sk_state.GRID_PARAMS):
    if p.key not in _ss:
        _ss[p.key] = _store.get(p.key, p.default)
    col.selectbox(p.label.replace("Grid: ", ""), p.choices, key=p.key, on_change=_keep, args=(p.key,),
                  format_func=str if p.key == "g_out" else _axis_label)


def _draw(q) -> None:
    res = tables.grid_result(q)
    rows = grid.rows(res)
    n_sure = sum(r["verdict"] == noise.VERDICT_SURE for r in rows)
    best = min(rows, key=lambda r: r["delta"])
    keys = [k for k, _ in res["axes"]]
    ui.metrics([
        (f"Baseline A ({res['unit']})", ui.fmt(res["base_value"], 4), "scenario A, the sidebar"),
        ("Cells", str(len(rows)), " × ".join(keys)),
        ("Measurable and sure", str(n_sure), "cells whose difference to A is ≥ the noise floor and whose 90 % "
                                             "interval excludes 0"),
        (f"Lowest Δ ({res['unit']})", f"{best['delta']:+.2f}", " · ".join(str(best[k]) for k in keys)),
    ])
    df = pd.DataFrame(rows)
    st.dataframe(df, hide_index=True, width="stretch", key="grid_table", height=36 * (len(df) + 1) + 3,
                 column_config={"value": st.column_config.NumberColumn(f"{res['output']} ({res['unit']})",
                                                                       format="%.4g"),
                                "lo": st.column_config.NumberColumn("90 % low", format="%.4g"),
                                "hi": st.column_config.NumberColumn("90 % high", format="%.4g"),
                                "delta": st.column_config.NumberColumn("Δ to A", format="%+.3g"),
                                "delta_lo": st.column_config.NumberColumn("Δ 90 % low", format="%+.3g"),
                                "delta_hi": st.column_config.NumberColumn("Δ 90 % high", format="%+.3g")})
    st.download_button("Download the grid (CSV)", df.to_csv(index=False).encode(), key="grid_csv",
                       file_name=f"skbmodel-grid-{'-'.join(keys)}.csv", mime="text/csv")
    ui.chart_tabs("grid", q)
    _explain(q, res, rows, keys)


def _explain(q, res: dict, rows: list, keys: list) -> None:
    """What one cell's difference to A rests on (default: the lowest Δ)."""
    flat = list(np.ndindex(res["value"].shape))  # the order of grid.rows
    best = min(range(len(rows)), key=lambda i: rows[i]["delta"])
    pick = st.selectbox("What this cell's Δ rests on", range(len(rows)), index=best, key="grid_cell",
                        format_func=lambda i: " · ".join(rows[i][k] for k in keys) + f" (Δ {rows[i]['delta']:+.2f})")
    a = q.scenario("a")
    base, prof = a.params, a.profile
    cell = grid.cell_params(base, [k for k, _ in res["axes"]], flat[pick])
    rep = attribution.drivers(grid.baseline(base, keys), cell, prof, prof, [res["output"]])[res["output"]]
    st.markdown(md_escape(f"Δ {rep['value']:+.3g} {res['unit']} (sd {rep['sd']:.2g}): {attribution.summary(rep)}"))
    if rep["flag"]:
        st.warning(md_escape(f"This answer {rep['flag']}."), icon=":material/warning:")
    ui.driver_table(rep, key="grid_drivers")


ui.live(_draw)
