"""Validation: every seed measurement vs the model (table and parity plot)."""
import pandas as pd
import streamlit as st

from skbmodel import validation
from skbview import appstate, charts, ui


@st.cache_data(show_spinner=False)
def _rows() -> list[dict]:
    # independent of the scenario: each row is evaluated under its own conditions
    return validation.validate()


st.title("Validation against the seed measurements")
state = appstate.page_state("validation")
rows = _rows()
n_ok = sum(r["ok"] for r in rows)
ui.metrics([
    ("Rows within tolerance", f"{n_ok} / {len(rows)}", None),
    ("Largest |error| (%)", f"{max(abs(r['rel_error']) for r in rows) * 100:.2f}", None),
    ("Rows not covered", f"{len(validation.NOT_COVERED)}",
     "; ".join(f"{k}: {v}" for k, v in validation.NOT_COVERED.items())),
])


@st.fragment
def _table(rows: list[dict]) -> None:
    systems = sorted({r["system"] for r in rows})
    pick = st.multiselect("Systems", systems, default=systems, key="val_systems")
    df = pd.DataFrame([r for r in rows if r["system"] in pick],
                      columns=["id", "system", "quantity", "profile", "measured", "predicted", "unit", "rel_error",
                               "tolerance", "ok", "note"])
    df["rel_error"] = df["rel_error"] * 100
    st.dataframe(df, hide_index=True, width="stretch", key="val_table",
                 column_config={"rel_error": st.column_config.NumberColumn("error (%)", format="%+.2f"),
                                "measured": st.column_config.NumberColumn(format="%.6g"),
                                "predicted": st.column_config.NumberColumn(format="%.6g")})


_table(rows)
for name, fn in charts.PAGE_CHARTS["validation"]:
    ui.show_chart(fn(state, rows), name, state)
