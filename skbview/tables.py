"""Tables shown by the pages (plain lists of dicts; pages turn them into dataframes)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from skbmodel import answers, composer, attribution, grid, model, schema
from skbmodel.physics import noise, units
from skbmodel.links import state as sk_state
from skbmodel.question import Question



def ab_label(output: str, state: Mapping, short: bool = False) -> str:
    """What an output of an A/B comparison is, in words: the chosen path names itself (A's, or A's → B's;
    ``short``: by the paths' link values, as a chart's axis has room for)."""
    if output == "path.ns_per_packet":
        q = Question.of_state(state)
        a, b = q.scenario("a").params["path"], q.scenario("b").params["path"]
        if short:
            return f"path {a} (ns/packet)" if a == b else f"path {a} → {b} (ns/packet)"
        label_of = sk_state.PARAMS["path"].label_of
        which = label_of(a) if a == b else f"{label_of(a)} → {label_of(b)}"
        return f"the chosen path: {which} (ns/packet)"
    return schema.BY_NAME[output].label

def _compare_question(state: Mapping) -> Question:
    """The Compare page's question of ``state`` (A and A plus B's overrides), resolved once per state."""
    return Question.of_state(state if state.get("page") == "compare" else {**state, "page": "compare"})


def paired_deltas(state: Mapping) -> tuple[dict, dict]:
    """``(B - A, {output: (lo, hi)})`` of every output for the state's A and B: the question's one paired
    propagation (:attr:`skbmodel.question.Question.pair`), which the A/B table and the delta chart share."""
    q = _compare_question(state)
    return q.pair.value, q.pair_intervals


def compare_rows(state: Mapping) -> list[dict]:
    """Every model output for scenario A and B, the delta, its per-packet time and rate form, and
    whether it is measurable against A's noise floor (``noise_ns``) and how many runs it needs.

    * ns outputs: ``delta_ns = B - A``; ``delta_mpps = 1e3/B - 1e3/A``.
    * Mpps outputs: ``delta_mpps = B - A``; ``delta_ns = 1e3/B - 1e3/A`` (time per packet).
    * cycles outputs: ``delta_ns`` converts each side with its own clock.
    * other units (objects, Krps, %, runs, fraction): no per-packet form.

    ``delta_lo``/``delta_hi``: the 90 % interval of ``delta`` (the output's own unit) from the question's
    paired propagation (:attr:`skbmodel.question.Question.pair_intervals`; for the outputs the verdict is about,
    the answer's: :attr:`skbmodel.answers.Answers.differences`); ``verdict`` is one of
    :data:`skbmodel.physics.noise.VERDICTS` where there is a per-packet form, else "—".  ``moves``: whether
    the change moves the output at all.  ``runs_needed`` only where it means something: a path's
    per-packet output (:data:`skbmodel.attribution.PER_PACKET_OUTPUTS`, what ``noise_ns`` is the noise
    of) that moves, and whose sign the model is sure of or that is below the noise floor.
    """
    q = _compare_question(state)
    a, b = q.pair.sides["A"], q.pair.sides["B"]
    div = q.pair_intervals
    ghz_a, ghz_b = float(q.a.params["ghz"]), float(q.b.params["ghz"])
    told = {d.output: d for d in answers.of_question(q).differences}
    nf = float(q.a.params["noise_ns"])
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
            if d_ns != 0 and k in attribution.PER_PACKET_OUTPUTS and verdict != noise.VERDICT_UNSURE:
                runs = int(noise.runs_needed(d_ns, nf))
        if k in told:  # the outputs the verdict is about: the one answer every surface gives
            t = told[k]
            lo, hi, verdict, runs = t.lo, t.hi, t.verdict or verdict, t.runs
        rows.append(dict(output=k, unit=unit, A=va, B=vb, delta=vb - va, delta_lo=lo, delta_hi=hi, delta_ns=d_ns,
                         delta_mpps=d_mpps, verdict=verdict, runs_needed=runs, moves=vb != va))
    return rows


def compare_verdicts(state: Mapping) -> list[dict]:
    """The rows of :func:`compare_rows` the A/B verdict is about, in its order, each with ``drivers``: the
    differences of the page's answer (:func:`skbmodel.answers.of_state`).  Empty when A and B agree everywhere."""
    res = answers.of_question(_compare_question(state))
    rows = {r["output"]: r for r in compare_rows(state)}
    return [{**rows[d.output], "drivers": d.drivers} for d in res.differences]


def driver_rows(report: Mapping) -> list[dict]:
    """The drivers of one answer as table rows: constant, kind, shares [%], what +10 % of it moves, source."""
    return [dict(constant=r["constant"], kind=r["kind"], value_share=100.0 * r["value_share"],
                 variance_share=100.0 * r["variance_share"], plus_10pct=0.1 * r["elasticity"], source=r["source"])
            for r in report["rows"]]


# ---------------------------------------------------------------- Design page
# A composed path (skbmodel.composer, path=design) against a comparison B: the same scenario (sidebar)
# with b_path, a modelled path or "design" for the composition of the b_d_* keys.
def design_params_ab(state: Mapping) -> tuple[dict, dict]:
    """``(A, B)`` model parameters: A the composition, B the comparison (same scenario otherwise)."""
    return composer.compare_params(sk_state.scenario(state, "a"), sk_state.b_overrides(state))


def design_b_label(state: Mapping) -> str:
    _, b = design_params_ab(state)
    bp = b["path"]
    if bp == "design":
        return f"B: second composition (from {b['d_from']})"
    return f"B: {sk_state.PARAMS['path'].label_of(bp)}"


def design_a_label(state: Mapping) -> str:
    return f"A: composition (from {state.get('d_from', 'veth')})"


def design_summary(state: Mapping) -> dict:
    """The Design page's answer (:func:`skbmodel.answers.of_state`, cached per state) as its charts read it:
    A's and B's drawn totals with their intervals, the difference, its verdict and runs: the numbers its
    metrics and text block give."""
    pa, pb = design_params_ab(state)
    res = answers.of_state({**state, "page": "design"})
    side = {s: {o: x.value for o, x in res.drawn[s].items()} for s in ("a", "b")}
    ivs = {s: {o: (x.lo, x.hi) for o, x in res.drawn[s].items()} for s in ("a", "b")}
    d = next((x for x in res.differences if x.output == "path.ns_per_packet"), None)
    mpps = next((x for x in res.differences if x.output == "path.mpps"), None)
    return dict(a=side["a"], b=side["b"], iv_a=ivs["a"], iv_b=ivs["b"], delta_ns=d.value if d else 0.0,
                delta_lo=d.lo if d else 0.0, delta_hi=d.hi if d else 0.0, delta_mpps=mpps.value if mpps else 0.0,
                verdict=d.verdict if d else noise.VERDICT_NOISE, runs=d.runs if d else None, answers=res,
                problems_a=composer.problems(pa), problems_b=composer.problems(pb) if pb["path"] == "design" else [])


# ---------------------------------------------------------------- question grid
_GRIDS_MAX = 16
_GRIDS: dict[tuple, dict] = {}


def grid_axes(state: Mapping) -> list[str]:
    """The grid's parameters (``g1``-``g3``), without ``none`` and repeats; at least one."""
    axes = list(dict.fromkeys(state.get(k, p.default) for k, p in zip(sk_state.GRID_KEYS, sk_state.GRID_PARAMS)
                              if k != "g_out"))
    axes = [a for a in axes if a != "none"]
    return axes or [sk_state.GRID_PARAMS[0].default]


def grid_result(state: Mapping) -> dict:
    """:func:`skbmodel.grid.evaluate` of the state's grid (axes ``g1``-``g3``, output ``g_out``) on top of
    scenario A; cached per scenario (the page's table and both charts use it)."""
    key = tuple((k, state.get(k)) for k in (*sk_state.MODEL_KEYS, *sk_state.GRID_KEYS, *sk_state.PROFILE_KEYS,
                                             *sk_state.PV_KEYS))
    hit = _GRIDS.get(key)
    if hit is None:
        hit = grid.evaluate(sk_state.scenario(state, "a"), grid_axes(state),
                            state.get("g_out", "path.ns_per_packet"), sk_state.profile_for(state, "a"))
        if len(_GRIDS) >= _GRIDS_MAX:
            _GRIDS.pop(next(iter(_GRIDS)))
        _GRIDS[key] = hit
    return hit
