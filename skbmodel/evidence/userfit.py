"""Fit a CPU profile to the user's own measurements.

:func:`fit` takes parsed :class:`~skbmodel.evidence.parsers.Measurement` records (mapped to model outputs),
a base profile and the names of the constants to free, builds one
:class:`~skbmodel.evidence.seed_checks.RowSpec` per measurement (measured value, unit and tolerance given
directly) and runs :func:`skbmodel.evidence.calibration.fit_profile`.  Every fitted constant records which
measurements it was fitted from (``source = "fitted from: lab.txt, line 35, 36"``).

The clock: :func:`fit` takes ``ghz`` (the TSC clock inferred from the cycles/ns pairs,
:func:`skbmodel.evidence.parsers.infer_clock`, or given by the user); the fitted profile gets that clock,
ns values compare with cycles through it, and the ns twin of a cycles value (one time_bench
line prints both) is not fitted a second time.  Each fitted constant comes with a standard error
(:attr:`FitResult.stderr`); a constant that ends on a bound is named in a warning.

A test repeated within a run arrives as one measurement with its repeats (its typical value,
:mod:`skbmodel.evidence.parsers.repeats`); the spread between the repeats, pooled over the tests, becomes
the fitted profile's ``noise_floor_ns`` (its source says how many values it pools), which the A/B
verdicts use while the profile is in use.

Nothing here raises for bad input: problems come back in :attr:`FitResult.errors`, and a result
with errors has no profile -- the caller keeps the model it had.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import calibration, parsers, seed_checks, validation
from ..machine import custom, era
from .. import model
from .parsers.timebench import IN_RUN_BASELINES
from ..machine.profile import Profile, available_profiles, load_profile

#: constants that are kernel facts or sizes: never free
FIXED_KINDS = ("kernel",)
MAX_FREE = 12
#: a fitted value within this share of its bound range from a bound "ended on" the bound
ON_BOUND = 1e-3

#: the constants each test family measures (by model output prefix), preferred as free constants
#: for measurements of that family (see :func:`suggest_free`)
FAMILY = {
    # one slab_bulk_test01 curve: its start (bulk 1), its middle (the per-object cost) and its
    # long-run end; the slow-path costs between them (the slab refill, the step at the CPU slab's
    # fill level) come from the base profile.  Three points spread over a published curve then
    # predict the rest (``python -m skbmodel validate --out-of-sample``).
    "slub.loop_cycles": ("slub_fast_pair_cycles", "slub_loop_call_cycles", "slub_free_slow_extra_cycles"),
    "slub.bulk_cycles": ("slub_fast_pair_cycles", "slub_bulk_obj_pair_cycles", "l1_miss_cycles"),
    "slub.": ("slub_bulk_obj_pair_cycles", "slub_fast_pair_cycles", "slub_free_slow_extra_cycles"),
    "zero.": ("stos_setup_cycles", "stos_line_cycles", "stos_drain_line_cycles", "erms_setup_cycles",
              "erms_line_cycles"),
    "page_pool.": ("pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles"),
    # one page_bench04_bulk curve: bulk 1 (one page at a time), then the per-call and per-page costs
    "page_alloc.bulk_cycles": ("page_single_cycles", "page_bulk_call_cycles", "page_bulk_page_cycles"),
    "kfree_skb_list.": ("kfl_base_cycles", "slub_free_slow_extra_cycles"),
    "veth.": ("veth_base_cycles",),
    "napi_defer.": ("napi_base_cycles",),
    "cpumap.": ("cpumap_src_base_cycles", "cpumap_dst_stack_cycles", "cpumap_redirect_cycles", "xcpu_line_cycles"),
}
#: the largest noise a profile stores [ns] (the top of the noise control's range, params.noise_ns)
NOISE_MAX_NS = 50.0
#: a candidate free constant must keep this share of its effect after the chosen ones are projected out
DISTINCT_EFFECT = 0.1


@dataclasses.dataclass
class FitResult:
    ok: bool
    profile: Profile | None
    base_id: str
    free: list[str]
    rows: list[dict]
    errors: list[str]
    warnings: list[str]
    #: standard error of each free constant (inf: the data cannot determine it), and their correlations
    stderr: dict = dataclasses.field(default_factory=dict)
    corr: list = dataclasses.field(default_factory=list)
    ghz: float | None = None       # the clock of the fitted profile
    ghz_source: str = ""
    #: the in-run baselines of the measurements (``{"atomic_inc_cycles": 13.0, ...}``, cycles), inputs
    #: recorded with the fitted profile (:func:`in_run_baselines`)
    baselines: dict = dataclasses.field(default_factory=dict)
    #: the spread between the repeats of the measurements, stored as the profile's noise floor
    noise: parsers.Noise = dataclasses.field(default_factory=lambda: parsers.Noise(None))

    @property
    def worst_after(self) -> float:
        return max((abs(r["z_after"]) for r in self.rows), default=0.0)


def freeable(profile: Profile) -> list[str]:
    """Constants a user may free (all but kernel constants)."""
    return [k for k, c in profile.constants.items() if c.kind not in FIXED_KINDS]


def usable(measurements) -> list:
    """The measurements a fit can use: mapped to an output, compatible unit, finite positive value."""
    out = []
    for m in measurements:
        if m.output and m.output in parsers.MAPPABLE_OUTPUTS and parsers.compatible(m.output, m.unit) \
                and math.isfinite(m.value) and m.value > 0 and m.tol > 0:
            out.append(m)
    return out


def check(measurements) -> list[str]:
    """Problems that stop a fit: unusable mappings and contradicting measurements (naming the lines)."""
    errors = []
    for m in measurements:
        if not m.output:
            continue
        if m.output not in parsers.MAPPABLE_OUTPUTS:
            errors.append(f"{m.where()}: {m.output!r} is not a model output that can be fitted")
        elif not parsers.compatible(m.output, m.unit):
            errors.append(f"{m.where()}: a value in {m.unit} cannot be compared with {m.output} "
                          f"({model.OUTPUT_UNITS[m.output]}); expected a value in "
                          f"{' or '.join(sorted(parsers._COMPATIBLE[model.OUTPUT_UNITS[m.output]]))}")
        elif not (math.isfinite(m.value) and m.value > 0):
            errors.append(f"{m.where()}: value {m.value!r} must be a positive number")
        elif not 0 < m.tol <= 1:
            errors.append(f"{m.where()}: tolerance {m.tol!r} must be in (0, 1] (a fraction, 0.05 = 5 %)")
        else:
            prob = parsers.check_condition(m.conditions)
            if prob:
                errors.append(f"{m.where()}: {prob}")
            bad = [k for k in m.conditions if k not in parsers.CONDITION_KEYS]
            if bad:
                errors.append(f"{m.where()}: unknown condition(s) {', '.join(bad)}; allowed: "
                              f"{', '.join(parsers.CONDITION_KEYS)}")
    for m in usable(measurements):
        spread = repeat_spread(m)
        if spread is not None and spread[0] > 2 * m.tol and m.typical != parsers.repeats.MINIMUM:
            errors.append(_spread_text(m, spread) + "; leave one of them out or set their conditions apart")
    groups: dict[tuple, list] = {}
    for m in usable(measurements):
        groups.setdefault(m.key(), []).append(m)
    for key, ms in groups.items():
        if len(ms) < 2:
            continue
        lo = min(ms, key=lambda m: m.value)
        hi = max(ms, key=lambda m: m.value)
        tol = max(lo.tol, hi.tol)
        spread = (hi.value - lo.value) / ((hi.value + lo.value) / 2)
        if spread > 2 * tol:
            cond = ", ".join(f"{k}={v}" for k, v in key[2]) or "the same conditions"
            errors.append(f"{hi.where()} ({hi.value:g} {hi.unit}) contradicts {lo.where()} ({lo.value:g} {lo.unit}) "
                          f"for {key[0]} at {cond}: they differ by {spread * 100:.0f} %, more than twice the "
                          f"±{tol * 100:g} % tolerance; leave one of them out or set their conditions apart")
    return errors


def repeat_spread(m) -> tuple[float, int, int] | None:
    """``(relative spread, line of the highest, line of the lowest)`` of a measurement's repeats, or None."""
    if len(m.repeats) < 2:
        return None
    hi = max(range(len(m.repeats)), key=lambda k: m.repeats[k])
    lo = min(range(len(m.repeats)), key=lambda k: m.repeats[k])
    a, b = m.repeats[hi], m.repeats[lo]
    return (a - b) / ((a + b) / 2), m.repeat_lines[hi], m.repeat_lines[lo]


