"""SLUB: per-object cost vs kmem_cache bulk size, one at a time vs bulk, slab boundaries."""
import streamlit as st

from skbmodel import model, state as sk_state
from skbview import appstate, charts, ui

st.title("SLUB kmem_cache: bulk alloc/free")
appstate.page_state("slub")


def _draw(state: dict) -> None:
    """Metrics and charts: the live area, redrawn alone when a control moves."""
    params = sk_state.scenario(state)
    out = model.evaluate(params, sk_state.profile_for(state))
    ui.metrics([
        (f"One at a time, bulk {params['bulk']} (cycles/object)", ui.fmt(out["slub.loop_cycles"], 4),
         f"{float(out['slub.loop_ns']):.2f} ns"),
        (f"Bulk API, bulk {params['bulk']} (cycles/object)", ui.fmt(out["slub.bulk_cycles"], 4),
         f"{float(out['slub.bulk_ns']):.2f} ns"),
        ("Saving (cycles/object)", ui.fmt(out["slub.bulk_gain_cycles"], 4), None),
        ("Objects per slab", f"{float(out['slub.objects_per_slab']):.0f}", "slab bytes // object bytes"),
    ])
    ui.show_charts(charts.figures_for_page("slub", state), state)


ui.live(_draw)
