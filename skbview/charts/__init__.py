"""Every Plotly figure of the dashboard, built from :mod:`skbmodel`, grouped by page.

:mod:`.base` holds the one template and the shared helpers; each page's builders live in the module
named after it.  :data:`PAGE_CHARTS` registers them under the slugs of :data:`skbmodel.links.pages.PAGES`
and :func:`figures_for_page` builds a page's figures for a question (:class:`skbmodel.question.Question`, made
by the entry point: the page's start, the report, the export); a builder renders it and asks no question.
"""
from __future__ import annotations


import plotly.graph_objects as go

from skbmodel.links import state as sk_state
from skbmodel.question import Question

from .ab import compare_difference, design_difference
from .base import BAND_NAME, COLORS, PATH_LABELS, TEMPLATE, zero_based
from .calibrate import fit_parity, fit_residuals
from .compare import TIME_LABELS, TIME_OUTPUTS, compare_breakdown, compare_delta
from .cpumap import cpumap_placement, cpumap_rates, cpumap_rates_live
from .design import design_breakdown, design_breakdown_live, napi_defer_rate
from .grid import grid_delta, grid_values
from .kfree import kfree_clones, kfree_drop_batch, kfree_drop_batch_live
from .overview import overview_breakdown, overview_paths
from .slub import slub_cost_vs_size, slub_gain, slub_gain_live, slub_per_object, slub_per_object_live
from .validation import oos_curve, oos_curve_names, oos_summary, validation_errors, validation_parity
from .veth import veth_batch, veth_batch_live, veth_heatmap, veth_heatmap_live
from .zeroing import seed_zero_delta_ns, zeroing_cost, zeroing_cost_live, zeroing_delta, zeroing_delta_live

__all__ = [
    "TEMPLATE", "COLORS", "BAND_NAME", "PATH_LABELS", "PAGE_CHARTS", "compare_difference", "design_difference",
    "figures_for_page", "figure_for", "chart_labels", "TIME_LABELS", "TIME_OUTPUTS", "grid_values", "grid_delta",
    "overview_breakdown", "overview_paths", "slub_per_object", "slub_gain", "slub_cost_vs_size", "zeroing_cost",
    "zeroing_delta",
    "seed_zero_delta_ns", "veth_batch", "veth_heatmap", "cpumap_rates", "cpumap_placement", "kfree_drop_batch",
    "kfree_clones", "compare_delta", "compare_breakdown", "validation_parity", "validation_errors", "oos_summary",
    "oos_curve_names", "oos_curve", "fit_residuals", "fit_parity", "design_breakdown", "napi_defer_rate",
    "LIVE_CONTROLS", "LIVE_DESIGN",
]

#: The figure builders of each page, keyed by the slugs of :data:`skbmodel.links.pages.PAGES` (every page there
#: has an entry here: tests/test_layers.py checks it): ``(short name, tab label, builder)``.  The short name
#: is the chart's name in export file names and element keys; the label names its tab on the page.
PAGE_CHARTS = {
    "overview": (("breakdown", "Cost breakdown", overview_breakdown), ("paths", "All paths", overview_paths)),
    "slub": (("per_object", "Cost per object vs bulk", slub_per_object), ("bulk_gain", "Bulk saving", slub_gain),
             ("cost_vs_size", "Cost vs object size", slub_cost_vs_size)),
    "zeroing": (("cost_vs_size", "Cost vs size", zeroing_cost), ("delta_vs_noise", "Difference vs noise",
                                                                  zeroing_delta)),
    "veth": (("mpps_vs_batch", "Throughput vs batch", veth_batch), ("batch_heatmap", "Batch × bytes zeroed",
                                                                     veth_heatmap)),
    "cpumap": (("rates_vs_recycle", "Rates vs recycle ratio", cpumap_rates),
               ("placement", "Placement effect", cpumap_placement)),
    "kfree": (("pps_vs_drop_batch", "Rate vs drop_batch", kfree_drop_batch), ("clones", "Cloned skbs",
                                                                             kfree_clones)),
    "compare": (("ab_difference", "Difference", compare_difference), ("ab_delta", "Time per packet, B − A",
                                                                      compare_delta),
                ("ab_breakdown", "Cost breakdown, A and B", compare_breakdown)),
    "validation": (("parity", "Model vs measured", validation_parity), ("errors", "Errors", validation_errors),
                   ("oos_summary", "Out of sample", oos_summary), ("oos_curve", "One curve", oos_curve)),
    "design": (("breakdown", "Breakdown vs budget", design_breakdown), ("difference", "B − A", design_difference),
               ("napi_cache", "NAPI skb cache", napi_defer_rate)),
    "grid": (("values", "Values", grid_values), ("delta", "Difference to A", grid_delta)),
}