def _spread_text(m, spread) -> str:
    rel, hi, lo = spread
    cond = ", ".join(f"{k}={v}" for k, v in m.conditions.items()) or "the same conditions"
    return (f"{m.origin}, line {hi} ({max(m.repeats):g} {m.unit}) contradicts {m.origin}, line {lo} "
            f"({min(m.repeats):g} {m.unit}) for {m.output} at {cond}: repeats of one test differ by "
            f"{rel * 100:.0f} %, more than twice the ±{m.tol * 100:g} % tolerance")


def specs_for(measurements, profile_id: str) -> list[seed_checks.RowSpec]:
    """One row spec per usable measurement (ids ``m0, m1, ...`` in order)."""
    return [seed_checks.RowSpec(id=f"m{i}", profile=profile_id, output=m.output, state=dict(m.conditions),
                               tol_kind="rel", tol=float(m.tol), note=m.where(), measured=float(m.value),
                               unit=m.unit)
            for i, m in enumerate(measurements)]


def _with_bounds(profile: Profile, names) -> Profile:
    consts = dict(profile.constants)
    for n in names:
        c = consts[n]
        b = c.bounds or custom.default_bounds(n, c.value)
        if n == "ghz":
            b = (max(b[0], custom.GHZ_RANGE[0]), min(b[1], custom.GHZ_RANGE[1]))
        consts[n] = dataclasses.replace(c, bounds=(float(b[0]), float(b[1])))
    return dataclasses.replace(profile, constants=consts)


