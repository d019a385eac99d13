"""Vectorised vs scalar evaluation of the full model, measured in one run, over random states and
path by path."""
from __future__ import annotations

import time

import numpy as np

from . import model
from .links import state as sk_state
from .machine.profile import load_profile


def random_states(n: int, rng: np.random.Generator) -> dict:
    """``n`` random states over every slider's range (as arrays); a choice as the model's integer code
    (:meth:`skbmodel.params.Param.codes`), as the model sees it once its inputs are typed."""
    P = sk_state.PARAMS
    out = {}
    for key in sk_state.MODEL_KEYS:
        p = P[key]
        if key == "cpu":
            continue
        if p.kind == "choice":
            out[key] = rng.integers(0, len(p.choices), size=n).astype(np.int8)
        elif p.kind == "int":
            out[key] = rng.integers(int(p.lo), int(p.hi) + 1, size=n)
        else:
            out[key] = rng.uniform(p.lo, p.hi, size=n)
    return out


def _speed(params: dict, n_scalar: int, prof, repeat: int = 3) -> tuple[float, float]:
    """``(vectorised warm s, scalar s)`` for ``params``: the fastest of ``repeat`` runs each (the
    least disturbed by other jobs on the machine)."""
    out = {k: np.array(v) for k, v in model.evaluate(params, prof).items()}  # writable buffers
    tv = ts = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        model.evaluate(params, prof, out=out)
        tv = min(tv, time.perf_counter() - t0)
        t0 = time.perf_counter()
        for i in range(n_scalar):
            model.evaluate({k: v[i].item() for k, v in params.items()}, prof)
        ts = min(ts, time.perf_counter() - t0)
    return tv, ts


def run_bench(n_vector: int = 1_000_000, n_scalar: int = 2_000, seed: int = 1) -> dict:
    """Random states over every path, then each path alone (``paths``: ``n_vector / 5`` states
    vectorised and ``n_scalar / 5`` one by one per path, the fastest of 3 runs of each)."""
    rng = np.random.default_rng(seed)
    prof = load_profile(sk_state.defaults()["cpu"])
    params = random_states(n_vector, rng)
    model.evaluate({k: v[:10] for k, v in params.items()}, prof)  # warm-up
    # cold: the outputs land in freshly allocated memory (page faults count)
    t0 = time.perf_counter()
    out = model.evaluate(params, prof)
    t_cold = time.perf_counter() - t0
    out = {k: v if v.flags.writeable else np.array(v) for k, v in out.items()}  # small grids come back as views
    # warm: a sweep that reuses its output buffers (as a dashboard redraw or a fit would)
    t0 = time.perf_counter()
    out = model.evaluate(params, prof, out=out)
    tv = time.perf_counter() - t0
    t0 = time.perf_counter()
    scalar = [model.evaluate({k: v[i].item() for k, v in params.items()}, prof) for i in range(n_scalar)]
    ts = time.perf_counter() - t0
    keys = list(out)
    vec = np.array([[out[k][i] for k in keys] for i in range(n_scalar)])
    sca = np.array([[float(s[k]) for k in keys] for s in scalar])
    finite = np.isfinite(vec) & np.isfinite(sca)
    rel = np.abs(vec - sca)[finite] / np.maximum(np.abs(sca[finite]), 1e-12)
    names = sk_state.PARAMS["path"].choices
    paths = {}
    for code, name in enumerate(names):
        nv, ns = max(n_vector // len(names), 1), max(n_scalar // len(names), 1)
        p = {**{k: v[:nv] for k, v in params.items()}, "path": np.full(nv, code, dtype=np.int8)}
        t_v, t_s = _speed(p, ns, prof)
        paths[name] = dict(states_per_s=nv / t_v, ratio=(nv / t_v) / (ns / t_s))
    return dict(vector_states=n_vector, vector_s=tv, vector_states_per_s=n_vector / tv,
                vector_cold_s=t_cold, vector_cold_states_per_s=n_vector / t_cold,
                scalar_states=n_scalar, scalar_s=ts, scalar_states_per_s=n_scalar / ts,
                ratio=(n_vector / tv) / (n_scalar / ts), outputs=len(keys),
                max_rel_diff=float(rel.max()) if rel.size else 0.0, paths=paths)
