"""Static export timing with skbview.exporter (kaleido 1.5 + system Chromium).

For each chart: "cold" is its first export (the very first one also starts the
kaleido server and Chromium), "warm" is the median of --repeat further exports.

    python benchmarks/bench_export.py [--repeat 20] [--figures pkg.module:function]

--figures names a callable returning {name: plotly Figure} to benchmark instead
of the built-in representative charts.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402 - after the sys.path set-up above
import plotly.graph_objects as go  # noqa: E402 - after the sys.path set-up above

from skbview import exporter  # noqa: E402 - after the sys.path set-up above

WIDTH, HEIGHT, SCALE = 900, 500, 2


def builtin_figures() -> dict[str, go.Figure]:
    x = np.arange(1, 2001)
    line = go.Figure(
        [
            go.Scatter(x=x, y=40 + 900 / np.sqrt(x), name="alloc ns", mode="lines"),
            go.Scatter(x=x, y=25 + 600 / np.sqrt(x), name="free ns", mode="lines"),
        ],
        layout=dict(title="line, 2 x 2000 points", template="plotly_white"),
    )
    stages = ["alloc", "memset", "build_skb", "xdp", "redirect", "free"]
    bar = go.Figure(
        [go.Bar(x=stages, y=np.linspace(5, 60, len(stages)) * k, name=f"bulk {b}")
         for k, b in zip((1.0, 0.7, 0.5), (1, 16, 64))],
        layout=dict(title="grouped bar, 3 x 6", barmode="group", template="plotly_white"),
    )
    z = np.add.outer(np.log2(np.arange(1, 65)), np.sqrt(np.arange(64, 4097, 64)))
    heat = go.Figure(
        go.Heatmap(z=z, colorscale="Viridis"),
        layout=dict(title="heatmap 64 x 64", template="plotly_white"),
    )
    return {"line-2x2000": line, "bar-3x6": bar, "heatmap-64x64": heat}


def load_figures(spec: str | None) -> dict[str, go.Figure]:
    if not spec:
        return builtin_figures()
    module, _, func = spec.partition(":")
    return getattr(importlib.import_module(module), func or "benchmark_figures")()


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=20, help="warm exports per chart and format")
    ap.add_argument("--figures", help="module:function returning {name: figure}")
    args = ap.parse_args()

    figs = load_figures(args.figures)
    print(f"# skbview.exporter, PNG {WIDTH}x{HEIGHT} scale {SCALE}, SVG {WIDTH}x{HEIGHT}, "
          f"warm = median of {args.repeat}")
    print(f"{'chart':<16} {'fmt':<4} {'cold ms':>9} {'warm ms':>9} {'min ms':>8} {'max ms':>8} {'bytes':>9}")
    first = True
    for name, fig in figs.items():
        for fmt in ("png", "svg"):
            if fmt == "png":
                call = lambda: exporter.figure_to_png(fig, WIDTH, HEIGHT, SCALE)  # noqa: E731 - the timed call, chosen once per format
            else:
                call = lambda: exporter.figure_to_svg(fig, WIDTH, HEIGHT)  # noqa: E731 - the timed call, chosen once per format
            cold = timed(call)
            warm = [timed(call) for _ in range(args.repeat)]
            size = len(call())
            note = "  (includes server + Chromium start)" if first else ""
            first = False
            print(f"{name:<16} {fmt:<4} {cold:9.1f} {statistics.median(warm):9.1f} "
                  f"{min(warm):8.1f} {max(warm):8.1f} {size:9d}{note}")
    exporter.shutdown()


if __name__ == "__main__":
    main()
