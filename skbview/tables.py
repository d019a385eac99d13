"""Tables shown by the pages (plain lists of dicts; pages turn them into dataframes)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from skbmodel import design, model, noise, state as sk_state, units
from skbmodel.scenario import Scenario


def _eval(state: Mapping, which: str) -> dict:
    return Scenario.of(state, which).evaluate()


_PAIRED: dict[tuple, tuple] = {}
_PAIRED_MAX = 16


def paired_deltas(state: Mapping) -> tuple[dict, dict]:
    """:func:`skbmodel.uncertainty.delta_intervals` of every output for the state's A and B.

    The A/B table and the A/B delta chart both need it on every move; a small cache keyed by the
    scenario parameters (and custom profiles) of A and B computes it once per scenario.
    """
    keys = [*sk_state.MODEL_KEYS, *(sk_state.B_PREFIX + k for k in sk_state.MODEL_KEYS), *sk_state.PROFILE_KEYS]
    key = tuple((k, state.get(k)) for k in keys)
    hit = _PAIRED.get(key)
    if hit is None:
        hit = Scenario.of(state, "a").delta(Scenario.of(state, "b"))
        if len(_PAIRED) >= _PAIRED_MAX:
            _PAIRED.pop(next(iter(_PAIRED)))
        _PAIRED[key] = hit
    return hit


def compare_rows(state: Mapping) -> list[dict]:
    """Every model output for scenario A and B, the delta, its per-packet time and rate form, and
    whether it is measurable against A's noise floor (``noise_ns``) and how many runs it needs.

    * ns outputs: ``delta_ns = B - A``; ``delta_mpps = 1e3/B - 1e3/A``.
    * Mpps outputs: ``delta_mpps = B - A``; ``delta_ns = 1e3/B - 1e3/A`` (time per packet).
    * cycles outputs: ``delta_ns`` converts each side with its own clock.
    * other units (objects, Krps, %, runs, fraction): no per-packet form.

    ``delta_lo``/``delta_hi``: the 90 % interval of ``delta`` (the output's own unit) from paired
    propagation (:func:`skbmodel.uncertainty.delta_intervals`); ``verdict`` is one of
    :data:`skbmodel.noise.VERDICTS` where there is a per-packet form, else "—".
    """
    a, b = _eval(state, "a"), _eval(state, "b")
    _, div = paired_deltas(state)
    ghz_a, ghz_b = float(state["ghz"]), float(state[sk_state.B_PREFIX + "ghz"])
    nf = float(state["noise_ns"])
    rows = []
    for k, unit in model.OUTPUT_UNITS.items():
        va, vb = float(np.asarray(a[k])), float(np.asarray(b[k]))
        d_ns = d_mpps = None
        with np.errstate(divide="ignore", invalid="ignore"):
            if unit == "ns" and k != "noise.floor_ns":
                d_ns = vb - va
                d_mpps = float(units.ns_to_mpps(vb) - units.ns_to_mpps(va)) if va > 0 and vb > 0 else None
            elif unit == "Mpps":
                d_mpps = vb - va
                d_ns = float(units.mpps_to_ns(vb) - units.mpps_to_ns(va)) if va > 0 and vb > 0 else None
            elif unit == "cycles":
                d_ns = float(units.cycles_to_ns(vb, ghz_b) - units.cycles_to_ns(va, ghz_a))
        if d_ns is not None and not np.isfinite(d_ns):
            d_ns = None
        lo, hi = (float(np.asarray(x)) for x in div[k])
        verdict, runs = "—", None
        if d_ns is not None:
            verdict = noise.verdict(d_ns, nf, lo, hi)
            if d_ns != 0:
                runs = int(noise.runs_needed(d_ns, nf))
        rows.append(dict(output=k, unit=unit, A=va, B=vb, delta=vb - va, delta_lo=lo, delta_hi=hi, delta_ns=d_ns,
                         delta_mpps=d_mpps, verdict=verdict, runs_needed=runs))
    return rows


# ---------------------------------------------------------------- Design page
# A composed path (skbmodel.design, path=design) against a comparison B: the same scenario (sidebar)
# with b_path, a modelled path or "design" for the composition of the b_d_* keys.
def design_params_ab(state: Mapping) -> tuple[dict, dict]:
    """``(A, B)`` model parameters: A the composition, B the comparison (same scenario otherwise)."""
    a = {**sk_state.scenario(state, "a"), "path": "design"}
    b = {**a, "path": state.get(sk_state.B_PREFIX + "path", "veth")}
    b.update({k: state.get(sk_state.B_PREFIX + k, design.DEFAULTS[k]) for k in design.KEY_NAMES})
    return a, b


def design_b_label(state: Mapping) -> str:
    bp = state.get(sk_state.B_PREFIX + "path", "veth")
    if bp == "design":
        return f"B: second composition (from {state.get(sk_state.B_PREFIX + 'd_from', 'veth')})"
    return f"B: {sk_state.PARAMS['path'].label_of(bp)}"


def design_a_label(state: Mapping) -> str:
    return f"A: composition (from {state.get('d_from', 'veth')})"


def design_summary(state: Mapping) -> dict:
    """Totals, intervals, the paired delta B − A and its verdict for the page's metrics and charts."""
    prof_a = sk_state.profile_for(state, "a")
    a, b = (Scenario.from_params(p, prof_a) for p in design_params_ab(state))
    outs = ("path.ns_per_packet", "path.mpps", "path.budget_pct", "budget.ns_per_packet", "budget.line_rate_mpps")
    va, ia = a.with_intervals(outs)
    vb, ib = b.with_intervals(outs)
    delta, div = a.delta(b, ["path.ns_per_packet", "path.mpps"])
    d = float(np.asarray(delta["path.ns_per_packet"]))
    lo, hi = (float(np.asarray(v)) for v in div["path.ns_per_packet"])
    nf = float(state.get("noise_ns", 2.0))
    b_composed = state.get(sk_state.B_PREFIX + "path") == "design"
    return dict(a=va, b=vb, iv_a=ia, iv_b=ib, delta_ns=d, delta_lo=lo, delta_hi=hi,
                delta_mpps=float(np.asarray(delta["path.mpps"])), verdict=noise.verdict(d, nf, lo, hi),
                runs=int(noise.runs_needed(d, nf)), problems_a=design.problems(state),
                problems_b=design.problems(state, sk_state.B_PREFIX) if b_composed else [])
