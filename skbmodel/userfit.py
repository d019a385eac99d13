"""Fit a CPU profile to the user's own measurements.

:func:`fit` takes parsed :class:`~skbmodel.parsers.Measurement` records (mapped to model outputs),
a base profile and the names of the constants to free, builds one
:class:`~skbmodel.validation.RowSpec` per measurement (measured value, unit and tolerance given
directly) and runs :func:`skbmodel.calibration.fit_profile`.  Every fitted constant records which
measurements it was fitted from (``source = "fitted from: lab.txt, line 35, 36"``).

Nothing here raises for bad input: problems come back in :attr:`FitResult.errors`, and a result
with errors has no profile -- the caller keeps the model it had.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import calibration, custom, model, parsers, validation
from .profile import Profile

#: constants that are kernel facts or sizes: never free
FIXED_KINDS = ("kernel",)
MAX_FREE = 12


@dataclasses.dataclass
class FitResult:
    ok: bool
    profile: Profile | None
    base_id: str
    free: list[str]
    rows: list[dict]
    errors: list[str]
    warnings: list[str]

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
            prob = parsers._check_condition(m.conditions)
            if prob:
                errors.append(f"{m.where()}: {prob}")
            bad = [k for k in m.conditions if k not in parsers.CONDITION_KEYS]
            if bad:
                errors.append(f"{m.where()}: unknown condition(s) {', '.join(bad)}; allowed: "
                              f"{', '.join(parsers.CONDITION_KEYS)}")
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


def specs_for(measurements, profile_id: str) -> list[validation.RowSpec]:
    """One row spec per usable measurement (ids ``m0, m1, ...`` in order)."""
    return [validation.RowSpec(id=f"m{i}", profile=profile_id, output=m.output, state=dict(m.conditions),
                               tol_kind="rel", tol=float(m.tol), note=m.where(), measured=float(m.value),
                               unit=m.unit)
            for i, m in enumerate(measurements)]


def _with_bounds(profile: Profile, names) -> Profile:
    consts = dict(profile.constants)
    for n in names:
        c = consts[n]
        b = c.bounds or custom._default_bounds(n, c.value)
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


def suggest_free(measurements, profile: Profile) -> list[str]:
    """Default free constants: the fitted (or page_pool) constants the measurements constrain."""
    cands = [k for k, c in profile.constants.items()
             if c.kind == "fitted" or k in ("pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles")]
    return sensitive(measurements, profile, cands)[:MAX_FREE]


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


def fit(measurements, base: Profile, free, label: str = "") -> FitResult:
    """Fit ``free`` constants of ``base`` to ``measurements``; never raises for bad input."""
    free = list(dict.fromkeys(free or []))
    res = FitResult(False, None, base.id, free, [], [], [])
    try:
        _fit(measurements, base, free, label, res)
    except Exception as e:  # noqa: BLE001 - the page and CLI must survive any input
        res.ok, res.profile = False, None
        res.errors.append(f"the fit failed ({type(e).__name__}: {e}); the model in use is unchanged")
    return res


def _fit(measurements, base: Profile, free, label: str, res: FitResult) -> None:
    res.errors += check(measurements)
    ms = usable(measurements)
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
                          f"{'it' if len(unconstrained) == 1 else 'them'} fixed or add a measurement that does")
        return
    n_points = len({m.key() for m in ms})
    if len(free) > n_points:
        res.warnings.append(f"{len(free)} free constants but only {n_points} distinct measurements: the fit is "
                            "under-determined, the values it picks are one of many that fit equally well")
    preds0 = validation.predict_rows(specs, {work.id: work})
    z0 = validation.residuals_normalised(specs, preds0)
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
    sens1 = calibration.row_sensitivity(fitted, specs, free)
    sources = {n: _lines([m for m, s in zip(ms, sens1[:, j]) if s]) or _lines(ms) for j, n in enumerate(free)}
    label = custom.sanitize_label(label)
    changes = {n: v for n, v in values.items()}
    prof = custom.build(base, changes, label, sources=sources)
    # keep the bounds the fit used
    consts = dict(prof.constants)
    for n in free:
        consts[n] = dataclasses.replace(consts[n], bounds=fitted.constants[n].bounds)
    prof = dataclasses.replace(prof, constants=consts,
                               notes=f"fitted to {len(ms)} measurements ({', '.join(sorted({m.origin for m in ms}))}) "
                                     f"on base {base.id}; free: {', '.join(free)}")
    for m, s, p0, p1, a, b in zip(ms, specs, preds0, preds1, z0, z1):
        res.rows.append(dict(id=s.id, origin=m.origin, line=m.line, test=m.test, output=m.output,
                             conditions=", ".join(f"{k}={v}" for k, v in m.conditions.items()),
                             unit=m.unit, measured=m.value, before=float(p0), after=float(p1),
                             z_before=float(a), z_after=float(b), tol=m.tol))
    bad = [r for r in res.rows if abs(r["z_after"]) > 1]
    for r in bad:
        res.warnings.append(f"{r['origin']}, line {r['line']}: {r['test']} = {r['measured']:g} {r['unit']}, the fitted "
                            f"model gives {r['after']:.4g} ({(r['after'] / r['measured'] - 1) * 100:+.1f} %, "
                            f"tolerance ±{r['tol'] * 100:g} %)")
    res.profile, res.ok = prof, True
