"""Design: compose a per-packet path from modelled stages, against the line-rate budget and against a
second composition or a modelled path (skbmodel.composer; its charts are skbview.charts.design, its numbers
skbview.tables.design_summary)."""
import streamlit as st

from skbmodel import composer
from skbmodel.evidence import perfprofile
from skbmodel.physics import noise, rest
from skbmodel.links import state as sk_state
from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbview import charts, tables
from skbview.app import appstate, ui
from skbview.safe_text import md_escape

# First, before any widget: a fresh server's first request for /design runs this file alone once, and
# widgets made then would start at their minimum instead of the link's values.
appstate.page_state("design")


st.title(PAGE_BY_SLUG["design"].heading)
st.caption("Compose one CPU's per-packet path from stages; every option is costed by the calibrated sub-models "
           "of the four modelled paths (no stage has a constant of its own). 'as in the start' keeps the "
           "starting path's stage, so each start reproduces its modelled path exactly. With a cpumap hand-off the "
           "cost is the destination CPU's. The sidebar's scenario (recycle ratio, node, link) applies.")

#: The stages in two rows of four columns (seven columns cut the option texts at 1280 px): each stage's
#: choice, titled once, and the numbers its option reads, shown only while that option is chosen.
STAGES = ((("d_from", ()), ("d_rx", ("d_rx_bulk",)), ("d_skb", ("d_skb_bulk",)), ("d_zero", ("d_zero_bytes",))),
          (("d_hand", ()), ("d_free", ("d_free_bulk", "d_free_where")),
           ("d_rest", ("d_rest_ns", "d_stage", "d_stage_pct"))))
TITLES = {"d_from": "Start from", "d_rx": "RX buffer", "d_skb": "skb head", "d_zero": "Zeroing",
          "d_hand": "Hand-off", "d_free": "skb free", "d_rest": "Rest of path"}
SUB_LABELS = {"d_rx_bulk": "Refill bulk N (pages)", "d_skb_bulk": "Bulk N (objects)",
              "d_zero_bytes": "memset K (bytes)", "d_free_bulk": "Bulk N (objects)",
              "d_free_where": "Slab of the freed object", "d_rest_ns": "Custom rest (ns)",
              "d_stage": "A named stage of it, re-priced", "d_stage_pct": "That stage's time (% of its named)"}
#: the sub-controls whose options are shown by their short names
SHORT_NAMED = ("d_free_where", "d_stage")


def _short(key: str):
    return composer.START_SHORT.get if key == "d_from" else composer.OPTION_SHORT.get


def _help(key: str) -> str:
    p = sk_state.PARAMS[key]
    return "  \n".join(f"**{_short(key)(o)}**: {p.label_of(o)}" for o in p.choices)


def _controls(which: str, q) -> None:
    params = tables.design_params_ab(q)[which == "b"]
    shown = set(composer.keys_in_use(params))
    # a number the composition cannot use is shown while a problem names it, so that it can be fixed
    shown |= {k for k in composer.NUMERIC for _, msg in composer.problems(params) if f"({k})" in msg}
    for row in STAGES:
        cols = st.columns(4)
        for col, (key, subs) in zip(cols, row):
            appstate.param_widget(sk_state.key_of(key, which), col, label=TITLES[key], short=_short(key),
                                  help=_help(key), whole_page=True, shown=params[key])
            for sub in subs:
                if sub in shown:
                    appstate.param_widget(sk_state.key_of(sub, which), col, label=SUB_LABELS[sub], shown=params[sub],
                                          short=composer.OPTION_SHORT.get if sub in SHORT_NAMED else None)


_q = appstate.question()
with st.container(key="design_a"):
    _controls("a", _q)
_b = tables.design_params_ab(_q)[1]
appstate.param_widget(sk_state.key_of("path", "b"), label="Compare with (B: the same sidebar scenario, another path)",
                      whole_page=True, shown=_b["path"])
if _b["path"] == "design":  # the second composition's controls only while B is one
    with st.expander("Second composition (B)", expanded=True):
        with st.container(key="design_b"):
            _controls("b", _q)


def _problems(found, which: str) -> None:
    for stage, msg in found:
        st.error(md_escape(f"{which} — {stage}: {msg}"), icon=":material/block:")


def _verdict_text(s: dict, noise_ns: float) -> str:
    """The verdict on B − A as a sentence; when A and B are the same path, that (nothing to resolve)."""
    d, lo, hi = s["delta_ns"], s["delta_lo"], s["delta_hi"]
    if abs(d) < 1e-9 and abs(hi - lo) < 1e-9:  # the same stages and constants: not a small difference, none
        return ("A and B are the same path (every stage costs the same): nothing to compare. Choose another "
                "path or a second composition for B.")
    text = f"Verdict on B − A: {s['verdict']} (noise floor {noise_ns:g} ns)"
    if s["runs"] is None:
        return text + "; more runs would not settle what the model cannot tell."
    if s["runs"] >= noise.MAX_RUNS:
        return text + "; no benchmark of a practical length would see it."
    return text + f"; {s['runs']} runs per variant would see it."


def _draw(q) -> None:
    s = tables.design_summary(q)
    with st.container(key="design_problems"):
        _problems(s["problems_a"], "Composition A")
        _problems(s["problems_b"], "Composition B")
    opts = composer.resolved(q.compare_a.params)
    for stage, msg in rest.notes(opts, composer.veth_page_fraction()):
        st.info(md_escape(f"Composition A — {stage}: {msg}"), icon=":material/remove_circle:")
    if opts["d_rest"] in rest.CONTENTS:
        st.caption(md_escape(f"{rest.describe(opts['d_rest'])} {perfprofile.describe_stages(opts['d_rest'])}"))
    st.caption("Composition A: " + md_escape(" · ".join(
        f"{composer.STAGE_CHOICES[k][0] if k != 'd_free_where' else 'slab'}: {composer.OPTION_LABELS.get(v, v)}"
        for k, v in opts.items())))
    if s["problems_a"] or s["problems_b"]:
        st.info("No numbers for a composition that makes no sense: change the stage named above.")
        ui.chart_tabs("design", q, names=[n for n in charts.chart_labels("design") if n != "breakdown"])
        return
    refused = s["answers"].problem or s["answers"].problem_b
    if refused:  # a placement the machine does not have: the question has no numbers
        with st.container(key="view_refused"):
            st.error(md_escape(f"No numbers: {refused}."))
        return
    # the metric row, and a live control for each stage size in bulk A uses: the chart follows its thumb
    draw_controls = ui.design_live(q, s["answers"])
    with st.container(key="design_verdict"):  # a sentence: too long for a metric tile
        st.markdown(_verdict_text(s, q["noise_ns"]),
                    help="measurable: |Δ| ≥ the noise floor; sure of the sign: the 90 % interval excludes 0; "
                         "runs: benchmark runs per variant that see the difference through the noise floor")
    ui.chart_tabs("design", q)
    draw_controls()


ui.live(_draw)
