"""Out-of-sample validation: fit on some measurements, predict the ones the fit never saw.

A fit that reproduces the rows it was fitted to says little about a prediction.  Two protocols
measure what the model predicts instead:

* **Curves** (one CPU, kernel and test, one input varied, from the public corpus): the constants
  the curve constrains are fitted with ``fit``'s own defaults (:func:`skbmodel.evidence.userfit.suggest_free`)
  on three points spread over the curve's range (:func:`fit_points`), on a profile that has the
  curve's clock; every other point of the curve is then predicted and compared.
* **Scenario rows** (the seed threads): leave one source out.  The profile's fitted constants are
  refitted on the rows of the other sources; a row of the left-out source is *predicted* when every
  fitted constant it depends on is still constrained by the other sources, and otherwise labelled
  as not predictable out of sample (its constants come only from its own source).

:func:`in_sample_dof` gives, for the calibration itself, rows minus fitted constants per subsystem,
and labels the subsystems whose rows are reproduced by construction (no degree of freedom left).
"""
from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import numpy as np

from .. import paths
from . import calibration, era_validation, parsers, userfit, validation
from ..machine import kconfig
from . import leave_one_out
from .. import model, schema, uncertainty
from ..physics import units
from ..links import state as st
from .observations import seed_observations
from ..machine.profile import DEFAULT_PROFILE, Profile, available_profiles, load_profile

#: points a curve fit uses
N_FIT = 3

#: subsystem of a seed row's kernel constant (``const:``) or state condition (``state:``)
_NON_OUTPUT_SUBSYSTEM = {"const": "kernel", "state": "kernel"}
#: subsystem of each section of outputs (the part before the dot), from the output schema
_SECTION_SUBSYSTEM = {o.name.split(".", 1)[0]: o.subsystem for o in schema.OUTPUTS}


def subsystem_of(output: str) -> str:
    """Subsystem a model output belongs to (``slub.bulk_cycles`` -> ``slub``; :mod:`skbmodel.schema`)."""
    if output in schema.BY_NAME:
        return schema.BY_NAME[output].subsystem
    prefix = re.split(r"[.:]", output, maxsplit=1)[0]
    return _NON_OUTPUT_SUBSYSTEM.get(prefix) or _SECTION_SUBSYSTEM.get(prefix, "other")


def fit_points(x, k: int = N_FIT) -> np.ndarray:
    """Indices of ``k`` points spread over the range of ``x`` (log-spaced when ``x > 0``).

    The targets are ``k`` evenly spaced quantiles of ``log x`` between its minimum and maximum (of
    ``x`` itself when some ``x <= 0``); each picks the nearest unused point.  For a SLUB bulk curve
    1..250 this gives bulk 1, 16 and 250: the call-amortised start, the per-CPU-slab regime and the
    long-run end.
    """
    x = np.asarray(x, dtype=float)
    if x.size <= k:
        return np.arange(x.size)
    t = np.log(x) if np.all(x > 0) else x
    targets = np.linspace(t.min(), t.max(), k)
    chosen: list[int] = []
    for tgt in targets:
        order = np.argsort(np.abs(t - tgt), kind="stable")
        chosen.append(int(next(i for i in order if i not in chosen)))
    return np.array(sorted(chosen))


def curve_profile(ghz: float | None, object_bytes: float | None = None,
                  base: Profile | None = None) -> Profile:
    """The profile a curve is fitted on: ``base`` with the curve's clock and object size."""
    base = base or load_profile(DEFAULT_PROFILE)
    changes = {}
    if ghz and math.isfinite(ghz) and ghz > 0:
        changes["ghz"] = float(ghz)
    if object_bytes and math.isfinite(object_bytes) and object_bytes > 0:
        changes["slub_object_bytes"] = float(object_bytes)
    prof = base.with_values(changes) if changes else base
    return dataclasses.replace(prof, id=f"_curve@{base.id}")


_OBJ = re.compile(r"(?:object_bytes|obj(?:ect)?[ _-]?size)\s*[=:]?\s*(\d+)", re.I)


def object_bytes_of(conditions: str) -> float | None:
    """Object size stated in a corpus row's conditions (``object_bytes=256``, ``obj size 256``)."""
    m = _OBJ.search(conditions or "")
    return float(m.group(1)) if m else None


UPSTREAM_DESIGNS = ("detached-freelist",)


def design_of(conditions: str) -> str:
    """The kernel design a corpus curve was measured on (``design=...`` in its conditions), or ``""``."""
    m = re.search(r"design=([\w-]+)", conditions or "")
    return m.group(1) if m else ""


def group_of(subsystem: str, design: str) -> str:
    """Summary group: a SLUB curve of another design than upstream's (bulk free through detached
    freelists) is reported apart, since the model describes the upstream design."""
    if subsystem == "slub" and design and design not in UPSTREAM_DESIGNS:
        return "slub, earlier designs"
    return subsystem


@dataclasses.dataclass
class CurveResult:
    series: str
    subsystem: str
    output: str
    x_name: str
    cpu: str
    ghz: float
    source: str
    fit_x: list[float]
    free: list[str]
    fitted: dict[str, float]
    #: every point: x, measured, predicted (measured unit), relative error, used in the fit
    points: list[dict]
    errors: list[str]
    design: str = ""
    warnings: list[str] = dataclasses.field(default_factory=list)

    @property
    def group(self) -> str:
        return group_of(self.subsystem, self.design)

    @property
    def predicted(self) -> list[dict]:
        return [p for p in self.points if not p["fit"]]

    @property
    def mape(self) -> float:
        e = [abs(p["rel_error"]) for p in self.predicted]
        return float(np.mean(e)) if e else float("nan")

    @property
    def max_error(self) -> float:
        e = [abs(p["rel_error"]) for p in self.predicted]
        return float(np.max(e)) if e else float("nan")


def curve_measurements(series: str, output: str, x_name: str, xs, values, unit: str):
    return [parsers.Measurement(origin=series, line=i + 1, raw="", test=output, value=float(v), unit=unit,
                                conditions={x_name: float(x)}, output=output, kind="corpus")
            for i, (x, v) in enumerate(zip(xs, values))]


def predict_curve(profile: Profile, output: str, x_name: str, xs, unit: str) -> np.ndarray:
    """Model ``output`` at inputs ``xs`` (one vectorised call), in the measured ``unit``."""
    xs = np.asarray(xs, dtype=float)
    out = model.evaluate({x_name: xs}, profile)[output]
    return np.asarray(validation.to_measured_unit(out, model.OUTPUT_UNITS[output], unit, profile.ghz), dtype=float)


def validate_curve(series: str, output: str, x_name: str, xs, values, unit: str, *, ghz: float | None = None,
                   object_bytes: float | None = None, cpu: str = "", source: str = "",
                   base: Profile | None = None, free: list[str] | None = None, design: str = "") -> CurveResult:
    """Fit on :func:`fit_points` of one curve with ``fit``'s defaults, predict the other points."""
    xs = np.asarray(xs, dtype=float)
    values = np.asarray(values, dtype=float)
    order = np.argsort(xs, kind="stable")
    xs, values = xs[order], values[order]
    prof = curve_profile(ghz, object_bytes, base)
    idx = fit_points(xs)
    ms = curve_measurements(series, output, x_name, xs[idx], values[idx], unit)
    free = list(free) if free is not None else userfit.suggest_free(ms, prof)
    res = userfit.fit(ms, prof, free, label=series)
    fitted_prof = res.profile if res.ok else prof
    pred = predict_curve(fitted_prof, output, x_name, xs, unit)
    # the constants' share of the uncertainty (the fit's standard errors, the base profile's
    # stated ones for the rest), as a relative sd; the structural share is estimated from the curves
    lo, hi = uncertainty.intervals({x_name: xs}, fitted_prof, outputs=[output], structural=False,
                                   physical=False)[output]
    f0 = model.evaluate({x_name: xs}, fitted_prof)[output]
    rel_sd = (np.asarray(hi) - np.asarray(lo)) / 2 / uncertainty.z_value() / np.maximum(np.abs(f0), 1e-300)
    in_fit = np.zeros(xs.size, dtype=bool)
    in_fit[idx] = True
    points = [dict(x=float(x), measured=float(m), predicted=float(p), rel_error=float((p - m) / m), fit=bool(f),
                   constants_rel_sd=float(s))
              for x, m, p, f, s in zip(xs, values, pred, in_fit, np.broadcast_to(rel_sd, xs.shape))]
    return CurveResult(series=series, subsystem=subsystem_of(output), output=output, x_name=x_name, cpu=cpu,
                       ghz=float(fitted_prof.ghz), source=source, fit_x=[float(x) for x in xs[idx]], free=free,
                       fitted={n: float(fitted_prof.value(n)) for n in free}, points=points,
                       errors=list(res.errors), design=design, warnings=list(res.warnings))


