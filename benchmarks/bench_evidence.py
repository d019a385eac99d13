"""What the evidence wing's heavy computations cost: one fit of the E5-1650 v4 profile to its seed rows, and
the whole out-of-sample report (every refit and derivation of the corpus, what ``validate --out-of-sample``
and the tests' ``oos_report`` compute).

    python benchmarks/bench_evidence.py [--repeat N] [--no-report]

Prints the process CPU time and the wall-clock time of each (the CPU time depends far less on other jobs
on a shared machine).  To compare two versions of the code, run it from each checkout in turn, alternated,
on the same machine (docs/benchmarks.md).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))  # the checkout it is run from, so that two versions can be compared

from skbmodel.evidence import calibration, corpus, outofsample, protocols, seed_checks  # noqa: E402
from skbmodel.machine.profile import load_profile  # noqa: E402


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.process_time() - c, time.perf_counter() - w


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="fits of the E5 profile (default 3)")
    ap.add_argument("--no-report", action="store_true", help="leave out the out-of-sample report")
    args = ap.parse_args(argv)
    prof = load_profile(seed_checks.E5)
    rows = [s for s in seed_checks.ROWS if s.profile == seed_checks.E5]
    for i in range(args.repeat):
        cpu, wall = _timed(lambda: calibration.fit_profile(prof, rows))
        print(f"fit e5-1650v4 to its {len(rows)} seed rows, run {i + 1}: CPU {cpu:.2f} s, wall {wall:.2f} s")
    if not args.no_report:
        df = corpus.load_corpus()
        cpu, wall = _timed(lambda: outofsample.report(df, protocols.PROTOCOLS))
        print(f"out-of-sample report: CPU {cpu:.1f} s, wall {wall:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