#: The page's live control (skbview.app.live): ``(parameter it moves, choice swept along with it or None,
#: {short chart name: patch function})``.  A patch function (:mod:`.live`) gives, for every value of the
#: parameter at once, what of that chart moves with it; a chart without one is redrawn at release only.
LIVE_CONTROLS = {
    "slub": ("bulk", None, {"per_object": slub_per_object_live, "bulk_gain": slub_gain_live}),
    "veth": ("xdp_batch", "zero", {"mpps_vs_batch": veth_batch_live, "batch_heatmap": veth_heatmap_live}),
    "zeroing": ("zero_bytes", None, {"cost_vs_size": zeroing_cost_live, "delta_vs_noise": zeroing_delta_live}),
    "cpumap": ("pp_recycle", None, {"rates_vs_recycle": cpumap_rates_live}),
    "kfree": ("drop_batch", None, {"pps_vs_drop_batch": kfree_drop_batch_live}),
}

#: The Design page's live controls: each of composition A's stage sizes in bulk (while its stage uses it), and
#: the charts that follow it (the sweep of :func:`skbmodel.answers.design_sweep`).
LIVE_DESIGN = (("d_rx_bulk", "d_skb_bulk", "d_free_bulk"), {"breakdown": design_breakdown_live})


def chart_labels(page: str) -> dict[str, str]:
    """``{short chart name: tab label}`` of ``page``'s charts, in the page's order."""
    return {name: label for name, label, _ in _charts_of(page)}


def _charts_of(page: str):
    if page not in PAGE_CHARTS:
        raise ValueError(f"unknown page {page!r}; pages: {', '.join(PAGE_CHARTS)}")
    return PAGE_CHARTS[page]


def _full(q: Question, page: str) -> Question:
    """``q`` as ``page``'s charts read it: that page's question, with every key the state leaves out at its
    default (nothing is resolved again: the state's defaults are its question's)."""
    q = q.on_page(page)
    missing = {k: v for k, v in sk_state.defaults(q.get("cpu")).items() if k not in q}
    return q.viewed_as({**missing, **q.state}) if missing else q


def _build(fn, q: Question) -> go.Figure:
    fig = fn(q)
    if q.get("yzero"):
        zero_based(fig)
    return fig


def figure_for(page: str, name: str, q: Question) -> go.Figure:
    """The one chart ``name`` of ``page`` for the question ``q`` (what a page draws: only its open chart)."""
    fn = next((f for n, _, f in _charts_of(page) if n == name), None)
    if fn is None:
        raise ValueError(f"page {page!r} has no chart {name!r}; charts: {', '.join(chart_labels(page))}")
    return _build(fn, _full(q, page))


def figures_for_page(page: str, q: Question) -> list[tuple[str, go.Figure]]:
    """``[(short chart name, figure), ...]`` for every chart of ``page`` (a slug of ``skbmodel.links.pages.PAGES``)."""
    full = _full(q, page)
    return [(name, _build(fn, full)) for name, _, fn in _charts_of(page)]
