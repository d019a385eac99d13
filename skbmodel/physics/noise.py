"""Is a predicted difference measurable above benchmark noise?

Seed 002 (row veth-n1): "anything below 2 ns is extremely hard [to measure] due to OS noise"; the
predicted 1.66 ns memset vs __GFP_ZERO delta was judged noise after Lorenzo's runs scattered by
about 2 ns around it.  We read the floor as the standard deviation of one run's ns/packet
(``noise_ns``), and size an A/B benchmark with the usual two-sample normal approximation:

``runs per variant = ceil(2 * ((z_{1-alpha/2} + z_{power}) * noise_ns / delta_ns)^2)``

(alpha = 0.05 two-sided, power = 0.8: z = 1.960 + 0.842).
"""
from __future__ import annotations

from statistics import NormalDist

import numpy as np

#: the level of every interval the model reports (90 %)
LEVEL = 0.9
Z_ALPHA_HALF = 1.959963984540054   # two-sided 5 %
Z_POWER = 0.8416212335729143       # 80 % power
MAX_RUNS = 1_000_000


def z_value(level: float = LEVEL) -> float:
    """Two-sided standard-normal quantile ``Phi^-1((1 + level) / 2)`` (1.645 for 90 %)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return NormalDist().inv_cdf((1.0 + level) / 2.0)


def measurable(delta_ns, noise_ns):
    """True where ``|delta_ns| >= noise_ns``: the seed's rule of thumb for one A/B comparison."""
    return np.abs(np.asarray(delta_ns, dtype=float)) >= np.asarray(noise_ns, dtype=float)


#: The three A/B verdicts (exactly one applies to a difference with a per-packet form).
VERDICT_SURE = "measurable, and the model is sure of the sign"
VERDICT_NOISE = "below the noise floor"
VERDICT_UNSURE = "the model cannot tell"
VERDICTS = (VERDICT_SURE, VERDICT_NOISE, VERDICT_UNSURE)
#: the same, short enough for a metric tile (the full sentence goes in its help)
VERDICT_SHORT = {VERDICT_SURE: "measurable", VERDICT_NOISE: "below noise", VERDICT_UNSURE: "cannot tell"}


def verdict(delta_ns, noise_ns, lo, hi) -> str:
    """One A/B verdict for a predicted difference ``delta_ns`` [ns/packet] and its prediction interval.

    ``lo``, ``hi``: the interval of the difference (paired propagation,
    :func:`skbmodel.uncertainty.delta_interval`) in any unit of the same sign as ``delta_ns`` or
    the opposite one (only whether it holds 0 matters).

    * :data:`VERDICT_NOISE` if ``|delta_ns| < noise_ns`` (one run cannot see it);
    * :data:`VERDICT_SURE` if ``|delta_ns| >= noise_ns`` and the interval excludes 0;
    * :data:`VERDICT_UNSURE` if ``|delta_ns| >= noise_ns`` but the interval contains 0 (the model's
      own uncertainty allows either sign).
    """
    return str(verdicts(delta_ns, noise_ns, lo, hi))


def verdicts(delta_ns, noise_ns, lo, hi) -> np.ndarray:
    """:func:`verdict` elementwise over arrays of differences and their intervals (an array of texts)."""
    meas = measurable(delta_ns, noise_ns)
    sure = (np.asarray(lo, dtype=float) > 0) | (np.asarray(hi, dtype=float) < 0)
    return np.where(meas, np.where(sure, VERDICT_SURE, VERDICT_UNSURE), VERDICT_NOISE)


def runs_needed(delta_ns, noise_ns, z_alpha_half=Z_ALPHA_HALF, z_power=Z_POWER):
    """Benchmark runs per variant to detect ``delta_ns`` given per-run noise ``noise_ns`` [runs].

    Capped at ``MAX_RUNS`` (a zero difference can never be seen).
    """
    d = np.abs(np.asarray(delta_ns, dtype=float))
    sigma = np.asarray(noise_ns, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.ceil(2.0 * ((z_alpha_half + z_power) * sigma / d) ** 2)
    return np.clip(np.nan_to_num(n, nan=MAX_RUNS, posinf=MAX_RUNS), 1, MAX_RUNS)
