"""Write every chart's figure JSON and the CLI outputs for a fixed set of scenarios to a folder.

    python scripts/snapshot_outputs.py OUT_DIR [--no-export]

Run it before and after a refactoring that should not change behaviour, then ``diff -r`` the two
folders: the figures, the ``eval``/``validate`` output, the HTML report and the exported file names
must be byte-identical (or each difference explained).  ``--no-export`` skips the kaleido SVG export
(the slowest part; the file names it would write are recorded anyway via ``report.file_stem``).
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from skbmodel.links import state as sk_state  # noqa: E402 - after the sys.path line, so the script runs from anywhere
from skbmodel.question import Question  # noqa: E402
from skbview import charts, report  # noqa: E402

# written out, not read from skbmodel.links.pages: the script must also run on commits from before that registry
PAGE_SLUGS = ("overview", "slub", "zeroing", "veth", "cpumap", "kfree", "compare", "validation")

#: name -> query: every page's default, then links that move the parameters each page's charts vary with
SCENARIOS: dict[str, str] = {f"default-{p}": f"page={p}" for p in PAGE_SLUGS}
SCENARIOS.update({
    "slub-bulk32-xeon": "page=slub&cpu=xeon-platinum-iavf&bulk=32",
    "slub-bulk256": "page=slub&bulk=256",
    "zeroing-memset-512": "page=zeroing&zero=memset&zero_bytes=512",
    "veth-batch64-recycle05": "page=veth&xdp_batch=64&pp_recycle=0.5&zero=memset",
    "cpumap-cross-page-bulk8": "page=cpumap&place=other_socket&pp_recycle=0.3&page_bulk=8",
    "kfree-nobulk-clones": "page=kfree&kfl_bulk=1&drop_batch=256&clone_frac=0.4",
    "overview-cpumap-100g": "page=overview&path=cpumap&link_gbps=100&frame_bytes=1500",
    "overview-kfree-ghz": "page=overview&path=kfree_skb_list&ghz=2.0&defer_cache=0",
    "overview-xdp-pass-xeon": "page=overview&path=xdp_pass&cpu=xeon-platinum-iavf&noise_ns=5",
    "compare-memset-vs-gfp": "page=compare&zero=memset&b_zero=gfp_zero&b_bulk=64",
    "compare-two-cpus": "page=compare&b_cpu=xeon-platinum-iavf&b_xdp_batch=32",
    "compare-archived-pv": "page=compare&pv=8896fc54&b_pv=8896fc54",
})
#: scenarios whose SVG export is run through the real CLI (kaleido) to record the file names it prints
EXPORTED = ("default-overview", "compare-two-cpus", "slub-bulk32-xeon")


def _run(args: list[str]) -> str:
    p = subprocess.run([sys.executable, "-m", "skbmodel", *args], cwd=REPO, capture_output=True, text=True,
                       check=False)
    return f"exit {p.returncode}\n--- stdout\n{p.stdout}--- stderr\n{p.stderr}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--no-export", action="store_true")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, query in SCENARIOS.items():
        d = out / name
        d.mkdir(exist_ok=True)
        st, warnings = sk_state.decode(query)
        page = st["page"]
        (d / "warnings.txt").write_text("\n".join(warnings) + "\n", encoding="utf-8")
        for chart, fig in charts.figures_for_page(page, Question.of_state(st)):
            (d / f"figure_{page}_{chart}.json").write_text(fig.to_json(), encoding="utf-8")
        (d / "file_names.txt").write_text("".join(f"{report.file_stem(pg, n, st)}\n"
                                                  for pg, n, _ in report.all_figures(st)), encoding="utf-8")
        # the report says when it was generated: the one part that differs between two identical runs
        html = re.sub(r"generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", "generated <time>", report.build_html_report(st))
        (d / "report.html").write_text(html, encoding="utf-8")
        (d / "share_link.txt").write_text(report.share_link(st) + "\n", encoding="utf-8")
        (d / "eval.json").write_text(_run(["eval", query, "--json"]), encoding="utf-8")
        (d / "eval.txt").write_text(_run(["eval", query]), encoding="utf-8")
        if name in EXPORTED and not a.no_export:
            with tempfile.TemporaryDirectory() as tmp:
                text = _run(["export", query, "--format", "svg", "--out", tmp]).replace(tmp, "OUT")
            (d / "export_svg.txt").write_text(text, encoding="utf-8")
    (out / "validate.json").write_text(_run(["validate", "--json"]), encoding="utf-8")
    (out / "validate.txt").write_text(_run(["validate"]), encoding="utf-8")
    (out / "validate_oos.txt").write_text(_run(["validate", "--out-of-sample"]), encoding="utf-8")
    (out / "scenarios.json").write_text(json.dumps(SCENARIOS, indent=1) + "\n", encoding="utf-8")
    print(f"{len(SCENARIOS)} scenarios written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
