"""Design: compose a per-packet path from modelled stages, against the line-rate budget and against a
second composition or a modelled path (skbmodel.design; its charts are skbview.charts.design, its numbers
skbview.tables.design_summary)."""
import streamlit as st

from skbmodel import design
from skbmodel import state as sk_state
from skbmodel.pages import BY_SLUG as PAGE_BY_SLUG
from skbview import charts, tables
from skbview.app import appstate, ui
from skbview.safe_text import md_escape

B = sk_state.B_PREFIX

# First, before any widget: a fresh server's first request for /design runs this file alone once, and
# widgets made then would start at their minimum instead of the link's values.
appstate.page_state("design")

# The page shows the composition: the share link says so (path=design), so `eval` of the link and the
# Overview give the page's numbers.
_ss = st.session_state
if _ss.get("path") != "design":
    _ss["path"] = "design"
    _ss.get(appstate.STORE, {})["path"] = "design"

st.title(PAGE_BY_SLUG["design"].heading)
st.caption("Compose one CPU's per-packet path from stages; every option is costed by the calibrated sub-models "
           "of the four modelled paths (no stage has a constant of its own). 'as in the starting path' keeps "
           "the start's stage, so each start reproduces its modelled path exactly. With a cpumap hand-off the "
           "cost is the destination CPU's. The sidebar's scenario (recycle ratio, node, link) applies.")

STAGES = (("Start", ("d_from",)), ("RX buffer", ("d_rx", "d_rx_bulk")), ("skb head", ("d_skb", "d_skb_bulk")),
          ("Zeroing", ("d_zero", "d_zero_bytes")), ("Hand-off", ("d_hand",)),
          ("skb free", ("d_free", "d_free_bulk", "d_free_where")), ("Rest of path", ("d_rest", "d_rest_ns")))


def _controls(prefix: str) -> None:
    cols = st.columns(len(STAGES))
    for col, (title, keys) in zip(cols, STAGES):
        col.markdown(f"**{title}**")
        for k in keys:
            appstate.param_widget(prefix + k, col)


with st.container(key="design_a"):
    _controls("")
appstate.param_widget(B + "path", label="Compare with (B: the same sidebar scenario, another path)")
with st.expander("Second composition (B, when 'Design (composed)' is chosen above)", expanded=False):
    with st.container(key="design_b"):
        _controls(B)


def _problems(found, which: str) -> None:
    for stage, msg in found:
        st.error(md_escape(f"{which} — {stage}: {msg}"), icon=":material/block:")


def _draw(state: dict) -> None:
    s = tables.design_summary(state)
    with st.container(key="design_problems"):
        _problems(s["problems_a"], "Composition A")
        _problems(s["problems_b"], "Composition B")
    opts = design.resolved(sk_state.scenario(state))
    st.caption("Composition A: " + md_escape(" · ".join(
        f"{design.STAGE_CHOICES[k][0] if k != 'd_free_where' else 'slab'}: {design.OPTION_LABELS.get(v, v)}"
        for k, v in opts.items())))
    if s["problems_a"] or s["problems_b"]:
        st.info("No numbers for a composition that makes no sense: change the stage named above.")
        figs = [(n, f) for n, f in charts.figures_for_page("design", state) if n != "breakdown"]
        ui.show_charts(figs, state)
        return
    a, iv = s["a"], s["iv_a"]
    lo, hi = s["delta_lo"], s["delta_hi"]
    ui.metrics([
        ("Throughput (Mpps)", ui.fmt(a["path.mpps"], 4), "packets per second one CPU of this path sustains",
         ui.pm(iv, "path.mpps")),
        ("Cost (ns/packet)", ui.fmt(a["path.ns_per_packet"], 4), "sum of the stages", ui.pm(iv, "path.ns_per_packet")),
        ("Budget used (%)", f"{float(a['path.budget_pct']):.0f}", "cost / time between packets at line rate",
         ui.pm(iv, "path.budget_pct")),
        ("B (ns/packet)", ui.fmt(s["b"]["path.ns_per_packet"], 4), tables.design_b_label(state),
         ui.pm(s["iv_b"], "path.ns_per_packet")),
        ("Δ B − A (ns/packet)", f"{s['delta_ns']:+.2f}",
         f"90 % interval {lo:+.2f} to {hi:+.2f} ns/packet (paired: A and B see the same constants)",
         ui.pm_text((hi - lo) / 2)),
    ])
    with st.container(key="design_verdict"):  # a sentence: too long for a metric tile
        st.markdown(f"Verdict on B − A — {s['verdict']} (noise floor {state['noise_ns']:g} ns; "
                    f"runs per variant to resolve it: {s['runs']})",
                    help="measurable: |Δ| ≥ the noise floor; sure of the sign: the 90 % interval excludes 0")
    ui.show_charts(charts.figures_for_page("design", state), state)


ui.live(_draw)
