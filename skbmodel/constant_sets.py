"""The model evaluated at sets of its constants: what the propagation of :mod:`skbmodel.uncertainty` runs on.

``K`` sets of a profile's constants (the nominal set, each uncertain constant moved by ``+-1`` sd, or
correlated draws) are evaluated in one vectorised call of :func:`skbmodel.model.evaluate`, the sets on a
leading axis (:func:`evaluate_sets`); two scenarios on one profile go side by side in the same call
(:func:`evaluate_side_by_side`).  A constant on log scale moves by a factor (:func:`steps`).  Which
constants move which outputs is found once per profile by a probe over every control's range
(:func:`relevance`), so that an output's propagation moves only the constants it depends on.
"""
from __future__ import annotations

import zlib
from collections.abc import Mapping

import numpy as np

from . import model
from .machine.profile import Profile
from .params import MODEL_PARAMS

#: the seed of the probe states and of the sampling draws (each constant's own stream)
SEED = 20261130


def log_scale(profile: Profile, names) -> np.ndarray:
    """Whether each of ``names`` spreads on log scale (its constant's ``scale``, :mod:`skbmodel.machine.profile`)."""
    return np.array([profile.constants[n].scale == "log" for n in names], dtype=bool)


def steps(base: np.ndarray, sd: np.ndarray, log: np.ndarray | None, x: np.ndarray) -> np.ndarray:
    """Perturbations [constant units] of constants ``base`` moved by ``x`` (``(K, D)``) standard deviations:
    ``sd x`` on linear scale, ``base (exp(x sd / base) - 1)`` on log scale (``log``, ``(D,)``)."""
    lin = x * sd
    if log is None or not np.any(log):
        return lin
    log = np.asarray(log, dtype=bool) & (np.asarray(base, dtype=float) > 0)  # a factor needs a positive value
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(log, sd / np.where(log, base, 1.0), 0.0)
        return np.where(log, base * np.expm1(x * rel), lin)


def uncertain_constants(profile: Profile) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(names, sd, corr)`` of the constants with ``stderr > 0``: sd [constant units], correlation [1]."""
    names = [k for k, c in profile.constants.items() if c.stderr > 0]
    sd = np.array([profile.constants[k].stderr for k in names])
    return names, sd, profile.correlation(names)


_RELEVANCE: dict[tuple, np.ndarray] = {}
_RELEVANCE_MAX = 32


def probe_params(profile: Profile) -> dict:
    """Probe states: the defaults, each numeric parameter at its bounds, and 512 random states
    (fixed seed) over every parameter's range and choices."""
    rng = np.random.default_rng(SEED + 1)
    params = [p for p in MODEL_PARAMS if p.key not in ("cpu", "ghz")]
    rows = [{p.key: p.default for p in params}]
    for p in params:
        if p.kind != "choice":
            rows += [{**rows[0], p.key: p.lo}, {**rows[0], p.key: p.hi}]
    for _ in range(512):
        r = {}
        for p in params:
            if p.kind == "choice":
                r[p.key] = p.choices[rng.integers(len(p.choices))]
            else:
                x = rng.uniform(p.lo, p.hi)
                r[p.key] = round(x) if p.kind == "int" else x
        rows.append(r)
    out = {p.key: np.array([r[p.key] for r in rows]) for p in params}
    out["ghz"] = profile.ghz
    return out


def relevance(profile: Profile) -> tuple[list[str], np.ndarray]:
    """``(names, mask)``: ``mask[i, j]`` is whether output ``i`` (order of
    :data:`skbmodel.model.OUTPUT_UNITS`) moves when uncertain constant ``names[j]`` moves by +-1 sd
    in any probe state (:func:`probe_params`).  Cached per profile.

    Perturbing only the constants that the requested outputs depend on makes the linearised
    intervals of one subsystem's outputs several times cheaper; the probe spans every control's
    range so that regime switches (a bulk beyond the per-CPU slab, a cross-node cpumap, a recycle
    ratio below 1, bulk free off) are seen.
    """
    names, sd, corr = uncertain_constants(profile)
    log = log_scale(profile, names)
    key = (profile.id, tuple(names), tuple(sd), tuple(profile.value(n) for n in names), tuple(log))
    hit = _RELEVANCE.get(key)
    if hit is None and not names:
        hit = np.zeros((len(model.OUTPUT_UNITS), 0), dtype=bool)
    elif hit is None:
        params = probe_params(profile)
        base = np.array([profile.value(n) for n in names])
        d = len(names)
        vals = evaluate_sets(params, profile, names, base, perturbations("linear", sd, corr, 0, base=base, log=log))
        hit = np.zeros((len(model.OUTPUT_UNITS), d), dtype=bool)
        for i, o in enumerate(model.OUTPUT_UNITS):
            v = np.asarray(vals[o], dtype=float)
            with np.errstate(invalid="ignore"):
                moved = (np.abs(v[1:1 + d] - v[0]) > 0) | (np.abs(v[1 + d:] - v[0]) > 0)
            hit[i] = moved.reshape(d, -1).any(axis=1)
        if len(_RELEVANCE) >= _RELEVANCE_MAX:
            _RELEVANCE.pop(next(iter(_RELEVANCE)))
        _RELEVANCE[key] = hit
    return names, hit


