"""Curves, fit on 3: one published curve's constants fitted on three of its points, the others predicted.

Each corpus series with one CPU, kernel and test and one input varied (SLUB bulk size, zeroed bytes,
the page allocator's bulk, XDP batch, page_pool recycling) is fitted with ``fit``'s own defaults
(:func:`skbmodel.evidence.userfit.suggest_free`) on :data:`N_FIT` points spread over the curve's range
(:func:`fit_points`), on a profile with the curve's clock [GHz] and object size [bytes]; every other point
is then predicted in the curve's unit (cycles, ns, Mpps) and compared.  The errors set the model's
structural (model-form) relative sd per group (:func:`structural_rel_sd`), and the coverage of the
90 % intervals is judged on held-out sources (:func:`coverage`).  The curves: the public corpus,
``skbmodel/data/public-measurements.csv`` (docs/corpus.md names every source).
"""
from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

from ... import model, uncertainty
from ...machine.profile import DEFAULT_PROFILE, Profile, load_profile
from .. import parsers, userfit, validation
from .base import Inputs, pct, subsystem_of, summary_rows, unit_of

NAME = "curves"
TITLE = "published curves fitted on 3 points, the other points predicted"
PROTOCOL = "curves, fit on 3"

#: points a curve fit uses
N_FIT = 3


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
        if not parsers.compatible(output, unit_of(unit)):
            continue
        ghz = g["ghz"].iloc[0]
        out.append(dict(series=name, output=output, x_name=curve_input(output, x_name), xs=g["x_value"].to_numpy(float),
                        values=g["value"].to_numpy(float), unit=unit_of(unit),
                        ghz=float(ghz) if ghz == ghz and ghz else None,
                        object_bytes=object_bytes_of(str(g["conditions"].iloc[0])),
                        cpu=str(g["cpu"].iloc[0]), source=str(g["source"].iloc[0]),
                        design=design_of(str(g["conditions"].iloc[0]))))
    return out


def validate_corpus(df, base: Profile | None = None) -> list[CurveResult]:
    """:func:`validate_curve` for every curve of :func:`corpus_curves`."""
    return [validate_curve(c["series"], c["output"], c["x_name"], c["xs"], c["values"], c["unit"], ghz=c["ghz"],
                           object_bytes=c["object_bytes"], cpu=c["cpu"], source=c["source"], base=base,
                           design=c["design"])
            for c in corpus_curves(df)]


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


def curve_dict(c: CurveResult) -> dict:
    d = dataclasses.asdict(c)
    d.update(mape=c.mape, max_error=c.max_error, n_predicted=len(c.predicted), group=c.group)
    return d


def fitted(inputs: Inputs) -> list[CurveResult]:
    """:func:`validate_corpus` of the corpus, or of its series whose name holds ``--curve-series``."""
    df = inputs.df
    part = inputs.option("curve_series")
    if part:
        df = df[df["series"].astype(str).str.contains(part, regex=False)]
    return validate_corpus(df)


def of(inputs: Inputs) -> list[CurveResult]:
    """:func:`fitted`, once per report (every protocol that reads the curves shares them)."""
    return inputs.shared(NAME, fitted)


def summarise(curves: list[CurveResult]) -> list[dict]:
    """Per group (:attr:`CurveResult.group`): points predicted out of sample, MAPE and max |error|."""
    acc: dict[tuple[str, str], list[float]] = {}
    for c in curves:
        acc.setdefault((c.group, PROTOCOL), []).extend(abs(p["rel_error"]) for p in c.predicted)
    return summary_rows(acc)


def run(inputs: Inputs) -> dict:
    """Every curve (:func:`fitted`), the summary, the coverage per group and the structural sd per output
    prefix (:data:`STRUCTURAL_PREFIX`)."""
    curves = of(inputs)
    struct = structural_rel_sd(curves)
    return dict(summary=summarise(curves), coverage=coverage(curves),
                structural_rel_sd={STRUCTURAL_PREFIX[g]: v for g, v in struct.items() if g in STRUCTURAL_PREFIX},
                curves=[curve_dict(c) for c in curves])


def format(rep: dict) -> list[str]:
    """The structural sd the intervals use, then one row per curve."""
    lines = ["", "Structural (model-form) relative sd used by the intervals: "
             + ", ".join(f"`{k}*` {pct(v)}" for k, v in sorted(rep["structural_rel_sd"].items())), ""]
    lines += ["", "Curves", "",
              "| series | design | output | CPU | GHz | fitted on | free constants | predicted | MAPE | max |",
              "|---|---|---|---|---:|---|---|---:|---:|---:|"]
    for c in rep["curves"]:
        fit_x = ", ".join(f"{x:g}" for x in c["fit_x"])
        lines.append(f"| {c['series']} | {c['design'] or '—'} | {c['output']} | {c['cpu'][:40]} | {c['ghz']:g} | "
                     f"{c['x_name']} {fit_x} | "
                     f"{', '.join(c['free'])} | {c['n_predicted']} | {pct(c['mape'])} | {pct(c['max_error'])} |")
    return lines


def add_arguments(group) -> None:
    group.add_argument("--curve-series", metavar="TEXT",
                       help="fit only the corpus curves whose series name contains TEXT (and the differences "
                            "between them); default every curve")
