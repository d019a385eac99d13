"""Command line: ``python -m skbmodel {eval,validate,calibrate,bench,fit} ...``.

``export`` (charts) belongs to the view layer: ``skbmodel/__main__.py`` adds it from ``skbview.cli_export``
through ``main(extra=...)``, so that importing this module never imports skbview.

Bad input prints one line naming the problem on stderr and exits 2; never a traceback.  With ``--json``
the refusal is also a JSON object on stdout, ``{"ok": false, "errors": [...], "runs": [...]}`` (the runs
when they are the reason), so a script that asked for JSON always gets JSON.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import urllib.parse
from pathlib import Path

import numpy as np

from . import provenance
from . import __version__, answers, attribution, composer, mailtext, model, params, question, uncertainty
from .evidence.derivation import pp_counts
from .physics import rest as sk_rest
from .machine import cpuinfo, custom, description, kconfig
from .links import shortlink, state as sk_state, versions
from .bench import run_bench
from .machine.profile import (DEFAULT_PROFILE, PROFILE_DIR, ProfileError, archive_current,
    available_profiles, clear_cache, load_profile, profile_version)


class UsageError(Exception):
    """Bad input: one line on stderr (then ``details``, e.g. the runs to choose from), exit 2.

    ``runs``: the runs of the input when they are the reason (listed in the JSON refusal)."""

    def __init__(self, message: str, details=(), runs=None):
        super().__init__(message)
        self.details = list(details)
        self.runs = list(runs) if runs is not None else None


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise UsageError(message)


def _scalar(v):
    a = np.asarray(v)
    return float(a) if a.ndim == 0 else a.tolist()


def _drivers_json(res: answers.Answers) -> dict:
    """``eval --json``'s ``drivers``: what the page's answer rests on (B - A where the page shows B)."""
    if res.has_b:
        return {"about": "B - A", "outputs": {d.output: attribution.to_json(d.drivers) for d in res.differences
                                              if d.drivers is not None}}
    outs = {res.values[0].output: attribution.to_json(res.drivers)} if res.drivers and res.values else {}
    return {"about": "A", "outputs": outs}


def _split_link(text: str) -> tuple[str, str]:
    """``(address, query)`` of what a user pastes: a query (``bulk=32&zero=memset``), or a whole link
    (``http://host/page?...``, its address without a query being the default view there)."""
    text = text.strip()
    base, sep, query = text.rpartition("?")
    if not sep:
        return ("", text) if "://" not in text else (text, "")
    return base, query


def cmd_eval(args) -> int:
    args.query = _split_link(args.query)[1]  # the full link `patch` and `link` print is taken as its query
    # a bad pv is a StateError: exit 2
    st = provenance.with_link_headline(args.query, sk_state.decode_strict(args.query))
    if args.profile:  # the question is the link's on the file's profile, at the file's clock: every output reads it
        st = _with_profile_file(st, args.profile, args.query)
    if st["path"] == "design":  # a composition that makes no sense has no numbers to print
        bad = composer.problem_text(st)
        if bad:
            raise UsageError(f"design: {bad}")
    q = question.Question.of_state(st)  # the one question every output below answers
    a = q.scenario("a")
    prof = a.profile
    refused = q.refusal("a") or (q.b is not None and q.refusal("b") and f"B: {q.refusal('b')}")
    if refused:  # a placement the machine does not have: the question has no numbers
        raise UsageError(refused)
    out, iv = a.with_intervals(None)  # one pass for both
    outputs = {k: _scalar(v) for k, v in out.items()}
    bounds = {k: [_scalar(iv[k][0]), _scalar(iv[k][1])] for k in outputs}
    notice = None if args.profile else provenance.link_notice(args.query, st)  # the file names its own profile
    if notice:  # the dashboard's version notice, one line
        print(f"notice: {notice['text']}", file=sys.stderr)
    if args.text:  # the page's "Copy as text" block
        link = shortlink.share_link(answers.share_query(st), args.base, st["page"])
        evidence = None
        if st["page"] == "validation":
            from .evidence import validation  # loaded by the commands that read it
            evidence = validation.seed_rows_line()
        sys.stdout.write(mailtext.summary_text(st, link, evidence))
    elif args.json:
        res = answers.of_question(q, drivers=True)
        json.dump({"state": {k: st[k] for k in ["page", *sk_state.MODEL_KEYS, *sk_state.PROFILE_KEYS,
                                                *sk_state.VERSION_KEYS]
                             if k in st},
                   "b_overrides": sk_state.b_overrides(st) if res.has_b else {},
                   "answers": res.to_json(),
                   "outputs": outputs, "intervals": bounds, "interval_level": uncertainty.LEVEL,
                   "units": dict(model.OUTPUT_UNITS), "profile": prof.id, "model_version": __version__,
                   "profile_version": profile_version(prof) if args.profile else
                   st.get("pv") or profile_version(st["cpu"]),
                   "headline": versions.headline(st["page"]), "version_notice": notice,
                   "drivers": _drivers_json(res)},
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


def _pasted_input(args) -> bytes:
    """The bytes of ``FILE`` or of standard input (``-``) a reviewer hands ``patch`` or ``perf``, once its
    ``--cpu`` is known to be a shipped profile."""
    if args.file == "-":
        raw = sys.stdin.buffer.read()
    else:
        try:
            raw = Path(args.file).read_bytes()
        except OSError as e:
            raise UsageError(f"{args.file}: cannot read it ({e.__class__.__name__})") from None
    if args.cpu is not None and args.cpu not in available_profiles():
        raise UsageError(f"--cpu {args.cpu!r}: expected one of {', '.join(available_profiles())}")
    return raw


def _pasted_arguments(parser, what: str) -> None:
    """``FILE|-`` and ``--json``/``--text`` of a command that reads what a reviewer pastes."""
    parser.add_argument("file", help=f"{what}: a file, or - for stdin")
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--text", action="store_true", help="the text block, 70 columns (the default)")


def _print_doc(doc: dict, as_json: bool, text_block) -> None:
    if as_json:
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text_block(doc))


def cmd_patch(args) -> int:
    """``patch FILE|-``: a kernel patch (a diff, a mail, a series or an mbox) as a Compare question, answered."""
    from . import patchin  # unidiff and tree-sitter load for this command alone

    raw = _pasted_input(args)
    if args.cpu is not None and args.profile is not None:
        raise UsageError("--cpu names a shipped profile and --profile a profile file: give one of them")
    rc = 0
    try:
        doc = patchin.answer(raw, args.cpu, args.base, args.profile)
    except patchin.NothingPriced as e:  # the table still shows what was read and why nothing is priced
        print(f"error: {e}", file=sys.stderr)
        doc, rc = e.doc, 2
    except patchin.PatchError as e:
        raise UsageError(str(e)) from None
    _print_doc(doc, args.json, patchin.text_block)
    return rc


def cmd_perf(args) -> int:
    """``perf FILE|-``: a perf report or folded stacks, each symbol's stage and the run beside the model."""
    from . import perfin

    raw = _pasted_input(args)
    try:
        doc = perfin.answer(raw.decode("utf-8", errors="replace"), args.path, args.cpu, args.on_cpu)
    except perfin.PerfError as e:
        raise UsageError(str(e)) from None
    _print_doc(doc, args.json, perfin.text_block)
    return 0


def cmd_link(args) -> int:
    """The canonical short link of a query or a link: what the dashboard writes into the address bar."""
    base, query = _split_link(args.query)
    st, warnings = provenance.read_link(query)  # lenient, as when the link is opened: the same warnings
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    if args.profile:  # the link of the question on the file's profile (its link text, base and clock)
        st = _with_profile_file(st, args.profile, query)
    short = shortlink.shorten(answers.share_query(st))
    public = shortlink.public_base_url()  # the address readers open wins over the one the link was copied at
    base = args.base or (public + st["page"] if public else base)
    print(f"{base}?{short}" if base else short)
    return 1 if warnings else 0


def _with_profile_file(st: dict, path: str, query: str) -> dict:
    """``--profile FILE.toml`` made part of the question (:func:`skbmodel.question.with_profile_file`); the
    keys the query gives keep their value."""
    given = {k for k, _ in urllib.parse.parse_qsl(query.split("?", 1)[-1], keep_blank_values=True)}
    try:
        return question.with_profile_file(st, path, given)
    except question.ProfileFileError as e:
        raise UsageError(str(e)) from None


def _clock_arg(value: str | None, flag: str) -> float | None:
    """A clock option of ``profile derive`` as a number [GHz] (its range is the derivation's to check)."""
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        raise description.UarchError(f"{flag} {value[:20]!r}: expected a number of GHz") from None


def cmd_profile(args) -> int:
    from .evidence.derivation import derive, leave_one_out  # loaded by the commands that read it
    try:
        if args.action == "list-uarch":
            print("\n".join(description.list_lines()))
            return 0
        if args.action == "configure":
            return _configure(args)
        left_out = (args.uarch,) if args.leave_out else ()
        prof = derive.derive(args.uarch, ghz=_clock_arg(args.ghz, "--ghz"), kernel=args.kernel,
                             exclude=left_out, from_isa=args.from_isa, turbo=_clock_arg(args.turbo, "--turbo"))
        # as the shipped derived profiles: the derivation's own error in the spread (without the CPU's
        # own residuals when it is left out)
        prof = leave_one_out.with_derivation_error(
            prof, leave_one_out.derivation_error(leave_one_out.derivation_residuals(), left_out))
    except description.UarchError as e:
        raise UsageError(str(e)) from None
    text = prof.to_toml()
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as e:
            raise UsageError(f"--out {args.out}: cannot write it ({e.__class__.__name__})") from None
        derived = ", ".join(f"{k} {prof.value(k):.4g} ± {prof.stderr(k):.2g}" for k in pp_counts.DERIVED_PP)
        print(f"wrote {args.out}: {prof.name}; {derived} cycles (1 sd)")
    else:
        sys.stdout.write(text)
    return 0


def _configure(args) -> int:
    """``profile configure --base ID --set field=value``: the profile under another kernel configuration."""
    if args.base not in available_profiles():
        raise UsageError(f"--base {args.base!r}: expected one of {', '.join(available_profiles())}")
    try:
        settings = kconfig.parse_settings(args.set)
        prof = kconfig.configured(load_profile(args.base), settings)
    except kconfig.ConfigError as e:
        raise UsageError(str(e)) from None
    thunk, cpu = settings.get("return_thunk", ""), cpuinfo.match_cpu(args.base).description
    if thunk.startswith("srso") and cpu is not None and cpu.vendor != "AMD":
        # SRSO (Speculative Return Stack Overflow) is a bug of AMD's Zen cores: no other core runs its thunk
        raise UsageError(f"return_thunk={thunk}: SRSO is a mitigation for AMD Zen cores, and {args.base} runs on "
                         f"{cpu.vendor} {cpu.uarch}")
    text = prof.to_toml()
    if not args.out:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as e:
        raise UsageError(f"--out {args.out}: cannot write it ({e.__class__.__name__})") from None
    moved = ", ".join(f"{k} {c.value:.4g}" for k, c in prof.constants.items()) or "no constant moved"
    print(f"wrote {args.out}: {kconfig.describe(prof.config)}; {moved}")
    return 0


def cmd_validate(args) -> int:
    from .evidence import validation  # loaded by the commands that read it
    if args.out_of_sample or args.protocol:
        return _validate_out_of_sample(args)
    rows = validation.validate()
    bad = [r for r in rows if not r["ok"]]
    if args.json:
        json.dump({"rows": rows, "not_covered": validation.NOT_COVERED, "n_ok": len(rows) - len(bad),
                   "n_rows": len(rows), "evidence": validation.evidence_counts(rows)}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(f"{'id':<8} {'measured':>12} {'predicted':>12} {'unit':<8} {'error':>8}  {'tolerance':<15} ok   "
              "evidence")
        for r in rows:
            print(f"{r['id']:<8} {r['measured']:>12.6g} {r['predicted']:>12.6g} {r['unit']:<8} "
                  f"{r['rel_error'] * 100:>7.2f}%  {r['tolerance']:<15} {'yes' if r['ok'] else 'NO ':<4} "
                  f"{r['evidence']}")
        for k, why in validation.NOT_COVERED.items():
            print(f"{k:<8} not covered: {why}")
        print(f"{len(rows) - len(bad)} of {len(rows)} covered seed rows within tolerance: "
              f"{validation.evidence_summary(rows)}")
    return 1 if bad else 0


def _validate_out_of_sample(args) -> int:
    from .evidence import corpus, outofsample, protocols  # loaded by the commands that read it
    try:
        df = corpus.load_corpus(args.corpus)
    except (corpus.CorpusError, OSError) as e:
        raise UsageError(f"--corpus: {e}") from None
    chosen = protocols.selected(args.protocol)
    # the precision the docs report, not the machine's
    rep = outofsample.rounded(outofsample.report(df, chosen, args=args))
    if args.json:
        json.dump(rep, sys.stdout, indent=1, default=float)
        sys.stdout.write("\n")
    else:
        print(outofsample.format_report(rep, chosen, protocols.LEAD))
    return 0


def cmd_calibrate(args) -> int:
    from .evidence import calibration  # loaded by the commands that read it
    out = args.out or str(PROFILE_DIR)
    if Path(out).resolve() == PROFILE_DIR.resolve():
        # share links record the profile version they were made with: keep the versions about to be replaced
        for pid, version, status in archive_current():
            if status == "archived":
                print(f"archived {pid} version {version} before refitting it")
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
        for name, r in res["paths"].items():
            print(f"path={name}: {r['states_per_s'] / 1e6:.2f} M states/s, {r['ratio']:.0f}x the scalar loop")
    return 0


MAX_FIT_FILE_BYTES = 5 * 1024 * 1024  # the dashboard's upload limit (.streamlit/config.toml)
#: a clock above this is not a TSC clock (and one at or below 0 is no clock)
MAX_GHZ = 10.0


def check_ghz(value, what: str = "--ghz") -> float:
    """The clock given by the user [GHz]; :class:`UsageError` unless 0 < value <= 10 and within a profile's range."""
    try:
        ghz = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{what} {value}: expected the TSC clock in GHz, e.g. {what} 3.6") from None
    if not math.isfinite(ghz) or ghz <= 0 or ghz > MAX_GHZ:
        raise UsageError(f"{what} {value}: expected the TSC clock in GHz, above 0 and at most {MAX_GHZ:g} "
                         f"(e.g. {what} 3.6)")
    if not custom.GHZ_RANGE[0] <= ghz <= custom.GHZ_RANGE[1]:
        lo, hi = custom.GHZ_RANGE
        raise UsageError(f"{what} {value}: a profile's clock must be between {lo:g} and {hi:g} GHz")
    return ghz


def cmd_fit(args) -> int:
    """Parse measurement files, split them into runs, fit the chosen constants, print (or --json), write --out."""
    from .evidence import parsers, userinput  # loaded by the commands that read it
    if args.base is not None and args.base not in available_profiles():
        raise UsageError(f"--base {args.base!r}: expected one of {', '.join(available_profiles())}")
    if args.base is not None and args.cpu is not None:
        raise UsageError("--base names the profile to start from and --cpu the CPU whose profile to start from: "
                         "give one of them")
    if args.profile is not None and (args.base is not None or args.cpu is not None):
        raise UsageError("--profile is the profile file to start from: give it without --base and --cpu")
    ghz_given = check_ghz(args.ghz) if args.ghz is not None else None
    if args.run is not None and args.each_run:
        raise UsageError("--run N fits one run and --each-run every run: give one of them")
    measurements, problems, notes, runs, repairs, texts = [], [], [], [], [], []
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
        texts.append(data.decode("utf-8", "replace"))
        measurements += res.measurements
        problems += [str(e) for e in res.errors]
        notes += res.notes
        runs += res.runs
        repairs += res.repairs
    for c in args.condition or []:
        measurements = _apply_condition(measurements, c)
    start = _start(args, texts)
    base = _profile_file(args.profile) if args.profile is not None else load_profile(start["profile"])
    if start["line"] and not args.json:
        print(start["line"])
    several = len({r.origin for r in runs}) > 1
    listing = [r.describe(k, with_origin=several) for k, r in enumerate(runs, start=1)]
    if args.run is not None:
        if not 1 <= args.run <= len(runs):
            found = f"{len(runs)} run{'s' if len(runs) != 1 else ''} ({'; '.join(listing)})" if runs else "no run"
            raise UsageError(f"--run {args.run}: the input holds {found}", runs=listing)
        picks = [[args.run]]
    elif args.each_run:
        if not runs:
            picks = [[]]
        else:
            if args.out and len(runs) > 1 and "{run}" not in args.out:
                raise UsageError(f"--each-run writes one profile per run: give --out a pattern with {{run}}, "
                                 f"e.g. --out lab-run{{run}}.toml ({len(runs)} runs found)", runs=listing)
            picks = [[k] for k in range(1, len(runs) + 1)]
    else:
        picks = [list(range(1, len(runs) + 1))]
        clash = userinput.runs_in_conflict(measurements, {(r.origin, r.index) for r in runs}) if len(runs) > 1 else None
        if clash:
            _key, a, b = clash
            raise UsageError(
                f"the input holds {len(runs)} runs that measure the same tests ({a.test}: {a.value:g} {a.unit} on "
                f"{a.where()}, {b.value:g} {b.unit} on {b.where()}); choose one with --run N, or fit each to its "
                "own profile with --each-run", details=listing, runs=listing)
    docs, rc = [], 0
    for pick in picks:
        sel = {(runs[k - 1].origin, runs[k - 1].index) for k in pick}
        ms = [m for m in measurements if not runs or (m.origin, m.run) in sel]
        number = pick[0] if len(pick) == 1 and len(runs) > 1 or args.run is not None else None
        run = runs[number - 1] if number else None
        out = args.out.replace("{run}", str(number or 1)) if args.out else None
        if args.label:
            label = args.label + (f"-run{number}" if args.each_run and number else "")
        else:
            label = (custom.sanitize_label(run.label) or f"run{number}") if run else ""
        doc, code = _fit_one(args, base, ms, problems if not docs else [], notes if not docs else [], ghz_given,
                             run=run, number=number, out=out, label=label, repairs=repairs if not docs else [])
        docs.append(doc)
        rc = max(rc, code)
    if args.json:
        if args.each_run:
            json.dump({"ok": all(d["ok"] for d in docs), "runs": listing, "start": start, "fits": docs}, sys.stdout,
                      indent=1)
        else:
            docs[0]["runs"] = listing
            docs[0]["start"] = start
            json.dump(docs[0], sys.stdout, indent=1)
        sys.stdout.write("\n")
    return rc


def _profile_file(path: str):
    """A profile file as ``fit --profile`` starts from it (the checks an uploaded profile gets)."""
    try:
        return custom.load_profile_text(Path(path).read_bytes(), origin=path)
    except OSError as e:
        raise UsageError(f"--profile {path}: cannot read it ({e.__class__.__name__})") from None
    except (custom.ProfileLinkError, ProfileError) as e:
        raise UsageError(str(e)) from None


def _start(args, texts) -> dict:
    """The profile the fit starts from: ``--profile FILE``, ``--base``, else the user's CPU (``--cpu``, else the
    cpuinfo lines in the input files) matched to a machine description, else the default."""
    if args.profile is not None:
        return {"profile": args.profile, "cpu": None, "description": None, "line": None}
    if args.base is not None:
        return {"profile": args.base, "cpu": None, "description": None, "line": None}
    pid, m = cpuinfo.start_profile(args.cpu, texts, default=DEFAULT_PROFILE)
    return {"profile": pid, "cpu": m.text if m else None,
            "description": m.description.name if m and m.description else None,
            "line": m.line(DEFAULT_PROFILE) if m else None}


def _fmt_pm(value: float, err: float) -> str:
    """``91.15 ± 0.32``: the value to the digits its standard error supports (at least 3 significant)."""
    if not math.isfinite(err):
        return f"{value:.6g} ± inf (not determined by these measurements)"
    if err <= 0:
        return f"{value:.6g} ± 0"
    digits = max(0, 1 - int(math.floor(math.log10(err))))
    return f"{value:.{digits}f} ± {err:.{digits}f}"


def _fit_one(args, base, measurements, problems, notes, ghz_given, run=None, number=None, out=None, label="",
             repairs=()):
    """Fit one selection of measurements; returns ``(json document, exit code)`` and prints the text report."""
    from .evidence import parsers, userfit  # loaded by the commands that read it
    clock = parsers.infer_clock(measurements)
    if ghz_given is not None:
        ghz, ghz_source = ghz_given, "given with --ghz" + (f" ({clock.describe()}: {clock.ghz:.4g} GHz)"
                                                          if clock.ghz else "")
    elif clock.ghz is not None:
        ghz, ghz_source = clock.ghz, clock.describe()
        lo, hi = custom.GHZ_RANGE
        if not lo <= ghz <= hi:
            raise UsageError(f"the clock inferred from the cycles/ns pairs, {ghz:.4g} GHz, is outside "
                             f"{lo:g}-{hi:g} GHz; give the clock with --ghz")
    else:
        ghz, ghz_source = None, f"of base profile {base.id} (no cycles/ns pairs in the input; set it with --ghz)"
    where = f" ({run.describe(number, with_origin=True)})" if run is not None else ""
    free = [n.strip() for n in args.free.split(",") if n.strip()] if args.free else \
        userfit.suggest_free(measurements, base)
    result = userfit.fit(measurements, base, free, label=label, ghz=ghz, ghz_source=ghz_source)
    clock_doc = {"ghz": ghz if ghz is not None else base.ghz, "source": ghz_source, "pairs": clock.pairs,
                 "inferred_ghz": clock.ghz, "warning": clock.warning}
    doc = {"ok": result.ok, "base": base.id, "run": number, "run_label": run.label if run else None,
           "clock": clock_doc, "free": result.free, "errors": result.errors,
           "warnings": ([clock.warning] if clock.warning and ghz_given is None else []) + result.warnings,
           "parse_problems": problems, "notes": notes, "repairs": list(repairs),
           "measurements": [dict(origin=m.origin, line=m.line, run=m.run, test=m.test, value=m.value, unit=m.unit,
                                 conditions=m.conditions, output=m.output, kind=m.kind, note=m.note,
                                 repeats=list(m.repeats), typical=m.typical or None)
                            for m in measurements],
           "noise": {"ns": result.noise.ns, "tests": result.noise.tests, "values": result.noise.values,
                     "source": result.noise.describe()},
           "rows": result.rows}
    if result.ok:
        p = result.profile
        doc["profile"] = {"id": p.id, "name": p.name, "link": custom.encode_profile(p), "ghz": p.ghz,
                          "constants": {n: {"value": p.value(n), "stderr": result.stderr.get(n), "base": base.value(n),
                                            "unit": p.constants[n].unit, "source": p.constants[n].source}
                                        for n in result.free},
                          "correlation": result.corr}
    if args.json and not result.ok:  # the JSON says it all; one line on stderr still names the refusal
        print(f"error: {result.errors[0] if result.errors else 'the fit was not done'}{where}", file=sys.stderr)
    if not args.json:
        for msg in problems:
            print(f"warning: {msg}", file=sys.stderr)
        for msg in repairs:
            print(f"repaired: {msg}")
        if run is not None:
            print(f"{run.describe(number, with_origin=True)}")
        mapped = [m for m in measurements if m.output]
        print(f"{len(measurements)} measurements parsed, {len(mapped)} mapped to model outputs")
        for m in measurements:
            if not m.output:
                print(f"  not used: {m.where()}: {m.test} = {m.value:g} {m.unit} ({m.note})")
        for m in measurements:
            if m.output and m.repeats:
                print(f"  repeats: {m.where()}: {m.test} = {m.value:g} {m.unit}, {m.repeats_text()}")
        if result.noise.ns is not None:
            print(f"noise: {result.noise.describe()}")
        print(f"clock: {ghz if ghz is not None else base.ghz:.5g} GHz, {ghz_source}")
        if clock.warning and ghz_given is None:
            print(f"warning: {clock.warning}", file=sys.stderr)
        if not result.ok:
            for e in result.errors:
                print(f"error: {e}{where}", file=sys.stderr)
            return doc, 2
        print(f"{'where':<32} {'test':<28} {'measured':>10} {'unit':<6} {'before':>10} {'after':>10} "
              f"{'z before':>8} {'z after':>8}")
        for r in result.rows:
            loc = f"{r['origin'][-22:]}:{r['line']}"
            print(f"{loc:<32} {r['test'][:28]:<28} {r['measured']:>10.5g} {r['unit']:<6} {r['before']:>10.5g} "
                  f"{r['after']:>10.5g} {r['z_before']:>8.2f} {r['z_after']:>8.2f}")
        p = result.profile
        print(f"profile {p.id} ({p.name}) on base {base.id}, clock {p.ghz:.6g} GHz:")
        for n in result.free:
            c = p.constants[n]
            print(f"  {n} = {_fmt_pm(c.value, result.stderr.get(n, math.nan))} {c.unit} "
                  f"(base {base.value(n):g}); {c.source}")
        for w in result.warnings:
            print(f"warning: {w}", file=sys.stderr)
        print(f"share link query: prof={custom.encode_profile(p)}")
    if result.ok and out:
        try:
            with open(out, "w", encoding="utf-8") as fh:
                fh.write(custom.profile_toml(result.profile))
        except OSError as e:
            raise UsageError(f"--out {out}: cannot write ({e.strerror or e})") from None
        if not args.json:
            print(f"wrote {out}")
    return doc, 0 if result.ok else 2


def _apply_condition(measurements, text: str):
    """``--condition FILE:LINE:key=value[,key=value]`` sets conditions of the measurements of one line."""
    from .evidence import userinput  # loaded by the commands that read it
    where, _, assign = text.rpartition(":")
    origin, _, line = where.rpartition(":")
    if not origin or not line.isdigit() or "=" not in assign:
        raise UsageError(f"--condition {text!r}: expected FILE:LINE:key=value[,key=value]")
    cond, problem = userinput.parse_conditions(assign)  # the same rules as the Calibrate page's table
    if problem:
        raise UsageError(f"--condition {text!r}: {problem}")
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


def build_parser(extra=(), argv=()) -> argparse.ArgumentParser:
    """The parser of every subcommand; each of ``extra`` is called with the subparsers to add its own."""
    p = _Parser(prog="python -m skbmodel", description="Calibrated cost model of the Linux SKB memory lifecycle.")
    p.add_argument("--version", action="version", version=f"skbmodel {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    e = sub.add_parser("eval", help="evaluate the model for a share-link query string",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog=f"page={'|'.join(sk_state.PAGES)} (default {sk_state.PAGES[0]}): the page whose question "
                              f"it is\n" + params.help_text(sk_state.key_of("<key>", "b")) + "\n\n"
                              + composer.help_text())
    e.add_argument("query", nargs="?", default="",
                   help="a query string ('bulk=32&zero=memset') or a whole link (http://host/page?...)")
    fmt = e.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--text", action="store_true",
                     help="the plain-text summary to paste into a mail (what the page's 'Copy as text' shows): "
                          "what differs from the defaults, the page's numbers with 90 %% intervals, B - A, the "
                          "versions and the short link; ASCII, 70 columns")
    e.add_argument("--base", metavar="URL", help="the dashboard's address for the link in --text (default: the "
                   f"public address {shortlink.PUBLIC_URL_ENV} or {shortlink.PUBLIC_URL_FILE} sets, + <page>; "
                   f"without one {shortlink.DEFAULT_BASE_URL}<page>)")
    e.add_argument("--profile", metavar="FILE.toml",
                   help="evaluate with this profile file (e.g. from 'profile derive' or 'fit --out') instead of "
                        "the link's CPU profile")
    e.set_defaults(func=cmd_eval)
    ln = sub.add_parser("link", help="the canonical short share link of a query string or a link",
                        description="Print the short share link (v=2: only what differs from the defaults of "
                        "its model version, plus the versions and the page) of a query string or of a link, "
                        "long or short. Parameters that are unknown or out of range get the warning the "
                        "dashboard shows when the link is opened (stderr, exit 1); the link printed is then "
                        "the one of the view that opens.")
    ln.add_argument("query", help="a query string ('bulk=32&zero=memset') or a whole link (http://host/page?...)")
    ln.add_argument("--base", metavar="URL", help="address to put before '?' (default: the public address "
                    f"{shortlink.PUBLIC_URL_ENV} or {shortlink.PUBLIC_URL_FILE} sets, + <page>; without one the "
                    "link's own, if any)")
    ln.add_argument("--profile", metavar="FILE.toml",
                    help="the link of the question on this profile file (its link text, base and clock)")
    ln.set_defaults(func=cmd_link)
    pa = sub.add_parser("patch", help="a kernel patch mail or diff: its predicted per-packet difference and verdict",
                        description="Map a kernel patch (a unified diff, a patch mail, a series or an mbox; FILE or - "
                        "for stdin) to the mechanisms the model prices (skbmodel/data/patch-mechanisms.toml) on the "
                        "net change of each function it touches, build A (before) and B (after) on the Compare page "
                        "and print Compare's verdict: B - A of the path's ns/packet with its 90 % interval, every "
                        "changed function mapped or not modelled, what the mails measured and the Compare link. A "
                        "patch that touches no priced mechanism exits 2.")
    _pasted_arguments(pa, "the patch")
    pa.add_argument("--cpu", metavar="ID", help="the CPU profile (default: the link default's)")
    pa.add_argument("--base", metavar="URL", help="the dashboard's address for the link")
    pa.add_argument("--profile", metavar="FILE.toml",
                    help="answer on this profile file (e.g. from 'profile derive' or 'fit --out') at its clock")
    pa.set_defaults(func=cmd_patch)
    pf = sub.add_parser("perf", help="a perf report: each symbol's stage and the run's shares beside the model's",
                        description="Read a perf report (perf report --stdio, with or without children, --sort sym "
                        "or dso,sym) or perf script folded stacks (FILE or - for stdin), map each symbol to a stage "
                        "(skbmodel/data/kernel-symbols.toml) and print the run's share per stage beside the model's "
                        "for the path and CPU, the disagreements ranked with a reason, and the symbols the map does "
                        "not place. An input with no perf lines exits 2.")
    _pasted_arguments(pf, "the perf output")
    pf.add_argument("--path", choices=tuple(sk_rest.CONTENTS), help="the modelled path (default: the saved profile's "
                    "header, else guessed from the symbols)")
    pf.add_argument("--cpu", metavar="ID", help="the CPU profile (default: the default profile)")
    pf.add_argument("--on-cpu", metavar="N", help="only the entries of this CPU in the report's CPU column (a "
                    "cpumap report of both CPUs: the kthread's CPU against the destination)")
    pf.set_defaults(func=cmd_perf)
    pr = sub.add_parser("profile", help="machine descriptions and the profiles derived from them")
    pr_sub = pr.add_subparsers(dest="action", required=True, parser_class=_Parser)
    pr_sub.add_parser("list-uarch", help="list the machine descriptions, one per line, name first")
    dv = pr_sub.add_parser("derive", help="derive a profile from a machine description")
    dv.add_argument("--uarch", required=True, metavar="NAME", help="description name (see list-uarch)")
    dv.add_argument("--ghz", metavar="X", help="TSC clock of your machine (default: the description's)")
    dv.add_argument("--turbo", metavar="X", help="the core clock a busy loop runs at on your machine, in GHz "
                                                 "(default: the description's part; a desktop part of a server "
                                                 "core boosts higher: see list-uarch)")
    dv.add_argument("--kernel", metavar="K", help=f"mainline kernel, e.g. 6.12 (default {pp_counts.LATEST_KERNEL})")
    dv.add_argument("--out", metavar="FILE.toml", help="write the profile there (default: print it)")
    dv.add_argument("--leave-out", action="store_true",
                    help="do not use this CPU's own measurements (as validate --out-of-sample's 'other CPU' does)")
    dv.add_argument("--from-isa", metavar="ISA", choices=("x86", "arm64"),
                    help="derive the page_pool costs from this instruction set's measured CPUs (x86 for an arm64 "
                         "core: their instruction counts priced with what arm64 does differently; default: the "
                         "core's own instruction set where it has data)")
    cf = pr_sub.add_parser("configure", help="a shipped profile under another kernel configuration (memcg kmem, "
                                             "PREEMPT, debug, VM)")
    cf.add_argument("--base", required=True, metavar="ID", help="shipped profile (its stated configuration is the "
                                                                "starting point)")
    cf.add_argument("--set", action="append", required=True, metavar="FIELD=VALUE",
                    help="e.g. memcg_kmem=active (fields: " + ", ".join(f"{k}: {'/'.join(v[0])}"
                                                                       for k, v in kconfig.FIELDS.items()) + ")")
    cf.add_argument("--out", metavar="FILE.toml", help="write the profile there (default: print it)")
    pr.set_defaults(func=cmd_profile)
    v = sub.add_parser("validate", help="compare every covered seed row with the model")
    v.add_argument("--json", action="store_true")
    v.add_argument("--out-of-sample", action="store_true",
                   help="predict what no fit saw: published curves fitted on 3 points, seed rows with their "
                        "source or row left out; per subsystem MAPE and max error, and the in-sample degrees "
                        "of freedom")
    v.add_argument("--corpus", metavar="CSV", help="public measurements to validate against (default: the shipped "
                   "corpus, skbmodel/data/public-measurements.csv; same columns)")
    if argv[:1] == ["validate"]:  # the protocols' own options (they load the evidence wing): for validate alone
        from .evidence import protocols
        protocols.add_arguments(v)
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
    f.add_argument("--base", help=f"shipped profile to start from (default: the profile of your CPU, else "
                                  f"{DEFAULT_PROFILE})")
    f.add_argument("--cpu", metavar="NAME",
                   help="your CPU, to start from its profile: a cpuinfo model name (\"Intel(R) Xeon(R) Gold 6140 CPU "
                        "@ 2.30GHz\"), a description (profile list-uarch) or an arm64 CPU part (0x41:0xd0c); "
                        "default: the 'model name' line of /proc/cpuinfo pasted into the input")
    f.add_argument("--profile", metavar="FILE.toml",
                   help="start from this profile file (e.g. from 'profile derive' or an earlier 'fit --out'); the "
                        "fitted profile inherits the file's shipped base and holds the file's constants too")
    f.add_argument("--free", help="comma-separated constants to fit (default: those the measurements constrain)")
    f.add_argument("--label", help="name of the fitted profile (A-Z a-z 0-9 . _ -)")
    f.add_argument("--condition", action="append", metavar="FILE:LINE:key=value",
                   help="set conditions of one line's measurements, e.g. lab.txt:12:kfl_bulk=1 (repeatable)")
    f.add_argument("--ghz", type=str, metavar="X",
                   help="TSC clock of the measurements in GHz (default: inferred from lines with cycles and ns)")
    f.add_argument("--run", type=int, metavar="N",
                   help="fit run N only, when the input holds several (baseline and patched kernels, repeats)")
    f.add_argument("--each-run", action="store_true",
                   help="fit each run to its own profile (--out then takes a pattern with {run})")
    f.set_defaults(func=cmd_fit)
    for add in extra:
        add(sub)
    return p


def _refusal(e: Exception) -> dict:
    """The JSON a refused command prints with ``--json``."""
    doc = {"ok": False, "errors": [str(e)]}
    runs, details = getattr(e, "runs", None), getattr(e, "details", [])
    if runs is not None:
        doc["runs"] = runs
    elif details:
        doc["details"] = list(details)
    return doc


def main(argv=None, extra=()) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser(extra, argv).parse_args(argv)
        return args.func(args)
    except (UsageError, sk_state.StateError, ProfileError, shortlink.PublicUrlError) as e:
        print(f"error: {e}", file=sys.stderr)
        for line in getattr(e, "details", ()):
            print(f"  {line}", file=sys.stderr)
        if "--json" in argv:  # also when the arguments themselves were refused (before --json was read)
            json.dump(_refusal(e), sys.stdout, indent=1)
            sys.stdout.write("\n")
        return 2
    except BrokenPipeError:
        return 0
