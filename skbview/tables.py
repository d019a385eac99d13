"""Tables shown by the pages (plain lists of dicts; pages turn them into dataframes), each of a question
(:class:`skbmodel.question.Question`, made by the entry point) and its answer: nothing here computes a verdict."""
from __future__ import annotations

from collections.abc import Mapping


from skbmodel import answers, composer, grid, schema
from skbmodel.physics import noise
from skbmodel.links import state as sk_state
from skbmodel.question import Question


def ab_label(output: str, q: Question, short: bool = False) -> str:
    """What an output of an A/B comparison is, in words: the chosen path names itself (A's, or A's → B's;
    ``short``: by the paths' link values, as a chart's axis has room for)."""
    if output == "path.ns_per_packet":
        a, b = q.scenario("a").params["path"], q.scenario("b").params["path"]
        if short:
            return f"path {a} (ns/packet)" if a == b else f"path {a} → {b} (ns/packet)"
        label_of = sk_state.PARAMS["path"].label_of
        which = label_of(a) if a == b else f"{label_of(a)} → {label_of(b)}"
        return f"the chosen path: {which} (ns/packet)"
    return schema.BY_NAME[output].label


def compare_rows(q: Question) -> list[dict]:
    """Every model output for scenario A and B, the delta, its per-packet time and rate form, and
    whether it is measurable against A's noise floor (``noise_ns``) and how many runs it needs.

    * ns outputs: ``delta_ns = B - A``; ``delta_mpps = 1e3/B - 1e3/A``.
    * Mpps outputs: ``delta_mpps = B - A``; ``delta_ns = 1e3/B - 1e3/A`` (time per packet).
    * cycles outputs: ``delta_ns`` converts each side with its own clock.
    * other units (objects, Krps, %, runs, fraction): no per-packet form.

    The rows are :func:`skbmodel.answers.every_difference` of the Compare page's question of ``q`` (its
    one paired propagation; for the outputs the verdict is about, the answer's differences).
    """
    return answers.every_difference(q.on_page("compare"))


def compare_verdicts(q: Question) -> list[dict]:
    """The rows of :func:`compare_rows` the A/B verdict is about, in its order, each with ``drivers``: the
    differences of the page's answer (:func:`skbmodel.answers.of_question`).  Empty when A and B agree
    everywhere."""
    cq = q.on_page("compare")
    rows = {r["output"]: r for r in compare_rows(cq)}
    return [{**rows[d.output], "drivers": d.drivers} for d in answers.of_question(cq).differences]


def driver_rows(report: Mapping) -> list[dict]:
    """The drivers of one answer as table rows: constant, kind, shares [%], what +10 % of it moves, source."""
    return [dict(constant=r["constant"], kind=r["kind"], value_share=100.0 * r["value_share"],
                 variance_share=100.0 * r["variance_share"], plus_10pct=0.1 * r["elasticity"], source=r["source"])
            for r in report["rows"]]


# ---------------------------------------------------------------- Design page
# A composed path (skbmodel.composer, path=design) against a comparison B: the same scenario (sidebar)
# with b_path, a modelled path or "design" for the composition of the b_d_* keys.
def design_params_ab(q: Question) -> tuple[Mapping, Mapping]:
    """``(A, B)`` model parameters: A the composition, B the comparison (same scenario otherwise): the Design
    page's question of ``q``."""
    dq = q.on_page("design")
    return dq.a.params, dq.b.params


def design_b_label(q: Question) -> str:
    _, b = design_params_ab(q)
    bp = b["path"]
    if bp == "design":
        return f"B: second composition (from {b['d_from']})"
    return f"B: {sk_state.PARAMS['path'].label_of(bp)}"


def design_a_label(q: Question) -> str:
    return f"A: composition (from {q.get('d_from', 'veth')})"


def design_summary(q: Question) -> dict:
    """The Design page's answer (:func:`skbmodel.answers.of_question`, cached per question) as its charts read
    it: A's and B's drawn totals with their intervals, the difference, its verdict and runs: the numbers its
    metrics and text block give."""
    dq = q.on_page("design")
    pa, pb = dq.a.params, dq.b.params
    res = answers.of_question(dq)
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


def grid_result(q: Question) -> dict:
    """:func:`skbmodel.grid.evaluate` of the question's grid (axes ``g1``-``g3``, output ``g_out``) on top of
    scenario A; cached per scenario (the page's table and both charts use it)."""
    key = tuple((k, q.get(k)) for k in (*sk_state.MODEL_KEYS, *sk_state.GRID_KEYS, *sk_state.PROFILE_KEYS,
                                         *sk_state.PV_KEYS))
    hit = _GRIDS.get(key)
    if hit is None:
        a = q.scenario("a")
        hit = grid.evaluate(a.params, grid_axes(q), q.get("g_out", "path.ns_per_packet"), a.profile)
        if len(_GRIDS) >= _GRIDS_MAX:
            _GRIDS.pop(next(iter(_GRIDS)))
        _GRIDS[key] = hit
    return hit
