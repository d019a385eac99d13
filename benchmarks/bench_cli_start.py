"""Cold start of the command line against the imports it cannot avoid, alternated in one run.

    python benchmarks/bench_cli_start.py [--runs 9] [--query page=veth]    # in the checkout to time

Times (wall clock, a fresh process each) ``python -c "import numpy, pandas"`` and ``python -m skbmodel eval
QUERY``, ``link QUERY`` and ``eval --help``, taking turns run by run so that a change of the machine's load
hits every command alike, and prints each median and its ratio to the bare imports.  It also lists any of
Plotly, Streamlit or kaleido that ``eval`` imports (``-X importtime``): none is its goal.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path.cwd()  # the checkout it is run in (compare two by running it in each)


def _wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--query", default="page=veth")
    args = ap.parse_args()
    py = sys.executable
    cmds = {"import numpy, pandas": [py, "-c", "import numpy, pandas"],
            "eval": [py, "-m", "skbmodel", "eval", args.query],
            "link": [py, "-m", "skbmodel", "link", args.query],
            "eval --help": [py, "-m", "skbmodel", "eval", "--help"]}
    for cmd in cmds.values():  # warm the file cache once
        _wall(cmd)
    times = {k: [] for k in cmds}
    for _ in range(args.runs):
        for k, cmd in cmds.items():
            times[k].append(_wall(cmd))
    base = statistics.median(times["import numpy, pandas"])
    print(f"# cold start, {args.runs} runs each, alternated; medians")
    for k, v in times.items():
        print(f"{k:22s} {statistics.median(v) * 1e3:7.0f} ms  ({statistics.median(v) / base:.2f}x the bare imports)")
    imp = subprocess.run([py, "-X", "importtime", "-m", "skbmodel", "eval", args.query], cwd=ROOT,
                         capture_output=True, text=True).stderr
    heavy = sorted({line.split("|")[-1].strip().split(".")[0] for line in imp.splitlines()
                    if any(m in line for m in ("plotly", "streamlit", "kaleido"))})
    print(f"eval imports of plotly/streamlit/kaleido: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