#: the state key a corpus ``x_name`` maps to (the page allocator's ``bulk`` counts pages)
CURVE_INPUTS = {"bulk": "bulk", "zero_bytes": "zero_bytes", "batch": "xdp_batch", "recycle_ratio": "pp_recycle"}
CURVE_INPUTS_BY_OUTPUT = {"page_alloc.": {"bulk": "page_bulk"}}


def curve_input(output: str, x_name: str) -> str | None:
    """State key of a corpus curve's varied input, or ``None`` if the model has no such input."""
    for prefix, names in CURVE_INPUTS_BY_OUTPUT.items():
        if output.startswith(prefix) and x_name in names:
            return names[x_name]
    return CURVE_INPUTS.get(x_name)


def corpus_curves(df, min_points: int = N_FIT + 1) -> list[dict]:
    """The corpus series the model can validate out of sample: an output it has, an input it
    models, and at least ``min_points`` points (three to fit, one or more to predict)."""
    out = []
    for name, g in df.groupby("series", sort=True):
        output = str(g["output"].iloc[0])
        x_name = str(g["x_name"].iloc[0]) if g["x_name"].notna().all() else ""
        if output not in model.OUTPUT_UNITS or curve_input(output, x_name) is None or len(g) < min_points:
            continue
        unit = str(g["unit"].iloc[0])
        if not parsers.compatible(output, _unit_of(unit)):
            continue
        ghz = g["ghz"].iloc[0]
        out.append(dict(series=name, output=output, x_name=curve_input(output, x_name), xs=g["x_value"].to_numpy(float),
                        values=g["value"].to_numpy(float), unit=_unit_of(unit),
                        ghz=float(ghz) if ghz == ghz and ghz else None,
                        object_bytes=object_bytes_of(str(g["conditions"].iloc[0])),
                        cpu=str(g["cpu"].iloc[0]), source=str(g["source"].iloc[0]),
                        design=design_of(str(g["conditions"].iloc[0]))))
    return out


def _unit_of(unit: str) -> str:
    u = unit.strip()
    return "cycles" if u.startswith("cycles") else u


def validate_corpus(df, base: Profile | None = None) -> list[CurveResult]:
    """:func:`validate_curve` for every curve of :func:`corpus_curves`."""
    return [validate_curve(c["series"], c["output"], c["x_name"], c["xs"], c["values"], c["unit"], ghz=c["ghz"],
                           object_bytes=c["object_bytes"], cpu=c["cpu"], source=c["source"], base=base,
                           design=c["design"])
            for c in corpus_curves(df)]


# ---- single published points on the CPU of a shipped profile ---------------------------------

#: the CPU a shipped profile describes, as corpus rows name it
PROFILE_CPUS = {"e5-1650v4": "E5-1650 v4"}


def profile_cpu_points(df) -> list[dict]:
    """Published single numbers measured on a shipped profile's CPU (another kernel, another run),
    predicted by that profile as shipped: whether its constants carry over from the run they
    were taken from.  Rows the profile's own constants cite (by series) are left out.
    """
    out = []
    for pid, cpu in PROFILE_CPUS.items():
        prof = load_profile(pid)
        cited = " ".join(c.source for c in prof.constants.values())
        # whole-path rates are predicted in their own run's scenario (era_validation.rate_points)
        rows = df[df["cpu"].str.contains(cpu, regex=False) & (df["x_name"] == "")
                  & df["output"].isin(list(model.OUTPUT_UNITS)) & ~df["subsystem"].isin(era_validation.RATE_SUBSYSTEMS)]
        for r in rows.itertuples(index=False):
            if r.series in cited:
                continue
            unit = _unit_of(r.unit)
            if not parsers.compatible(r.output, unit):
                continue
            pred = float(predict_curve(prof, r.output, "bulk", [1.0], unit)[0])
            out.append(dict(id=r.id, subsystem=subsystem_of(r.output), profile=pid, output=r.output,
                            kernel=r.kernel, measured=float(r.value), predicted=pred, unit=unit,
                            rel_error=(pred - float(r.value)) / float(r.value), source=r.source))
    return out


# ---- scenario rows: leave one source out ---------------------------------------------------

def source_groups() -> dict[str, str]:
    """``{row id: source}``; seeds that quote the same measurement (``004 / 000``) form one source."""
    obs = seed_observations()
    parent: dict[str, str] = {}

    def find(a):
        while parent.setdefault(a, a) != a:
            a = parent[a]
        return a
    for o in obs.values():
        files = [f.strip().split(" ")[0] for f in o.seed.split("/") if f.strip()]
        for f in files:
            parent[find(f)] = find(files[0])
    label: dict[str, list[str]] = {}
    for f in list(parent):
        label.setdefault(find(f), []).append(f[:3])
    names = {root: "seed " + " + ".join(sorted(set(v))) for root, v in label.items()}
    return {rid: names[find(o.seed.split("/")[0].strip().split(" ")[0])] for rid, o in obs.items()}


def free_names(profile_id: str) -> list[str]:
    """The constants the calibration fits in this profile's own file (a child inherits the rest)."""
    prof = load_profile(profile_id)
    own = calibration.own_names(profile_id)
    return [n for n in own if prof.constants[n].kind == "fitted"]


def _not_estimable(j_train: np.ndarray, g: np.ndarray, names: list[str], tol: float = 1e-6) -> list[str]:
    """Constants along which a row's gradient ``g`` leaves the row space of ``j_train``.

    A prediction is out of sample only if the training rows determine the combination of constants
    it depends on (linear estimability): ``g`` must lie in the span of the training rows' gradients.
    """
    if not np.any(g):
        return []
    if j_train.size == 0:
        return [n for n, gi in zip(names, g) if gi]
    _u, sv, vt = np.linalg.svd(j_train, full_matrices=False)
    rank = int(np.sum(sv > sv.max() * 1e-8)) if sv.size else 0
    proj = vt[:rank].T @ (vt[:rank] @ g)
    rest = g - proj
    if np.linalg.norm(rest) <= tol * max(np.linalg.norm(g), 1e-12) + 1e-9:
        return []
    return [n for n, r in zip(names, rest) if abs(r) > 1e-3 * np.abs(rest).max()]


def leave_one_row_out(profiles: dict[str, Profile] | None = None) -> list[dict]:
    """Each covered seed row predicted with the constants refitted on every other row.

    Same record as :func:`leave_one_source_out`; a row is predicted only if the other rows still
    determine what it depends on (rows that restate others are left out on both sides, so that a
    row is never predicted from its own copy in another unit).
    """
    return _leave_out(profiles, lambda s: s.id, "the other rows")


def _leave_out(profiles, key, others: str) -> list[dict]:
    profiles = profiles or {}
    specs = [s for s in validation.ROWS if s.tol_kind != "exact" and s.id not in RESTATED]
    out = []
    for pid in sorted({s.profile for s in specs}):
        prof = profiles.get(pid) or load_profile(pid)
        rows = [s for s in specs if s.profile == pid]
        names = free_names(pid)
        # rows per tolerance, constants per 1 %: estimability does not depend on either scale
        jac = userfit.jacobian(prof, rows, names, relative=True)
        for src in sorted({key(s) for s in rows}):
            held = [i for i, s in enumerate(rows) if key(s) == src]
            train = [i for i in range(len(rows)) if i not in held]
            j_train = jac[train]
            constrained = [n for j, n in enumerate(names) if np.any(j_train[:, j])]
            refit = prof
            if train and constrained:
                refit, _ = calibration.fit_profile(prof, [rows[i] for i in train], free=constrained)
            on_bound = [n for n in constrained if userfit.bound_hit(refit, n)]
            preds = validation.predict_rows([rows[i] for i in held], {pid: refit})
            for i, p in zip(held, preds):
                s = rows[i]
                m, unit = validation.measured_of(s)
                missing = _not_estimable(j_train, jac[i], names)
                missing += [n for j, n in enumerate(names) if n in on_bound and jac[i, j] and n not in missing]
                rec = dict(id=s.id, subsystem=subsystem_of(s.output), left_out=src, profile=pid, measured=m,
                           predicted=float(p), unit=unit, rel_error=float((p - m) / m) if m else 0.0)
                if missing:
                    # no number: a constant the other rows leave free (or pin to a bound) sets it, and
                    # any digit would be the optimiser's, not the model's
                    rec.update(predicted=None, rel_error=None, status="not predictable",
                               why=f"{others} do not determine {', '.join(missing)}"
                                   + (" (the refit ends on a bound)" if set(missing) & set(on_bound) else ""))
                else:
                    rec.update(status="predicted", why="")
                out.append(rec)
    return out


