"""Validation: every seed measurement vs the model (table and parity plot)."""
import pandas as pd
import streamlit as st

from skbmodel.evidence.protocols import srso
from skbmodel.evidence.derivation import leave_one_out
from skbmodel.evidence import outofsample, protocols, validation
from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbview import charts
from skbview.app import appstate, ui


@st.cache_data(show_spinner=False)
def _rows() -> list[dict]:
    # independent of the scenario: each row is evaluated under its own conditions
    return validation.validate()


st.title(PAGE_BY_SLUG["validation"].heading)
state = appstate.page_state("validation")
rows = _rows()
ev = validation.evidence_counts(rows)
pred, built, restated = (ev[k] for k in validation.EVIDENCE_KINDS)
ui.metrics([
    ("Predicted, in tolerance", f"{pred['ok']} / {pred['rows']}",
     "Rows the model had freedom to miss: their subsystem has more independent rows than fitted constants."),
    ("Reproduced by construction", f"{built['ok']} / {built['rows']}",
     "Rows of a subsystem with 0 degrees of freedom: the fit reproduces them whatever the model says. No evidence."),
    ("Restate an input", f"{restated['rows']}",
     "Profile constants, state defaults and inputs returned unchanged. Not evidence."),
    ("Largest predicted |error| %",
     f"{max(abs(r['rel_error']) for r in rows if r['evidence'] == 'predicted') * 100:.2f}", None),
    ("Rows not covered", f"{len(validation.NOT_COVERED)}",
     "; ".join(f"{k}: {v}" for k, v in validation.NOT_COVERED.items())),
])

rep = outofsample.load_report()
diff = rep["differences"]
st.header("Differences: what a design review asks for")
st.caption("A value can be right while its difference is wrong (a fitted base can carry most of a value). Each "
           "before/after pair the model expresses as A and B: the predicted B − A with its paired 90 % interval "
           "against the measured B − A. Seed pairs are predicted by the shipped profile (the calibration saw both "
           "rows); corpus pairs are bulk minus one at a time from two curves, each fitted on 3 other points. "
           "A measured difference within the benchmark's noise has no sign to agree with.")
ui.metrics([
    ("Pairs (predicted evidence)", f"{diff['n_pairs']}", "Pairs of rows the model had freedom to miss; "
     "pairs of rows reproduced by construction are listed but not counted."),
    ("Right sign", f"{diff['sign_agreement'] * 100:.0f} %",
     f"Of the {diff['n_resolved']} pairs whose measured difference is above its noise. Goal: at least 90 %."),
    ("MAPE of the difference", f"{diff['mape'] * 100:.1f} %", "Over the pairs above their noise."),
    ("Inside the paired interval", f"{diff['coverage'] * 100:.0f} %", "Goal: 80–95 % for a 90 % interval."),
])
st.dataframe(pd.DataFrame(diff["groups"], columns=["group", "n_pairs", "n_resolved", "sign_agreement", "mape",
                                                   "coverage"]),
             hide_index=True, width="stretch", key="val_diff_groups",
             column_config={k: st.column_config.NumberColumn(format="percent")
                            for k in ("sign_agreement", "mape", "coverage")})
misses = protocols.differences.difference_goal_misses(diff)
if misses:
    st.warning("Short of the goals (right sign on at least 90 % of the pairs above their noise, 80–95 % inside the "
               "paired 90 % interval): " + "; ".join(misses) + ". Reported as measured, not tuned back.")
with st.expander(f"Every pair ({len(diff['pairs'])})"):
    st.dataframe(pd.DataFrame(diff["pairs"], columns=["pair", "what", "group", "unit", "measured_delta",
                                                      "predicted_delta", "lo", "hi", "noise", "resolved",
                                                      "sign_agrees", "inside", "evidence"]),
                 hide_index=True, width="stretch", key="val_diff_pairs")

st.header("Seed rows: each measurement against the model")


