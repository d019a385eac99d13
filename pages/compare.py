"""Compare A/B: scenario A (sidebar, and its path here) vs scenario B (here).

The verdict is about what changed: the outputs A and B differ on, the chosen path first
(skbview.tables.compare_verdicts), each with the constants its difference rests on.
"""
import pandas as pd
import streamlit as st

from skbmodel import abruns, noise, state as sk_state
from skbmodel.pages import BY_SLUG as PAGE_BY_SLUG
from skbview import charts, tables
from skbview.app import appstate, calibrate_view, ui
from skbview.safe_text import md_escape

B = sk_state.B_PREFIX


def _copy_a_to_b() -> None:
    a = appstate.get_state()  # A's controls of other pages (the path, the Design stages) are in the store only
    for k in sk_state.MODEL_KEYS:
        appstate.set_value(sk_state.B_PREFIX + k, a[k])
    store = st.session_state.get(appstate.STORE, {})
    if store.get("pv"):  # B gets A's profile in A's version
        store[B + "pv"] = store["pv"]
    else:
        store.pop(B + "pv", None)


def _b_follows_path() -> None:
    """A's path moved: B on the same path as A was follows it (the question stays "this change, on that path")."""
    ss = st.session_state
    store = ss.get(appstate.STORE, {})
    if store.get(B + "path") == store.get("path"):
        appstate.set_value(B + "path", ss["path"])


appstate.page_state("compare")
st.title(PAGE_BY_SLUG["compare"].heading)
st.caption("A is the sidebar (its path is set here too); B is set below (e.g. before/after a patch). Presets set B "
           "to the thread's 'before' case. The verdict is about the outputs the change moves.")
top = st.columns([2, 1])
_path = sk_state.PARAMS["path"]
st.session_state["path"] = appstate.get_state()["path"]  # the path A has on every page (the store's)
top[0].radio("Path of A (B follows while it is on the same path)", _path.choices, key="path",
             format_func=_path.label_of, horizontal=True, on_change=_b_follows_path)
top[1].button("Copy A → B", key="copy_a_to_b", on_click=_copy_a_to_b)
with st.expander("Scenario B controls", expanded=True):
    cols = st.columns(4)
    for i, k in enumerate(sk_state.MODEL_KEYS):
        appstate.param_widget(B + k, cols[i % 4])


def label(output: str, state: dict) -> str:
    """What an output is, in words (the chosen path names itself)."""
    if output == "path.ns_per_packet":
        a, b = state["path"], state[B + "path"]
        which = _path.label_of(a) if a == b else f"{_path.label_of(a)} → {_path.label_of(b)}"
        return f"the chosen path: {which} (ns/packet)"
    return charts.TIME_LABELS.get(output, output)


@st.fragment
def _table(df: pd.DataFrame) -> None:
    # view-only filter: reruns just this fragment, not the model or the charts
    only = st.toggle("Only outputs the change moves", key="ab_only_changed", value=True)
    folded = int((~df["moves"]).sum())
    view = df[df["moves"]] if only else df
    if only and folded:
        st.caption(f"{folded} outputs the change cannot move are folded away.")
    # at full height: a table that scrolls itself takes the page's mouse wheel
    st.dataframe(view.drop(columns=["moves"]), hide_index=True, width="stretch", height="content", key="ab_table",
                 column_config={"delta_ns": st.column_config.NumberColumn("Δ ns/packet", format="%+.3f"),
                                "delta_mpps": st.column_config.NumberColumn("Δ Mpps", format="%+.4f"),
                                "delta": st.column_config.NumberColumn("Δ (unit)", format="%+.4g"),
                                "delta_lo": st.column_config.NumberColumn("Δ 90 % low", format="%+.4g"),
                                "delta_hi": st.column_config.NumberColumn("Δ 90 % high", format="%+.4g"),
                                "A": st.column_config.NumberColumn(format="%.5g"),
                                "B": st.column_config.NumberColumn(format="%.5g"),
                                "runs_needed": st.column_config.NumberColumn(
                                    "runs needed", format="%d",
                                    help="runs per variant to resolve Δ against the noise floor: only for a "
                                         "path's per-packet output that moves, where the model is sure of the "
                                         "sign or Δ is below the noise floor")})