def leave_one_source_out(profiles: dict[str, Profile] | None = None) -> list[dict]:
    """Each covered seed row predicted with the constants refitted without its own source.

    Returns one dict per row: id, subsystem, left_out (the source), measured, predicted, unit,
    rel_error and ``status``: ``"predicted"``, or ``"not predictable"`` with ``why`` naming the
    constants that the other sources do not determine (:func:`_not_estimable`, or a refit that ends
    on a bound).  Exact rows (kernel constants, inputs) and rows that restate others are left out.
    """
    group = source_groups()
    return _leave_out(profiles, lambda s: group[s.id], "the other sources")


#: seed rows that restate other rows: the same measurement in another unit, or arithmetic on others
RESTATED = {"kfl-02": "kfl-01 in ns", "kfl-04": "kfl-03 in ns", "kfl-05": "kfl-01 minus kfl-03",
            "kfl-08": "kfl-06 and kfl-07 as a time saving", "cpm-02": "the same rate as cpm-01",
            "cpm-04": "cpm-03 minus cpm-05", "cpm-07": "cpm-06 minus cpm-08"}


def in_sample_dof(profiles: dict[str, Profile] | None = None) -> list[dict]:
    """Per subsystem: independent seed rows, the fitted constants they determine, degrees of freedom.

    Rows that restate others (:data:`RESTATED`) do not count.  A constant belongs to the subsystems
    whose rows determine it in the calibration's stage that fits it (microbenchmark rows first,
    then the system rows with the microbenchmark constants fixed, :func:`calibration.fit_profile`).
    ``by_construction`` is true when the rows are no more than the constants: the fit then
    reproduces them whatever the model says, and they are no validation.
    """
    profiles = profiles or {}
    specs = [s for s in validation.ROWS if s.tol_kind != "exact"]
    per_sub: dict[str, dict] = {}
    for pid in sorted({s.profile for s in specs}):
        prof = profiles.get(pid) or load_profile(pid)
        rows = [s for s in specs if s.profile == pid]
        names = free_names(pid)
        sens = calibration.row_sensitivity(prof, rows, names)
        micro = np.array([s.microbenchmark for s in rows])
        for i, s in enumerate(rows):
            d = per_sub.setdefault(subsystem_of(s.output), dict(rows=[], restated=[], constants=set()))
            d["restated" if s.id in RESTATED else "rows"].append(s.id)
        for j, n in enumerate(names):
            stage = micro if np.any(sens[micro, j]) else ~micro
            for i in np.flatnonzero(sens[:, j] & stage):
                per_sub[subsystem_of(rows[i].output)]["constants"].add(n)
    out = []
    for sub, d in sorted(per_sub.items()):
        n_rows, n_const = len(d["rows"]), len(d["constants"])
        out.append(dict(subsystem=sub, rows=n_rows, row_ids=d["rows"], restated=d["restated"],
                        fitted_constants=sorted(d["constants"]), dof=n_rows - n_const,
                        by_construction=n_rows <= n_const))
    return out


def summarise(curves: list[CurveResult], loso: list[dict], loro: list[dict] = (),
              points: list[dict] = ()) -> list[dict]:
    """Per subsystem: points predicted out of sample, MAPE and max |error|, for the curves and for
    the seed rows left out by source, kept apart (a curve predicts within one test; a left-out
    source predicts another test)."""
    acc: dict[tuple[str, str], list[float]] = {}
    for c in curves:
        acc.setdefault((c.group, "curves, fit on 3"), []).extend(abs(p["rel_error"]) for p in c.predicted)
    for r in loso:
        if r["status"] == "predicted":
            acc.setdefault((r["subsystem"], "seed rows, source left out"), []).append(abs(r["rel_error"]))
    for r in loro:
        if r["status"] == "predicted":
            acc.setdefault((r["subsystem"], "seed rows, row left out"), []).append(abs(r["rel_error"]))
    for r in points:
        acc.setdefault((r["subsystem"], "same CPU, other kernel"), []).append(abs(r["rel_error"]))
    return [dict(subsystem=k[0], protocol=k[1], points=len(v), mape=float(np.mean(v)), max_error=float(np.max(v)))
            for k, v in sorted(acc.items()) if v]


#: output prefix of the model outputs each curve group's structural sd applies to
STRUCTURAL_PREFIX = {"slub": "slub.", "page_alloc": "page_alloc.", "zeroing": "zero."}


def source_of(c: CurveResult) -> str:
    """The source a curve came from: the message (mail thread post) that published it.  Curves of one
    message share a machine, a kernel build and a benchmark run, so they share their errors."""
    return c.source


def structural_rel_sd(curves: list[CurveResult], leave_out_source: str | None = None,
                      level: float = uncertainty.LEVEL) -> dict[str, float]:
    """``{group: relative sd}`` of the model's form, from the curves' out-of-sample errors.

    The smallest ``s_m`` with which the ``level`` intervals ``pred +- z sqrt(s_c^2 + s_m^2) |pred|``
    hold ``level`` of the group's out-of-sample points: the ``level`` quantile of
    ``sqrt(max((e / z)^2 - s_c^2, 0))`` (``e`` the relative error, ``s_c`` the relative sd the
    constants explain).  Every curve of the source ``leave_out_source`` (:func:`source_of`) is left
    out, so that the coverage of a source is judged with a figure none of its curves shaped (curves
    of one source share their errors: leaving out only the curve judged would put coverage near
    ``level`` whatever the model does).  The errors, not a variance formula, set it: they are
    neither normal nor independent of ``s_c`` (a curve is off as a whole, at its step more than
    elsewhere).
    """
    acc: dict[str, list[tuple[float, float]]] = {}
    for c in curves:
        if leave_out_source is not None and source_of(c) == leave_out_source:
            continue
        acc.setdefault(c.group, []).extend((p["rel_error"], p["constants_rel_sd"]) for p in c.predicted)
    z = uncertainty.z_value(level)
    out = {}
    for g, pairs in acc.items():
        e, s = np.array(pairs).T
        need = np.sqrt(np.maximum((e / z) ** 2 - s ** 2, 0.0))
        out[g] = float(np.quantile(need, level))
    return out


def point_interval(predicted, constants_rel_sd, structural_rel_sd: float, level: float = uncertainty.LEVEL):
    """``(lo, hi)`` of predicted curve points [their unit]:
    ``pred +- z * sqrt(s_c^2 + s_m^2) * |pred|``, ``s_c`` the relative sd from the fitted profile's
    constants, ``s_m`` the structural one."""
    pred = np.asarray(predicted, dtype=float)
    hw = uncertainty.z_value(level) * np.hypot(np.asarray(constants_rel_sd, dtype=float), structural_rel_sd) \
        * np.abs(pred)
    return pred - hw, pred + hw


def coverage(curves: list[CurveResult], level: float = uncertainty.LEVEL) -> dict[str, dict]:
    """Per group: the share of out-of-sample points whose measured value lies inside their interval
    (:func:`point_interval`), each source judged with the structural sd set without it (held out:
    :func:`structural_rel_sd`).  ``sources`` counts the sources judged; a group with one source has
    no structural sd to judge it with (0)."""
    acc: dict[str, list[bool]] = {}
    sources: dict[str, set] = {}
    held_out = {src: structural_rel_sd(curves, leave_out_source=src, level=level)
                for src in {source_of(c) for c in curves}}
    for c in curves:
        sources.setdefault(c.group, set()).add(source_of(c))
        s_m = held_out[source_of(c)].get(c.group, 0.0)
        for p in c.predicted:
            lo, hi = point_interval(p["predicted"], p["constants_rel_sd"], s_m, level)
            acc.setdefault(c.group, []).append(bool(lo <= p["measured"] <= hi))
    return {g: dict(points=len(v), inside=int(np.sum(v)), coverage=float(np.mean(v)), sources=len(sources[g]))
            for g, v in acc.items()}


