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
* **share of the variance** -- from the first-order propagation of
  :mod:`skbmodel.uncertainty` (``u_j`` = the change of ``D`` for ``+-1`` sd, ``var D = u^T R u``):
  ``u_j (R u)_j / var D`` (the shares, with the structural term's, add up to 1; with correlations
  one can be negative).  The structural (model-form) term is one more row.

Which constants A and B share follows :func:`skbmodel.uncertainty.same_quantity` (the same
constant of the same machine); every other constant appears once per side (``A:``/``B:``), so
the variance here is exactly the one :func:`skbmodel.uncertainty.delta_intervals` propagates.

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
REL_STEP = 1e-4
#: the assumed constants' combined share (of the value or of the variance) that makes an answer
#: "dominated by assumptions" [1]
ASSUMED_MAJORITY = 0.5
#: shares below this are left out of the ranking [1]
MIN_SHARE = 0.005
CLOCK = "ghz"
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


def _side_constants(prof: Profile) -> list[str]:
    """The constants that can drive an answer: not the clock (a scenario input, handled apart) and not the
    kernel's sizes (exact facts that shape the formulas: their elasticities cancel in pairs such as
    object size / cacheline size)."""
    return [n for n, c in prof.constants.items() if n != CLOCK and c.kind != "kernel"]


def _dims(pa: Profile, pb: Profile | None):
    """Joint dimensions ``[(label, side, name)]``: side ``"AB"`` (one quantity), ``"A"`` or ``"B"``."""
    if pb is None:
        return [(n, "A", n) for n in _side_constants(pa)]
    dims = []
    for n in _side_constants(pa):
        if uncertainty.same_quantity(pa, pb, n):
            dims.append((n, "AB", n))
        else:
            dims.append((f"A: {n}", "A", n))
    dims += [(f"B: {n}", "B", n) for n in _side_constants(pb) if not uncertainty.same_quantity(pa, pb, n)]
    return dims


def _corr(dims, pa: Profile, pb: Profile | None, idx) -> np.ndarray:
    """Correlation among the uncertain dimensions ``idx`` (each side's own block; A's among shared)."""
    r = np.eye(len(idx))
    for side, prof in (("B", pb), ("A", pa)):  # A last: its correlations win among shared dimensions
        if prof is None:
            continue
        pos = [i for i, j in enumerate(idx) if side in dims[j][1]]
        if len(pos) > 1:
            r[np.ix_(pos, pos)] = prof.correlation([dims[idx[i]][2] for i in pos])
    return r


def _evaluate(params: Mapping, prof: Profile, names: list[str], base: np.ndarray, deltas: np.ndarray,
              ghz_factor: np.ndarray, outputs) -> dict:
    """``model.evaluate`` of a scalar scenario for ``K`` constant sets (``deltas``: ``(K, D)``) and
    clock factors (``(K,)``) in one call: ``{output: (K,)}``."""
    k = deltas.shape[0]
    p = dict(params)
    ghz = float(np.asarray(params.get("ghz", prof.ghz)))
    p["ghz"] = ghz * ghz_factor
    consts = {n: base[j] + deltas[:, j] for j, n in enumerate(names)}
    out = model.evaluate(p, prof, constants=consts)
    return {o: np.broadcast_to(np.asarray(out[o], dtype=float), (k,)) for o in outputs}