@st.fragment
def _table(rows: list[dict]) -> None:
    systems = sorted({r["system"] for r in rows})
    pick = st.multiselect("Systems", systems, default=systems, key="val_systems")
    df = pd.DataFrame([r for r in rows if r["system"] in pick],
                      columns=["id", "system", "quantity", "profile", "measured", "predicted", "unit", "rel_error",
                               "tolerance", "ok", "evidence", "note"])
    df["rel_error"] = df["rel_error"] * 100
    # every row at full height: a table shorter than its rows scrolls itself and takes the page's mouse wheel
    st.dataframe(df, hide_index=True, width="stretch", height="content", key="val_table",
                 column_config={"rel_error": st.column_config.NumberColumn("error (%)", format="%+.2f"),
                                "measured": st.column_config.NumberColumn(format="%.6g"),
                                "predicted": st.column_config.NumberColumn(format="%.6g")})


_table(rows)
ui.show_chart(charts.validation_parity(state, rows), "parity", state)
ui.show_chart(charts.validation_errors(state, rows), "errors", state)

st.header("Out of sample: what the model predicts of measurements no fit saw")
st.caption("Each published curve of the public corpus is fitted on 3 points spread over its range, with the "
           "fit command's default free constants; the other points are predicted. Seed rows are predicted with "
           "their source (or the row alone) left out of the fit. Generated by `python scripts/validation_report.py`"
           " (same as `python -m skbmodel validate --out-of-sample`).")
ui.show_chart(charts.oos_summary(state, rep), "oos_summary", state)


def _other_cpu(rep: dict) -> None:
    """Leave one CPU out: the derived profile's MAPE next to the naive baseline's on the same points."""
    rows = [s for s in rep["summary"] if s["protocol"] == leave_one_out.PROTOCOL]
    if not rows:
        return
    st.subheader("Other CPU: a CPU predicted from its description and the other CPUs' data")
    st.caption("Each measured CPU is left out in turn: its profile is derived from its machine description and "
               "the other CPUs' costs (page_pool; SLUB, zeroing and the page allocator as operation counts x "
               "the description's costs), and its published numbers are predicted. The naive baseline predicts "
               "the other CPUs' mean ns, the same on every CPU; a derivation is worth having only below it. The "
               "EPYC 9684X (Zen 4) is predicted from the three Intel CPUs alone: no AMD page_pool number in its "
               "training. Runs booted "
               "with SRSO's safe-RET return thunk are held out here (the derivation counts no returns) and "
               "predicted by the kernel-configuration term below. SLUB and the page allocator have no three CPUs "
               "of one kernel era, zeroing one CPU to derive another from: no accuracy is claimed for them.")
    for r in rows:
        with st.container(key=f"val_other_cpu_{r['subsystem']}"):
            ui.metrics([
                (f"{r['subsystem']}: MAPE, derived", f"{r['mape'] * 100:.1f} %",
                 f"{r['points']} published points of {', '.join(r['cpus'])}; max |error| {r['max_error'] * 100:.0f} %"),
                (f"{r['subsystem']}: MAPE, naive baseline", f"{r['baseline_mape'] * 100:.1f} %",
                 "The same points predicted by the other CPUs' mean ns."),
                ("Inside the 90 % interval", f"{r['coverage'] * 100:.0f} %", "Goal: 80–95 %."),
                ("Median half-width", f"± {r['median_rel_half_width'] * 100:.0f} %",
                 "Of the 90 % intervals, relative to the prediction."),
            ])
    with st.expander(f"Every point predicted for another CPU ({len(rep.get('other_cpu', []))})"):
        st.dataframe(pd.DataFrame(rep.get("other_cpu", []),
                                  columns=["id", "uarch", "kernel", "output", "measured", "predicted", "lo", "hi",
                                           "rel_error", "naive", "naive_rel_error", "inside"]),
                     hide_index=True, width="stretch", key="val_other_cpu_points",
                     column_config={k: st.column_config.NumberColumn(format="percent")
                                    for k in ("rel_error", "naive_rel_error")})


