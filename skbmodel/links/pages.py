"""The dashboard's pages: one registry read by the dashboard, the page scripts, the share link's
headline, the report and the CLI export.

Each :class:`Page` holds what the rest of the code needs to know about a page: its slug (the URL path
and the ``page`` parameter of a link), its navigation title, its heading, its icon, the parameters an
exported file name carries and the headline output a share link records.  Its figure builders are
registered under the same slug in :data:`skbview.charts.PAGE_CHARTS` (the model layer has no Plotly).
To add a page: a :class:`Page` here, its builders there, and ``pages/<slug>.py``.
"""
from __future__ import annotations

import dataclasses

from .keys import key_of


@dataclasses.dataclass(frozen=True)
class Page:
    slug: str
    title: str                            # navigation and report section title
    heading: str                          # the page's own title at the top of the page
    icon: str = ""                        # Streamlit material icon
    #: the parameters an exported file name carries (the ones the page's charts vary with); the rest of
    #: the scenario is pinned by the short hash of the whole share link at the end of the name
    key_params: tuple[str, ...] = ("cpu",)
    #: ``(model output, label)`` of the first metric of the page's metric row: the ``h`` of a share link.
    #: None for a page that shows no scenario output (its links carry no ``h``).
    headline: tuple[str, str] | None = None
    #: ``(model output, label)`` of the page's numbers: its metric row, the plain-text summary (``eval --text``,
    #: "Copy as text") and the report quote the same answers (:func:`skbmodel.answers.of_state`), headline first.
    summary: tuple[tuple[str, str], ...] = ()
    #: whether the page shows a scenario B (its controls, its numbers): only then does its link carry ``b_`` keys
    has_b: bool = False
    #: outputs the page's charts draw for each scenario, with their intervals, beside its metrics: they come
    #: with the answer (:attr:`skbmodel.answers.Answers.drawn`), so a chart and a metric cannot disagree
    drawn: tuple[str, ...] = ()


#: The scenario pages, in navigation order: each has charts, exports and a ``page=<slug>`` share link.
PAGES: tuple[Page, ...] = (
    Page("overview", "Overview", "SKB memory lifecycle: per-packet cost", ":material/dashboard:",
         ("cpu", "path", "bulk", "zero"), ("path.mpps", "Throughput (Mpps)"),
         (("path.mpps", "Throughput"), ("path.ns_per_packet", "Cost"), ("path.budget_pct", "Budget used"),
          ("budget.line_rate_mpps", "Line rate"))),
    Page("slub", "SLUB bulk", "SLUB kmem_cache: bulk alloc/free", ":material/view_module:",
         ("cpu", "bulk"), ("slub.loop_cycles", "One at a time (cycles/object)"),
         (("slub.loop_cycles", "One at a time"), ("slub.bulk_cycles", "Bulk API"),
          ("slub.bulk_gain_cycles", "Saving"), ("slub.objects_per_slab", "Objects per slab"))),
    Page("zeroing", "Zeroing", "Zeroing an skb: memset vs __GFP_ZERO", ":material/format_color_reset:",
         ("cpu", "zero", "zero_bytes"), ("zero.memset_ns", "memset (ns)"),
         (("zero.memset_ns", "memset"), ("zero.gfp_zero_ns", "__GFP_ZERO, whole object"),
          ("zero.delta_ns", "Difference"))),
    Page("veth", "veth XDP_BATCH", "veth XDP_PASS with bulk-allocated skbs", ":material/sync_alt:",
         ("cpu", "xdp_batch", "zero", "pp_recycle"), ("veth.mpps", "veth throughput (Mpps)"),
         (("veth.mpps", "Throughput"), ("veth.ns_per_packet", "Cost"),
          ("veth.zero_delta_ns", "memset - __GFP_ZERO"), ("veth.zero_delta_runs", "Runs to see it"))),
    Page("cpumap", "page_pool + cpumap", "cpumap redirect and page_pool recycling", ":material/call_split:",
         ("cpu", "place", "pp_recycle"), ("cpumap.src_mpps", "Source CPU rx (Mpps)"),
         (("cpumap.src_mpps", "Source CPU rx"), ("cpumap.dst_mpps", "Destination CPU rx"),
          ("cpumap.drop_mpps", "Drops"), ("xdp_pass.mpps", "XDP_PASS on one CPU"),
          ("cpumap.bottleneck", "Bottleneck"), ("cpumap.sleep_fraction", "kthread asleep"))),
    Page("kfree", "kfree_skb_list", "kfree_skb_list bulk free on the qdisc drop path", ":material/delete_sweep:",
         ("cpu", "kfl_bulk", "drop_batch", "clone_frac"), ("kfree_skb_list.mpps", "Injection rate (Mpps)"),
         (("kfree_skb_list.mpps", "Injection rate"), ("kfree_skb_list.ns_per_packet", "Cost"),
          ("kfree_skb_list.drop_fraction", "Dropped"), ("kfree_skb_list.saving_ns", "Saving vs no bulk"))),
    # compare: the file name also carries every parameter where A and B differ (skbview.report)
    Page("compare", "Compare A/B", "Compare scenarios A and B", ":material/compare:",
         ("cpu", key_of("cpu", "b")), ("path.ns_per_packet", "Overview path (ns/packet)"),
         (("path.ns_per_packet", "Overview path, A"),), has_b=True),
    Page("validation", "Validation", "Validation against the seed measurements", ":material/fact_check:", ()),
    Page("design", "Design", "Design your own path", ":material/account_tree:",
         ("cpu", "d_from", "d_rx", "d_skb", "d_zero", "d_hand", "d_free", "d_rest"),
         ("path.mpps", "Throughput (Mpps)"),
         (("path.mpps", "Throughput"), ("path.ns_per_packet", "Cost"), ("path.budget_pct", "Budget used")),
         has_b=True,
         drawn=("path.ns_per_packet", "path.mpps", "path.budget_pct", "budget.ns_per_packet",
                "budget.line_rate_mpps")),
    Page("grid", "Question grid", "Questions in one view: up to three parameters at once", ":material/grid_on:",
         ("cpu", "g1", "g2", "g3", "g_out"), ("path.ns_per_packet", "Baseline A (ns/packet)"),
         (("path.ns_per_packet", "Baseline A cost"),)),
)

#: Bring-your-own-measurements page: no charts to export and no ``page`` parameter; its share link
#: opens /calibrate and carries the custom profile as ``prof``.
CALIBRATE = Page("calibrate", "Calibrate", "Calibrate: fit a CPU profile to your measurements", ":material/tune:", ())

#: A kernel patch in, its predicted difference out: no scenario of its own (no charts, no ``page`` parameter);
#: its answer links to the Compare page, which carries the patch's A and B.
PATCH = Page("patch", "Patch Δ", "Patch in, Δ out: a kernel patch's predicted per-packet difference",
             ":material/difference:", ())
#: The tool pages after the scenario pages, in navigation order.
TOOLS: tuple[Page, ...] = (CALIBRATE, PATCH)

SLUGS: tuple[str, ...] = tuple(p.slug for p in PAGES)
BY_SLUG: dict[str, Page] = {p.slug: p for p in PAGES + TOOLS}
DEFAULT_PAGE = PAGES[0].slug