# ---- differences: what a design review asks for --------------------------------------------

#: before/after pairs of seed rows the model expresses as A and B: (A, B, what changes)
SEED_PAIRS = (
    ("kfl-01", "kfl-03", "SLUB free: one at a time -> bulk (16 objects)"),
    ("kfl-06", "kfl-07", "kfree_skb_list: KFREE_SKB_BULK_SIZE 1 -> 16"),
    ("mem-04", "mem-03", "zeroing 256 B: constant memset (rep stos) -> memset_erms, what __GFP_ZERO calls"),
    ("mem-06", "mem-05", "zeroing 512 B: constant memset (rep stos) -> memset_erms, what __GFP_ZERO calls"),
    ("mem-01", "mem-02", "zeroing the skb head: 184 B -> rounded up to 192 B"),
    ("veth-01", "veth-02", "veth: VETH_XDP_BATCH 1 -> 16 (memset)"),
    ("veth-05", "veth-06", "veth: VETH_XDP_BATCH 8 -> 16 (memset)"),
    ("veth-03", "veth-04", "veth: VETH_XDP_BATCH 8 -> 16 (__GFP_ZERO)"),
    ("veth-05", "veth-03", "veth: memset -> __GFP_ZERO (batch 8)"),
    ("veth-06", "veth-04", "veth: memset -> __GFP_ZERO (batch 16)"),
    ("cpm-03", "cpm-06", "cpumap source: page_pool recycling off -> on"),
    ("cpm-05", "cpm-08", "cpumap destination: page_pool recycling off -> on"),
    ("dfr-01", "dfr-02", "NAPI defer cache off -> on"),
)

#: a measured difference smaller than this is within the benchmark's noise: its sign is no evidence.
#: time_bench counts whole cycles (1 cycle); veth's seed names 2 ns/packet (row veth-n1); other
#: throughputs: 1 % of the value, time_bench's run-to-run figure.
def difference_noise(unit: str, a: float, b: float) -> float:
    """Noise of a measured difference ``b - a`` [``unit``] (see the comment above)."""
    if unit == "cycles":
        return 1.0
    if unit == "ns":
        return 0.3
    if unit == "Mpps":
        # 2 ns/packet at the pair's rate, in Mpps
        return abs(float(units.ns_to_mpps(1e3 / max(a, b) - 2.0)) - max(a, b))
    return 0.01 * max(abs(a), abs(b))


def _row_params(spec, prof: Profile) -> dict:
    base = st.scenario(st.defaults(spec.profile if spec.profile in available_profiles() else None))
    base.update(spec.state)
    base["ghz"] = prof.ghz
    return base


def seed_differences(profiles: dict[str, Profile] | None = None, evidence: dict[str, str] | None = None,
                     level: float = uncertainty.LEVEL) -> list[dict]:
    """Each pair of :data:`SEED_PAIRS`: ``B - A`` predicted by the shipped profile, with its paired
    interval (:func:`skbmodel.uncertainty.delta_intervals`: A and B see the same constants), against
    the measured ``B - A``.  In sample (the calibration saw both rows): ``evidence`` is the rows'
    kind (:func:`skbmodel.evidence.validation.evidence_of_rows`), and a pair of rows reproduced by
    construction has a difference reproduced by construction too."""
    profiles = profiles or {}
    evidence = evidence or validation.evidence_of_rows()
    spec_of = {s.id: s for s in validation.ROWS}
    out = []
    for a_id, b_id, what in SEED_PAIRS:
        sa, sb = spec_of[a_id], spec_of[b_id]
        prof = profiles.get(sa.profile) or load_profile(sa.profile)
        (ma, unit), (mb, _) = validation.measured_of(sa), validation.measured_of(sb)
        _, iv = uncertainty.pair_interval(_row_params(sa, prof), sa.output, _row_params(sb, prof), sb.output,
                                          prof, level)
        out_unit = model.OUTPUT_UNITS[sa.output]
        pa, pb = validation.predict_rows([sa, sb], {sa.profile: prof})
        # every row's unit conversion is a factor (cycles <-> ns at the clock, Mpps <-> pps), so it
        # carries the interval of the difference over
        lo, hi = sorted(float(validation.to_measured_unit(np.ravel(v)[0], out_unit, unit, prof.ghz)) for v in iv)
        kind = ("reproduced by construction" if "reproduced by construction" in (evidence[a_id], evidence[b_id])
                else evidence[a_id])
        out.append(_pair(f"{a_id} -> {b_id}", what, "seed rows" + ("" if kind == "predicted" else f", {kind}"),
                         unit, ma, mb, float(pa), float(pb), lo, hi, kind))
    return out


def _pair(pair, what, group, unit, ma, mb, pa, pb, lo, hi, evidence) -> dict:
    md, pd = mb - ma, pb - pa
    noise = difference_noise(unit, ma, mb)
    resolved = abs(md) > noise
    return dict(pair=pair, what=what, group=group, unit=unit, measured_delta=md, predicted_delta=pd, lo=lo, hi=hi,
                noise=noise, resolved=bool(resolved),
                sign_agrees=bool(np.sign(pd) == np.sign(md)) if resolved else None,
                rel_error=float((pd - md) / md) if resolved else None, inside=bool(lo <= md <= hi),
                evidence=evidence)


def curve_pairs(curves: list[CurveResult]) -> list[tuple[CurveResult, CurveResult]]:
    """``(one at a time, bulk)`` curve pairs of one published benchmark run: series ``<stem>-loop``
    with ``<stem>-bulk`` and ``<stem>-kfree`` (the kfree_bulk() API), the same x measured in both."""
    by = {c.series: c for c in curves}
    out = []
    for c in curves:
        if c.series.endswith("-loop") and c.output == "slub.loop_cycles":
            stem = c.series[:-len("-loop")]
            out += [(c, by[f"{stem}-{kind}"]) for kind in ("bulk", "kfree")
                    if f"{stem}-{kind}" in by and by[f"{stem}-{kind}"].output == "slub.bulk_cycles"]
    return out


def corpus_differences(curves: list[CurveResult], level: float = uncertainty.LEVEL) -> list[dict]:
    """Bulk minus one at a time at every x that both curves of a :func:`curve_pairs` pair predict
    out of sample (neither fit saw it).  Each curve is fitted on its own 3 points, so the two
    predictions are independent: the interval of the difference adds their variances (each the
    constants' share and the structural sd of the curve's group, set without the curve's source)."""
    z = uncertainty.z_value(level)
    held_out = {src: structural_rel_sd(curves, leave_out_source=src, level=level)
                for src in {source_of(c) for c in curves}}
    s_m = {c.series: held_out[source_of(c)].get(c.group, 0.0) for c in curves}
    out = []
    for a, b in curve_pairs(curves):
        pb = {p["x"]: p for p in b.predicted}
        for p in a.predicted:
            q = pb.get(p["x"])
            if q is None:
                continue
            sd = np.hypot(np.hypot(p["constants_rel_sd"], s_m[a.series]) * p["predicted"],
                          np.hypot(q["constants_rel_sd"], s_m[b.series]) * q["predicted"])
            d = q["predicted"] - p["predicted"]
            group = ("corpus curves, SLUB bulk vs one at a time"
                     + ("" if a.group == "slub" else ", earlier designs"))
            out.append(_pair(f"{a.series} -> {b.series.rsplit('-', 1)[1]} @ {a.x_name} {p['x']:g}",
                             f"SLUB free of {p['x']:g} objects: one at a time -> bulk", group, "cycles",
                             p["measured"], q["measured"], p["predicted"], q["predicted"], d - z * sd, d + z * sd,
                             "predicted"))
    return out + page_alloc_differences(curves, held_out, level)


