"""Before and after from a user's own runs: two fits (A: the "before" kernel's run, B: the "after"
run, :func:`skbmodel.evidence.userfit.fit`) compared measurement by measurement.

For every measurement both runs made (the same test, model output and conditions), the measured
difference ``B - A`` next to the model's: the fitted model of each run at the measurement's
conditions (the fit report's ``after``), and where the measurement is in the output's own unit, the
model difference's 90 % interval (:func:`skbmodel.uncertainty.delta_interval`; the two fits are
different profiles, so nothing cancels but the constants neither fit moved and both took from the
same base).
"""
from __future__ import annotations

from collections.abc import Sequence

from .. import model, uncertainty
from . import userinput
from ..machine.profile import Profile


def _key(row) -> tuple:
    return (row["test"], row["output"], row["conditions"], row["unit"])


def measured_vs_model(rows_a: Sequence[dict], rows_b: Sequence[dict], profile_a: Profile | None = None,
                      profile_b: Profile | None = None) -> list[dict]:
    """``[{test, output, conditions, unit, measured_a, measured_b, measured_delta, model_a, model_b,
    model_delta, model_lo, model_hi}]`` for the measurements in both fits' rows (in A's order), values
    in the measurement's unit; ``model_lo``/``model_hi`` None where the unit is not the output's or no
    profiles are given."""
    by_b = {}
    for r in rows_b:
        by_b.setdefault(_key(r), r)
    out = []
    for ra in rows_a:
        rb = by_b.get(_key(ra))
        if rb is None:
            continue
        lo = hi = None
        if profile_a is not None and profile_b is not None and model.OUTPUT_UNITS.get(ra["output"]) == ra["unit"]:
            cond, problem = userinput.parse_conditions(ra["conditions"])
            if problem is None:
                pa = {**cond, "cpu": profile_a.inherits or profile_a.id, "ghz": profile_a.ghz}
                pb = {**cond, "cpu": profile_b.inherits or profile_b.id, "ghz": profile_b.ghz}
                lo, hi = (float(x) for x in uncertainty.delta_interval(pa, pb, profile_a, profile_b, ra["output"]))
        out.append(dict(test=ra["test"], output=ra["output"], conditions=ra["conditions"], unit=ra["unit"],
                        measured_a=ra["measured"], measured_b=rb["measured"],
                        measured_delta=rb["measured"] - ra["measured"], model_a=ra["after"], model_b=rb["after"],
                        model_delta=rb["after"] - ra["after"], model_lo=lo, model_hi=hi))
    return out
