"""Object size, fit on 3: a published by-size SLUB curve fitted on three of its slab sizes, the other sizes
predicted with the dashboard's 90 % intervals.

kmalloc+kfree cycles by object size [bytes] (slab_test's "repeatedly allocate then free" and a reused
object): the constants a run of many objects moves (:data:`OBJECT_SIZE_FREE`: the fast pair, the L2 miss,
the per-slab refill; a reused object only the fast pair) are fitted by least squares
(:func:`_solve_constants`) on :func:`skbmodel.evidence.protocols.curves.fit_points` of the sizes up to the
largest kmalloc cache (``skbmodel.physics.slub.KMALLOC_MAX_CACHE_BYTES``); larger sizes come from the page
allocator and are listed, not predicted (:data:`OBJECT_SIZE_PAGE_NOTE`).  The curves: the public corpus
(docs/corpus.md).
"""
from __future__ import annotations

import re

import numpy as np

from ... import model, uncertainty
from ...machine.profile import Profile
from .. import validation
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs, num, pct, unit_of
from .curves import curve_profile, fit_points

NAME = "object-size"
TITLE = "published by-size SLUB curves fitted on 3 sizes, the other sizes predicted"

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
                        values=g["value"].to_numpy(float), unit=unit_of(str(g["unit"].iloc[0])),
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
    from ...physics import slub
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
                     f"{', '.join(r['free'])} | {n} | {pct(r['mape'])} | {pct(r['max_error'])} | "
                     f"{pct(r['coverage'])} |")
    cov = object_size_coverage(results)
    for g, c in cov.items():
        lines += ["", f"{g}: {c['inside']} of {c['points']} predicted points inside their 90 % interval "
                  f"({pct(c['coverage'])}), median relative half-width {pct(c['median_rel_half_width'])}: the "
                  "intervals of a run of many objects are wide because every object is freed to a slab that is no "
                  "longer the CPU slab, and the profile's __slab_free extra is poorly determined (its stated sd)"]
    lines += ["", "| series | bytes | measured | predicted | 90 % interval | error | |",
              "|---|---:|---:|---:|---|---:|---|"]
    for r in results:
        for p in r["points"]:
            lines.append(f"| {r['series']} | {p['x']:g} | {num(p['measured'])} | {num(p['predicted'])} | "
                         f"[{num(p['lo'])}, {num(p['hi'])}] | {p['rel_error'] * 100:+.1f} % | "
                         f"{'fitted' if p['fit'] else ('inside' if p['inside'] else 'outside')} |")
        for p in r["not_predicted"]:
            lines.append(f"| {r['series']} | {p['x']:g} | {num(p['measured'])} | — | — | — | not predicted: "
                         f"{p['why']} |")
    return lines


def run(inputs: Inputs) -> dict:
    sizes = object_size_report(inputs.df)
    return dict(summary=summarise_object_size(sizes), coverage=object_size_coverage(sizes), object_size=sizes)


def format(rep: dict) -> list[str]:
    return format_object_size(rep.get("object_size", []))
