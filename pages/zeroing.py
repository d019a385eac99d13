"""Zeroing: memset (rep stos) vs __GFP_ZERO cost vs size and the delta against the noise floor."""
import streamlit as st

from skbmodel import model, noise, state as sk_state
from skbview import appstate, charts, ui

st.title("Zeroing an skb: memset vs __GFP_ZERO")
appstate.page_state("zeroing")


def _draw(state: dict) -> None:
    """Metrics and charts: the live area, redrawn alone when a control moves."""
    params = sk_state.scenario(state)
    out = model.evaluate(params, sk_state.profile_for(state))
    delta = float(out["zero.delta_ns"])
    ui.metrics([
        (f"memset {params['zero_bytes']} B (ns)", ui.fmt(out["zero.memset_ns"], 4), f"{float(out['zero.memset_cycles']):.1f} cycles"),
        ("__GFP_ZERO, whole object (ns)", ui.fmt(out["zero.gfp_zero_ns"], 4), f"{float(out['zero.gfp_zero_cycles']):.1f} cycles"),
        ("Difference (ns/skb)", f"{delta:+.2f}", None),
        ("Measurable?", "yes" if bool(noise.measurable(delta, params["noise_ns"])) else "no",
         f"noise floor {params['noise_ns']:g} ns; {int(out['veth.zero_delta_runs'])} runs per variant needed"),
    ])
    ui.show_charts(charts.figures_for_page("zeroing", state), state)


ui.live(_draw)
