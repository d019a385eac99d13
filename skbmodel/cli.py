"""Command line: ``python -m skbmodel {eval,validate,calibrate,bench,export} ...``.

Bad input prints one line naming the problem on stderr and exits 2; never a traceback.
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from . import __version__, model, state, validation
from .profile import ProfileError, load_profile


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise UsageError(message)


def _scalar(v):
    a = np.asarray(v)
    return float(a) if a.ndim == 0 else a.tolist()


def cmd_eval(args) -> int:
    st = state.decode_strict(args.query)
    params = state.scenario(st, "a")
    prof = load_profile(params["cpu"])
    out = model.evaluate(params, prof)
    outputs = {k: _scalar(v) for k, v in out.items()}
    if args.json:
        json.dump({"state": {k: st[k] for k in ["page", *state.MODEL_KEYS]}, "outputs": outputs,
                   "units": dict(model.OUTPUT_UNITS), "profile": prof.id, "model_version": __version__},
                  sys.stdout, indent=1, sort_keys=False)
        sys.stdout.write("\n")
    else:
        width = max(map(len, outputs))
        for k, v in outputs.items():
            print(f"{k:<{width}}  {v:>14.6g}  {model.OUTPUT_UNITS[k]}")
    return 0


def cmd_validate(args) -> int:
    rows = validation.validate()
    bad = [r for r in rows if not r["ok"]]
    if args.json:
        json.dump({"rows": rows, "not_covered": validation.NOT_COVERED, "n_ok": len(rows) - len(bad),
                   "n_rows": len(rows)}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(f"{'id':<8} {'measured':>12} {'predicted':>12} {'unit':<8} {'error':>8}  {'tolerance':<15} ok")
        for r in rows:
            print(f"{r['id']:<8} {r['measured']:>12.6g} {r['predicted']:>12.6g} {r['unit']:<8} "
                  f"{r['rel_error'] * 100:>7.2f}%  {r['tolerance']:<15} {'yes' if r['ok'] else 'NO'}")
        for k, why in validation.NOT_COVERED.items():
            print(f"{k:<8} not covered: {why}")
        print(f"{len(rows) - len(bad)} of {len(rows)} covered seed rows within tolerance")
    return 1 if bad else 0


def cmd_calibrate(args) -> int:
    from . import calibration
    from .profile import PROFILE_DIR, clear_cache
    out = args.out or str(PROFILE_DIR)
    profiles, report = calibration.calibrate(out)
    clear_cache()
    print(f"{'row':<8} {'before':>8} {'after':>8}   (residual / tolerance)")
    for rid, before, after in report:
        print(f"{rid:<8} {before:>8.3f} {after:>8.3f}")
    for p in profiles.values():
        print(f"wrote {out}/{p.id}.toml")
    worst = max(abs(a) for _, _, a in report)
    print(f"largest residual after the fit: {worst:.3f} of its tolerance")
    return 0 if worst <= 1 else 1


def cmd_bench(args) -> int:
    from .bench import run_bench
    res = run_bench(n_vector=args.states, n_scalar=args.scalar)
    if args.json:
        json.dump(res, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(f"vectorised, cold (fresh output memory): {res['vector_states']:,} states in "
              f"{res['vector_cold_s']:.3f} s = {res['vector_cold_states_per_s'] / 1e6:.2f} M states/s")
        print(f"vectorised, warm (output buffers reused): {res['vector_states']:,} states in "
              f"{res['vector_s']:.3f} s = {res['vector_states_per_s'] / 1e6:.2f} M states/s")
        print(f"scalar loop: {res['scalar_states']:,} states in {res['scalar_s']:.3f} s "
              f"= {res['scalar_states_per_s']:,.0f} states/s")
        print(f"ratio vectorised (warm) / scalar: {res['ratio']:.0f}x; "
              f"cold / scalar: {res['vector_cold_states_per_s'] / res['scalar_states_per_s']:.0f}x")
        print(f"({res['outputs']} outputs per state)")
        print(f"max |vectorised - scalar| relative difference over the sample: {res['max_rel_diff']:.2e}")
    return 0


def cmd_export(args) -> int:
    try:
        from skbview.cli_export import run_export
    except ImportError:
        raise UsageError("export needs the skbview package (charts); run from the project folder") from None
    return run_export(args)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m skbmodel", description="Calibrated cost model of the Linux SKB memory lifecycle.")
    p.add_argument("--version", action="version", version=f"skbmodel {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    e = sub.add_parser("eval", help="evaluate the model for a share-link query string")
    e.add_argument("query", nargs="?", default="", help="URL query string, e.g. 'bulk=32&zero=memset'")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_eval)
    v = sub.add_parser("validate", help="compare every covered seed row with the model")
    v.add_argument("--json", action="store_true")
    v.set_defaults(func=cmd_validate)
    c = sub.add_parser("calibrate", help="refit the profiles' fitted constants to the seed rows")
    c.add_argument("--out", help="folder for the profile files (default: the shipped profiles)")
    c.set_defaults(func=cmd_calibrate)
    b = sub.add_parser("bench", help="vectorised vs scalar-loop evaluation speed")
    b.add_argument("--json", action="store_true")
    b.add_argument("--states", type=int, default=1_000_000, help="states evaluated vectorised (default 1,000,000)")
    b.add_argument("--scalar", type=int, default=2_000, help="states evaluated one by one (default 2,000)")
    b.set_defaults(func=cmd_bench)
    x = sub.add_parser("export", help="export a page's charts for a query (png, svg or html)")
    x.add_argument("query", nargs="?", default="")
    x.add_argument("--page", default="all")
    x.add_argument("--format", default="png", choices=("png", "svg", "html"))
    x.add_argument("--out", default="exports")
    x.set_defaults(func=cmd_export)
    return p


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except (UsageError, state.StateError, ProfileError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
