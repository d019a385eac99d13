"""SLUB: per-object cost vs kmem_cache bulk size, one at a time vs bulk, slab boundaries."""
import streamlit as st

from skbmodel.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import ui

st.title(PAGE_BY_SLUG["slub"].heading)


def _headline(params: dict, out: dict, iv: dict) -> list:
    """The metric row above the charts (parameters and model outputs of the scenario)."""
    return [
        (f"One at a time, bulk {params['bulk']} (cycles/object)", ui.fmt(out["slub.loop_cycles"], 4),
         f"{float(out['slub.loop_ns']):.2f} ns", ui.pm(iv, "slub.loop_cycles")),
        (f"Bulk API, bulk {params['bulk']} (cycles/object)", ui.fmt(out["slub.bulk_cycles"], 4),
         f"{float(out['slub.bulk_ns']):.2f} ns", ui.pm(iv, "slub.bulk_cycles")),
        ("Saving (cycles/object)", ui.fmt(out["slub.bulk_gain_cycles"], 4), None, ui.pm(iv, "slub.bulk_gain_cycles")),
        ("Objects per slab", f"{float(out['slub.objects_per_slab']):.0f}", "slab bytes // object bytes"),
    ]


ui.model_view("slub", _headline)