def page_alloc_differences(curves: list[CurveResult], held_out: dict | None = None,
                           level: float = uncertainty.LEVEL) -> list[dict]:
    """One page per call minus a bulk of N pages, within each page-allocator curve: the call with one
    page (the curve's point at 1, where ``alloc_pages_bulk`` falls back to a single allocation) against
    every bulk size the fit did not see.  The point at 1 is one of the three the curve is fitted on,
    so the difference's error is the bulk side's; its interval adds both sides' variances (constants,
    and the structural sd of the page-allocator group set without the curve's source)."""
    z = uncertainty.z_value(level)
    held_out = held_out if held_out is not None else {
        src: structural_rel_sd(curves, leave_out_source=src, level=level) for src in {source_of(c) for c in curves}}
    out = []
    for c in curves:
        one = next((p for p in c.points if p["x"] == 1.0), None)
        if c.subsystem != "page_alloc" or one is None:
            continue
        s_m = held_out[source_of(c)].get(c.group, 0.0)
        for q in c.predicted:
            sd = np.hypot(one["constants_rel_sd"] * one["predicted"],
                          np.hypot(q["constants_rel_sd"], s_m) * q["predicted"])
            d = q["predicted"] - one["predicted"]
            out.append(_pair(f"{c.series} @ {c.x_name} 1 -> {q['x']:g}",
                             f"page allocator: one page per call -> bulk of {q['x']:g}",
                             "corpus curves, page allocator bulk vs one page per call", "cycles",
                             one["measured"], q["measured"], one["predicted"], q["predicted"], d - z * sd, d + z * sd,
                             "predicted"))
    return out


def summarise_differences(pairs: list[dict]) -> dict:
    """The ``differences`` protocol: per group and over every pair of predicted evidence of the
    designs the model describes (the headline), the pairs,
    those whose measured difference is above its noise (``resolved``), the share of those with the
    right sign (``sign_agreement``), the MAPE of the difference over them, and the share of all pairs
    whose measured difference lies inside the paired interval (``coverage``)."""
    def stats(ps):
        res = [p for p in ps if p["resolved"]]
        return dict(n_pairs=len(ps), n_resolved=len(res),
                    sign_agreement=float(np.mean([p["sign_agrees"] for p in res])) if res else float("nan"),
                    mape=float(np.mean([abs(p["rel_error"]) for p in res])) if res else float("nan"),
                    coverage=float(np.mean([p["inside"] for p in ps])) if ps else float("nan"))
    groups = sorted({p["group"] for p in pairs}, key=lambda g: (not g.startswith("seed rows"), g))
    # the headline: pairs the model had freedom to miss, of the designs it describes (the SLUB designs
    # the 2015 series replaced are reported apart, as their curves are)
    evidence = [p for p in pairs if p["evidence"] == "predicted" and "earlier designs" not in p["group"]]
    return dict(protocol="differences", pairs=pairs, **stats(evidence),
                groups=[dict(group=g, **stats([p for p in pairs if p["group"] == g])) for g in groups])


#: the goals of the differences protocol: the right sign on at least this share of the pairs above
#: their noise, and the paired 90 % intervals holding a share of the pairs within this range
SIGN_GOAL = 0.90
COVERAGE_GOAL = (0.80, 0.95)
#: a group judged against the goals needs this many pairs above their noise (fewer say little)
GOAL_MIN_RESOLVED = 5


def difference_goal_misses(d: dict) -> list[str]:
    """Groups of the ``differences`` protocol (:func:`summarise_differences`) that miss a goal, each
    as ``"group: right sign 83 %, inside 44 %"`` (only the figures that miss).  The groups of pairs
    reproduced by construction are no evidence and are not judged; reported as measured, never
    tuned back."""
    out = []
    for g in [dict(d, group="all pairs of predicted evidence")] + d["groups"]:
        if "reproduced by construction" in g["group"] or g["n_resolved"] < GOAL_MIN_RESOLVED:
            continue
        miss = []
        if g["sign_agreement"] < SIGN_GOAL:
            miss.append(f"right sign {_pct(g['sign_agreement'])}")
        if not COVERAGE_GOAL[0] <= g["coverage"] <= COVERAGE_GOAL[1]:
            miss.append(f"inside {_pct(g['coverage'])}")
        if miss:
            out.append(f"{g['group']}: {', '.join(miss)}")
    return out


def report(df, profiles: dict[str, Profile] | None = None) -> dict:
    """The differences (:func:`summarise_differences`), both protocols, the coverage of the 90 %
    intervals, the structural sd per subsystem and the in-sample degrees of freedom, as plain data
    (the CLI's ``--json``)."""
    curves = validate_corpus(df)
    loso = leave_one_source_out(profiles)
    loro = leave_one_row_out(profiles)
    struct = structural_rel_sd(curves)
    points = profile_cpu_points(df)
    differences = summarise_differences(seed_differences(profiles) + corpus_differences(curves))
    eras = era_validation.era_points(df)
    other_cpu = leave_one_out.leave_one_cpu_out(df)
    other_cpu_unpriced = leave_one_out.unpriced_points(df)
    srso = kconfig.srso_predictions(df)
    other_cpu_costs = leave_one_out.leave_one_cpu_out_costs(df)
    other_isa = {"blind": leave_one_out.leave_one_isa_out(df),
                 "in-run": leave_one_out.leave_one_isa_out(df, inrun=True)}
    sizes = object_size_report(df)
    rates = era_validation.rate_points(df)
    summary = sorted(summarise(curves, loso, loro, points) + era_validation.summarise(eras)
                     + leave_one_out.summarise(other_cpu) + leave_one_out.summarise_costs(other_cpu_costs)
                     + leave_one_out.summarise_isa(other_isa["blind"], leave_one_out.ISA_PROTOCOL)
                     + leave_one_out.summarise_isa(other_isa["in-run"], leave_one_out.ISA_INRUN_PROTOCOL)
                     + summarise_object_size(sizes) + era_validation.summarise_rates(rates)
                     + kconfig.summarise_srso(srso),
                     key=lambda s: (s["subsystem"], s["protocol"]))
    return dict(differences=differences, summary=summary, coverage={**coverage(curves), **object_size_coverage(sizes)},
                points=points, eras=eras, other_cpu=other_cpu, other_cpu_unpriced=other_cpu_unpriced, srso=srso,
                other_cpu_costs=other_cpu_costs, other_isa=other_isa,
                object_size=sizes,
                rates=dict(points=rates, left_out=era_validation.rates_left_out(df)),
                structural_rel_sd={STRUCTURAL_PREFIX[g]: v for g, v in struct.items() if g in STRUCTURAL_PREFIX},
                curves=[_curve_dict(c) for c in curves], loso=loso, loro=loro, in_sample=in_sample_dof(profiles))


REPORT_JSON = uncertainty.REPORT_JSON


def load_report(path: Path | str | None = None) -> dict:
    """The committed report (written by ``scripts/validation_report.py``; a test checks it is current)."""
    return json.loads(Path(path or REPORT_JSON).read_text())


# ---- recorded figures: no reported figure may get worse unnoticed ---------------------------

#: every out-of-sample figure, as last recorded on purpose (``scripts/validation_report.py --record``)
RECORDED_JSON = paths.DATA_DIR / "outofsample-recorded.json"
#: relative slack of a recorded figure: the report's rounding to 3 significant figures (at most half a
#: unit of the third digit, 0.5 %) and another machine's last digits; counts have none
_SLACK = 5e-3


def recorded_figures(rep: dict) -> dict:
    """``{figure name: {"value": v, "better": "lower" | "higher" | "nearer 0.9"}}`` of every figure the
    report states: per subsystem and protocol the MAPE, the max error, the points predicted and, where
    the protocol states one (other CPU), the coverage of its intervals; the coverage per group and the
    points and sources it is judged on; the seed rows left out that were predicted and not; the
    differences' sign agreement, MAPE and coverage, overall and per group."""
    near = f"nearer {uncertainty.LEVEL:g}"
    out = {}
    for s in rep["summary"]:
        k = f"{s['subsystem']} / {s['protocol']}"
        out[f"{k}: MAPE"] = dict(value=s["mape"], better="lower")
        out[f"{k}: max error"] = dict(value=s["max_error"], better="lower")
        out[f"{k}: points"] = dict(value=s["points"], better="higher")
        if s.get("coverage") is not None:
            out[f"{k}: coverage"] = dict(value=s["coverage"], better=near)
    for g, c in rep["coverage"].items():
        out[f"coverage {g}"] = dict(value=c["coverage"], better=near)
        out[f"coverage {g}: points"] = dict(value=c["points"], better="higher")
        out[f"coverage {g}: sources"] = dict(value=c["sources"], better="higher")
    for key, name in (("loso", "source left out"), ("loro", "row left out")):
        for status, better in (("predicted", "higher"), ("not predictable", "lower")):
            out[f"seed rows, {name}: {status}"] = dict(value=sum(r["status"] == status for r in rep[key]),
                                                       better=better)
    d = rep.get("differences")
    if d:
        for g in [dict(group="all pairs of predicted evidence", **{k: d[k] for k in d if k != "groups"})] + d["groups"]:
            for k, better in (("sign_agreement", "higher"), ("mape", "lower"),
                              ("coverage", near), ("n_pairs", "higher")):
                if g.get(k) is not None and g[k] == g[k]:
                    out[f"differences {g['group']}: {k}"] = dict(value=g[k], better=better)
    return out