def sensitive(measurements, profile: Profile, names=None) -> list[str]:
    """Constants (of ``names``, default: every freeable one) that some usable measurement depends on."""
    ms = usable(measurements)
    names = list(names or freeable(profile))
    if not ms or not names:
        return []
    work = dataclasses.replace(profile, id="_fit")
    sens = calibration.row_sensitivity(work, specs_for(ms, work.id), names)
    return [n for j, n in enumerate(names) if sens[:, j].any()]


def distinct_points(measurements, by_unit: bool = False) -> int:
    """Distinct measurements: model output + conditions (+ unit with ``by_unit``; a time_bench line's
    cycles value and its ns twin are one point once the clock is known)."""
    return len({(m.output, *((m.unit,) if by_unit else ()), tuple(sorted(m.conditions.items())))
                for m in usable(measurements)})


def family_of(measurements) -> list[str]:
    """The test family's constants, most specific family first (:data:`FAMILY`): one output that
    has a family of its own (one SLUB curve) uses it; otherwise every family whose prefix some
    measurement's output starts with, in :data:`FAMILY` order."""
    outputs = {m.output for m in measurements}
    if len(outputs) == 1 and next(iter(outputs)) in FAMILY:
        return list(FAMILY[next(iter(outputs))])
    names = [n for prefix, group in FAMILY.items() if prefix.endswith(".") and
             any(o.startswith(prefix) for o in outputs) for n in group]
    return list(dict.fromkeys(names))


