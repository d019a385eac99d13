"""What each output is limits its interval: the rules applied to a propagated interval
(:mod:`skbmodel.uncertainty`) before any surface shows it.  Kernel-fixed outputs are exact; a count of
runs follows the interval of the difference it counts; a cost, rate or share is never below 0; a
difference of two terms (drops = source - destination) never exceeds its minuend's upper bound; a fraction
never exceeds 1; a rate of a path fed from the wire never exceeds the line rate of the scenario's link and frame
size; a signed difference is never clipped.  Each output's kind is the schema's
(:data:`skbmodel.schema.KINDS`)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import schema
from .physics import budget, noise

#: What each output is decides its limits (:data:`skbmodel.schema.KINDS`): kernel-fixed outputs are
#: exact, a count of runs follows the difference it counts, a cost, rate or share is never below 0,
#: and a signed difference is never clipped.
EXACT_OUTPUTS = schema.EXACT_OUTPUTS
RUNS_OUTPUTS = schema.RUNS_OUTPUTS
NONNEGATIVE_OUTPUTS = frozenset(schema.of_kind(*schema.NONNEGATIVE_KINDS))
FACTOR_OUTPUTS = schema.FACTOR_OUTPUTS
SIGNED_OUTPUTS = frozenset(schema.of_kind("difference"))
DIFFERENCE_OUTPUTS = schema.DIFFERENCE_OUTPUTS
UPPER_BOUNDS = schema.UPPER_BOUNDS
#: rates of paths fed from the wire (:mod:`skbmodel.model` caps their values at the line rate): their upper
#: bounds too
WIRE_RATES = frozenset({"cpumap.src_mpps", "cpumap.dst_mpps", "cpumap.drop_mpps", "xdp_pass.mpps", "veth.mpps",
                        "path.mpps"})


def physical_intervals(values: Mapping, bounds: dict, raw: Mapping) -> dict:
    """``bounds`` (``{output: (lo, hi)}`` of the values ``values``) with the rules of the module
    docstring applied: non-negative quantities clipped at 0, kernel-fixed values exact, "runs
    needed" from the interval of the difference it counts (which ``bounds`` must hold) and the noise floor
    of the scenario's inputs ``raw`` (:func:`skbmodel.model.raw_inputs`)."""
    nonneg = NONNEGATIVE_OUTPUTS
    out = {}
    for o, (lo, hi) in bounds.items():
        f = np.asarray(values[o], dtype=float)
        lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        if o in EXACT_OUTPUTS:
            lo, hi = f, f
        elif o in RUNS_OUTPUTS:
            d_name, noise_key = RUNS_OUTPUTS[o]
            d_lo, d_hi = (np.asarray(v, dtype=float) for v in bounds[d_name])
            noise_ns = raw[noise_key]
            far = np.maximum(np.abs(d_lo), np.abs(d_hi))
            near = np.where((d_lo <= 0) & (d_hi >= 0), 0.0, np.minimum(np.abs(d_lo), np.abs(d_hi)))
            lo = np.minimum(noise.runs_needed(far, noise_ns), f)
            hi = np.maximum(noise.runs_needed(near, noise_ns), f)
        elif o in nonneg:
            lo = np.where(f >= 0, np.maximum(lo, 0.0), lo)
        if o in DIFFERENCE_OUTPUTS:  # minuend - subtrahend, the subtrahend never negative, in every sample
            hi = np.minimum(hi, np.asarray(bounds[DIFFERENCE_OUTPUTS[o][0]][1], dtype=float))
        if o in UPPER_BOUNDS:
            hi = np.minimum(hi, UPPER_BOUNDS[o])
        if o in WIRE_RATES and "link_gbps" in raw:
            hi = np.minimum(hi, budget.line_rate_mpps(raw["link_gbps"], raw["frame_bytes"]))
            lo = np.minimum(lo, f)
        out[o] = (lo, hi)
    return out
