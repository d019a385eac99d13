"""Compare A/B: scenario A (sidebar) vs scenario B (here), every output, deltas, measurability."""
import pandas as pd
import streamlit as st

from skbmodel import noise, state as sk_state
from skbmodel.pages import BY_SLUG as PAGE_BY_SLUG
from skbview import charts, tables
from skbview.app import appstate, ui


def _copy_a_to_b() -> None:
    a = appstate.get_state()  # A's controls of other pages (the path, the Design stages) are in the store only
    for k in sk_state.MODEL_KEYS:
        appstate.set_value(sk_state.B_PREFIX + k, a[k])
    store = st.session_state.get(appstate.STORE, {})
    if store.get("pv"):  # B gets A's profile in A's version
        store[sk_state.B_PREFIX + "pv"] = store["pv"]
    else:
        store.pop(sk_state.B_PREFIX + "pv", None)


st.title(PAGE_BY_SLUG["compare"].heading)
st.caption("A is the sidebar; B is set here (e.g. before/after a patch). Presets set B to the thread's 'before' case.")
with st.expander("Scenario B controls", expanded=True):
    st.button("Copy A → B", key="copy_a_to_b", on_click=_copy_a_to_b)
    cols = st.columns(4)
    for i, k in enumerate(sk_state.MODEL_KEYS):
        appstate.param_widget(sk_state.B_PREFIX + k, cols[i % 4])
appstate.page_state("compare")


@st.fragment
def _table(df: pd.DataFrame) -> None:
    # view-only filter: reruns just this fragment, not the model or the charts
    only = st.toggle("Only outputs that change", key="ab_only_changed", value=True)
    view = df[df["delta"] != 0] if only else df
    st.dataframe(view, hide_index=True, width="stretch", key="ab_table",
                 column_config={"delta_ns": st.column_config.NumberColumn("Δ ns/packet", format="%+.3f"),
                                "delta_mpps": st.column_config.NumberColumn("Δ Mpps", format="%+.4f"),
                                "delta": st.column_config.NumberColumn("Δ (unit)", format="%+.4g"),
                                "delta_lo": st.column_config.NumberColumn("Δ 90 % low", format="%+.4g"),
                                "delta_hi": st.column_config.NumberColumn("Δ 90 % high", format="%+.4g"),
                                "A": st.column_config.NumberColumn(format="%.5g"),
                                "B": st.column_config.NumberColumn(format="%.5g"),
                                "runs_needed": st.column_config.NumberColumn("runs needed", format="%d")})


def _draw(state: dict) -> None:
    """Headline delta, the A/B table and the charts: the live area, redrawn alone when a control moves."""
    rows = tables.compare_rows(state)
    path = next(r for r in rows if r["output"] == "path.ns_per_packet")
    lo, hi = path["delta_lo"], path["delta_hi"]
    ui.metrics([
        ("Overview path A (ns/packet)", ui.fmt(path["A"], 4), None),
        ("Overview path B (ns/packet)", ui.fmt(path["B"], 4), None),
        ("Δ B − A (ns/packet)", "—" if path["delta_ns"] is None else f"{path['delta_ns']:+.2f}",
         f"90 % interval {lo:+.2f} to {hi:+.2f} ns/packet (paired: A and B see the same constants)",
         ui.pm_text((hi - lo) / 2)),
        ("Verdict", noise.VERDICT_SHORT.get(path["verdict"], path["verdict"]),
         f"{path['verdict']}. Measurable: |Δ| ≥ the noise floor; sure of the sign: the 90 % interval excludes 0"
         + ("" if path["runs_needed"] is None else f"; {path['runs_needed']} runs per variant")),
    ])
    _table(pd.DataFrame(rows))
    ui.show_charts(charts.figures_for_page("compare", state), state)


ui.live(_draw)
