"""Soak the dashboard with random and adversarial share links: none may crash a page.

    python benchmarks/soak_links.py [--n 10000] [--seed 0] [--pages overview,slub,...] [--json out.json]

Each link (``tests.fuzz_inputs.fuzz_query(seed + i)``: wrong types, huge numbers, NaN/inf, negative
sizes, out-of-range, repeated and unknown keys, very long values, unicode, script tags, markdown,
custom-profile garbage) opens one page of the real ``dashboard.py`` in Streamlit's AppTest, in a
fresh session; pages are taken round-robin over all 9 (the 8 chart pages and Calibrate), so
``--n 10000`` is ~1,111 links per page.  Counted per page:

* exceptions (in the script or the harness) -- goal 0;
* bad parameters that no warning names (the generator knows by construction which keys are bad;
  a warning must start with the key or its quoted repr) -- goal 0;
* elements rendered with HTML allowed (``unsafe_allow_html``/``st.html``) -- goal 0;
* the URL written back by the page does not decode cleanly (it must be canonical) -- goal 0;
* a chart page that drew no chart -- goal 0;
* run time per link (p50/p95/max).

A failing case prints its seed: ``fuzz_query(seed)`` replays it.  Exit status 1 if any count is
not 0.  The per-run cost of AppTest is dominated by Streamlit re-scanning installed packages for
component manifests; the harness scans once (``tests.fuzz_inputs.legacy_pages_mode_left``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# Streamlit logs "missing ScriptRunContext" / "Ignoring query string" per AppTest run; keep the output to figures
os.environ.setdefault("STREAMLIT_LOGGER_LEVEL", "error")

from tests.fuzz_inputs import ALL_PAGES, check_link, fuzz_query  # noqa: E402 - after the sys.path set-up above


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="number of links (default 10,000)")
    ap.add_argument("--seed", type=int, default=0, help="first generator seed")
    ap.add_argument("--pages", default=",".join(ALL_PAGES), help="comma-separated pages (default: all 9)")
    ap.add_argument("--json", help="write per-page figures and failing seeds to this file")
    ap.add_argument("--progress", type=int, default=1000, help="print a progress line every N links")
    args = ap.parse_args(argv)
    pages = [p for p in args.pages.split(",") if p]
    bad_pages = [p for p in pages if p not in ALL_PAGES]
    if bad_pages or not pages:
        ap.error(f"unknown page(s) {bad_pages}; choose from {', '.join(ALL_PAGES)}")

    per = defaultdict(Counter)
    times: dict[str, list[float]] = defaultdict(list)
    kinds = Counter()
    failures: list[dict] = []
    bad_keys_total = named_total = 0
    t0 = time.perf_counter()
    for i in range(args.n):
        seed = args.seed + i
        page = pages[i % len(pages)]
        q = fuzz_query(seed)
        o = check_link(q, page)
        c = per[page]
        c["links"] += 1
        c["exceptions"] += bool(o.exception)
        c["unnamed"] += len(o.unnamed)
        c["html"] += o.html
        c["unclean_url"] += bool(o.unclean_url)
        c["no_chart"] += o.no_chart
        c["warnings"] += o.warnings
        c["dropped_by_streamlit"] += o.dropped
        if not o.exception and not o.dropped:
            bad_keys_total += len(q.bad)
            named_total += len(q.bad) - len(o.unnamed)
            c["bad_keys"] += len(q.bad)
        times[page].append(o.seconds)
        kinds.update(q.kinds)
        if o.failed:
            failures.append(dict(seed=seed, page=page, exception=o.exception, unnamed=o.unnamed[:10], html=o.html,
                                 unclean_url=o.unclean_url[:3], no_chart=o.no_chart, kinds=q.kinds[:20]))
            print(f"FAIL seed={seed} page={page}: {failures[-1]}", flush=True)
        if args.progress and (i + 1) % args.progress == 0:
            print(f"... {i + 1}/{args.n} links, {time.perf_counter() - t0:.0f} s, {len(failures)} failing",
                  flush=True)
    wall = time.perf_counter() - t0

    cols = ("links", "exceptions", "bad_keys", "unnamed", "html", "unclean_url", "no_chart", "warnings",
            "dropped_by_streamlit")
    print(f"\nsoak_links: {args.n} links (seeds {args.seed}..{args.seed + args.n - 1}) over {len(pages)} pages "
          f"in {wall:.0f} s")
    print(f"{'page':<11}" + "".join(f"{c:>12}" for c in cols[:-1]) + f"{'dropped':>9}{'p50 ms':>9}{'p95 ms':>9}"
          f"{'max ms':>9}")
    total = Counter()
    for page in pages:
        c = per[page]
        total.update(c)
        t = np.array(times[page]) * 1000
        print(f"{page:<11}" + "".join(f"{c[k]:>12}" for k in cols[:-1]) + f"{c['dropped_by_streamlit']:>9}"
              f"{np.percentile(t, 50):>9.0f}{np.percentile(t, 95):>9.0f}{t.max():>9.0f}")
    print(f"{'TOTAL':<11}" + "".join(f"{total[k]:>12}" for k in cols[:-1]) + f"{total['dropped_by_streamlit']:>9}")
    cover = named_total / bad_keys_total if bad_keys_total else 1.0
    print(f"exceptions: {total['exceptions']}   bad parameters named in a warning: {named_total}/{bad_keys_total} "
          f"({cover:.2%})   html elements: {total['html']}   unclean URLs: {total['unclean_url']}   "
          f"chart pages without chart: {total['no_chart']}")
    print("input categories: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
    if args.json:
        Path(args.json).write_text(json.dumps(dict(n=args.n, seed=args.seed, wall_s=wall, per_page=per,
                                                    named=named_total, bad_keys=bad_keys_total,
                                                    failures=failures), indent=1, default=dict))
    ok = not failures
    print("RESULT:", "OK (0 failures)" if ok else f"{len(failures)} FAILING LINKS (seeds above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