def _return_thunk(rep: dict) -> None:
    """The SRSO return-thunk term predicted on the runs booted with it, next to the naive (no term)."""
    rows = [s for s in rep["summary"] if s["protocol"] == srso.SRSO_PROTOCOL]
    if not rows:
        return
    (r,) = rows
    st.subheader("Kernel configuration: SRSO's return thunk on an AMD Zen 4")
    st.caption("AMD Zen 1-4 kernels send every function return through a thunk by default "
               "(spec_rstack_overflow=safe-ret). Each page_pool cost of the EPYC 9684X booted with it is "
               "predicted as the same kernel's run without it (spec_rstack_overflow=ibpb) plus the function "
               "returns of the loop, counted in the v6.13 source, times the run's own price of one return (its "
               "time_bench_sample function call, 14 − 3 cycles). The naive prediction ignores the thunk. The "
               "range is the count's bracket over the compiler's inlining choices, not a fitted interval.")
    ui.metrics([
        ("MAPE, counted returns", f"{r['mape'] * 100:.1f} %",
         f"{r['points']} page_pool costs of two kernels; max |error| {r['max_error'] * 100:.0f} %"),
        ("MAPE, naive (no thunk)", f"{r['baseline_mape'] * 100:.1f} %", "The ibpb-booted run's cost, unchanged."),
        ("Inside the count's bracket", f"{r['coverage'] * 100:.0f} %", None),
    ])
    with st.expander(f"Every run booted with the thunk ({len(rep['srso'])})"):
        st.dataframe(pd.DataFrame(rep["srso"], columns=["kernel", "test", "returns", "ibpb_cycles",
                                                        "predicted_cycles", "low_cycles", "high_cycles",
                                                        "measured_cycles", "error", "naive_error"]),
                     hide_index=True, width="stretch", key="val_srso_points",
                     column_config={k: st.column_config.NumberColumn(format="percent")
                                    for k in ("error", "naive_error")})


_other_cpu(rep)
_return_thunk(rep)
cov = rep["coverage"]
st.caption("Coverage of the 90 % prediction intervals on the out-of-sample points of the published curves, "
           "judged on held-out sources: each curve's interval uses the structural sd set without every curve of "
           "its source (its mail thread): "
           + "; ".join(f"{g}: {c['inside']} of {c['points']} ({c['coverage'] * 100:.0f} %)"
                       for g, c in sorted(cov.items())) + ". Structural sd used by every interval: "
           + ", ".join(f"{k}* {v * 100:.1f} %" for k, v in sorted(rep["structural_rel_sd"].items())) + ".")
off = [f"{g} {c['coverage'] * 100:.0f} % ({c['inside']} of {c['points']})" for g, c in sorted(cov.items())
       if c["points"] >= 10 and not 0.80 <= c["coverage"] <= 0.95]
if off:
    st.warning("Coverage on held-out sources outside the 80–95 % a 90 % interval should give: " + "; ".join(off)
               + ". Reported as measured, not tuned back.")


@st.fragment
def _curve(rep: dict) -> None:
    names = charts.oos_curve_names(rep)
    series = st.selectbox("Published curve", names, key="val_oos_series")
    ui.show_chart(charts.oos_curve(state, rep, series), "oos_curve", state)


_curve(rep)
st.subheader("In sample: rows minus the constants they determine")
st.dataframe(pd.DataFrame([{**d, "fitted_constants": ", ".join(d["fitted_constants"]),
                            "reproduced by construction": d["by_construction"]} for d in rep["in_sample"]],
                          columns=["subsystem", "rows", "fitted_constants", "dof", "reproduced by construction"]),
             hide_index=True, width="stretch")
with st.expander("Seed rows left out (source, then row)"):
    st.dataframe(pd.DataFrame([{**r, "protocol": "source left out"} for r in rep["loso"]]
                              + [{**r, "protocol": "row left out"} for r in rep["loro"]],
                              columns=["protocol", "id", "subsystem", "left_out", "measured", "predicted", "unit",
                                       "rel_error", "status", "why"]), hide_index=True, width="stretch")