def drivers(params_a: Mapping, params_b: Mapping | None = None, profile_a: Profile | None = None,
            profile_b: Profile | None = None, outputs=("path.ns_per_packet",), top: int = 8) -> dict:
    """The drivers of each of ``outputs`` for scenario A alone, or of the paired difference B - A.

    ``params_a``/``params_b``: scalar scenarios (as for :func:`skbmodel.model.evaluate`).  Returns
    ``{output: report}``, each report a dict:

    * ``value`` [output unit]: the value (A alone) or the difference B - A;
    * ``sd`` [output unit]: its standard deviation (constants and structural, linearised);
    * ``rows``: the constants ranked by ``max(|value share|, variance share)``, at most ``top``, each
      ``{constant, side, name, kind, source, value, value_b, unit, stderr, elasticity, value_share,
      variance_share}`` (``elasticity`` [output unit]: see the module docstring), then the
      structural term if it carries variance;
    * ``assumed_value_share``, ``assumed_variance_share`` [1]: the assumed constants' combined shares;
    * ``dominated_by_assumed`` (bool) and ``flag``: one sentence naming the assumed constants it
      rests on (empty when not dominated).
    """
    outputs = [outputs] if isinstance(outputs, str) else list(outputs)
    pa = model.profile_of(params_a, profile_a)
    pb = None if params_b is None else model.profile_of(params_b, profile_b)
    dims = _dims(pa, pb)
    d = len(dims)
    sides = [("A", params_a, pa)] + ([("B", params_b, pb)] if pb is not None else [])
    side_const = {s: prof for s, _, prof in sides}

    base = np.array([side_const[dims[j][1][0]].constants[dims[j][2]].value for j in range(d)])
    sd = np.array([side_const[dims[j][1][0]].constants[dims[j][2]].stderr for j in range(d)])
    unc = [j for j in range(d) if sd[j] > 0]
    h = REL_STEP * np.abs(base)
    # rows: nominal; +h, -h for every dimension; +sd, -sd for the uncertain ones; clock +-, per side
    n_side = len(sides)
    k = 1 + 2 * d + 2 * len(unc) + 2 * n_side
    deltas = np.zeros((k, d))
    deltas[1:1 + d] = np.diag(h)
    deltas[1 + d:1 + 2 * d] = -np.diag(h)
    u0 = 1 + 2 * d
    for i, j in enumerate(unc):
        deltas[u0 + i, j] = sd[j]
        deltas[u0 + len(unc) + i, j] = -sd[j]
    c0 = u0 + 2 * len(unc)
    vals = {}
    for si, (side, params, prof) in enumerate(sides):
        cols = [j for j in range(d) if side in dims[j][1]]
        names = [dims[j][2] for j in cols]
        g = np.ones(k)
        g[c0 + 2 * si] = 1.0 + REL_STEP
        g[c0 + 2 * si + 1] = 1.0 - REL_STEP
        b = np.array([prof.constants[n].value for n in names])
        vals[side] = _evaluate(params, prof, names, b, deltas[:, cols], g, outputs)
    corr = _corr(dims, pa, pb, unc)
    across = pb is not None and uncertainty.machine(pa) != uncertainty.machine(pb)
    res = {}
    for o in outputs:
        v = vals["A"][o] if pb is None else vals["B"][o] - vals["A"][o]
        f = float(v[0])
        with np.errstate(invalid="ignore", divide="ignore"):
            e = np.where(h > 0, base * (v[1:1 + d] - v[1 + d:1 + 2 * d]) / (2 * np.where(h > 0, h, 1)), 0.0)
        e_clock = [(v[c0 + 2 * si] - v[c0 + 2 * si + 1]) / (2 * REL_STEP) for si in range(n_side)]
        u = (v[u0:u0 + len(unc)] - v[u0 + len(unc):c0]) / 2.0
        cov_part = u * (corr @ u) if unc else np.zeros(0)
        rel = uncertainty.structural_rel_sd(o)
        if pb is None:
            s_struct = rel * abs(f)
        elif across:
            s_struct = rel * float(np.hypot(vals["A"][o][0], vals["B"][o][0]))
        else:
            s_struct = rel * abs(f)
        var = float(np.sum(cov_part)) + s_struct ** 2
        ghz_of = [float(np.asarray(params.get("ghz", prof.ghz))) for _, params, prof in sides]
        one_clock = pb is None or (uncertainty.same_quantity(pa, pb, CLOCK) and ghz_of[0] == ghz_of[1])
        if one_clock:  # one clock for A and B scales every ns answer alike (elasticity -1): no driver
            e_clock = []
        abs_sum = float(np.sum(np.abs(e)) + np.sum(np.abs(e_clock)))
        rows = []
        var_share = np.zeros(d)
        var_share[unc] = cov_part / var if var > 0 else 0.0
        for j in range(d):
            label, side, n = dims[j]
            prof = side_const[side[0]]
            c = prof.constants[n]
            rows.append(dict(constant=label, side=side, name=n, kind=c.kind, source=c.source, value=c.value,
                             unit=c.unit, stderr=c.stderr, elasticity=float(e[j]),
                             value_share=float(e[j]) / abs_sum if abs_sum > 0 else 0.0,
                             variance_share=float(var_share[j])))
        for si, (side, params, prof) in enumerate(sides[:len(e_clock)]):
            c = prof.constants[CLOCK]
            label = f"{side}: {CLOCK}"
            ghz = ghz_of[si]
            src = c.source if ghz == c.value else f"the scenario's clock ({ghz:g} GHz; profile: {c.source})"
            rows.append(dict(constant=label, side=side, name=CLOCK, kind=c.kind, source=src, value=ghz, unit=c.unit,
                             stderr=0.0, elasticity=float(e_clock[si]),
                             value_share=float(e_clock[si]) / abs_sum if abs_sum > 0 else 0.0,
                             variance_share=0.0))
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
            rows.append(dict(constant=STRUCTURAL, side="AB" if pb is not None else "A", name=STRUCTURAL,
                             kind="structural", source="out-of-sample validation (skbmodel/data/outofsample.json): "
                             f"relative sd {rel:.3g} of {o.split('.')[0]} outputs",
                             value=rel, unit="1", stderr=0.0, elasticity=0.0, value_share=0.0,
                             variance_share=float(struct_share)))
        res[o] = dict(output=o, unit=model.OUTPUT_UNITS[o], value=f, sd=float(np.sqrt(max(var, 0.0))), rows=rows,
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