def suggest_free(measurements, profile: Profile) -> list[str]:
    """Default free constants: those the measurements can determine, so a short curve predicts the rest.

    The rule:

    1. candidates are the ``fitted`` constants (and the page_pool costs) that some usable
       measurement depends on, and the constants of the data's test family;
    2. constants measured by the data's own test family come first, in the family's order
       (:data:`FAMILY`: one slab_bulk_test01 fallback curve -> the fast pair, the loop's per-run
       call and the slow-free extra; one bulk curve -> the fast pair, the per-object bulk cost and
       the per-object cost out of L1; other SLUB time_bench lines -> the per-object bulk cost, the
       fast pair and the slow-free extra;
       time_bench_memset -> the rep stos / erms costs; bench_page_pool_simple -> the page_pool
       costs; pktgen into a qdisc -> the kfree_skb_list base and the slow-free extra); then the
       others, the constant the data move most first;
    3. a candidate is taken only if the data tell it apart from those already taken: its effect
       on the measurements (the Jacobian column, per 1 % change, in units of each tolerance)
       keeps at least :data:`DISTINCT_EFFECT` of its size after the effects of the taken ones are
       projected out;
    4. never more than the distinct measurements (output + conditions), nor :data:`MAX_FREE`.

    So one SLUB curve (slab_bulk_test01 at three or more bulk sizes) frees what a three-point curve
    determines, and not every constant the curve is sensitive to; two pktgen results free two
    constants.
    """
    ms = usable(measurements)
    family = family_of(ms)
    cands = [k for k, c in profile.constants.items()
             if c.kind == "fitted" or k in ("pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles") or k in family]
    cands = sensitive(ms, profile, cands)
    limit = min(MAX_FREE, distinct_points(ms))
    if not cands or limit <= 0:
        return []
    work = dataclasses.replace(profile, id="_fit")
    specs = specs_for(ms, work.id)
    jac = jacobian(work, specs, cands, relative=True)
    size = np.linalg.norm(jac, axis=0)
    rank = {n: i for i, n in enumerate(family)}
    order = sorted(range(len(cands)), key=lambda j: (rank.get(cands[j], len(rank)), -size[j]))
    chosen: list[int] = []
    for j in order:
        if len(chosen) >= limit:
            break
        col = jac[:, j]
        if chosen:
            basis = jac[:, chosen]
            coef, *_ = np.linalg.lstsq(basis, col, rcond=None)
            col = col - basis @ coef
        if size[j] > 0 and np.linalg.norm(col) >= DISTINCT_EFFECT * size[j]:
            chosen.append(j)
    return [cands[j] for j in sorted(chosen)]


def jacobian(prof: Profile, specs, names, relative: bool = False, x=None) -> np.ndarray:
    """``d z_i / d c_j`` of the normalised residuals (central differences); with ``relative``
    per 1 % change of each constant instead of per unit."""
    fun = calibration.residual_fun(prof, specs, list(names))
    x = np.array([prof.value(n) for n in names], dtype=float) if x is None else np.asarray(x, dtype=float)
    jac = calibration.fd_jacobian(fun, x, 1e-4 * np.maximum(np.abs(x), 1.0), central=True)
    return jac * (0.01 * np.maximum(np.abs(x), 1e-9)) if relative else jac


def _lines(ms) -> str:
    by_origin: dict[str, list[int]] = {}
    for m in ms:
        lines = by_origin.setdefault(m.origin, [])
        if m.line not in lines:
            lines.append(m.line)
    parts = []
    for origin, lines in by_origin.items():
        shown = ", ".join(str(n) for n in sorted(lines)[:12]) + (", ..." if len(lines) > 12 else "")
        parts.append(f"{origin}, line{'s' if len(lines) > 1 else ''} {shown}")
    return "fitted from: " + "; ".join(parts)


def fit(measurements, base: Profile, free, label: str = "", ghz: float | None = None,
        ghz_source: str = "", noise_from=None) -> FitResult:
    """Fit ``free`` constants of ``base`` to ``measurements``; never raises for bad input.

    ``ghz``: the clock of the measurements (inferred from their cycles/ns pairs or given); the
    fitted profile gets it instead of the base's clock (``None``: keep the base's clock).
    ``noise_from``: the measurements whose repeats measure the noise (default ``measurements``; the
    Calibrate page passes the whole run, also the tests it does not map, such as the baselines).
    """
    free = list(dict.fromkeys(free or []))
    res = FitResult(False, None, base.id, free, [], [], [])
    try:
        _fit(measurements, base, free, label, res, ghz, ghz_source,
             measurements if noise_from is None else noise_from)
    except Exception as e:  # noqa: BLE001 - the page and CLI must survive any input
        res.ok, res.profile = False, None
        res.errors.append(f"the fit failed ({type(e).__name__}: {e}); the model in use is unchanged")
    return res


def bound_hit(prof: Profile, name: str) -> str | None:
    """``"upper"`` or ``"lower"`` when constant ``name`` ended on (within :data:`ON_BOUND` of the
    range of) that bound, else ``None``."""
    b = prof.constants[name].bounds
    if not b or not all(math.isfinite(x) for x in b) or b[1] <= b[0]:
        return None
    lo, hi = b
    v, tol = prof.value(name), ON_BOUND * (hi - lo)
    return "upper" if v >= hi - tol else "lower" if v <= lo + tol else None


