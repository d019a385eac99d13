"""Command line: ``python -m skbmodel {eval,validate,calibrate,bench,export} ...``.

Bad input prints one line naming the problem on stderr and exits 2; never a traceback.
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from . import __version__, model, state, uncertainty, validation
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
    prof = state.profile_for(st, "a")
    out = model.evaluate(params, prof)
    outputs = {k: _scalar(v) for k, v in out.items()}
    iv = uncertainty.intervals(params, prof, level=uncertainty.LEVEL)
    bounds = {k: [_scalar(iv[k][0]), _scalar(iv[k][1])] for k in outputs}
    if args.json:
        json.dump({"state": {k: st[k] for k in ["page", *state.MODEL_KEYS, *state.PROFILE_KEYS] if k in st}, "outputs": outputs,
                   "intervals": bounds, "interval_level": uncertainty.LEVEL,
                   "units": dict(model.OUTPUT_UNITS), "profile": prof.id, "model_version": __version__},
                  sys.stdout, indent=1, sort_keys=False)
        sys.stdout.write("\n")
    else:
        width = max(map(len, outputs))
        level = f"{uncertainty.LEVEL:.0%} interval"
        print(f"{'output':<{width}}  {'value':>14}  {level:>31}  unit")
        for k, v in outputs.items():
            lo, hi = bounds[k]
            print(f"{k:<{width}}  {v:>14.6g}  [{lo:>14.6g}, {hi:>14.6g}]  {model.OUTPUT_UNITS[k]}")
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


MAX_FIT_FILE_BYTES = 5 * 1024 * 1024  # the dashboard's upload limit (.streamlit/config.toml)


def cmd_fit(args) -> int:
    """Parse measurement files, fit the chosen constants, print (or --json) the result, write --out."""
    from . import custom, parsers, userfit
    from .profile import available_profiles
    if args.base not in available_profiles():
        raise UsageError(f"--base {args.base!r}: expected one of {', '.join(available_profiles())}")
    base = load_profile(args.base)
    measurements, problems, notes = [], [], []
    for path in args.files:
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_FIT_FILE_BYTES + 1)
        except OSError as e:
            raise UsageError(f"{path}: cannot read ({e.strerror or e})") from None
        if len(data) > MAX_FIT_FILE_BYTES:
            problems.append(f"{path}: larger than {MAX_FIT_FILE_BYTES // (1024 * 1024)} MB; skipped")
            continue
        res = parsers.parse_bytes(data, origin=path)
        measurements += res.measurements
        problems += [str(e) for e in res.errors]
        notes += res.notes
    for c in args.condition or []:
        measurements = _apply_condition(measurements, c)
    free = [n.strip() for n in args.free.split(",") if n.strip()] if args.free else \
        userfit.suggest_free(measurements, base)
    result = userfit.fit(measurements, base, free, label=args.label or "")
    if args.json:
        out = {"ok": result.ok, "base": base.id, "free": result.free, "errors": result.errors,
               "warnings": result.warnings, "parse_problems": problems, "notes": notes,
               "measurements": [dict(origin=m.origin, line=m.line, test=m.test, value=m.value, unit=m.unit,
                                     conditions=m.conditions, output=m.output, kind=m.kind, note=m.note)
                                for m in measurements],
               "rows": result.rows}
        if result.ok:
            p = result.profile
            out["profile"] = {"id": p.id, "name": p.name, "link": custom.encode_profile(p),
                              "constants": {n: {"value": p.value(n), "base": base.value(n), "unit": p.constants[n].unit,
                                                "source": p.constants[n].source} for n in result.free}}
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for msg in problems:
            print(f"warning: {msg}", file=sys.stderr)
        mapped = [m for m in measurements if m.output]
        print(f"{len(measurements)} measurements parsed, {len(mapped)} mapped to model outputs")
        for m in measurements:
            if not m.output:
                print(f"  not used: {m.where()}: {m.test} = {m.value:g} {m.unit} ({m.note})")
        if not result.ok:
            for e in result.errors:
                print(f"error: {e}", file=sys.stderr)
            return 2
        print(f"{'where':<32} {'test':<28} {'measured':>10} {'unit':<6} {'before':>10} {'after':>10} {'z before':>8} {'z after':>8}")
        for r in result.rows:
            where = f"{r['origin'][-22:]}:{r['line']}"
            print(f"{where:<32} {r['test'][:28]:<28} {r['measured']:>10.5g} {r['unit']:<6} {r['before']:>10.5g} "
                  f"{r['after']:>10.5g} {r['z_before']:>8.2f} {r['z_after']:>8.2f}")
        p = result.profile
        print(f"profile {p.id} ({p.name}) on base {base.id}:")
        for n in result.free:
            c = p.constants[n]
            print(f"  {n} = {c.value:g} {c.unit} (base {base.value(n):g}); {c.source}")
        for w in result.warnings:
            print(f"warning: {w}", file=sys.stderr)
        print(f"share link query: prof={custom.encode_profile(p)}")
    if result.ok and args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as fh:
                fh.write(custom.profile_toml(result.profile))
        except OSError as e:
            raise UsageError(f"--out {args.out}: cannot write ({e.strerror or e})") from None
        if not args.json:
            print(f"wrote {args.out}")
    return 0 if result.ok else 2


def _apply_condition(measurements, text: str):
    """``--condition FILE:LINE:key=value[,key=value]`` sets conditions of the measurements of one line."""
    import dataclasses
    from . import parsers
    where, _, assign = text.rpartition(":")
    origin, _, line = where.rpartition(":")
    if not origin or not line.isdigit() or "=" not in assign:
        raise UsageError(f"--condition {text!r}: expected FILE:LINE:key=value[,key=value]")
    cond = {}
    for part in assign.split(","):
        k, _, v = part.partition("=")
        k = k.strip()
        if k not in parsers.CONDITION_KEYS:
            raise UsageError(f"--condition {text!r}: {k!r} is not one of {', '.join(parsers.CONDITION_KEYS)}")
        val, problem = state.PARAMS[k].parse(v)
        if val is None or problem:
            raise UsageError(f"--condition {text!r}: {k}={v!r}; expected {state.PARAMS[k].allowed()}")
        cond[k] = val
    hit = False
    out = []
    for m in measurements:
        if m.origin == origin and m.line == int(line):
            m = dataclasses.replace(m, conditions={**m.conditions, **cond})
            hit = True
        out.append(m)
    if not hit:
        raise UsageError(f"--condition {text!r}: no measurement on {origin}, line {line}")
    return out


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
    f = sub.add_parser("fit", help="fit a CPU profile to your time_bench / pktgen / xdp-bench output or CSV")
    f.add_argument("files", nargs="+", metavar="FILE")
    f.add_argument("--json", action="store_true")
    f.add_argument("--out", metavar="PROFILE", help="write the fitted profile (TOML, inherits the base)")
    f.add_argument("--base", default="e5-1650v4", help="shipped profile to start from (default e5-1650v4)")
    f.add_argument("--free", help="comma-separated constants to fit (default: those the measurements constrain)")
    f.add_argument("--label", help="name of the fitted profile (A-Z a-z 0-9 . _ -)")
    f.add_argument("--condition", action="append", metavar="FILE:LINE:key=value",
                   help="set conditions of one line's measurements, e.g. lab.txt:12:kfl_bulk=1 (repeatable)")
    f.set_defaults(func=cmd_fit)
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
