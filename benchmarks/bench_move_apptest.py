"""Server time per slider move under AppTest: this tree against another revision, in one interleaved run.

    python benchmarks/bench_move_apptest.py --base REV [--moves 40] [--blocks 4] [--pages slub,veth,...]

The base revision is exported with ``git archive`` to a temporary folder.  One worker process per
tree opens the dashboard in ``streamlit.testing.v1.AppTest`` and, per page, moves one control
(``set_value(...).run()``: the moved control's fragment rerun, as in the browser) and times each
move; an untimed full run follows each move, because AppTest keeps only the rerun fragments'
elements and the next move needs the control.  The workers take turns block by block (the order swapped
every block), so drifts in the machine's load hit both alike.  Prints, per page and tree, the median and
p90 of the wall time and the median of the worker's CPU time (all threads; less sensitive to other jobs on
the machine), and the differences of the medians.
No browser: this is server work only (model, figures, serialisation, AppTest's own overhead).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: page -> (slider key, values cycled through)
CONTROLS = {
    "overview": ("xdp_batch", [8, 9, 10, 11, 12, 13]),
    "slub": ("bulk", [16, 17, 30, 33, 64, 100]),
    "zeroing": ("zero_bytes", [184, 192, 256, 320, 512, 128]),
    "veth": ("xdp_batch", [8, 9, 10, 11, 12, 13]),
    "cpumap": ("pp_recycle", [0.0, 0.25, 0.5, 0.75, 1.0, 0.1]),
    "kfree": ("drop_batch", [64, 65, 128, 256, 32, 16]),
    "compare": ("bulk", [16, 17, 30, 33, 64, 100]),
    "design": ("xdp_batch", [8, 9, 10, 11, 12, 13]),
}

WORKER = r'''
import json, sys, time
sys.path.insert(0, ".")
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest
orig = PagesManager.__init__
def init(self, *a, **k):
    orig(self, *a, **k)
    PagesManager.uses_pages_directory = False
PagesManager.__init__ = init
controls = json.loads(sys.argv[1])
apps = {}
for page in controls:
    at = AppTest("dashboard.py", default_timeout=60)
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    apps[page] = at
print("ready", flush=True)
i = 0
for line in sys.stdin:
    page, n = line.split()
    key, values = controls[page]
    at = apps[page]
    ts = []
    for _ in range(int(n)):
        v = values[i % len(values)]
        i += 1
        s = at.slider(key=key).set_value(v)
        t0, c0 = time.perf_counter(), time.process_time()
        s.run()
        ts.append(((time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3))
        assert not at.exception, at.exception
        at.run()  # untimed full run: AppTest keeps only the fragments' elements after a move
    print(json.dumps(ts), flush=True)
'''


def export_tree(rev: str, dest: Path) -> None:
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def start(tree: Path, controls: dict) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    p = subprocess.Popen([sys.executable, "-c", WORKER, json.dumps(controls)], cwd=tree, env=env, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    line = p.stdout.readline().strip()
    if line != "ready":
        raise SystemExit(f"worker in {tree} did not start: {line!r}")
    return p


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="git revision to compare with (e.g. HEAD~3)")
    ap.add_argument("--moves", type=int, default=40, help="moves per page and tree")
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--pages", default=",".join(CONTROLS))
    args = ap.parse_args(argv)
    controls = {p: CONTROLS[p] for p in args.pages.split(",")}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        export_tree(args.base, base)
        workers = {"base": start(base, controls), "this": start(ROOT, controls)}
        times = {(w, p): [] for w in workers for p in controls}
        per_block = max(1, args.moves // args.blocks)
        for b in range(args.blocks):
            order = list(workers) if b % 2 == 0 else list(workers)[::-1]
            for page in controls:
                for w in order:
                    workers[w].stdin.write(f"{page} {per_block}\n")
                    workers[w].stdin.flush()
                    times[(w, page)] += json.loads(workers[w].stdout.readline())
        for w in workers.values():
            w.stdin.close()
            w.wait()
    rev = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True,
                         text=True).stdout.strip()
    print(f"server time per move under AppTest, {per_block * args.blocks} moves per page and tree in "
          f"{args.blocks} interleaved blocks; base = {rev}, this = working tree")
    print(f"{'page + control':<22} {'wall p50/p90, base':>19} {'this':>12} {'Δ p50':>7}   "
          f"{'CPU p50, base':>13} {'this':>6} {'Δ':>6}   (ms)")
    for page, (key, _) in controls.items():
        a, b = times[("base", page)], times[("this", page)]
        wa, wb = [t[0] for t in a], [t[0] for t in b]
        ca, cb = statistics.median(t[1] for t in a), statistics.median(t[1] for t in b)
        qa, qb = statistics.quantiles(wa, n=10)[-1], statistics.quantiles(wb, n=10)[-1]
        ma, mb = statistics.median(wa), statistics.median(wb)
        print(f"{'/' + page + ' + ' + key:<22} {ma:>10.1f}/{qa:<8.1f} {mb:>5.1f}/{qb:<6.1f} {mb - ma:>+6.1f}   "
              f"{ca:>13.1f} {cb:>6.1f} {cb - ca:>+6.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