def worse_than_recorded(rep: dict, recorded: dict) -> list[str]:
    """Figures of ``rep`` worse than ``recorded`` (beyond the report's rounding), and figures that
    appeared or vanished: each a line naming the figure, its recorded value and today's."""
    now = recorded_figures(rep)
    out = [f"{k}: recorded {recorded[k]['value']}, no longer reported" for k in recorded if k not in now]
    out += [f"{k}: {v['value']} is not recorded" for k, v in now.items() if k not in recorded]
    for k in now.keys() & recorded.keys():
        v, r, better = now[k]["value"], recorded[k]["value"], recorded[k]["better"]
        slack = 0.0 if isinstance(r, int) else _SLACK * abs(r) + 1e-12
        if better == "lower":
            worse = v > r + slack
        elif better == "higher":
            worse = v < r - slack
        else:
            level = float(better.split()[1])
            worse = abs(v - level) > abs(r - level) + slack
        if worse:
            out.append(f"{k}: {v} is worse than the recorded {r} ({better} is better)")
    return sorted(out)


#: significant figures of a computed number in the report: the model predicts to a few per cent
#: and the fits stop at a tolerance, so a fourth digit is noise (it differs between numpy/BLAS builds)
SIG_FIGS = 3


#: report keys that hold inputs (a measurement, a curve's x, its clock): kept as given
AS_GIVEN = frozenset({"measured", "x", "fit_x", "ghz"})


