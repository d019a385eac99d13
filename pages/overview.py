"""Overview: the chosen path's per-packet cost breakdown against the line-rate budget."""
import streamlit as st

from skbmodel import rest
from skbmodel.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import appstate, ui

st.title(PAGE_BY_SLUG["overview"].heading)
appstate.param_widget("path")


def _headline(params: dict, out: dict, iv: dict) -> list:
    """The metric row above the charts (parameters and model outputs of the scenario)."""
    return [
        ("Throughput (Mpps)", ui.fmt(out["path.mpps"], 4), "packets per second one CPU of this path sustains",
         ui.pm(iv, "path.mpps")),
        ("Cost (ns/packet)", ui.fmt(out["path.ns_per_packet"], 4), "sum of the breakdown below",
         ui.pm(iv, "path.ns_per_packet")),
        ("Budget used (%)", f"{float(out['path.budget_pct']):.0f}", "cost / time between packets at line rate",
         ui.pm(iv, "path.budget_pct")),
        ("Line rate (Mpps)", ui.fmt(out["budget.line_rate_mpps"], 4),
         f"budget {float(out['budget.ns_per_packet']):.1f} ns per packet"),
    ]


ui.model_view("overview", _headline, note=ui.path_note)
with st.expander("What “rest of path” contains, per path"):
    st.markdown("\n".join(f"- {rest.describe(p)}" for p in rest.CONTENTS))
