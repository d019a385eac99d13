"""Soak the Calibrate page with random and adversarial pastes, measurement files and profile TOML files.

    python benchmarks/soak_uploads.py [--n 1000] [--seed 0] [--fit-every 5] [--json out.json]

Each input (``tests.fuzz_inputs.fuzz_upload(seed + i)``: real time_bench/pktgen/xdp-bench/CSV text
mutated -- numbers to NaN/inf/huge/negative, truncation, duplicated and shuffled lines, CRLF, mail
quoting, unicode, script tags, over-long lines, too many lines -- and files that are binary, NUL,
UTF-16, Latin-1, bit-flipped, empty or over the size limit, with hostile file names; profile TOML
that is valid, out of bounds, NaN, deeply nested, truncated or binary) goes into a fresh AppTest
session of ``dashboard.py`` on /calibrate: pasted into the text area, or uploaded through the
measurement uploader or the profile uploader.  Every ``--fit-every``-th input that gives rows is
also fitted.  Counted: exceptions (goal 0); inputs that vanish without a word (no rows, no
problem listed, no refusal) (goal 0); elements rendered with HTML allowed (goal 0); time per input.
Exit status 1 if any count is not 0.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fuzz_inputs import check_upload, fuzz_upload  # noqa: E402 - after the sys.path set-up above


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fit-every", type=int, default=5, help="fit every N-th input that gives rows (0 = never)")
    ap.add_argument("--json")
    ap.add_argument("--progress", type=int, default=200)
    args = ap.parse_args(argv)

    per = defaultdict(Counter)
    kinds = Counter()
    times: list[float] = []
    failures: list[dict] = []
    t0 = time.perf_counter()
    for i in range(args.n):
        seed = args.seed + i
        u = fuzz_upload(seed)
        o = check_upload(u, fit=bool(args.fit_every) and i % args.fit_every == 0)
        c = per[u.how]
        c["inputs"] += 1
        c["exceptions"] += bool(o.exception)
        c["silent"] += o.silent
        c["html"] += o.html
        c["with_rows"] += bool(o.measurements)
        c["problems_listed"] += o.problems
        if o.fitted:
            c["fits"] += 1
            c["fit_ok"] += o.fitted == "ok"
        if o.profile:
            c[f"profile_{o.profile}"] += 1
        kinds[u.kind.split("/")[0]] += 1
        times.append(o.seconds)
        if o.failed:
            failures.append(dict(seed=seed, how=u.how, kind=u.kind, name=u.name[:60], exception=o.exception,
                                 silent=o.silent, html=o.html))
            print(f"FAIL seed={seed}: {failures[-1]}", flush=True)
        if args.progress and (i + 1) % args.progress == 0:
            print(f"... {i + 1}/{args.n} inputs, {time.perf_counter() - t0:.0f} s, {len(failures)} failing",
                  flush=True)
    wall = time.perf_counter() - t0
    t = np.array(times) * 1000
    print(f"\nsoak_uploads: {args.n} inputs (seeds {args.seed}..{args.seed + args.n - 1}) on /calibrate "
          f"in {wall:.0f} s; "
          f"per input p50 {np.percentile(t, 50):.0f} ms, p95 {np.percentile(t, 95):.0f} ms, max {t.max():.0f} ms")
    total = Counter()
    for how in ("paste", "file", "profile"):
        c = per[how]
        total.update(c)
        print(f"  {how:<8} " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    print(f"exceptions: {total['exceptions']}   silent inputs: {total['silent']}   html elements: {total['html']}")
    print("input mutations: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
    if args.json:
        Path(args.json).write_text(json.dumps(dict(n=args.n, seed=args.seed, wall_s=wall, per=per,
                                                    failures=failures), indent=1, default=dict))
    ok = not failures
    print("RESULT:", "OK (0 failures)" if ok else f"{len(failures)} FAILING INPUTS (seeds above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