def bound_warnings(prof: Profile, names) -> list[str]:
    """A warning for each constant of ``names`` that ended on a bound (:func:`bound_hit`)."""
    out = []
    for n in names:
        side = bound_hit(prof, n)
        if side is not None:
            lo, hi = prof.constants[n].bounds
            more = "more" if side == "upper" else "less"
            out.append(f"{n} ended on its {side} bound {hi if side == 'upper' else lo:g}: the data ask for {more} "
                       "than the model allows; check the mapping or free another constant")
    return out


#: a fitted constant this far from its base is another configuration, not a refinement: more than this many
#: of the base's sd, or more than this factor either way
FAR_SD, FAR_FACTOR = 3.0, 2.0


def far_from_base(fitted: Profile, base: Profile, names, candidates=None) -> list[str]:
    """One line when the fit moved a constant of ``names`` more than :data:`FAR_SD` sd or :data:`FAR_FACTOR`
    x from ``base`` (compared in ns, each profile at its own clock): which, the likely causes (another
    kernel, another mitigation, another CPU) and the shipped profiles (``candidates``, default all) whose
    values fit better (each moved constant within the factor), best first; empty when none moved so."""
    def ns(p, n):
        return p.value(n) / p.ghz
    moved = []
    for n in names:
        if n not in base.constants or base.value(n) <= 0 or fitted.value(n) <= 0:
            continue
        ratio = ns(fitted, n) / ns(base, n)
        sd = base.stderr(n) / base.ghz
        n_sd = abs(ns(fitted, n) - ns(base, n)) / sd if sd > 0 else math.inf
        if n_sd > FAR_SD or not 1 / FAR_FACTOR <= ratio <= FAR_FACTOR:
            moved.append((n, ratio, n_sd))
    if not moved:
        return []

    def score(p):
        return max(abs(math.log(ns(fitted, n) / ns(p, n))) for n, _r, _s in moved if p.value(n) > 0)
    better = []
    for pid in candidates if candidates is not None else available_profiles():
        p = load_profile(pid)
        if pid != base.id and all(n in p.constants and p.value(n) > 0 for n, _r, _s in moved):
            sc = score(p)
            if sc < math.log(FAR_FACTOR) and sc < score(base):
                better.append((sc, pid, p))
    machine = base.name.split(" (")[0]  # the base's own machine under another configuration first
    better.sort(key=lambda t: (t[2].name.split(" (")[0] != machine, t[0]))
    what = "; ".join(f"{n} {base.value(n):g} -> {fitted.value(n):g} {base.constants[n].unit} ({(r - 1) * 100:+.0f} %"
                     + (f", {s:.0f} sd" if math.isfinite(s) else "") + ")" for n, r, s in moved)
    offer = (", ".join(f"{pid} ({p.configuration_label})" for _sc, pid, p in better[:3])
             if better else "none of the shipped profiles")
    return [f"far from the base {base.id} ({base.configuration_label}): {what}; likely another kernel, another "
            f"mitigation mode or another CPU than the base's, not a refinement of it; bases that fit better: {offer}"]


def without_ns_twins(ms) -> list:
    """The measurements less each ns value whose cycles twin (same line and test) is there too."""
    cyc = {(m.origin, m.run, m.line, m.test, m.output, tuple(sorted(m.conditions.items())))
           for m in ms if m.unit == "cycles"}
    return [m for m in ms if not (m.unit == "ns" and (m.origin, m.run, m.line, m.test, m.output,
                                                        tuple(sorted(m.conditions.items()))) in cyc)]


def in_run_baselines(measurements) -> dict[str, float]:
    """``{input name: cycles}`` of the time_bench baselines among ``measurements`` (atomic_inc, lock,
    this_cpu_inc, ...: :data:`skbmodel.evidence.parsers.timebench.IN_RUN_BASELINES`); the first of each."""
    out: dict[str, float] = {}
    for m in measurements:
        name = IN_RUN_BASELINES.get(str(m.test).strip().lower())
        if name and m.unit == "cycles" and math.isfinite(m.value) and name not in out:
            out[name] = float(m.value)
    return out