def _drivers(v: dict, expanded: bool) -> None:
    rep = v["drivers"]
    if rep["flag"]:
        st.warning(md_escape(f"{v['output']}: this answer {rep['flag']}."), icon=":material/warning:")
    with st.expander(f"What Δ {v['output']} rests on", expanded=expanded):
        ui.driver_table(rep, key=f"drivers_{v['output']}")


def _verdict_line(v: dict, state: dict) -> str:
    runs = "" if v["runs_needed"] is None else f"; {v['runs_needed']} runs per variant"
    return (f"**{md_escape(label(v['output'], state))}**: Δ {v['delta']:+.2f} {v['unit']} "
            f"(90 % {v['delta_lo']:+.2f} to {v['delta_hi']:+.2f}) — {v['verdict']}{runs}")


def _runs() -> None:
    """A and B fitted on the Calibrate page: each measurement both runs made, measured next to the model."""
    fits = calibrate_view.ab_fits()
    if fits is None:
        return
    fa, fb = fits
    rows = abruns.measured_vs_model(fa.rows, fb.rows, fa.profile, fb.profile)
    with st.container(key="ab_runs"):
        st.markdown(f"**Your runs: measured B − A next to the model's** (A: `{md_escape(fa.profile.name)}`, "
                    f"B: `{md_escape(fb.profile.name)}`)")
        if not rows:
            st.info("The two runs share no measurement (the same test, output and conditions): nothing to set "
                    "side by side.")
            return
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="ab_runs_table",
                     column_config={c: st.column_config.NumberColumn(format="%+.4g")
                                    for c in ("measured_delta", "model_delta", "model_lo", "model_hi")})


def _draw(state: dict) -> None:
    """Headline delta, what it rests on, the A/B table and the charts: the live area."""
    verdicts = tables.compare_verdicts(state)
    rows = tables.compare_rows(state)
    with st.container(key="ab_verdict"):
        if not verdicts:
            st.info("A and B give the same value for every output: nothing to compare. Change B below, or A in "
                    "the sidebar.")
        else:
            if state["path"] == state[B + "path"] and verdicts[0]["output"] != "path.ns_per_packet":
                st.info(md_escape(f"A's path ({_path.label_of(state['path'])}) does not move with this change; "
                                  "the verdict is about what does: "
                                  f"{', '.join(label(v['output'], state) for v in verdicts)}. "
                                  "Set A's path above to follow one of them."), icon=":material/info:")
            h = verdicts[0]
            lo, hi = h["delta_lo"], h["delta_hi"]
            ui.metrics([
                (f"A: {label(h['output'], state)}", ui.fmt(h["A"], 4), None),
                ("B", ui.fmt(h["B"], 4), None),
                (f"Δ B − A ({h['unit']})", f"{h['delta']:+.2f}",
                 f"90 % interval {lo:+.2f} to {hi:+.2f} (paired: A and B share only the same constants of the "
                 "same machine)", ui.pm_text((hi - lo) / 2)),
                ("Verdict", noise.VERDICT_SHORT.get(h["verdict"], h["verdict"]),
                 f"{h['verdict']}. Measurable: |Δ| ≥ the noise floor; sure of the sign: the 90 % interval excludes 0"
                 + ("" if h["runs_needed"] is None else f"; {h['runs_needed']} runs per variant")),
            ])
            st.markdown("  \n".join(_verdict_line(v, state) for v in verdicts[:4]))
    _runs()
    ui.chart_tabs("compare", state, names=["ab_difference"])  # the difference itself, next to the values
    for i, v in enumerate(verdicts[:4]):
        _drivers(v, expanded=i == 0)
    _table(pd.DataFrame(rows))
    ui.chart_tabs("compare", state, names=["ab_delta", "ab_breakdown"])


ui.live(_draw)
