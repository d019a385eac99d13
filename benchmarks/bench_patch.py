"""How long the patch reader takes on a typical mail and on a 5 MB paste, after start-up.

    python benchmarks/bench_patch.py [--runs 5] [--megabytes 5]    # in the checkout to time

In one process (the imports and the first question paid once, as by the dashboard's server): each posted mail
of ``tests/data/patches/sample`` read and answered ``--runs`` times (``skbmodel.patchin.answer``, the answers'
cache emptied before each), and a paste of ``--megabytes`` MB made of those mails one after another (each with
its own header block, so a series of some hundred mails and thousands of hunks).  Prints each median [s] with
its min and max, and for the large paste the time spent splitting the mails and parsing the C.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path.cwd()  # the checkout it is run in (compare two by running it in each)
sys.path.insert(0, str(ROOT))

from skbmodel import answers, patchcode, patchin, patchmail  # noqa: E402

SAMPLE = ROOT / "tests" / "data" / "patches" / "sample"


def _time(f, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f()
        out.append(time.perf_counter() - t0)
    return out


def _answer(raw: bytes) -> None:
    answers.clear_caches()  # each run asks its question anew, as a new patch would
    try:
        patchin.answer(raw)
    except patchin.NothingPriced:
        pass


def _row(name: str, xs: list[float]) -> str:
    return f"{name:<46} median {statistics.median(xs):7.3f} s  (min {min(xs):.3f}, max {max(xs):.3f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--megabytes", type=float, default=5.0)
    args = ap.parse_args()
    files = sorted(SAMPLE.glob("*.diff"))
    _answer(files[0].read_bytes())  # start-up: imports, the first profile, the first question
    for f in files:
        raw = f.read_bytes()
        print(_row(f"{f.name} ({len(raw) / 1024:.0f} KB)", _time(lambda raw=raw: _answer(raw), args.runs)))
    parts, size = [], 0
    while size < args.megabytes * 1e6:
        for f in files:
            parts.append(f.read_bytes())
            size += len(parts[-1])
    big = b"\n".join(parts)
    mails = patchmail.read_mails(big)
    hs = patchin.hunks(mails)
    print(f"large paste: {len(big) / 1e6:.1f} MB, {len(mails)} mails, {len(hs)} hunks")
    split = _time(lambda: patchmail.read_mails(big), 1)[0]
    parse = _time(lambda: patchcode.net_changes(patchin.hunks(mails)), 1)[0]
    whole = _time(lambda: _answer(big), max(1, args.runs // 2))
    print(_row("large paste, the whole answer", whole))
    print(f"  of which: split and decode {split:.2f} s, hunks and C net changes {parse:.2f} s")


if __name__ == "__main__":
    main()
