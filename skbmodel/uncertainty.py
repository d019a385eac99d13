"""Prediction intervals on every model output, from the uncertainty of the profile's constants.

Each constant of a CPU profile may carry ``stderr`` (one standard deviation, in its own unit) and
the profile a correlation matrix among its fitted constants (:mod:`skbmodel.machine.profile`; how each
number was obtained is in the constant's ``source``).  This module propagates them to the outputs
of :func:`skbmodel.model.evaluate`, vectorised over the parameter grid, by one of two methods:

* ``"linear"`` (first-order propagation, the default): the model is evaluated once for the
  nominal constants and once for each constant moved by ``+-1`` sd (one vectorised call with a
  leading constant axis), giving the sensitivities ``u_j = (f(c + sd_j e_j) - f(c - sd_j e_j)) / 2``
  [output unit per sd] and ``var f = u^T R u`` with ``R`` the correlation matrix.  The interval is
  ``f +- z sd``, ``z = Phi^-1((1 + level) / 2)``.  A secant over ``+-1`` sd rather than a tangent,
  so that kinks (``min``, slab boundaries) count with the size of the step a constant makes.
* ``"sampling"`` (Monte Carlo): :data:`N_SAMPLES` draws of the constants from the multivariate
  normal with these sd and correlations (fixed seed :data:`skbmodel.constant_sets.SEED`), evaluated in blocks of one
  vectorised call each; the interval's half-widths are the distances from ``f`` to the sample
  quantiles ``(1 - level) / 2`` and ``(1 + level) / 2``.

**Log-scale constants** (``scale = "log"`` on the constant, :data:`skbmodel.machine.profile.SCALES`: a
constant carried from another CPU, whose error is a factor): ``s = stderr / value`` is an sd of
``ln c``.  Linearisation steps it to ``c exp(+-s)`` and, for an output that cannot be negative, takes its
sensitivity on log scale too, ``u_j = f (ln f(c e^s) - ln f(c e^-s)) / 2``; the log-scale dimensions'
variance ``V_log`` (their terms of ``u^T R u``) spreads the interval as a factor and the rest ``V_rest``
as an addend, in quadrature::

    sigma = sqrt(V_log) / f
    lo = f - sqrt((f (1 - exp(-z sigma)))^2 + z^2 V_rest),  hi = f + sqrt((f (exp(z sigma) - 1))^2 + z^2 V_rest)

so that one such constant alone (``f = c``) gives ``[c exp(-z s), c exp(z s)]``, never 0.  Only an output
built from sums, products and quotients of positive constants spreads so (a cost, a rate:
:data:`skbmodel.schema.FACTOR_OUTPUTS`).  A difference (a signed output, B - A, or the drops of cpumap,
source minus destination) keeps the symmetric ``f +- z sd`` with the secant of the same steps, each step's
difference taken from that step's own evaluation of both terms: its own value may sit near 0 while its
terms do not, and a factor of it would scale a clamped point (a drop rate of 0.94 Mpps had a bound of
4,432 Mpps that way).  Sampling draws it log-normal, ``c exp(s x)`` with ``x`` the correlated standard
normal of its dimension.

Reference: JCGM 100:2008 (GUM), section 5 (law of propagation of uncertainty, with correlations)
and JCGM 101:2008 (GUM Supplement 1, propagation of distributions by Monte Carlo).

**Default: linearisation.**  ``python benchmarks/bench_intervals.py`` (200-point sweep of every
output, 28 uncertain constants, both profiles, one run on the 2-vCPU development machine under
load): a plain evaluate takes 0.35 ms, the linearised intervals 3.3-3.6 ms (1 + 2 x 28 constant
sets in one call), sampling 330-610 ms (1000 draws).  The half-widths of the costs (cycles, ns)
agree with a median ratio of 1.004 (5-95 %: 0.74-1.05); the only larger gaps are at bulk >= 32,
where the SLUB bulk cost holds the product ``slab_locality * slub_free_slow_extra_cycles`` of two
uncertain constants (the latter's sd is twice its value), a second-order term linearisation leaves
out.  Only linearisation fits the dashboard's budget of a few ms per slider move (docs/intervals.md).

A structural (model) error can be added per subsystem: :data:`STRUCTURAL_REL_SD` holds a relative
sd per output prefix (0 until out-of-sample validation fills it), combined in quadrature:
``sd_total = sqrt(sd_constants^2 + (rel * |f|)^2)``.

**Intervals respect what the outputs are** (:func:`skbmodel.interval_rules.physical_intervals`):

* a quantity that cannot be negative (a cost, a rate, a share: :data:`NONNEGATIVE_OUTPUTS`, by the
  output's kind in :mod:`skbmodel.schema`) has its lower bound clipped at 0.  The normal approximation
  puts probability below 0 where the quantity cannot go; clipping removes only that impossible part.
  A signed difference (a saving, memset minus ``__GFP_ZERO``) is never clipped, whatever sign its
  value has in the states a profile happens to produce;
* a difference of two outputs (:data:`schema.DIFFERENCE_OUTPUTS`: drops = source - destination rate) is at most
  its minuend's upper bound: in every set of constants the subtrahend is a rate, never below 0; a fraction
  of events (:data:`UPPER_BOUNDS`) is at most 1;
* a difference (a signed output, or B - A of a pair) is never held to the sign of its value: a change that
  moves work between two CPUs or trades one cost for another can come out either way on a machine, and the
  interval must be able to hold a measurement of either sign;
* a value fixed by the kernel (:data:`schema.EXACT_OUTPUTS`, objects per slab) is exact: ``[f, f]``;
* "runs needed" is a monotone function of the zeroing difference, so its range is that function of
  the difference's interval: from the runs at the interval's largest ``|delta|`` to those at its
  smallest, and up to :data:`skbmodel.physics.noise.MAX_RUNS` (no finite number of runs) when the interval
  holds 0.

:func:`delta_interval` gives the interval of a B - A difference with *paired* propagation: A and
B see the same constant perturbations, so a constant both share cancels and identical A and B give
exactly ``[0, 0]``.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from collections.abc import Mapping, Sequence

import numpy as np

from . import constant_sets, folders, interval_rules, model, schema
from .physics.noise import LEVEL, z_value  # the reported level, here for the propagation's callers
from .machine.custom import CUSTOM_PREFIX
from .machine.profile import Profile

METHODS = ("linear", "sampling")
#: see the module docstring for the measured figures behind this choice
DEFAULT_METHOD = "linear"
N_SAMPLES = 1000
#: sample blocks are sized so that one vectorised call holds at most this many states
_STATES_PER_CALL = 65_536

def _structural_from_report(path: Path = folders.REPORT_JSON) -> dict[str, float]:
    """``{output prefix: relative sd}`` the out-of-sample validation estimated for the model's form.

    For each group of published curves (fitted on 3 points, the rest predicted), the mean squared
    relative error of the predictions less the mean squared relative sd the constants explain:
    ``sqrt(max(mean(e^2) - mean(s_c^2), 0))``.  Subsystems without such curves get 0 (only the
    constants' uncertainty is shown for them).
    """
    if not path.is_file():
        return {}
    rep = json.loads(path.read_text())
    return {prefix: float(v) for prefix, v in rep.get("structural_rel_sd", {}).items()}


#: Relative structural (model-form) sd per output prefix [1], from the out-of-sample validation;
#: prefixes not listed: 0.
STRUCTURAL_REL_SD: dict[str, float] = _structural_from_report()


def structural_rel_sd(output: str) -> float:
    """Relative structural sd of ``output`` [1]: the :data:`STRUCTURAL_REL_SD` entry of its prefix, else 0."""
    for prefix, rel in STRUCTURAL_REL_SD.items():
        if output.startswith(prefix):
            return float(rel)
    return 0.0


# ---------------------------------------------------------------- internals
def machine(profile: Profile) -> str:
    """The machine whose constants ``profile`` holds: its id without an archived ``@version``; a custom
    profile (built from a base, changing only the constants it lists) is its base's machine."""
    pid = profile.inherits if profile.id.startswith(CUSTOM_PREFIX) and profile.inherits else profile.id
    return pid.split("@", 1)[0]


def same_quantity(profile_a: Profile, profile_b: Profile, name: str) -> bool:
    """Whether constant ``name`` of the two profiles is one quantity (paired A/B: it cancels).

    Only a constant of the same machine (:func:`machine`: the same profile, another version of it, or
    a custom profile on it) with the same value and sd.  Another CPU's profile that inherits a
    constant holds an unmeasured stand-in for its own machine's value, not the same quantity; a
    constant a custom profile or a newer version changed is another estimate.
    """
    ca, cb = profile_a.constants.get(name), profile_b.constants.get(name)
    return (ca is not None and cb is not None and machine(profile_a) == machine(profile_b)
            and ca.value == cb.value and ca.stderr == cb.stderr and ca.scale == cb.scale)


def _joint(profiles: Sequence[Profile], outputs):
    """Uncertain dimensions of one or two profiles.

    A constant is shared (one dimension, one draw) when every profile has it as the same quantity
    (:func:`same_quantity`); otherwise each profile has its own dimension.
    Returns ``(dims, sd, corr, index)``: ``dims[j] = (seed label, side, name)`` with side ``"A"`` (one
    profile), ``"AB"`` (shared by two) or the one side ``"A"``/``"B"`` it belongs to; ``index[p]`` =
    ``(names, dim numbers)`` of profile ``p``.
    """
    per = [constant_sets.relevant(p, outputs) for p in profiles]
    keys: list[tuple] = []
    index = []
    for i, (p, (names, sd, _)) in enumerate(zip(profiles, per)):
        cols = []
        for n, s in zip(names, sd):
            key = ("shared", n, profiles[0].constants[n].value if n in profiles[0].constants else None, s)
            shared = all(same_quantity(p, q, n) for q in profiles)
            key = key if shared else (len(index), n)
            if key not in keys:
                keys.append(key)
            cols.append(keys.index(key))
        index.append((names, np.array(cols, dtype=int)))
    one = len(profiles) == 1
    dims = [(k[1], "A" if one else "AB", k[1]) if k[0] == "shared" else (f"{k[1]}@{j}", "AB"[k[0]], k[1])
            for j, k in enumerate(keys)]
    d = len(dims)
    sd = np.zeros(d)
    corr = np.eye(d)
    for p, (names, psd, pcorr), (_, cols) in zip(profiles, per, index):
        sd[cols] = psd
        block = corr[np.ix_(cols, cols)]
        # the first profile's correlations win among shared dimensions (they are the same quantity)
        corr[np.ix_(cols, cols)] = np.where(block != np.eye(len(cols)), block, pcorr)
    return dims, sd, corr, index


def _blocks(k: int, grid: int) -> list[slice]:
    step = max(1, _STATES_PER_CALL // max(grid, 1))
    return [slice(i, min(i + step, k)) for i in range(0, k, step)]


def _per_sd(v: np.ndarray, d: int, log: np.ndarray | None = None) -> np.ndarray:
    """``u_j = (f(c + sd_j e_j) - f(c - sd_j e_j)) / 2`` [output unit per sd]: ``(d, ...)`` from rows
    ``1 .. d`` (+sd) and ``d + 1 .. 2d`` (-sd) of ``v``.  With ``log`` (``(d,)``), those dimensions take
    ``f (ln f_+ - ln f_-) / 2`` where ``f`` and both steps are positive (the secant elsewhere)."""
    up, down = v[1:1 + d], v[1 + d:1 + 2 * d]
    with np.errstate(invalid="ignore"):
        u = (up - down) / 2.0
    if log is None or not np.any(log):
        return u
    f = v[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = (f > 0) & (up > 0) & (down > 0) & np.isfinite(f) & np.isfinite(up) & np.isfinite(down)
        g = f * (np.log(np.where(ok, up, 1.0)) - np.log(np.where(ok, down, 1.0))) / 2.0
    mask = np.asarray(log, dtype=bool).reshape((d,) + (1,) * (np.ndim(u) - 1))
    return np.where(mask & ok, g, u)


def _variance_terms(u: np.ndarray, corr: np.ndarray) -> np.ndarray:
    """``u_j (R u)_j`` per dimension ``j`` (``(d, ...)``): they add up to ``var f = u^T R u``."""
    d = u.shape[0]
    if not d:
        return np.zeros((1,) + u.shape[1:])
    flat = u.reshape(d, -1)
    with np.errstate(invalid="ignore"):
        return (flat * (corr @ flat)).reshape(u.shape)


def _propagate(values_of, k: int, grid: int, outputs, method, corr, level, struct_sd):
    """Run ``values_of(rows) -> {output: (len(rows), ...)}`` over the perturbation rows and reduce.

    ``struct_sd(output, f0)`` gives the structural sd [output unit].  Returns ``(f0, {output: (lo, hi)})``.
    """
    z = z_value(level)
    if method == "linear":
        vals = values_of(slice(0, k))
        f0, res = {}, {}
        d = (k - 1) // 2
        for o in outputs:
            v = np.asarray(vals[o], dtype=float)
            f = v[0]
            with np.errstate(invalid="ignore"):
                var = np.sum(_variance_terms(_per_sd(v, d), corr), axis=0)
                hw = z * np.sqrt(np.clip(var, 0.0, None) + struct_sd(o, f) ** 2)
            f0[o] = f
            res[o] = (f - hw, f + hw)
        return f0, res
    stacks = {o: [] for o in outputs}
    for sl in _blocks(k, grid):
        vals = values_of(sl)
        for o in outputs:
            stacks[o].append(np.asarray(vals[o], dtype=float))
    f0, res = {}, {}
    q = ((1.0 - level) / 2.0, (1.0 + level) / 2.0)
    for o in outputs:
        v = np.concatenate(stacks[o])
        f = v[0]
        with np.errstate(invalid="ignore"):
            lo_q, hi_q = np.quantile(v[1:], q, axis=0)
            s = z * struct_sd(o, f)
            lo = f - np.sqrt(np.clip(f - lo_q, 0.0, None) ** 2 + s ** 2)
            hi = f + np.sqrt(np.clip(hi_q - f, 0.0, None) ** 2 + s ** 2)
        f0[o] = f
        res[o] = (lo, hi)
    return f0, res


#: relative step of a constant (and of the clock) for its elasticity [1]
REL_STEP = 1e-4
#: the constant a scenario's clock is: a scenario input (``ghz``), each side's own
CLOCK = "ghz"


@dataclasses.dataclass(frozen=True)
class Linearisation:
    """The first-order propagation of one scenario, or of the paired difference ``B - A`` of two.

    Every linearised interval and every ranking of what an answer rests on
    (:mod:`skbmodel.attribution`) reads one of these, so a driver's share of the variance is a share of
    exactly the variance the interval shows.

    * ``value``: ``{output: f}`` (one scenario) or ``{output: f_B - f_A}`` [output unit];
      ``sides``: each side's own values, ``{"A": {...}, "B": {...}}``;
    * ``dims``: the uncertain dimensions ``(seed label, side, name)`` (:func:`_joint`), ``sd`` and
      ``corr`` their sd [constant units] and correlation [1];
    * ``per_sd``: ``{output: (D, ...)}`` the change of ``value`` per ``+1`` sd of each dimension (a
      secant over ``+-1`` sd, see the module docstring; of a log-scale dimension on an output of
      ``log_outputs``, ``f`` times the secant of ``ln f``);
    * ``log_dims``: ``(D,)`` whether each dimension is on log scale; ``log_outputs``: the outputs whose
      interval spreads the log-scale dimensions' variance as a factor (one scenario's non-negative
      outputs, :meth:`bounds`);
    * ``structural_sd``: ``{output: sd}`` [output unit]: ``rel |f|`` for one scenario or a pair on one
      machine (one model error), ``rel sqrt(f_A^2 + f_B^2)`` across machines (two);
    * with elasticities asked: ``value_dims`` (every constant that is not the clock or a kernel size,
      ``(label, side, name)``: ``"A"``/``"B"``-prefixed unless A and B share it), ``elasticity``
      ``{output: (E, ...)}`` = ``c_j dV/dc_j`` (central difference over ``+-`` :data:`REL_STEP`) and
      ``clock_elasticity`` ``{output: ((side, e), ...)}`` = ``g dV/dg`` of each side's clock ``g``.

    Reference: JCGM 100:2008 (GUM), 5.1.3 (sensitivity coefficients) and 5.2.2 (correlated inputs).
    """
    outputs: tuple
    value: dict
    sides: dict
    dims: tuple
    sd: np.ndarray
    corr: np.ndarray
    per_sd: dict
    structural_sd: dict
    value_dims: tuple = ()
    elasticity: dict = dataclasses.field(default_factory=dict)
    clock_elasticity: dict = dataclasses.field(default_factory=dict)
    log_dims: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=bool))
    log_outputs: frozenset = frozenset()
    #: a pair's rows of each side's own outputs (``{"A": {output: (K, ...)}, "B": ...}``), read by :meth:`side`
    side_rows: dict = dataclasses.field(default_factory=dict, repr=False)

    def side(self, side: str, outputs=None, structural: bool = True) -> Linearisation:
        """Side ``"A"`` or ``"B"`` of a pair as one scenario's propagation of ``outputs`` (default: all),
        read from the pair's own evaluations: the dimensions that side has (a dimension only the other side
        has moves none of its outputs), without elasticities."""
        outputs = tuple(self.outputs if outputs is None else outputs)
        keep = [j for j, (_, s_, _) in enumerate(self.dims) if side in s_]
        d = len(self.dims)
        pick = np.array([0, *(1 + j for j in keep), *(1 + d + j for j in keep)], dtype=int)
        rows = {o: self.side_rows[side][o][pick] for o in outputs}
        log = self.log_dims[keep]
        log_outputs, per_sd, struct = _spread_of_one(rows, len(keep), log, outputs, structural)
        value = {o: rows[o][0] for o in outputs}
        dims = tuple((n, "A", n) for _, _, n in (self.dims[j] for j in keep))
        return Linearisation(outputs, value, {"A": value}, dims, self.sd[keep], self.corr[np.ix_(keep, keep)],
                             per_sd, struct, log_dims=log, log_outputs=log_outputs)

    def only(self, outputs) -> Linearisation:
        """The same propagation restricted to ``outputs`` (a subset of :attr:`outputs`): what its intervals and
        drivers read of it is unchanged (an uncertain dimension no output of the subset depends on adds 0)."""
        outputs = tuple(outputs)
        missing = [o for o in outputs if o not in self.value]
        if missing:
            raise ValueError(f"not propagated: {', '.join(missing)}")
        return dataclasses.replace(self, outputs=outputs)

    def variance_terms(self, output: str) -> np.ndarray:
        """``u_j (R u)_j`` of each uncertain dimension [output unit²]: with the structural term's square
        they add up to :meth:`variance`."""
        return _variance_terms(self.per_sd[output], self.corr)

    def variance(self, output: str) -> np.ndarray:
        """``u^T R u + structural^2`` [output unit²]."""
        with np.errstate(invalid="ignore"):
            return np.sum(self.variance_terms(output), axis=0) + self.structural_sd[output] ** 2

    def bounds(self, output: str, level: float = LEVEL) -> tuple:
        """``f +- z sd``, ``z = Phi^-1((1 + level) / 2)`` [output unit]; on an output of ``log_outputs``
        with log-scale dimensions, their variance as a factor and the rest as an addend (module docstring)."""
        f = self.value[output]
        z = z_value(level)
        with np.errstate(invalid="ignore"):
            hw = z * np.sqrt(np.clip(self.variance(output), 0.0, None))
        if output not in self.log_outputs or not np.any(self.log_dims):
            return f - hw, f + hw
        terms = self.variance_terms(output)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            v_log = np.clip(np.sum(terms[self.log_dims], axis=0), 0.0, None)
            v_rest = np.clip(np.sum(terms[~self.log_dims], axis=0) + self.structural_sd[output] ** 2, 0.0, None)
            ok = np.isfinite(f) & (f > 0)
            sigma = np.sqrt(v_log) / np.where(ok, f, 1.0)
            down = np.hypot(f * -np.expm1(-z * sigma), z * np.sqrt(v_rest))
            up = np.hypot(f * np.expm1(z * sigma), z * np.sqrt(v_rest))
        return np.where(ok, f - down, f - hw), np.where(ok, f + up, f + hw)

    def intervals(self, level: float = LEVEL) -> dict:
        """``{output: (lo, hi)}``: :meth:`bounds` of each output; a difference (two sides) of kernel-fixed
        values is as exact as they are.  The physical limits of one scenario's outputs are
        :func:`skbmodel.interval_rules.physical_intervals`' (they need its parameters)."""
        pair = "B" in self.sides
        out = {}
        for o in self.outputs:
            if pair and o in schema.EXACT_OUTPUTS:
                out[o] = (self.value[o], self.value[o])
                continue
            lo, hi = self.bounds(o, level)
            out[o] = (lo, hi)
        return out


def with_counted(outputs) -> list[str]:
    """``outputs`` and what their intervals need: for each count of runs among them, the difference it counts;
    for each difference of two outputs, its minuend (whose upper bound is its own)."""
    return list(dict.fromkeys([*outputs, *(schema.RUNS_OUTPUTS[o][0] for o in outputs if o in schema.RUNS_OUTPUTS),
                               *(schema.DIFFERENCE_OUTPUTS[o][0] for o in outputs if o in schema.DIFFERENCE_OUTPUTS)]))


def _value_dims(profiles: Sequence[Profile]) -> list[tuple[str, str, str]]:
    """The constants whose elasticity is asked: not the clock (a scenario input, its own row) and not the
    kernel's sizes (exact facts that shape the formulas: their elasticities cancel in pairs such as object
    size / cacheline size); one dimension for a constant A and B share (:func:`same_quantity`)."""
    own = [[n for n, c in p.constants.items() if n != CLOCK and c.kind != "kernel"] for p in profiles]
    if len(profiles) == 1:
        return [(n, "A", n) for n in own[0]]
    pa, pb = profiles
    dims = [(n, "AB", n) if same_quantity(pa, pb, n) else (f"A: {n}", "A", n) for n in own[0]]
    return dims + [(f"B: {n}", "B", n) for n in own[1] if not same_quantity(pa, pb, n)]


def linearise(params_a: Mapping, params_b: Mapping | None = None, profile_a: Profile | None = None,
              profile_b: Profile | None = None, outputs=None, structural: bool = True,
              elasticities: bool = False) -> Linearisation:
    """The first-order propagation of scenario A, or of the paired ``B - A`` (:class:`Linearisation`).

    One vectorised call of :func:`skbmodel.model.evaluate` per side, over the rows: the nominal
    constants; each uncertain dimension at ``+1`` and ``-1`` sd (the same for A and B where they share
    it: paired); with ``elasticities``, each constant at ``1 +- REL_STEP`` times its value and each
    side's clock at ``1 +- REL_STEP`` times the scenario's.  ``structural=False`` leaves the
    structural term out (the out-of-sample validation estimates it from the rest).
    """
    _, outputs = _check("linear", outputs)
    pa = model.with_levels(model.profile_of(params_a, profile_a))
    sides = [("A", params_a, pa)]
    if params_b is not None:
        sides.append(("B", params_b, model.with_levels(model.profile_of(params_b, profile_b))))
    profiles = [prof for _, _, prof in sides]
    dims, sd, corr, _ = _joint(profiles, outputs)
    vdims = _value_dims(profiles) if elasticities else []
    cols = list(dict.fromkeys([(side, n) for _, side, n in dims] + [(side, n) for _, side, n in vdims]))
    col = {c: i for i, c in enumerate(cols)}
    d, e = len(dims), len(vdims)
    k = 1 + 2 * d + (2 * e + 2 * len(sides) if elasticities else 0)
    of = {side: prof for side, _, prof in sides}
    base = np.array([of[side[0]].value(n) for side, n in cols])
    log = np.array([of[side[0]].constants[n].scale == "log" for _, side, n in dims], dtype=bool)
    at = [col[(side, n)] for _, side, n in dims]
    up, down = (constant_sets.steps(base[at], sd, log, np.full((1, d), x))[0] for x in (1.0, -1.0))
    deltas = np.zeros((k, len(cols)))
    for j, c in enumerate(at):
        deltas[1 + j, c] = up[j]
        deltas[1 + d + j, c] = down[j]
    e0 = 1 + 2 * d
    h = np.array([REL_STEP * abs(of[side[0]].value(n)) for _, side, n in vdims])
    for j, (_, side, n) in enumerate(vdims):
        deltas[e0 + j, col[(side, n)]] = h[j]
        deltas[e0 + e + j, col[(side, n)]] = -h[j]
    c0 = e0 + 2 * e
    clocks = {}
    for si, (side, _, _) in enumerate(sides):
        clocks[side] = None
        if elasticities:
            clocks[side] = np.ones(k)
            clocks[side][c0 + 2 * si], clocks[side][c0 + 2 * si + 1] = 1.0 + REL_STEP, 1.0 - REL_STEP
    if len(sides) == 2 and profiles[0] is profiles[1]:
        # one profile: every dimension is shared, so A and B are one vectorised evaluation side by side
        vals = constant_sets.evaluate_side_by_side(params_a, params_b, pa, [n for _, n in cols], base, deltas, outputs,
                                      clocks["A"], clocks["B"])
    else:
        vals = {}
        for side, params, prof in sides:
            mine = [i for i, (s_, _) in enumerate(cols) if side in s_]
            vals[side] = constant_sets.evaluate_sets(params, prof, [cols[i][1] for i in mine], base[mine],
                                                     deltas[:, mine], outputs, clocks[side])
    side_rows = {side: {o: np.asarray(vals[side][o], dtype=float) for o in outputs} for side, _, _ in sides}
    rows = {o: side_rows["A"][o] if len(sides) == 1 else _difference(side_rows["B"][o], side_rows["A"][o])
            for o in outputs}
    value = {o: rows[o][0] for o in outputs}
    own = {side: {o: side_rows[side][o][0] for o in outputs} for side, _, _ in sides}
    if len(sides) == 1:
        log_outputs, per_sd, struct = _spread_of_one(rows, d, log, outputs, structural)
    else:
        across = machine(profiles[0]) != machine(profiles[1])
        rel = {o: structural_rel_sd(o) if structural else 0.0 for o in outputs}
        struct = {o: rel[o] * (np.hypot(own["A"][o], own["B"][o]) if across else np.abs(value[o]))
                  for o in outputs}
        log_outputs = frozenset()
        per_sd = {o: _per_sd(rows[o], d) for o in outputs}
    elast, clock_e = {}, {}
    if elasticities:
        shape = (e,) + (1,) * (rows[outputs[0]].ndim - 1) if outputs else (e,)
        hh, bb = h.reshape(shape), np.array([of[side[0]].value(n) for _, side, n in vdims]).reshape(shape)
        for o in outputs:
            v = rows[o]
            with np.errstate(invalid="ignore", divide="ignore"):
                elast[o] = np.where(hh > 0, bb * (v[e0:e0 + e] - v[e0 + e:c0]) / (2 * np.where(hh > 0, hh, 1)), 0.0)
                clock_e[o] = tuple((side, (v[c0 + 2 * si] - v[c0 + 2 * si + 1]) / (2 * REL_STEP))
                                   for si, (side, _, _) in enumerate(sides))
    return Linearisation(tuple(outputs), value, own, tuple(dims), sd, corr, per_sd, struct, tuple(vdims),
                         elast, clock_e, log, log_outputs, side_rows if len(sides) == 2 else {})


def _spread_of_one(rows: Mapping, d: int, log: np.ndarray, outputs, structural: bool):
    """One scenario's ``(log_outputs, per_sd, structural_sd)`` from its rows (nominal, ``+1`` sd, ``-1`` sd of
    each of ``d`` dimensions): its outputs that cannot be negative take a log-scale dimension's sensitivity on
    log scale; a signed output's interval is the normal one, free to cross zero either way."""
    log_outputs = frozenset(o for o in outputs if o in schema.FACTOR_OUTPUTS) if log.any() else frozenset()
    per_sd = {o: _per_sd(rows[o], d, log if o in log_outputs else None) for o in outputs}
    struct = {o: (structural_rel_sd(o) if structural else 0.0) * np.abs(rows[o][0]) for o in outputs}
    return log_outputs, per_sd, struct


def _check(method, outputs):
    method = method or DEFAULT_METHOD
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if outputs is None:
        outputs = list(model.OUTPUT_UNITS)
    elif isinstance(outputs, str):
        outputs = [outputs]
    else:
        outputs = list(outputs)
    unknown = [o for o in outputs if o not in model.OUTPUT_UNITS]
    if unknown:
        raise ValueError(f"unknown outputs: {', '.join(unknown)}")
    return method, outputs


# ---------------------------------------------------------------- public API
def evaluate_with_intervals(params: Mapping, profile: Profile | None = None, outputs=None, level: float = LEVEL,
                            method: str | None = None, n_samples: int = N_SAMPLES, structural: bool = True,
                            physical: bool = True):
    """Point values and prediction intervals of ``outputs`` (default: every output) in one pass.

    Parameters
    ----------
    params : state parameters (scalars or broadcastable arrays), as for :func:`skbmodel.model.evaluate`.
    profile : CPU profile; default: the one the parameters name.
    outputs : output names (default all of :data:`skbmodel.model.OUTPUT_UNITS`).
    level : two-sided coverage, default 0.9.
    method : ``"linear"`` or ``"sampling"`` (default :data:`DEFAULT_METHOD`).
    n_samples : draws for ``"sampling"``.
    structural : add :func:`structural_rel_sd` (default); ``False`` gives the constants' share alone
        (the out-of-sample validation estimates the structural term from that).
    physical : apply :func:`skbmodel.interval_rules.physical_intervals` (default); ``False`` gives the
        propagated interval, ``f +- z sd`` where no log-scale constant spreads it (the out-of-sample
        validation reads ``sd`` from it).

    Returns
    -------
    ``(values, intervals)``: ``{output: ndarray}`` [output unit] and ``{output: (lo, hi)}`` of
    arrays of the grid's shape [output unit], with ``lo <= value <= hi``.
    """
    method, outputs = _check(method, outputs)
    asked = outputs
    if physical:  # a count of runs needs the interval of the difference it counts
        outputs = with_counted(outputs)
    prof = model.with_levels(model.profile_of(params, profile))
    if method == "linear":
        lin = linearise(params, None, prof, None, outputs, structural=structural)
        f0, res = lin.value, lin.intervals(level)
    else:
        names, sd, corr = constant_sets.relevant(prof, outputs)
        base = np.array([prof.value(n) for n in names])
        deltas = constant_sets.perturbations(method, sd, corr, n_samples, names, base,
                                             constant_sets.log_scale(prof, names))
        grid = int(np.prod(np.broadcast_shapes(*[np.shape(v) for v in model.raw_inputs(params, prof).values()])))

        def values_of(rows):
            return constant_sets.evaluate_sets(params, prof, names, base, deltas[rows], outputs)

        def struct_sd(o, f):
            return (structural_rel_sd(o) if structural else 0.0) * np.abs(f)
        f0, res = _propagate(values_of, deltas.shape[0], grid, outputs, method, corr, level, struct_sd)
    if physical:
        res = interval_rules.physical_intervals(f0, res, model.raw_inputs(params, prof))
    return {o: f0[o] for o in asked}, {o: res[o] for o in asked}


def physical_intervals(lin: Linearisation, params: Mapping, profile: Profile) -> dict:
    """``{output: (lo, hi)}``: one scenario's propagated intervals (``lin``, of scenario ``params`` on
    ``profile``) within what each output's kind allows (:func:`skbmodel.interval_rules.physical_intervals`)."""
    return interval_rules.physical_intervals(lin.value, lin.intervals(), model.raw_inputs(params, profile))


def intervals(params: Mapping, profile: Profile | None = None, outputs=None, level: float = LEVEL,
              method: str | None = None, n_samples: int = N_SAMPLES, structural: bool = True,
              physical: bool = True) -> dict:
    """Prediction interval ``(lo, hi)`` [output unit] of each output, vectorised over the params grid.

    ``level`` is the two-sided coverage (0.9: the 5 % and 95 % points).  Sources of uncertainty:
    the profile constants' ``stderr`` and correlations, and :func:`structural_rel_sd`, in
    quadrature.  Method and defaults: see the module docstring and :func:`evaluate_with_intervals`.
    """
    return evaluate_with_intervals(params, profile, outputs, level, method, n_samples, structural, physical)[1]


def _difference(b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``b - a``, 0 where the two are equal (``inf - inf`` is no difference between identical sides)."""
    with np.errstate(invalid="ignore"):
        return np.where(b == a, 0.0, b - a)


def delta_intervals(params_a: Mapping, params_b: Mapping, profile_a: Profile | None = None,
                    profile_b: Profile | None = None, outputs=None, level: float = LEVEL,
                    method: str | None = None, n_samples: int = N_SAMPLES):
    """Paired intervals of ``B - A`` for ``outputs``: ``(delta, {output: (lo, hi)})`` [output unit].

    A and B are evaluated with the *same* perturbations of the constants (the same Jacobian steps or
    the same draws), so the interval is that of the difference: a constant that A and B share
    (same name, value and sd, e.g. inherited by both profiles) cancels where both depend on it
    alike, and identical A and B give exactly ``[0, 0]``.  Constants that are not the same quantity
    (:func:`same_quantity`: another machine's, or changed by B) are independent.  The structural term
    is fully correlated between A and B on the same machine (the same model form on the same
    hardware): ``rel * |f_B - f_A|``; across machines the two model errors are independent:
    ``rel * sqrt(f_A^2 + f_B^2)``.
    """
    method, outputs = _check(method, outputs)
    if method == "linear":
        lin = linearise(params_a, params_b, profile_a, profile_b, outputs)
        return lin.value, lin.intervals(level)
    delta, res = _sampled_delta(params_a, params_b, profile_a, profile_b, outputs, level, n_samples)
    # a difference of kernel-fixed values is as exact as they are
    return delta, {o: ((delta[o], delta[o]) if o in schema.EXACT_OUTPUTS else iv) for o, iv in res.items()}


def _sampled_delta(params_a, params_b, profile_a, profile_b, outputs, level, n_samples):
    pa = model.with_levels(model.profile_of(params_a, profile_a))
    pb = model.with_levels(model.profile_of(params_b, profile_b))
    dims, sd, corr, index = _joint([pa, pb], outputs)
    of = [pa if "A" in side else pb for _, side, _ in dims]
    deltas = constant_sets.perturbations("sampling", sd, corr, n_samples, [label for label, _, _ in dims],
                     np.array([p.value(n) for p, (_, _, n) in zip(of, dims)]),
                     np.array([p.constants[n].scale == "log" for p, (_, _, n) in zip(of, dims)], dtype=bool))
    shapes = [np.broadcast_shapes(*[np.shape(v) for v in model.raw_inputs(p, q).values()])
              for p, q in ((params_a, pa), (params_b, pb))]
    grid = int(np.prod(np.broadcast_shapes(*shapes)))
    sides = []
    for params, prof, (names, cols) in ((params_a, pa, index[0]), (params_b, pb, index[1])):
        sides.append((params, prof, names, np.array([prof.value(n) for n in names]), cols))

    def values_of(rows):
        va, vb = (constant_sets.evaluate_sets(params, prof, names, base, deltas[rows][:, cols], outputs)
                  for params, prof, names, base, cols in sides)
        # equal values differ by exactly 0, also where a drawn constant set makes both infinite
        return {o: _difference(np.asarray(vb[o], dtype=float), np.asarray(va[o], dtype=float)) for o in outputs}

    across = machine(pa) != machine(pb)
    if across:
        fa, fb = model.evaluate(params_a, pa), model.evaluate(params_b, pb)

    def struct_sd(o, f):
        if across:
            return structural_rel_sd(o) * np.hypot(np.asarray(fa[o], dtype=float), np.asarray(fb[o], dtype=float))
        return structural_rel_sd(o) * np.abs(f)
    return _propagate(values_of, deltas.shape[0], grid, outputs, "sampling", corr, level, struct_sd)


def delta_interval(params_a: Mapping, params_b: Mapping, profile_a: Profile | None = None,
                   profile_b: Profile | None = None, output: str = "path.ns_per_packet", level: float = LEVEL,
                   method: str | None = None, n_samples: int = N_SAMPLES):
    """``(lo, hi)`` of ``B - A`` for one ``output`` [its unit], paired (see :func:`delta_intervals`)."""
    return delta_intervals(params_a, params_b, profile_a, profile_b, [output], level, method, n_samples)[1][output]


def pair_interval(params_a: Mapping, output_a: str, params_b: Mapping, output_b: str, profile: Profile,
                  level: float = LEVEL) -> tuple[float, tuple]:
    """``(delta, (lo, hi))`` of ``output_b(params_b) - output_a(params_a)`` on one profile, paired
    (linearised): both sides see the same perturbation of each constant, so a constant that moves
    them alike cancels.  For a before/after pair whose outputs differ (one at a time vs bulk,
    memset vs ``rep stosb``); :func:`delta_intervals` is the same output under two states.  The
    structural term is fully correlated, as there: ``rel * |delta|``."""
    _, outputs = _check("linear", [output_a, output_b])
    profile = model.with_levels(profile)
    names, sd, corr = constant_sets.relevant(profile, outputs)
    base = np.array([profile.value(n) for n in names])
    deltas = constant_sets.perturbations("linear", sd, corr, 0, base=base, log=constant_sets.log_scale(profile, names))

    def values_of(rows):
        va = constant_sets.evaluate_sets(params_a, profile, names, base, deltas[rows])[output_a]
        vb = constant_sets.evaluate_sets(params_b, profile, names, base, deltas[rows])[output_b]
        return {"delta": np.asarray(vb, dtype=float) - np.asarray(va, dtype=float)}

    def struct_sd(o, f):
        return structural_rel_sd(output_a) * np.abs(f)
    f0, res = _propagate(values_of, deltas.shape[0], 1, ["delta"], "linear", corr, level, struct_sd)
    return f0["delta"], res["delta"]


def half_width(interval) -> np.ndarray:
    """``(hi - lo) / 2`` of an interval [its unit] (the ``±`` the dashboard shows)."""
    lo, hi = interval
    return (np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float)) / 2.0
