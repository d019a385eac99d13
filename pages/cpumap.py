"""page_pool + cpumap: source, destination and drop rates vs recycle ratio; XDP_PASS; NUMA."""
import streamlit as st

from skbmodel import cpumap, state as sk_state
from skbmodel.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import ui

st.title(PAGE_BY_SLUG["cpumap"].heading)


def _refuse(state: dict) -> str | None:
    """A cross-node placement on a machine with one NUMA node has no numbers: why."""
    why = cpumap.placement_problem(sk_state.profile_for(state), state.get("numa"))
    return f"No numbers: {why}." if why else None


def _headline(params: dict, out: dict, iv: dict) -> list:
    """The metric row above the charts (parameters and model outputs of the scenario)."""
    code = int(round(float(out["cpumap.bottleneck"])))
    return [
        ("Source CPU rx (Mpps)", ui.fmt(out["cpumap.src_mpps"], 4), None, ui.pm(iv, "cpumap.src_mpps")),
        ("Destination CPU rx (Mpps)", ui.fmt(out["cpumap.dst_mpps"], 4), None, ui.pm(iv, "cpumap.dst_mpps")),
        ("Drops (Mpps)", ui.fmt(out["cpumap.drop_mpps"], 4), "source − destination", ui.pm(iv, "cpumap.drop_mpps")),
        ("XDP_PASS on one CPU (Mpps)", ui.fmt(out["xdp_pass.mpps"], 4), None, ui.pm(iv, "xdp_pass.mpps")),
        ("Bottleneck", cpumap.BOTTLENECK[code].split(" (")[0], cpumap.BOTTLENECK[code]
         + f"; kthread asleep at {float(out['cpumap.sleep_fraction']):.0%} of the flushes", None),
    ]


ui.model_view("cpumap", _headline, refuse=_refuse)