def _era_hint(ms, base: Profile, unconstrained) -> str:
    """Why a page_pool fast-path constant is not determined by process-context page_pool01 rows."""
    if "pp_fast_cycles" in unconstrained and any(m.output == "page_pool.nosoftirq01_cycles" for m in ms) \
            and not era.direct_recycle_any_context(base.kernels):
        kernels = "..".join(base.kernels) or "not stated"
        eras = [pid for pid in available_profiles() if era.direct_recycle_any_context(load_profile(pid).kernels)]
        return (f" (no-softirq-page_pool01 measures the fast path only on kernels since "
                f"{era.DIRECT_RECYCLE_ANY_CONTEXT}; {base.id} describes kernels {kernels}, where it measures the "
                f"ptr_ring: start from a profile of newer kernels, e.g. {', '.join(eras)})")
    return ""


def _fit(measurements, base: Profile, free, label: str, res: FitResult, ghz=None, ghz_source: str = "",
         noise_from=()) -> None:
    res.errors += check(measurements)
    res.baselines = in_run_baselines(measurements)
    if ghz is not None:
        lo, hi = custom.GHZ_RANGE
        if not (isinstance(ghz, (int, float)) and math.isfinite(ghz) and lo <= ghz <= hi):
            res.errors.append(f"clock {ghz!r} GHz: expected a clock between {lo:g} and {hi:g} GHz")
            return
    ms = usable(measurements)
    for m in ms:  # time_bench repeats far apart: the minimum is the undisturbed run, but say so
        spread = repeat_spread(m)
        if spread is not None and spread[0] > 2 * m.tol and m.typical == parsers.repeats.MINIMUM:
            res.warnings.append(_spread_text(m, spread) + f"; the fit uses the minimum, {m.value:g} {m.unit}")
    if ghz is not None and "ghz" not in free:
        ms = without_ns_twins(ms)
    if not ms:
        res.errors.append("no usable measurement: map at least one to a model output (cycles, ns, pps/Mpps "
                          "or Krps value)")
    if ms and not free:
        res.errors.append("choose at least one constant to fit")
    unknown = [n for n in free if n not in base.constants]
    if unknown:
        res.errors.append(f"unknown constant(s) {', '.join(unknown)}; allowed: {', '.join(freeable(base))}")
    fixed = [n for n in free if n in base.constants and base.constants[n].kind in FIXED_KINDS]
    if fixed:
        res.errors.append(f"{', '.join(fixed)} {'is a kernel constant' if len(fixed) == 1 else 'are kernel constants'}"
                          " and cannot be fitted")
    if len(free) > MAX_FREE:
        res.errors.append(f"{len(free)} free constants; at most {MAX_FREE} at once")
    if res.errors:
        return
    work = _with_bounds(dataclasses.replace(base, id="_fit"), free)
    specs = specs_for(ms, work.id)
    sens = calibration.row_sensitivity(work, specs, free)
    unconstrained = [n for j, n in enumerate(free) if not sens[:, j].any()]
    if unconstrained:
        res.errors.append(f"{', '.join(unconstrained)}: no measurement you use depends on "
                          f"{'it' if len(unconstrained) == 1 else 'them'}; leave "
                          f"{'it' if len(unconstrained) == 1 else 'them'} fixed or add a measurement that does"
                          + _era_hint(ms, base, unconstrained))
        return
    n_points = distinct_points(ms, by_unit="ghz" in free)
    if len(free) > n_points:
        hint = suggest_free(ms, base)
        res.errors.append(f"{len(free)} free constants ({', '.join(free)}) but only {n_points} distinct "
                          f"measurement{'s' if n_points != 1 else ''} (model output and conditions): free at most "
                          f"{n_points}{', e.g. ' + ','.join(hint) if hint else ''}, or add measurements")
        return
    preds0 = validation.predict_rows(specs, {work.id: work})  # the base profile as it is
    z0 = validation.residuals_normalised(specs, preds0)
    if ghz is not None and "ghz" not in free:
        work = work.with_values({"ghz": round(float(ghz), 4)})
    # the clock to 0.1 MHz: what a pair of time_bench intervals can tell, and a short share link
    res.ghz, res.ghz_source = ((round(float(ghz), 4), ghz_source) if ghz is not None and "ghz" not in free
                               else (None, ""))
    fitted, _report = calibration.fit_profile(work, specs, free=free)
    values = {n: fitted.value(n) for n in free}
    if not all(math.isfinite(v) for v in values.values()):
        res.errors.append("the fit did not converge to finite values; the model in use is unchanged")
        return
    preds1 = validation.predict_rows(specs, {work.id: fitted})
    z1 = validation.residuals_normalised(specs, preds1)
    if not np.all(np.isfinite(z1)):
        res.errors.append("the fitted model gives non-finite predictions; the model in use is unchanged")
        return
    stderr, corr = calibration.fit_covariance(fitted, specs, free)
    res.stderr = {n: float(e) for n, e in zip(free, stderr)}
    res.corr = [[float(x) for x in row] for row in corr]
    res.warnings += bound_warnings(fitted, free)
    res.warnings += far_from_base(fitted, base, free)
    sens1 = calibration.row_sensitivity(fitted, specs, free)
    sources = {n: _lines([m for m, s in zip(ms, sens1[:, j]) if s]) or _lines(ms) for j, n in enumerate(free)}
    label = custom.sanitize_label(label)
    changes = {n: v for n, v in values.items()}
    if res.ghz is not None:
        changes["ghz"] = res.ghz
        sources["ghz"] = ghz_source or "clock of the measurements"
    # the spread between repeats (of every measurement given, mapped or not) is this machine's noise
    res.noise = parsers.noise(noise_from)
    noise_name = custom.NOISE_CONSTANT
    if res.noise.ns is not None and noise_name in base.constants and noise_name not in free:
        changes[noise_name] = min(res.noise.ns, NOISE_MAX_NS)
        sources[noise_name] = "measured: " + res.noise.describe()
    prof = custom.build(base, changes, label, sources=sources)
    # keep the bounds the fit used; the clock is measured, not fitted
    consts = dict(prof.constants)
    for n in free:
        consts[n] = dataclasses.replace(consts[n], bounds=fitted.constants[n].bounds)
    if res.ghz is not None:
        consts["ghz"] = dataclasses.replace(consts["ghz"], kind=base.constants["ghz"].kind)
    if noise_name in changes:  # measured, not fitted; bounded like the noise control
        consts[noise_name] = dataclasses.replace(consts[noise_name], kind=base.constants[noise_name].kind,
                                                 bounds=(0.0, NOISE_MAX_NS))
    # the fit's own uncertainty, so that the intervals of a fitted profile are its data's
    for n in free:
        consts[n] = dataclasses.replace(consts[n], stderr=res.stderr[n] if math.isfinite(res.stderr[n]) else 0.0)
    prof = dataclasses.replace(prof, constants=consts,
                               notes=f"fitted to {len(ms)} measurements ({', '.join(sorted({m.origin for m in ms}))}) "
                                     f"on base {base.id}; free: {', '.join(free)}"
                                     + (f"; clock {res.ghz:.6g} GHz ({sources['ghz']})" if res.ghz is not None else "")
                                     + (f"; noise {changes[noise_name]:g} ns ({res.noise.describe()})"
                                        if noise_name in changes else "")
                                     + ("; in-run baselines: " + ", ".join(f"{k} {v:g}" for k, v in
                                                                          res.baselines.items())
                                        if res.baselines else ""))
    for m, s, p0, p1, a, b in zip(ms, specs, preds0, preds1, z0, z1):
        res.rows.append(dict(id=s.id, origin=m.origin, line=m.line, test=m.test, output=m.output,
                             conditions=", ".join(f"{k}={v}" for k, v in m.conditions.items()),
                             unit=m.unit, measured=m.value, before=float(p0), after=float(p1),
                             z_before=float(a), z_after=float(b), tol=m.tol, repeats=m.repeats_text()))
    bad = [r for r in res.rows if abs(r["z_after"]) > 1]
    for r in bad:
        res.warnings.append(f"{r['origin']}, line {r['line']}: {r['test']} = {r['measured']:g} {r['unit']}, the fitted "
                            f"model gives {r['after']:.4g} ({(r['after'] / r['measured'] - 1) * 100:+.1f} %, "
                            f"tolerance ±{r['tol'] * 100:g} %)")
    res.profile, res.ok = prof.with_correlation(free, np.nan_to_num(np.asarray(corr, dtype=float))), True
