"""What a prediction or an A/B difference rests on: the constants that carry it, ranked.

For one output ``f`` of one scenario, or the paired difference ``D = f(B) - f(A)`` of two, each
constant ``c_j`` of the profile(s) gets two shares:

* **share of the value** -- ``e_j = c_j * dD/dc_j`` [output unit], the elasticity of the value:
  how far ``D`` moves for a relative change of the constant (a 10 % larger ``c_j`` moves ``D`` by
  ``0.1 * e_j``).  A central difference of ``+-`` :data:`REL_STEP` of the constant's value.  The share
  is ``e_j / sum_k |e_k|``; for a cost that is a plain sum of cycle constants the ``e_j`` add up
  to the value itself.  Kernel constants (sizes: exact, they shape the formulas) are left out.
  Where A and B run at different clocks, the clock of each side (the scenario's ``ghz``, with the
  profile's ``ghz`` constant's kind and source) counts as one more constant: across two CPUs it
  often carries the whole difference.  One clock for both scales every ns answer alike
  (elasticity -1) and is no driver.
* **share of the variance** -- from the same first-order propagation the interval comes from
  (:func:`skbmodel.uncertainty.linearise`: ``u_j`` = the change of ``D`` for ``+-1`` sd,
  ``var D = u^T R u``):
  ``u_j (R u)_j / var D`` (the shares, with the structural term's, add up to 1; with correlations
  one can be negative).  The structural (model-form) term is one more row.

Which constants A and B share follows :func:`skbmodel.uncertainty.same_quantity` (the same
constant of the same machine); every other constant appears once per side (``A:``/``B:``).  Both
shares are read from one :class:`skbmodel.uncertainty.Linearisation` (the value steps are rows of the
same vectorised call as the ``+-1`` sd rows), so the variance here is the interval's variance itself.

Each row names the constant's kind (``fitted``, ``published``, ``kernel``, ``assumed``) and its
source.  An answer is **dominated by assumptions** when its largest driver of the value or of the
variance is an ``assumed`` constant, or when the assumed constants together carry at least
:data:`ASSUMED_MAJORITY` of either.

Reference: JCGM 100:2008 (GUM), 5.1.3 (sensitivity coefficients) and 5.2.2 (correlated inputs);
Saltelli et al., *Global Sensitivity Analysis: The Primer* (2008), 1.2.3 (elasticities).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import model, schema, uncertainty
from .machine.profile import Profile

#: relative step of the value derivative [1]
REL_STEP = uncertainty.REL_STEP
#: the assumed constants' combined share (of the value or of the variance) that makes an answer
#: "dominated by assumptions" [1]
ASSUMED_MAJORITY = 0.5
#: shares below this are left out of the ranking [1]
MIN_SHARE = 0.005
CLOCK = uncertainty.CLOCK
STRUCTURAL = "model form (structural)"

#: :mod:`skbmodel.schema` says which outputs a verdict may speak of, which are per packet and which is
#: each path's own cost.
PATH_OUTPUTS = schema.PATH_OUTPUTS
VERDICT_OUTPUTS = schema.VERDICT_OUTPUTS
PER_PACKET_OUTPUTS = schema.PER_PACKET_OUTPUTS


def moved_outputs(values_a: Mapping, values_b: Mapping, outputs=VERDICT_OUTPUTS, rel: float = 1e-9) -> list[str]:
    """The ``outputs`` whose value differs between A and B (beyond ``rel`` of their size), in order."""
    out = []
    for o in outputs:
        a, b = float(np.asarray(values_a[o])), float(np.asarray(values_b[o]))
        if abs(b - a) > rel * max(abs(a), abs(b), 1e-12):
            out.append(o)
    return out


def verdict_outputs(params_a: Mapping, params_b: Mapping, values_a: Mapping, values_b: Mapping) -> list[str]:
    """The outputs an A/B verdict is about: those A and B differ on, the chosen path first.

    * A and B on different paths: the chosen path's cost (``path.ns_per_packet``), the change itself.
    * Otherwise the paths whose cost moves (``path.ns_per_packet`` first when A's path is one of
      them), else the microbenchmark outputs that move; empty when nothing moves.
    """
    moved = moved_outputs(values_a, values_b)
    if str(params_a.get("path")) != str(params_b.get("path")):
        return ["path.ns_per_packet"] + [o for o in moved if o != "path.ns_per_packet"]
    own = PATH_OUTPUTS.get(str(params_a.get("path")))
    return [o for o in moved if o != own]


def drivers(params_a: Mapping, params_b: Mapping | None = None, profile_a: Profile | None = None,
            profile_b: Profile | None = None, outputs=("path.ns_per_packet",), top: int = 8) -> dict:
    """The drivers of each of ``outputs`` for scenario A alone, or of the paired difference B - A:
    :func:`of_linearisation` of :func:`skbmodel.uncertainty.linearise` with elasticities.

    ``params_a``/``params_b``: scalar scenarios (as for :func:`skbmodel.model.evaluate`).
    """
    outputs = [outputs] if isinstance(outputs, str) else list(outputs)
    lin = uncertainty.linearise(params_a, params_b, profile_a, profile_b, outputs, elasticities=True)
    sides = {"A": (params_a, model.profile_of(params_a, profile_a))}
    if params_b is not None:
        sides["B"] = (params_b, model.profile_of(params_b, profile_b))
    return of_linearisation(lin, sides, top)


def _clock_of(params: Mapping, prof: Profile) -> float:
    return float(np.asarray(params.get(CLOCK, prof.ghz)))


def of_linearisation(lin: uncertainty.Linearisation, sides: Mapping[str, tuple], top: int = 8) -> dict:
    """The drivers of each output of ``lin`` (a scalar :class:`skbmodel.uncertainty.Linearisation` made
    with elasticities); ``sides``: ``{"A": (params, profile)[, "B": ...]}``.  Returns ``{output: report}``,
    each report a dict:

    * ``value`` [output unit]: the value (A alone) or the difference B - A;
    * ``sd`` [output unit]: its standard deviation (constants and structural, linearised): the interval's;
    * ``rows``: the constants ranked by ``max(|value share|, variance share)``, at most ``top``, each
      ``{constant, side, name, kind, source, value, unit, stderr, elasticity, value_share,
      variance_share}`` (``elasticity`` [output unit]: see the module docstring), then the
      structural term if it carries variance;
    * ``assumed_value_share``, ``assumed_variance_share`` [1]: the assumed constants' combined shares;
    * ``dominated_by_assumed`` (bool) and ``flag``: one sentence naming the assumed constants it
      rests on (empty when not dominated).
    """
    prof_of = {side: model.with_levels(prof) for side, (_, prof) in sides.items()}  # the constants lin spread
    pair = "B" in sides
    ghz_of = {side: _clock_of(params, prof) for side, (params, prof) in sides.items()}
    one_clock = not pair or (uncertainty.same_quantity(prof_of["A"], prof_of["B"], CLOCK)
                             and ghz_of["A"] == ghz_of["B"])
    where = {(side, n): j for j, (_, side, n) in enumerate(lin.dims)}
    res = {}
    for o in lin.outputs:
        f = float(lin.value[o])
        e = np.asarray(lin.elasticity[o], dtype=float).reshape(-1)
        terms = np.asarray(lin.variance_terms(o), dtype=float).reshape(-1)[:len(lin.dims)]
        s_struct = float(lin.structural_sd[o])
        var = float(np.sum(terms)) + s_struct ** 2
        # one clock for A and B scales every ns answer alike (elasticity -1): no driver
        e_clock = [] if one_clock else [(side, float(x)) for side, x in lin.clock_elasticity[o]]
        abs_sum = float(np.sum(np.abs(e)) + sum(abs(x) for _, x in e_clock))
        rows = []
        for j, (label, side, n) in enumerate(lin.value_dims):
            c = prof_of[side[0]].constants[n]
            k = where.get((side, n))
            vshare = float(terms[k]) / var if (k is not None and var > 0) else 0.0
            rows.append(dict(constant=label, side=side, name=n, kind=c.kind, source=c.source, value=c.value,
                             unit=c.unit, stderr=c.stderr, elasticity=float(e[j]),
                             value_share=float(e[j]) / abs_sum if abs_sum > 0 else 0.0, variance_share=vshare))
        for side, x in e_clock:
            c = prof_of[side].constants[CLOCK]
            ghz = ghz_of[side]
            src = c.source if ghz == c.value else f"the scenario's clock ({ghz:g} GHz; profile: {c.source})"
            rows.append(dict(constant=f"{side}: {CLOCK}", side=side, name=CLOCK, kind=c.kind, source=src, value=ghz,
                             unit=c.unit, stderr=0.0, elasticity=x,
                             value_share=x / abs_sum if abs_sum > 0 else 0.0, variance_share=0.0))
        rows = [r for r in rows if abs(r["value_share"]) >= MIN_SHARE or abs(r["variance_share"]) >= MIN_SHARE]
        rows.sort(key=lambda r: -max(abs(r["value_share"]), abs(r["variance_share"])))
        assumed_v = sum(abs(r["value_share"]) for r in rows if r["kind"] == "assumed")
        assumed_var = sum(r["variance_share"] for r in rows if r["kind"] == "assumed")
        top_value = max(rows, key=lambda r: abs(r["value_share"]), default=None)
        top_var = max(rows, key=lambda r: r["variance_share"], default=None)
        struct_share = s_struct ** 2 / var if var > 0 else 0.0
        if top_var is not None and struct_share > top_var["variance_share"]:
            top_var = None
        leaders = [r for r in (top_value, top_var) if r is not None and r["kind"] == "assumed"
                   and (r is not top_value or abs(r["value_share"]) > 0)]
        dominated = bool(f != 0 and (leaders or assumed_v >= ASSUMED_MAJORITY or assumed_var >= ASSUMED_MAJORITY))
        names = list(dict.fromkeys(r["constant"] for r in rows if r["kind"] == "assumed"
                                   and max(abs(r["value_share"]), r["variance_share"]) >= 0.1))
        if not names and leaders:
            names = [leaders[0]["constant"]]
        flag = ""
        if dominated:
            flag = (f"rests on assumptions: {', '.join(names)} (assumed constants carry {assumed_v:.0%} of the "
                    f"value and {max(assumed_var, 0.0):.0%} of the variance)")
        rows = rows[:top]
        if struct_share >= MIN_SHARE:
            rel = uncertainty.structural_rel_sd(o)
            rows.append(dict(constant=STRUCTURAL, side="AB" if pair else "A", name=STRUCTURAL,
                             kind="structural", source="out-of-sample validation (skbmodel/data/outofsample.json): "
                             f"relative sd {rel:.3g} of {o.split('.')[0]} outputs",
                             value=rel, unit="1", stderr=0.0, elasticity=0.0, value_share=0.0,
                             variance_share=float(struct_share)))
        res[o] = dict(output=o, unit=schema.OUTPUT_UNITS[o], value=f, sd=float(np.sqrt(max(var, 0.0))), rows=rows,
                      assumed_value_share=float(assumed_v), assumed_variance_share=float(assumed_var),
                      dominated_by_assumed=dominated, flag=flag)
    return res


def summary(report: Mapping, n: int = 3) -> str:
    """One line: the ``n`` largest drivers with kind and shares, and the flag if any."""
    parts = [f"{r['constant']} ({r['kind']}, {r['value_share']:+.0%} of the value, {r['variance_share']:.0%} of "
             f"the variance)" for r in report["rows"][:n] if r["kind"] != "structural"]
    text = "driven by " + "; ".join(parts) if parts else "no constant moves it"
    return text + (f" — {report['flag']}" if report["flag"] else "")


def to_json(report: Mapping, digits: int = 4) -> dict:
    """A report with its numbers rounded to ``digits`` significant digits (for ``eval --json`` and exports)."""
    def r(x):
        return float(f"{x:.{digits}g}") if isinstance(x, float) else x
    return {**{k: r(v) for k, v in report.items() if k != "rows"},
            "rows": [{k: r(v) for k, v in row.items()} for row in report["rows"]]}
