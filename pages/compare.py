"""Compare A/B: scenario A (the sidebar, and its path here) against B, which is A plus what it changes.

The verdict is about what changed: the outputs A and B differ on, the chosen path first, each with the
constants its difference rests on (skbmodel.answers: the same answer the text block and the report give).
"""
import pandas as pd
import streamlit as st

from skbmodel.evidence import abruns
from skbmodel import answers
from skbmodel.physics import noise
from skbmodel.links import state as sk_state
from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbview import tables
from skbview.app import appstate, calibrate_view, ui
from skbview.safe_text import md_escape

appstate.page_state("compare")
st.title(PAGE_BY_SLUG["compare"].heading)
st.caption("A is the sidebar; B is A plus the differences listed below the verdict (e.g. the patch under review). "
           "Change A anywhere and B follows, except where B differs. Presets set B to the thread's 'before' case.")
_path = sk_state.PARAMS["path"]

def _clear_b() -> None:
    appstate.set_b_overrides({})  # B is A again


def _add_difference() -> None:
    key = st.session_state.get("add_difference")
    if key:
        appstate.add_b_override(key)
    st.session_state["add_difference"] = None


def _b_overrides() -> None:
    """B as what it changes of A: one control and a remove button per override, and "add a difference"."""
    state = appstate.get_state()
    over = sk_state.b_overrides(state)
    shown = [k for k in sk_state.MODEL_KEYS if k in over and k != "ghz" or (k == "ghz" and "cpu" not in over
                                                                            and k in over)]
    with st.container(key="differences"):
        if not shown:
            st.markdown("**B is A.** Add what B changes (e.g. the patch under review):")
        else:
            st.markdown("**B differs from A in:**")
        for k in shown:
            cols = st.columns([5, 1], vertical_alignment="bottom")
            appstate.param_widget(sk_state.key_of(k, "b"), cols[0], whole_page=k in ("cpu", "path"))
            cols[1].button("Remove", key=f"remove_difference_{k}", on_click=appstate.remove_b_override, args=(k,),
                           help="B follows A again in this parameter", icon=":material/close:")
        free = [k for k in sk_state.MODEL_KEYS if k not in over and k != "ghz"]
        cols = st.columns([5, 1], vertical_alignment="bottom")
        cols[0].selectbox("Add a difference…", free, index=None, key="add_difference", placeholder="choose a parameter",
                          format_func=lambda k: sk_state.PARAMS[k].label, on_change=_add_difference)
        if over:
            cols[1].button("B = A", key="copy_a_to_b", on_click=_clear_b, help="Remove every difference")


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


def _drivers(d: answers.Difference, expanded: bool) -> None:
    rep = d.drivers
    if rep["flag"]:
        st.warning(md_escape(f"{d.output}: this answer {rep['flag']}."), icon=":material/warning:")
    with st.expander(f"What Δ {d.output} rests on", expanded=expanded):
        ui.driver_table(rep, key=f"drivers_{d.output}")


def _verdict_line(d: answers.Difference, q) -> str:
    return (f"**{md_escape(tables.ab_label(d.output, q))}**: Δ {d.value_text()} {d.unit} ({d.interval_text()}) — "
            f"{d.verdict}{d.runs_text()}")


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


def _patch_named(state: dict) -> None:
    """Which mail A and B stand for, while they are still the ones a patch's link gave (the Patch page,
    ``python -m skbmodel patch``): a move of A or B drops it (:func:`appstate.drop_stale_provenance`)."""
    state = appstate.drop_stale_provenance(state)
    if state.get("patch"):
        with st.container(key="patch_named"):
            st.info(f"A and B as the patch maps them: **{md_escape(state['patch'])}**"
                    + (f" (sha256 `{state['phash']}`)" if state.get("phash") else ""), icon=":material/merge:")


def _draw(q) -> None:
    """The verdict and the difference first, then what it rests on and the A/B table: the live area."""
    _patch_named(dict(q))
    res = answers.of_question(q)
    with st.container(key="ab_verdict"):
        if res.problem:
            st.error(md_escape(f"No numbers: {res.problem}."))
            return
        if not res.differences:
            a = res.values[0]  # the page's headline: A's chosen path
            ui.metrics([(f"A: {tables.ab_label(a.output, q)}", a.value_text(), None, a.interval_text())])
            st.info("A and B give the same value for every output: nothing to compare. Add a difference below, or "
                    "change A in the sidebar.")
        else:
            path_a = q.scenario("a").params["path"]
            if path_a == q.scenario("b").params["path"] and res.differences[0].output != "path.ns_per_packet":
                st.info(md_escape(f"A's path ({_path.label_of(path_a)}) does not move with this change; "
                                  "the verdict is about what does: "
                                  f"{', '.join(tables.ab_label(d.output, q) for d in res.differences)}. "
                                  "Set A's path below to follow one of them."), icon=":material/info:")
            h = res.differences[0]
            a = next((v for v in res.values if v.output == h.output), None)  # A's answer, where the page has it
            ui.metrics([
                (f"A: {tables.ab_label(h.output, q)}", a.value_text() if a else answers.Answer(
                    h.output, h.label, h.unit, "cost", h.a, h.a, h.a).value_text(), None,
                 a.interval_text() if a else None),
                ("B", res.b_values[0].value_text(), None, res.b_values[0].interval_text()),
                (f"Δ B − A ({h.unit})", h.value_text(),
                 "paired 90 % interval: A and B share only the same constants of the same machine",
                 h.interval_text()),
                ("Verdict", noise.VERDICT_SHORT.get(h.verdict, h.verdict or "—"),
                 f"{h.verdict}. Measurable: |Δ| ≥ the noise floor; sure of the sign: the 90 % interval excludes 0"
                 + h.runs_text()),
            ])
            st.markdown("  \n".join(_verdict_line(d, q) for d in res.differences[:4]))
    ui.chart_tabs("compare", q, names=["ab_difference"])  # the difference itself, next to the values


def _details(q) -> None:
    res = answers.of_question(q)
    if res.problem:
        return
    _runs()
    for i, d in enumerate(res.differences[:4]):
        _drivers(d, expanded=i == 0)
    _table(pd.DataFrame(tables.compare_rows(q)))
    ui.chart_tabs("compare", q, names=["ab_delta", "ab_breakdown"])


ui.live(_draw)
_b_overrides()
st.session_state["path"] = appstate.get_state()["path"]  # the path A has on every page (the store's)
st.radio("Path of A (B follows it unless B changes the path)", _path.choices, key="path",
         format_func=_path.label_of, horizontal=True, on_change=appstate.rerun_views)
ui.live(_details, key="live_details")