def rounded(obj, digits: int = SIG_FIGS):
    """``obj`` with every computed float rounded to ``digits`` significant digits (NaN and inf become
    ``None``); the inputs under the keys :data:`AS_GIVEN` keep their value."""
    if isinstance(obj, float):
        return float(f"{obj:.{digits}g}") if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: (v if k in AS_GIVEN else rounded(v, digits)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [rounded(v, digits) for v in obj]
    if isinstance(obj, np.generic):
        return rounded(obj.item(), digits)
    return obj


def _last_digit(v: float, digits: int) -> float:
    """One unit in the last of ``digits`` significant digits of ``v``."""
    return 10.0 ** (math.floor(math.log10(abs(v))) - digits + 1) if v else 0.0


def report_differences(committed, fresh, digits: int = SIG_FIGS, where: str = "") -> list[str]:
    """Where the committed (rounded) report and a fresh computation disagree beyond its rounding.

    A number agrees when it is within one unit of its last kept digit of the fresh value (the
    rounding's half unit plus as much again for the last digits of another machine's arithmetic);
    integers, strings, keys and lengths must be equal.  Returns one line per disagreement.
    """
    if isinstance(fresh, np.generic):
        fresh = fresh.item()
    if isinstance(committed, dict) and isinstance(fresh, dict):
        if set(committed) != set(fresh):
            return [f"{where}: keys {sorted(set(committed) ^ set(fresh))} differ"]
        return [d for k in sorted(fresh) for d in report_differences(committed[k], fresh[k], digits, f"{where}/{k}")]
    if isinstance(committed, list) and isinstance(fresh, (list, tuple)):
        if len(committed) != len(fresh):
            return [f"{where}: {len(committed)} entries committed, {len(fresh)} computed"]
        return [d for i, (c, f) in enumerate(zip(committed, fresh))
                for d in report_differences(c, f, digits, f"{where}[{i}]")]
    if isinstance(fresh, float) and not isinstance(committed, bool):
        if not math.isfinite(fresh) or committed is None:
            return [] if committed is None and not math.isfinite(fresh) else [f"{where}: {committed} != {fresh}"]
        if isinstance(committed, (int, float)) and abs(committed - fresh) <= max(
                _last_digit(committed, digits), _last_digit(fresh, digits)) + 1e-12:
            return []
        return [f"{where}: {committed} committed, {fresh:.{digits + 3}g} computed"]
    return [] if committed == fresh else [f"{where}: {committed!r} committed, {fresh!r} computed"]


def _curve_dict(c: CurveResult) -> dict:
    d = dataclasses.asdict(c)
    d.update(mape=c.mape, max_error=c.max_error, n_predicted=len(c.predicted), group=c.group)
    return d


def _pct(x: float | None) -> str:
    return "—" if x is None or x != x else f"{x * 100:.1f} %"


def _num(x: float | None) -> str:
    """A value as the report holds it (rounded already): no exponent, no digits it does not have."""
    if x is None or x != x:
        return "—"
    return f"{x:.0f}" if abs(x) >= 1e4 else f"{x:.{SIG_FIGS + 3}g}"


def format_differences(d: dict) -> list[str]:
    """The ``differences`` protocol as text: the figures, per group, then every pair."""
    lines = [f"Differences B - A (before/after pairs the model expresses): {d['n_pairs']} pairs of predicted evidence "
             "(SLUB designs the 2015 series replaced apart), "
             f"{d['n_resolved']} with a measured difference above its noise; right sign {_pct(d['sign_agreement'])}, "
             f"MAPE of the difference {_pct(d['mape'])}, inside the paired {uncertainty.LEVEL:.0%} interval "
             f"{_pct(d['coverage'])} (goals: right sign >= 90 %, inside 80-95 %)", "",
             "| group | pairs | above noise | right sign | MAPE of the difference | inside the interval |",
             "|---|---:|---:|---:|---:|---:|"]
    for g in d["groups"]:
        lines.append(f"| {g['group']} | {g['n_pairs']} | {g['n_resolved']} | {_pct(g['sign_agreement'])} | "
                     f"{_pct(g['mape'])} | {_pct(g['coverage'])} |")
    misses = difference_goal_misses(d)
    if misses:
        lines += ["", "Groups short of the goals (reported as measured, not tuned back): " + "; ".join(misses)]
    lines += ["", "| pair | what | unit | measured B - A | predicted | 90 % interval | noise | sign | inside | "
              "evidence |", "|---|---|---|---:|---:|---|---:|---|---|---|"]
    for p in d["pairs"]:
        sign = "—" if p["sign_agrees"] is None else ("right" if p["sign_agrees"] else "WRONG")
        lines.append(f"| {p['pair']} | {p['what']} | {p['unit']} | {_num(p['measured_delta'])} | "
                     f"{_num(p['predicted_delta'])} | [{_num(p['lo'])}, {_num(p['hi'])}] | {_num(p['noise'])} | "
                     f"{sign} | {'yes' if p['inside'] else 'no'} | {p['evidence']} |")
    return lines


def format_report(rep: dict) -> str:
    """The report as text tables (the CLI's output, and the tables of ``docs/validation.md``), the
    differences first: they are what a design review reads."""
    lines = format_differences(rep["differences"])
    lines += ["", "Out of sample, per subsystem (curves: fit on 3 points, predict the rest; seed rows: leave one "
              "source out)", "",
             f"| {'subsystem':<15} | {'protocol':<27} | {'points predicted':>16} | {'MAPE':>8} | {'max |error|':>11} |",
             f"|{'-' * 17}|{'-' * 29}|{'-' * 17}:|{'-' * 9}:|{'-' * 12}:|"]
    for s in rep["summary"]:
        lines.append(f"| {s['subsystem']:<15} | {s['protocol']:<27} | {s['points']:>16} | {_pct(s['mape']):>8} | "
                     f"{_pct(s['max_error']):>11} |")
    lines += ["", f"Coverage of the {uncertainty.LEVEL:.0%} prediction intervals on the curves' out-of-sample "
              "points, judged on held-out sources (constants' uncertainty, and the structural sd set without every "
              "curve of the source judged)", "",
              "| group | sources | points | inside | coverage | |", "|---|---:|---:|---:|---:|---|"]
    for g, c in sorted(rep["coverage"].items()):
        flag = ("outside 80-95 %" if c["points"] >= 10 and not 0.80 <= c["coverage"] <= 0.95 else "")
        lines.append(f"| {g} | {c['sources']} | {c['points']} | {c['inside']} | {_pct(c['coverage'])} | {flag} |")
    lines += ["", "Structural (model-form) relative sd used by the intervals: "
              + ", ".join(f"`{k}*` {_pct(v)}" for k, v in sorted(rep["structural_rel_sd"].items())), ""]
    lines += ["", "Curves", "",
              "| series | design | output | CPU | GHz | fitted on | free constants | predicted | MAPE | max |",
              "|---|---|---|---|---:|---|---|---:|---:|---:|"]
    for c in rep["curves"]:
        fit_x = ", ".join(f"{x:g}" for x in c["fit_x"])
        lines.append(f"| {c['series']} | {c['design'] or '—'} | {c['output']} | {c['cpu'][:40]} | {c['ghz']:g} | "
                     f"{c['x_name']} {fit_x} | "
                     f"{', '.join(c['free'])} | {c['n_predicted']} | {_pct(c['mape'])} | {_pct(c['max_error'])} |")
    lines += ["", "Published points on a shipped profile's CPU (other kernels), predicted by the profile as shipped",
              "",
              "| row | output | kernel | measured | predicted | unit | error |", "|---|---|---|---:|---:|---|---:|"]
    for r in rep["points"]:
        lines.append(f"| {r['id']} | {r['output']} | {r['kernel'][:40]} | {_num(r['measured'])} | "
                     f"{_num(r['predicted'])} | {r['unit']} | {r['rel_error'] * 100:+.1f} % |")
    lines += ["", "Published points on a profiled CPU, each predicted by the profile of its kernel era (`fitted`: the "
              "profile's own constants cite it; the last column is the default profile's prediction)", ""]
    lines += era_validation.format_points(rep["eras"])
    lines += ["", "Leave one CPU out (protocol \"other CPU\"): each described CPU's points predicted by a "
              "profile derived from its machine description and the other CPUs' data (`skbmodel.evidence.derive`); "
              "naive: the other CPUs' mean ns, the same on every CPU", ""]
    for s in rep["summary"]:
        if s["protocol"] == leave_one_out.PROTOCOL:
            claim = ("" if s.get("claim", True) else
                     f" No accuracy claim: fewer than {leave_one_out.MIN_CPUS_FOR_CLAIM} CPUs of one kernel era.")
            lines.append(f"{s['subsystem']}: {s['points']} points on {', '.join(s['cpus'])}: MAPE {_pct(s['mape'])} "
                         f"(naive {_pct(s['baseline_mape'])}); 90 % intervals hold {_pct(s['coverage'])} of the "
                         f"points, median relative half-width {_pct(s['median_rel_half_width'])}.{claim}")
    lines += [""] + leave_one_out.format_points(rep["other_cpu"])
    lines += [""] + leave_one_out.format_unpriced(rep["other_cpu_unpriced"])
    lines += ["", "Kernel configuration (protocol \"kernel config (SRSO return thunk)\"): the EPYC 9684X's runs "
              "booted with SRSO's safe-RET return thunk, predicted as the same kernel's spec_rstack_overflow=ibpb run "
              "plus the kernel function returns of each loop, counted in the v6.13 source "
              "(`skbmodel.machine.kconfig.RETURNS_V613`, "
              "bracketed over the compiler's inlining choices), times the run's own price of one return (its "
              "time_bench_sample function call, 14 - 3 cycles); naive: the ibpb run unchanged.  The spinlock row "
              "checks the count and is not in the figures.", ""]
    lines += kconfig.format_srso(rep["srso"])
    lines += ["", "SLUB, zeroing and the page allocator, each CPU derived without its own data (operation counts x the "
              "description's costs, residuals fitted on the other CPUs; `skbmodel.evidence.derive.COST_MODEL`); "
              "rows marked * "
              "are of a CPU the corpus does not name (`skbmodel.evidence.derive.INFERRED_CPU`); zeroing's start-ups "
              "are "
              "measured on two CPUs (the E5-1650 v4 and the EPYC 7351), its per-line costs on the E5 alone, so "
              "these carry the single-CPU rule of `skbmodel.evidence.derive.derive_costs`, and the E5's zeroing "
              "rows are not "
              "predicted (they would read its own per-line costs through the base profile, "
              "`skbmodel.evidence.leave_one_out._own_through_base`)", ""]
    lines += leave_one_out.format_cost_points(rep.get("other_cpu_costs", []))
    lines += ["", f"Leave one instruction set out (protocols \"{leave_one_out.ISA_PROTOCOL}\" and "
              f"\"{leave_one_out.ISA_INRUN_PROTOCOL}\"): the arm64 server's page_pool points (ns) predicted from the "
              "x86 CPUs' instruction counts, priced with what differs on arm64 "
              "(`skbmodel.evidence.derive.isa_cost_cycles`: the per-CPU statistics' atomics and preempt-count "
              "toggles); "
              "no arm64 profile or page_pool row is read. The in-run variant also reads the run's own "
              "time_bench atomic_inc and spin_lock baselines (the same machine and kernel). Untranslated: the "
              "x86 counts at the core's width and locked-op latency alone (the derivation before the "
              "translation); naive: the x86 CPUs' mean ns", ""]
    for s in rep["summary"]:
        if s["protocol"] in (leave_one_out.ISA_PROTOCOL, leave_one_out.ISA_INRUN_PROTOCOL):
            lines.append(f"{s['protocol']}: {s['points']} points on {', '.join(s['cpus'])}: MAPE {_pct(s['mape'])} "
                         f"(untranslated {_pct(s['untranslated_mape'])}, naive {_pct(s['baseline_mape'])}); 90 % "
                         f"intervals hold {_pct(s['coverage'])} of the points, median relative half-width "
                         f"{_pct(s['median_rel_half_width'])}. One CPU: no accuracy is claimed.")
    for name, pts in rep.get("other_isa", {}).items():
        lines += ["", f"{name}:", ""] + leave_one_out.format_isa_points(pts)
    lines += format_object_size(rep.get("object_size", []))
    rates = rep.get("rates", {})
    lines += era_validation.format_rates(rates.get("points", []), rates.get("left_out", []))
    for title, key in (("Seed rows, leave one source out", "loso"), ("Seed rows, leave one row out", "loro")):
        lines += ["", title, "", "| row | subsystem | left out | measured | predicted | unit | error | status |",
                  "|---|---|---|---:|---:|---|---:|---|"]
        for r in rep[key]:
            err = f"{r['rel_error'] * 100:+.1f} %" if r["status"] == "predicted" else "—"
            status = r["status"] + (f": {r['why']}" if r["why"] else "")
            lines.append(f"| {r['id']} | {r['subsystem']} | {r['left_out']} | {_num(r['measured'])} | "
                         f"{_num(r['predicted'])} | {r['unit']} | {err} | {status} |")
    lines += ["", "In sample (the calibration itself): rows minus fitted constants", "",
              "| subsystem | independent rows | fitted constants they determine | degrees of freedom | |",
              "|---|---:|---|---:|---|"]
    for d in rep["in_sample"]:
        label = "reproduced by construction, not a validation" if d["by_construction"] else ""
        lines.append(f"| {d['subsystem']} | {d['rows']} | {', '.join(d['fitted_constants']) or '—'} | {d['dof']} | "
                     f"{label} |")
    return "\n".join(lines)


def load_recorded(path: Path | str | None = None) -> dict:
    """The recorded figures (:data:`RECORDED_JSON`), ``{}`` when there is no record yet."""
    p = Path(path or RECORDED_JSON)
    return json.loads(p.read_text()) if p.is_file() else {}


# ---- object size: fit on three sizes of a published by-size curve, predict the others ----------

#: protocol name of the object-size curves in the summary
OBJECT_SIZE_PROTOCOL = "object size, fit on 3"
#: the constants an object-size curve constrains: a run of many objects (slab_test's "repeatedly
#: allocate then free") moves the fast pair (level), the L2 miss (the footprint step past the L2) and the
#: per-slab refill (fewer objects per slab as they grow); a reused object (bulk 1) only the fast pair
OBJECT_SIZE_FREE = ("slub_fast_pair_cycles", "l2_miss_cycles", "slub_refill_cycles")
OBJECT_SIZE_FREE_REUSE = ("slub_fast_pair_cycles",)
#: why the points above the largest kmalloc cache are not predicted: before v5.13 ("mm/page_alloc:
#: allow high-order pages to be stored on the per-cpu lists") an order > 0 block came from the buddy
#: lists under the zone lock, while the profiles' page allocator constants are of kernels with them
OBJECT_SIZE_PAGE_NOTE = ("above the largest kmalloc cache (page allocator): the curve's kernel predates per-CPU "
                         "lists for order > 0 pages (v5.13), the profile's page constants do not")
_BULK = re.compile(r"\bbulk=(\d+)")


def object_size_curves(df) -> list[dict]:
    """The corpus series over ``obj_bytes`` with the run length (``bulk=``) their conditions state."""
    out = []
    for name, g in df[df["x_name"] == "obj_bytes"].groupby("series", sort=True):
        cond = str(g["conditions"].iloc[0])
        m = _BULK.search(cond)
        ghz = g["ghz"].iloc[0]
        out.append(dict(series=name, output=str(g["output"].iloc[0]), xs=g["x_value"].to_numpy(float),
                        values=g["value"].to_numpy(float), unit=_unit_of(str(g["unit"].iloc[0])),
                        bulk=float(m.group(1)) if m else 1.0, ghz=float(ghz) if ghz == ghz and ghz else None,
                        cpu=str(g["cpu"].iloc[0]), source=str(g["source"].iloc[0])))
    return out


def _solve_constants(prof: Profile, output: str, params: dict, target, free, steps: int = 3) -> dict:
    """Least squares of ``free`` constants to ``target`` at ``params`` (Gauss-Newton, finite-difference
    Jacobian; the slab terms are linear in the constants, so it converges in one step)."""
    vals = {n: float(prof.value(n)) for n in free}
    target = np.asarray(target, dtype=float)
    for _ in range(steps):
        f0 = model.evaluate(params, prof, constants=vals, outputs=[output])[output]
        jac = np.empty((target.size, len(free)))
        for j, n in enumerate(free):
            h = max(abs(vals[n]) * 1e-4, 1e-6)
            fj = model.evaluate(params, prof, constants={**vals, n: vals[n] + h}, outputs=[output])[output]
            jac[:, j] = (fj - f0) / h
        step = np.linalg.lstsq(jac, target - f0, rcond=None)[0]
        vals = {n: vals[n] + float(s) for n, s in zip(free, step)}
    return vals


def validate_object_size(curve: dict, base: Profile | None = None, level: float = uncertainty.LEVEL) -> dict:
    """Fit :data:`OBJECT_SIZE_FREE` on :func:`fit_points` of a by-size curve's slab sizes (up to the
    largest kmalloc cache), then predict its other slab sizes with their 90 % intervals (the
    dashboard's: constants and structural sd).  Points above the largest kmalloc cache are listed,
    not predicted (:data:`OBJECT_SIZE_PAGE_NOTE`)."""
    from ..physics import slub
    prof = curve_profile(curve["ghz"], None, base)
    order = np.argsort(curve["xs"], kind="stable")
    xs, values = curve["xs"][order], curve["values"][order]
    slab = xs <= slub.KMALLOC_MAX_CACHE_BYTES
    x_s, v_s = xs[slab], values[slab]
    idx = fit_points(x_s)
    free = list(OBJECT_SIZE_FREE if curve["bulk"] > 1 else OBJECT_SIZE_FREE_REUSE)
    output = curve["output"]
    fit_params = {"obj_bytes": x_s[idx], "bulk": curve["bulk"]}
    to_model = validation.to_measured_unit(1.0, model.OUTPUT_UNITS[output], curve["unit"], prof.ghz)
    fitted = _solve_constants(prof, output, fit_params, v_s[idx] / to_model, free)
    fitted_prof = prof.with_values(fitted, source="fitted to the curve's three sizes")
    params = {"obj_bytes": x_s, "bulk": curve["bulk"]}
    pred = model.evaluate(params, fitted_prof, outputs=[output])[output] * to_model
    lo, hi = (np.asarray(a) * to_model for a in uncertainty.intervals(params, fitted_prof, outputs=[output],
                                                                       level=level)[output])
    in_fit = np.zeros(x_s.size, dtype=bool)
    in_fit[idx] = True
    points = [dict(x=float(x), measured=float(m), predicted=float(p), rel_error=float((p - m) / m), fit=bool(f),
                   lo=float(a), hi=float(b), inside=bool(a <= m <= b))
              for x, m, p, f, a, b in zip(x_s, v_s, np.broadcast_to(pred, x_s.shape), in_fit,
                                          np.broadcast_to(lo, x_s.shape), np.broadcast_to(hi, x_s.shape))]
    predicted = [p for p in points if not p["fit"]]
    err = [abs(p["rel_error"]) for p in predicted]
    return dict(series=curve["series"], output=output, bulk=curve["bulk"], cpu=curve["cpu"], ghz=float(prof.ghz),
                source=curve["source"], fit_x=[float(x) for x in x_s[idx]], free=free, fitted=fitted, points=points,
                not_predicted=[dict(x=float(x), measured=float(m), why=OBJECT_SIZE_PAGE_NOTE)
                               for x, m in zip(xs[~slab], values[~slab])],
                mape=float(np.mean(err)), max_error=float(np.max(err)),
                coverage=float(np.mean([p["inside"] for p in predicted])))


def object_size_report(df, base: Profile | None = None) -> list[dict]:
    """:func:`validate_object_size` for every by-size curve of the corpus."""
    return [validate_object_size(c, base) for c in object_size_curves(df)]


def summarise_object_size(results: list[dict]) -> list[dict]:
    """The summary row of the object-size protocol: every predicted point of every curve pooled."""
    pts = [p for r in results for p in r["points"] if not p["fit"]]
    if not pts:
        return []
    err = [abs(p["rel_error"]) for p in pts]
    return [dict(subsystem="slub", protocol=OBJECT_SIZE_PROTOCOL, points=len(pts), mape=float(np.mean(err)),
                 max_error=float(np.max(err)))]


def object_size_coverage(results: list[dict]) -> dict[str, dict]:
    """Coverage of the 90 % intervals on the object-size curves' predicted points (one group)."""
    pts = [p for r in results for p in r["points"] if not p["fit"]]
    if not pts:
        return {}
    inside = [p["inside"] for p in pts]
    half = [(p["hi"] - p["lo"]) / 2 / abs(p["predicted"]) for p in pts]
    return {"slub, object size": dict(points=len(pts), inside=int(np.sum(inside)), coverage=float(np.mean(inside)),
                                      sources=len({r["source"] for r in results}),
                                      median_rel_half_width=float(np.median(half)))}


def format_object_size(results: list[dict]) -> list[str]:
    """The object-size curves as text: one row per curve, then every point."""
    lines = ["", f"Object size (protocol \"{OBJECT_SIZE_PROTOCOL}\"): published kmalloc+kfree cycles by object size; "
             "fitted on three slab sizes, the other slab sizes predicted with the dashboard's 90 % intervals", "",
             "| series | bulk | fitted on (bytes) | free constants | predicted | MAPE | max "
             "| inside the 90 % interval |",
             "|---|---:|---|---|---:|---:|---:|---:|"]
    for r in results:
        n = sum(not p["fit"] for p in r["points"])
        lines.append(f"| {r['series']} | {r['bulk']:g} | {', '.join(f'{x:g}' for x in r['fit_x'])} | "
                     f"{', '.join(r['free'])} | {n} | {_pct(r['mape'])} | {_pct(r['max_error'])} | "
                     f"{_pct(r['coverage'])} |")
    cov = object_size_coverage(results)
    for g, c in cov.items():
        lines += ["", f"{g}: {c['inside']} of {c['points']} predicted points inside their 90 % interval "
                  f"({_pct(c['coverage'])}), median relative half-width {_pct(c['median_rel_half_width'])}: the "
                  "intervals of a run of many objects are wide because every object is freed to a slab that is no "
                  "longer the CPU slab, and the profile's __slab_free extra is poorly determined (its stated sd)"]
    lines += ["", "| series | bytes | measured | predicted | 90 % interval | error | |",
              "|---|---:|---:|---:|---|---:|---|"]
    for r in results:
        for p in r["points"]:
            lines.append(f"| {r['series']} | {p['x']:g} | {_num(p['measured'])} | {_num(p['predicted'])} | "
                         f"[{_num(p['lo'])}, {_num(p['hi'])}] | {p['rel_error'] * 100:+.1f} % | "
                         f"{'fitted' if p['fit'] else ('inside' if p['inside'] else 'outside')} |")
        for p in r["not_predicted"]:
            lines.append(f"| {r['series']} | {p['x']:g} | {_num(p['measured'])} | — | — | — | not predicted: "
                         f"{p['why']} |")
    return lines