def clear_cache() -> None:
    """Forget every profile's relevance probe (a benchmark's cold start)."""
    _RELEVANCE.clear()


def relevant(profile: Profile, outputs) -> tuple[list[str], np.ndarray, np.ndarray]:
    """:func:`uncertain_constants` restricted to those some of ``outputs`` depend on."""
    names, mask = relevance(profile)
    rows = [list(model.OUTPUT_UNITS).index(o) for o in outputs]
    keep = mask[rows].any(axis=0) if rows else np.zeros(len(names), dtype=bool)
    names = [n for n, k in zip(names, keep) if k]
    sd = np.array([profile.constants[n].stderr for n in names])
    return names, sd, profile.correlation(names)


def _ndim(params: Mapping, profile: Profile) -> int:
    raw = model.raw_inputs(params, profile)
    return len(np.broadcast_shapes(*[np.shape(v) for v in raw.values()]))


def evaluate_sets(params, profile, names, base, deltas, outputs=None, clock=None) -> dict:
    """``model.evaluate`` of ``outputs`` (default: all) for ``K`` constant sets ``base + deltas[k]``
    (``deltas``: ``(K, D)``) in one call; outputs get a leading axis of length ``K``.  ``clock``
    (``(K,)``, optional): a factor on the scenario's clock per set (the clock's elasticity)."""
    k = deltas.shape[0]
    tail = (1,) * _ndim(params, profile)
    if clock is not None:
        ghz = np.asarray(params.get("ghz", profile.ghz), dtype=float)
        params = {**params, "ghz": ghz * np.asarray(clock, dtype=float).reshape((k,) + tail)}
    if not names and clock is None:
        out = model.evaluate(params, profile, outputs=outputs)
        return {n: np.broadcast_to(v, (k,) + np.shape(v)) for n, v in out.items()}
    consts = {n: (base[j] + deltas[:, j]).reshape((k,) + tail) for j, n in enumerate(names)}
    out = model.evaluate(params, profile, constants=consts, outputs=outputs)
    return {n: np.broadcast_to(v, (k,) + np.shape(v)[1:]) if np.shape(v)[:1] != (k,) else v
            for n, v in out.items()}


def _factor(corr: np.ndarray) -> np.ndarray:
    """``L`` with ``L L^T = corr`` (eigenvalues clipped at 0 if rounding left it slightly indefinite)."""
    try:
        return np.linalg.cholesky(corr)
    except np.linalg.LinAlgError:
        w, v = np.linalg.eigh(corr)
        return v * np.sqrt(np.clip(w, 0.0, None))


def perturbations(method: str, sd: np.ndarray, corr: np.ndarray, n_samples: int, labels=(), base=None,
            log=None) -> np.ndarray:
    """Perturbations ``(K, D)`` [constant units]: row 0 is the nominal set; a dimension on log scale
    (``log``, with its nominal value in ``base``) is moved by a factor (:func:`steps`).

    Sampling draws each dimension's standard normals from its own stream, seeded by :data:`SEED`
    and the dimension's label (its constant's name), then correlates them: the draws of one
    constant do not change when another, independent constant enters or leaves the set.
    """
    d = sd.size
    if method == "linear":
        eye = np.eye(d)
        return np.vstack([np.zeros((1, d)), steps(base, sd, log, eye), steps(base, sd, log, -eye)])
    z = np.empty((n_samples, d))
    for j in range(d):
        label = str(labels[j]) if j < len(labels) else str(j)
        z[:, j] = np.random.default_rng([SEED, zlib.crc32(label.encode())]).standard_normal(n_samples)
    z = z @ _factor(corr).T
    return np.vstack([np.zeros((1, d)), steps(base, sd, log, z)])


def evaluate_side_by_side(params_a: Mapping, params_b: Mapping, profile: Profile, names, base, deltas, outputs,
                           clock_a, clock_b) -> dict:
    """:func:`evaluate_sets` of A and B on one profile in one call of :func:`skbmodel.model.evaluate`: the two
    scenarios' inputs stacked on an axis after the constant sets' (``{"A": {output: (K, ...)}, "B": ...}``)."""
    k = deltas.shape[0]
    ra, rb = model.raw_inputs(params_a, profile), model.raw_inputs(params_b, profile)
    shape = np.broadcast_shapes(*[np.shape(v) for v in (*ra.values(), *rb.values())])
    params = {n: np.stack([np.broadcast_to(ra[n], shape), np.broadcast_to(rb[n], shape)]) for n in ra}
    tail = (1,) * len(shape)
    if clock_a is not None:
        params["ghz"] = params["ghz"] * np.stack([clock_a, clock_b], axis=1).reshape((k, 2) + tail)
    consts = {n: (base[j] + deltas[:, j]).reshape((k, 1) + tail) for j, n in enumerate(names)} or None
    out = model.evaluate(params, profile, constants=consts, outputs=outputs)
    full = (k, 2) + shape
    both = {n: np.broadcast_to(v, full) for n, v in out.items()}
    return {side: {n: v[:, i] for n, v in both.items()} for i, side in enumerate("AB")}
