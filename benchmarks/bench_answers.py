"""Time to answer one view's question: :func:`skbmodel.answers.of_state` (values, intervals, the paired
B − A, verdicts and drivers), cache cleared, median of 7, for a few views.

    python benchmarks/bench_answers.py

Run it in two checkouts one after the other (``git worktree add /tmp/before <commit>``) and alternate
twice to compare them on a loaded machine.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skbmodel import answers  # noqa: E402 - after the sys.path line, so the script runs from anywhere
from skbmodel.links import state as sk_state  # noqa: E402

QUERIES = ("page=compare&b_xdp_batch=4", "page=compare&cpu=epyc-9684x&b_cpu=e5-1650v4", "page=veth&xdp_batch=8",
           "page=cpumap&place=other_socket&cpu=xeon-gold-6140")


def main() -> None:
    for q in QUERIES:
        st, _ = sk_state.decode(q)
        times = []
        for _ in range(7):
            answers.clear_caches()
            t = time.perf_counter()
            answers.of_state(st, drivers=True)
            times.append(time.perf_counter() - t)
        print(f"{q}: {statistics.median(times) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
