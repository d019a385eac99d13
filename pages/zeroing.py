"""Zeroing: memset (rep stos) vs __GFP_ZERO cost vs size and the delta against the noise floor."""
import streamlit as st

from skbmodel import noise
from skbmodel.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import ui

st.title(PAGE_BY_SLUG["zeroing"].heading)


def _headline(params: dict, out: dict, iv: dict) -> list:
    """The metric row above the charts (parameters and model outputs of the scenario)."""
    delta = float(out["zero.delta_ns"])
    verdict = noise.verdict(delta, params["noise_ns"], *iv["zero.delta_ns"])
    return [
        (f"memset {params['zero_bytes']} B (ns)", ui.fmt(out["zero.memset_ns"], 4),
         f"{float(out['zero.memset_cycles']):.1f} cycles", ui.pm(iv, "zero.memset_ns")),
        ("__GFP_ZERO, whole object (ns)", ui.fmt(out["zero.gfp_zero_ns"], 4),
         f"{float(out['zero.gfp_zero_cycles']):.1f} cycles", ui.pm(iv, "zero.gfp_zero_ns")),
        ("Difference (ns/skb)", f"{delta:+.2f}", None, ui.pm(iv, "zero.delta_ns")),
        ("Measurable?", noise.VERDICT_SHORT[verdict],
         f"{verdict}; noise floor {params['noise_ns']:g} ns; sure of the sign when the 90 % interval of the "
         f"difference excludes 0; {int(out['veth.zero_delta_runs'])} runs per variant needed"),
    ]


ui.model_view("zeroing", _headline)
