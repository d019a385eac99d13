"""Export timing of the real dashboard charts (skbview.charts.figures_for_page) via skbview.exporter.

For every chart of every page: "cold" is its first export (the very first one also starts kaleido's
server and Chromium), "warm" the median of --repeat further exports.  PNG at 2x scale and SVG, each at
the chart's own export size (as the download buttons and the CLI use).  Also times the HTML report
and the PNG zip of the whole scenario.  Goal: warm PNG <= 250 ms per chart.

    python benchmarks/bench_export_dashboard.py [--repeat 10] [--query 'bulk=32&page=slub']
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from skbmodel.links import state as sk_state  # noqa: E402 - after the sys.path set-up above
from skbview import exporter, report  # noqa: E402 - after the sys.path set-up above

GOAL_MS = 250.0


def _ms(fn):
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000.0, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=10, help="warm exports per chart and format (default 10)")
    ap.add_argument("--query", default="v=1&bulk=32&zero=memset&kfl_bulk=8&b_bulk=4&b_place=other_socket",
                    help="scenario as a share-link query string")
    ap.add_argument("--gap", type=float, default=0.0,
                    help="seconds of idle time before each warm export (0 = back to back, i.e. a zip's "
                         "throughput; 0.3 ~ separate clicks on download buttons)")
    ap.add_argument("--no-report", action="store_true", help="skip the HTML report / PNG zip timings")
    args = ap.parse_args()

    state = sk_state.decode_strict(args.query)
    t_build, figs = _ms(lambda: report.all_figures(state))
    print(f"# {len(figs)} dashboard charts built in {t_build:.0f} ms; PNG scale {report.PNG_SCALE}, "
          f"warm = median of {args.repeat}, {args.gap:g} s idle before each; goal warm PNG <= {GOAL_MS:.0f} ms")
    print(f"{'chart':<28} {'size':>9} {'fmt':<4} {'cold ms':>8} {'warm ms':>8} {'min':>7} {'max':>7} {'bytes':>8}")
    warm_png = []
    first = True
    for page, name, fig in figs:
        w, h = report.export_size(fig)
        for fmt, call in (("png", lambda: report.figure_png(fig)), ("svg", lambda: report.figure_svg(fig))):
            cold, data = _ms(call)
            warm = []
            for _ in range(args.repeat):
                time.sleep(args.gap)
                warm.append(_ms(call)[0])
            med = statistics.median(warm)
            if fmt == "png":
                warm_png.append(med)
            note = "  (incl. kaleido server + Chromium start)" if first else ""
            first = False
            print(f"{page + '/' + name:<28} {w:>4}x{h:<4} {fmt:<4} {cold:8.1f} {med:8.1f} {min(warm):7.1f} "
                  f"{max(warm):7.1f} {len(data):8d}{note}")
    worst = max(warm_png)
    print(f"# warm PNG per chart: median {statistics.median(warm_png):.1f} ms, worst {worst:.1f} ms "
          f"-> {'within' if worst <= GOAL_MS else 'OVER'} the {GOAL_MS:.0f} ms goal")
    if not args.no_report:
        t_html, html = _ms(lambda: report.build_html_report(state))
        print(f"# HTML report (all {len(figs)} charts, plotly.js inlined): {t_html:.0f} ms, {len(html) / 1e6:.1f} MB")
        t_zip, z = _ms(lambda: report.build_png_zip(state))
        print(f"# PNG zip (all {len(figs)} charts, 2x): {t_zip:.0f} ms, {len(z) / 1e6:.1f} MB")
    exporter.shutdown()
    return 0 if worst <= GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
