"""Every Plotly figure of the dashboard, built from :mod:`skbmodel`, grouped by page.

:mod:`.base` holds the one template and the shared helpers; each page's builders live in the module
named after it.  :data:`PAGE_CHARTS` registers them under the slugs of :data:`skbmodel.pages.PAGES`
and :func:`figures_for_page` builds a page's figures for a scenario ``state``.
"""
from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from skbmodel import state as st_mod

from .ab import compare_difference, design_difference
from .base import BAND_NAME, COLORS, PATH_LABELS, TEMPLATE, zero_based
from .calibrate import fit_parity, fit_residuals
from .compare import TIME_LABELS, TIME_OUTPUTS, compare_breakdown, compare_delta
from .cpumap import cpumap_numa, cpumap_rates
from .design import design_breakdown, napi_defer_rate
from .grid import grid_delta, grid_values
from .kfree import kfree_clones, kfree_drop_batch
from .overview import overview_breakdown, overview_paths
from .slub import slub_cost_vs_size, slub_gain, slub_per_object
from .validation import oos_curve, oos_curve_names, oos_summary, validation_errors, validation_parity
from .veth import veth_batch, veth_heatmap
from .zeroing import seed_zero_delta_ns, zeroing_cost, zeroing_delta

__all__ = [
    "TEMPLATE", "COLORS", "BAND_NAME", "PATH_LABELS", "PAGE_CHARTS", "compare_difference", "design_difference",
    "figures_for_page", "TIME_LABELS", "TIME_OUTPUTS", "grid_values", "grid_delta",
    "overview_breakdown", "overview_paths", "slub_per_object", "slub_gain", "slub_cost_vs_size", "zeroing_cost",
    "zeroing_delta",
    "seed_zero_delta_ns", "veth_batch", "veth_heatmap", "cpumap_rates", "cpumap_numa", "kfree_drop_batch",
    "kfree_clones", "compare_delta", "compare_breakdown", "validation_parity", "validation_errors", "oos_summary",
    "oos_curve_names", "oos_curve", "fit_residuals", "fit_parity", "design_breakdown", "napi_defer_rate",
]

#: The figure builders of each page, keyed by the slugs of :data:`skbmodel.pages.PAGES` (every page there
#: has an entry here: tests/test_layers.py checks it).
PAGE_CHARTS = {
    "overview": (("breakdown", overview_breakdown), ("paths", overview_paths)),
    "slub": (("per_object", slub_per_object), ("bulk_gain", slub_gain), ("cost_vs_size", slub_cost_vs_size)),
    "zeroing": (("cost_vs_size", zeroing_cost), ("delta_vs_noise", zeroing_delta)),
    "veth": (("mpps_vs_batch", veth_batch), ("batch_heatmap", veth_heatmap)),
    "cpumap": (("rates_vs_recycle", cpumap_rates), ("numa", cpumap_numa)),
    "kfree": (("pps_vs_drop_batch", kfree_drop_batch), ("clones", kfree_clones)),
    "compare": (("ab_difference", compare_difference), ("ab_delta", compare_delta),
                ("ab_breakdown", compare_breakdown)),
    "validation": (("parity", validation_parity), ("errors", validation_errors), ("oos_summary", oos_summary),
                   ("oos_curve", oos_curve)),
    "design": (("breakdown", design_breakdown), ("difference", design_difference), ("napi_cache", napi_defer_rate)),
    "grid": (("values", grid_values), ("delta", grid_delta)),
}


def figures_for_page(page: str, state: Mapping) -> list[tuple[str, go.Figure]]:
    """``[(short chart name, figure), ...]`` for every chart of ``page`` (a slug of ``skbmodel.pages.PAGES``)."""
    if page not in PAGE_CHARTS:
        raise ValueError(f"unknown page {page!r}; pages: {', '.join(PAGE_CHARTS)}")
    full = st_mod.defaults(state.get("cpu"))
    full.update(state)
    figs = [(name, fn(full)) for name, fn in PAGE_CHARTS[page]]
    if full.get("yzero"):
        for _, fig in figs:
            zero_based(fig)
    return figs
