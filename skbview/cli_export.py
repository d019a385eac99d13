"""``python -m skbmodel export QUERY --page NAME|all --format png|svg|html --out DIR``.

QUERY is a share link's query string (or the whole link); it is decoded strictly, so a typo is an
error naming the parameter (exit 2) instead of a silently different report.  PNG is 2x scale.
``--format html`` writes one self-contained interactive report for the selected page(s); ``html-light`` the
same report with static SVG images and no script (under 1 MB, to attach to a mail).
Prints the path of every file written.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from skbmodel import question
from skbmodel.links import state as sk_state
from skbmodel.cli import UsageError


def _query_of(arg: str) -> str:
    """Accept a bare query (``bulk=32&...``), ``?bulk=32`` or a full share link."""
    arg = (arg or "").strip()
    if "?" in arg:
        arg = arg.split("?", 1)[1]
    return arg.split("#", 1)[0]


def add_parser(sub) -> None:
    """Add the ``export`` subcommand to ``skbmodel.cli``'s subparsers (called by ``skbmodel/__main__.py``)."""
    x = sub.add_parser("export", help="export a page's charts for a query (png, svg or html)")
    x.add_argument("query", nargs="?", default="")
    x.add_argument("--page", default="all")
    x.add_argument("--format", default="png", choices=("png", "svg", "html", "html-light"),
                   help="html: one interactive report (plotly.js inlined, ~5 MB); html-light: the same report "
                        "with static SVG images and no script, under 1 MB (to attach to a mail)")
    x.add_argument("--out", default="exports")
    x.add_argument("--profile", metavar="FILE.toml",
                   help="draw the question on this profile file (e.g. from 'profile derive' or 'fit --out'); the "
                        "footers and file names name it")
    x.set_defaults(func=run_export)


def run_export(args) -> int:
    # Plotly and kaleido load here, for an export alone: the other subcommands draw nothing
    from . import exporter, report

    query = _query_of(args.query)
    st = sk_state.decode_strict(query)  # StateError -> "error: <key>: ..." exit 2 (skbmodel.cli.main)
    if args.profile:
        try:
            st = question.with_profile_file(st, args.profile, (k for k, _ in sk_state.query_pairs(query)))
        except question.ProfileFileError as e:
            raise UsageError(str(e)) from None
    page = (args.page or "all").strip()
    if page != "all" and page not in sk_state.PAGES:
        raise UsageError(f"--page: {page!r} is not all or one of {', '.join(sk_state.PAGES)}")
    pages = list(sk_state.PAGES) if page == "all" else [page]
    if "design" in pages or st["path"] == "design":  # no chart of a composition that makes no sense
        from skbmodel import composer
        bad = composer.problem_text(st)
        if bad:
            raise UsageError(f"design: {bad}")
    fmt = args.format
    out = Path(args.out or "exports")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out: cannot create {str(out)!r}: {e.strerror}") from None
    if not os.access(out, os.W_OK):
        raise UsageError(f"--out: {str(out)!r} is not writable")

    written: list[Path] = []
    try:
        if fmt in ("html", "html-light"):
            light = fmt == "html-light"
            stem = report.report_file_name(st, "html", light=light)
            if page != "all":
                stem = stem.replace("_cpu-", f"_{page}_cpu-", 1)
            path = out / stem
            path.write_text(report.build_html_report(st, pages_=pages, light=light), encoding="utf-8")
            written.append(path)
        else:
            for pg, name, fig in report.all_figures(st, pages):
                path = out / f"{report.file_stem(pg, name, st)}.{fmt}"
                path.write_bytes(report.figure_png(fig) if fmt == "png" else report.figure_svg(fig))
                written.append(path)
                print(path, flush=True)
            return 0
    except exporter.ExportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        exporter.shutdown()
    for p in written:
        print(p)
    return 0
