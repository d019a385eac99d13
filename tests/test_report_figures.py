"""Figures ready for a report: one legend entry per band, bands told apart by pattern and lightness (also
in greyscale), a zero-based y axis kept in the link, the delta annotated where a chart shows two variants,
a footer with what differs from the defaults and the versions; the light report under 1 MB."""
from __future__ import annotations

import base64
import re

import numpy as np
import pytest

import skbmodel
from skbmodel import answers
from skbmodel import model
from skbmodel.question import Question
from skbmodel.machine import profile as P
from skbmodel.links import shortlink, state as sk_state
from skbview import charts, report
from skbview.charts.cpumap import RECYCLE_X


def _fig(page: str, name: str, query: str = ""):
    st, warnings = sk_state.decode(f"page={page}&{query}")
    assert warnings == []
    return dict(charts.figures_for_page(page, Question.of_state(st)))[name], st


def _bands(fig) -> list:
    return [t for t in fig.data if getattr(t, "fill", None) in ("toself", "tonexty")]


def _lightness(color: str) -> float:
    """CIE L* (0 black .. 100 white) of ``#rrggbb``: what a greyscale print keeps of a colour."""
    rgb = [int(color.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    return 116 * y ** (1 / 3) - 16 if y > 0.008856 else 903.3 * y


@pytest.mark.parametrize("page,name", [("veth", "mpps_vs_batch"), ("slub", "per_object"), ("zeroing", "cost_vs_size"),
                                       ("cpumap", "rates_vs_recycle"), ("kfree", "clones")])
def test_one_legend_entry_per_band_and_a_pattern_each(page, name):
    fig, _ = _fig(page, name)
    bands = _bands(fig)
    assert len(bands) >= 2
    names = [b.name for b in bands]
    assert all(b.showlegend is not False for b in bands), names
    assert len(set(names)) == len(names), names  # one entry each, none shared
    shapes = [b.fillpattern.shape for b in bands]
    assert all(shapes) and len(set(shapes)) == len(shapes), shapes  # overlapping bands stay apart


def test_veth_bands_are_named_by_their_curve_and_kind():
    fig, _ = _fig("veth", "mpps_vs_batch")
    names = sorted(b.name for b in _bands(fig))
    assert names == sorted(["memset (rep stos): 90 % interval", "__GFP_ZERO: 90 % interval",
                            "memset (rep stos): ±2 ns noise", "__GFP_ZERO: ±2 ns noise"]), names


def test_the_two_zeroing_colours_differ_in_lightness_not_only_hue():
    c = charts.COLORS
    for x, y in (("memset", "gfp_zero"), ("a", "b"), ("src", "dst"), ("dst", "drop"), ("src", "drop")):
        assert abs(_lightness(c[x]) - _lightness(c[y])) >= 15, (x, y, c[x], c[y])


def test_zero_based_axis_is_a_link_parameter():
    fig0, _ = _fig("veth", "mpps_vs_batch")
    fig1, st = _fig("veth", "mpps_vs_batch", "yzero=1")
    assert fig0.layout.yaxis.rangemode in (None, "normal")
    assert fig1.layout.yaxis.rangemode == "tozero"
    assert "yzero=1" in shortlink.shorten(answers.share_query(st))
    assert sk_state.decode(shortlink.shorten(answers.share_query(st)))[0]["yzero"] == 1
    heat, _ = _fig("veth", "batch_heatmap", "yzero=1")  # a heatmap's y is a grid, not a quantity from zero
    assert heat.layout.yaxis.rangemode in (None, "normal")


def test_veth_chart_annotates_the_delta_at_the_current_batch():
    fig, st = _fig("veth", "mpps_vs_batch", "xdp_batch=8")
    notes = [a for a in fig.layout.annotations if a.name == "delta"]
    assert len(notes) == 1
    prof = P.load_profile("e5-1650v4")
    m = float(model.evaluate({"xdp_batch": 8, "zero": "memset"}, prof)["veth.mpps"])
    g = float(model.evaluate({"xdp_batch": 8, "zero": "gfp_zero"}, prof)["veth.mpps"])
    assert f"{m - g:+.3f} Mpps" in notes[0].text and f"{(m / g - 1) * 100:+.1f} %" in notes[0].text


@pytest.mark.parametrize("page,name,query", [("compare", "ab_breakdown", "b_zero=memset"),
                                             ("design", "breakdown", "path=design&d_from=cpumap&b_path=cpumap"),
                                             ("zeroing", "cost_vs_size", "")])
def test_charts_of_two_variants_annotate_the_delta(page, name, query):
    fig, _ = _fig(page, name, query)
    notes = [a for a in fig.layout.annotations if a.name == "delta"]
    assert len(notes) == 1 and "Δ" in notes[0].text and re.search(r"[+-]\d", notes[0].text)


def test_footer_has_what_differs_from_the_defaults_and_the_versions():
    fig, _ = _fig("veth", "mpps_vs_batch", "pp_recycle=0.5&frame_bytes=128")
    cap = [a for a in fig.layout.annotations if a.name == "caption"][0].text.replace("<br>", " ")
    for part in ("zero=gfp_zero", "pp_recycle=0.5", "frame_bytes=128", f"skbmodel {skbmodel.__version__}",
                 f"profile e5-1650v4 version {P.profile_version('e5-1650v4')}"):
        assert part in cap, (part, cap)
    assert "link_gbps" not in cap  # a default that does not matter to the chart is not listed


def test_light_report_is_static_and_under_1_mb():
    st, _ = sk_state.decode("page=veth&zero=memset&b_zero=gfp_zero")
    html = report.build_html_report(st, light=True)
    assert len(html.encode()) < 1_000_000, len(html.encode())
    assert "<script" not in html.lower()  # no plotting library, no code at all
    imgs = re.findall(r'<img id="([^"]+)"[^>]*src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert len(imgs) == len(report.all_figures(st))
    for _, data in imgs:
        assert base64.b64decode(data).lstrip().startswith(b"<svg")
    assert shortlink.shorten(answers.share_query(st)).replace("&", "&amp;") in html


def test_kfree_bulk_lines_that_lie_together_are_said_to_and_drawn_apart():
    """The KFREE_SKB_BULK_SIZE lines lie within a fraction of a per cent of each other (a drop list shorter
    than the bulk fills none): each has its own dash, and the chart says they coincide, and from where."""
    from skbview.charts.kfree import COINCIDE_REL, DROP_X, coincide_note

    fig, _ = _fig("kfree", "pps_vs_drop_batch")
    lines = [t for t in fig.data if t.mode == "lines" and not t.fill and t.name.startswith("KFREE_SKB_BULK_SIZE")]
    assert len(lines) == 3 and len({t.line.dash for t in lines}) == 3
    ys = np.array([t.y for t in lines])
    spread = (ys.max(axis=0) - ys.min(axis=0)) / ys.min(axis=0)
    assert spread.max() < COINCIDE_REL
    notes = [a.text for a in fig.layout.annotations if (a.text or "").startswith("KFREE_SKB_BULK_SIZE")]
    assert len(notes) == 1 and "8, 16, 64" in notes[0]
    assert f"the same up to drop_batch {DROP_X[np.argmax(spread > 1e-12) - 1]}" in notes[0]
    # lines that part by more than COINCIDE_REL get no note
    far = np.vstack([ys[0], ys[0] * (1 + 2 * COINCIDE_REL)])
    assert coincide_note(np.array([8, 16]), far) == ""


def _line_style(t) -> tuple:
    sym = None
    if "markers" in (t.mode or ""):
        sym = t.marker.symbol if isinstance(t.marker.symbol, str) or t.marker.symbol is None \
            else tuple(t.marker.symbol)
    return t.line.dash or "solid", sym, t.xaxis or "x", t.yaxis or "y"


@pytest.mark.parametrize("query", ["cpu=xeon-platinum-iavf", "cpu=xeon-platinum-iavf&place=other_socket",
                                   "cpu=epyc-9684x&pp_recycle=0.3"])
def test_the_cpumap_lines_that_run_together_each_carry_a_marker_shape_of_their_own(query):
    """On the cpumap rates chart of a machine with two placements the destination's two and XDP_PASS lie within
    a few percent of the axis of each other, where dashes merge in a greyscale print: each has its own filled
    marker shape, at points none of the others marks."""
    fig, _ = _fig("cpumap", "rates_vs_recycle", query)
    lines = {t.name.split(" (")[0]: t for t in fig.data if t.name and (
        t.name.startswith("destination CPU rx, ") or t.name.startswith("XDP_PASS on one CPU (")) and not t.fill}
    assert len(lines) == 3, sorted(lines)
    ys = np.array([np.asarray(t.y, dtype=float) for t in lines.values()])
    top = max(float(np.max(np.asarray(t.y, dtype=float))) for t in fig.data if t.y is not None and not t.fill)
    assert np.median(ys.max(axis=0) - ys.min(axis=0)) < 0.2 * top  # they do run together
    assert len({t.marker.symbol for t in lines.values()}) == 3 and "markers" in "".join(t.mode for t in lines.values())
    # a few markers each, on every point of the sweep (Plotly spaces them and shifts each line's)
    assert all(5 <= t.marker.maxdisplayed <= len(t.x) / 5 and len(t.x) == len(RECYCLE_X) for t in lines.values())


@pytest.mark.parametrize("query", ["", "place=other_socket&pp_recycle=0.5", "path=cpumap&cpu=epyc-9684x"])
def test_every_legend_line_is_told_apart_without_colour(query):
    """In greyscale, every line with a legend entry differs from the other lines of its subplot by dash or
    marker (the cpumap rates, the zeroing and SLUB variants, the grid's curves), on every page's charts."""
    seen = 0
    for page in charts.PAGE_CHARTS:
        st, _ = sk_state.decode(f"page={page}&{query}")
        for name, fig in charts.figures_for_page(page, Question.of_state(st)):
            lines = [t for t in fig.data if t.type == "scatter" and "lines" in (t.mode or "lines")
                     and getattr(t, "fill", None) in (None, "none") and t.showlegend is not False]
            styles = [_line_style(t) for t in lines]
            assert len(set(styles)) == len(styles), (page, name, [(t.name, s) for t, s in zip(lines, styles)])
            seen += len(lines) > 1
    assert seen >= 8  # charts with two or more lines: the rule has something to hold
