"""Fit the ``fitted`` constants of the CPU profiles to the seed rows and write the profiles.

Objective: the tolerance-normalised residuals ``z_i = (pred_i - meas_i) / tol_i`` of the rows of
:mod:`skbmodel.validation`.  Levenberg-Marquardt (numpy only, finite-difference Jacobian, box
bounds by clipping) minimises ``sum z_i^2``; then least ``p``-th powers ``sum |z_i|^p`` for ``p`` = 4, 8, 16 move the
solution towards the minimax (Chebyshev) fit, since every tolerance is a band on the worst row, not on the average.

The model is evaluated for all rows of a profile in one vectorised call per Jacobian column.
Order: ``e5-1650v4`` first (SLUB, zeroing, veth, kfree_skb_list, NAPI rows), then
``xeon-platinum-iavf`` (cpumap rows) on top of the refitted parent; the parent's cpumap
constants, which have no measurement of their own, take the child's fitted cycles.
"""
from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import numpy as np

from . import validation
from .profile import PROFILE_DIR, Profile, load_profile, parse_profile

CHILD_COPIED = ("cpumap_src_base_cycles", "cpumap_dst_stack_cycles", "cpumap_redirect_cycles", "xcpu_line_cycles")


def least_squares(fun, x0, lo, hi, weights=None, max_iter=100, tol=1e-12):
    """Levenberg-Marquardt for ``min sum w * fun(x)^2`` with ``lo <= x <= hi`` (clipped).

    Returns ``(x, residuals)``.
    """
    x = np.clip(np.asarray(x0, dtype=float), lo, hi)
    w = np.ones_like(fun(x)) if weights is None else np.asarray(weights, dtype=float)
    sw = np.sqrt(w)
    r = fun(x) * sw
    cost = r @ r
    lam = 1e-3
    for _ in range(max_iter):
        h = 1e-6 * np.maximum(np.abs(x), 1.0)
        jac = np.empty((r.size, x.size))
        for j in range(x.size):
            xp = x.copy()
            xp[j] += h[j]
            jac[:, j] = (fun(xp) * sw - r) / h[j]
        g = jac.T @ r
        a = jac.T @ jac
        improved = False
        for _ in range(20):
            step = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-12), -g)
            xn = np.clip(x + step, lo, hi)
            rn = fun(xn) * sw
            cn = rn @ rn
            if np.isfinite(cn) and cn < cost:
                improved = cost - cn > tol * max(cost, 1e-30)
                x, r, cost = xn, rn, cn
                lam = max(lam / 3, 1e-12)
                break
            lam *= 4
        if not improved:
            break
    return x, fun(x)


def minimax_fit(fun, x0, lo, hi, powers=(4, 8, 16)):
    """Least squares, then least ``p``-th powers for increasing ``p`` (toward the minimax fit).

    ``sum |z|^p`` is minimised as a least-squares problem in ``sign(z) |z|^(p/2)``; each stage starts
    from the previous solution.  Returns ``(x, z)``.
    """
    x, z = least_squares(fun, x0, lo, hi)
    for p in powers:
        def fun_p(xx, p=p):
            zz = fun(xx)
            return np.sign(zz) * np.abs(zz) ** (p / 2)
        x, _ = least_squares(fun_p, x, lo, hi)
    return x, fun(x)


def fit_profile(prof: Profile, specs, free: list[str] | None = None, staged: bool = True):
    """Fit ``free`` constants (default: every ``fitted`` one) of ``prof`` to ``specs``.

    With ``staged`` (default) the fit runs in two stages: first the constants that the
    microbenchmark rows (time_bench, precise to a cycle) depend on, against those rows only; then
    the remaining constants against all rows.  System throughputs, noisy to ~2 ns, thus never bend
    a constant that a microbenchmark measures directly.

    Returns ``(new_profile, report)``, ``report`` = per-row ``(id, z_before, z_after)``.
    """
    free = list(free or prof.fitted_names())
    specs = [s for s in specs if s.tol_kind != "exact"]
    micro = [s for s in specs if s.microbenchmark]
    z0 = _residual_fun(prof, specs, [])(np.array([]))
    stages = [(specs, free)]
    if staged and micro and len(micro) < len(specs):
        first = [n for n in free if _depends(prof, micro, n)]
        stages = [(micro, first), (specs, [n for n in free if n not in first])]
    for rows, names in stages:
        if not names:
            continue
        x0 = np.array([prof.value(n) for n in names])
        lo = np.array([prof.constants[n].bounds[0] if prof.constants[n].bounds else -np.inf for n in names])
        hi = np.array([prof.constants[n].bounds[1] if prof.constants[n].bounds else np.inf for n in names])
        x, _ = minimax_fit(_residual_fun(prof, rows, names), x0, lo, hi)
        prof = prof.with_values(dict(zip(names, np.round(x, 4))))
    z1 = _residual_fun(prof, specs, [])(np.array([]))
    return prof, [(s.id, float(a), float(b)) for s, a, b in zip(specs, z0, z1)]


def _residual_fun(prof: Profile, specs, names):
    def fun(x):
        preds = validation.predict_rows(specs, {prof.id: prof}, {prof.id: dict(zip(names, x))})
        return validation.residuals_normalised(specs, preds)
    return fun


def _depends(prof: Profile, specs, name: str) -> bool:
    """Whether any row of ``specs`` changes when constant ``name`` moves by 1 %."""
    fun = _residual_fun(prof, specs, [name])
    v = prof.value(name)
    return bool(np.any(np.abs(fun(np.array([v * 1.01 + 1e-6])) - fun(np.array([v]))) > 1e-9))


def row_sensitivity(prof: Profile, specs, names) -> np.ndarray:
    """Boolean matrix ``[row, name]``: whether row ``i`` changes when constant ``names[j]`` moves by 1 %.

    Used to say which measurements a fitted constant was fitted from.
    """
    specs = list(specs)
    names = list(names)
    out = np.zeros((len(specs), len(names)), dtype=bool)
    if not specs or not names:
        return out
    fun = _residual_fun(prof, specs, names)
    x = np.array([prof.value(n) for n in names])
    z = fun(x)
    for j in range(len(names)):
        xp = x.copy()
        xp[j] = x[j] * 1.01 + 1e-6
        out[:, j] = np.abs(fun(xp) - z) > 1e-9
    return out


def calibrate(out_dir: Path | str = PROFILE_DIR) -> tuple[dict[str, Profile], list]:
    """Refit the shipped profiles and write them to ``out_dir``; returns ``(profiles, report)``."""
    out_dir = Path(out_dir)
    parent = load_profile(validation.E5)
    child_file = (PROFILE_DIR / f"{validation.PLAT}.toml").read_text()
    rows_e5 = [s for s in validation.ROWS if s.profile == validation.E5]
    rows_pl = [s for s in validation.ROWS if s.profile == validation.PLAT]
    parent, rep1 = fit_profile(parent, rows_e5)
    child = parse_profile(child_file, origin=validation.PLAT, resolve_parent=lambda _id: parent)
    own_names = _own_names(child_file)
    own_fitted = [n for n in own_names if child.constants[n].kind == "fitted"]
    child, rep2 = fit_profile(child, rows_pl, free=own_fitted)
    # the parent's cpumap constants follow the child's fit (no cpumap measurement on the parent CPU)
    parent = parent.with_values({n: child.value(n) for n in CHILD_COPIED})
    # the child's file keeps only the constants it lists itself; the rest it inherits
    child_out = dataclasses.replace(child, constants={n: child.constants[n] for n in own_names})
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{parent.id}.toml").write_text(parent.to_toml())
    (out_dir / f"{child.id}.toml").write_text(child_out.to_toml())
    return {parent.id: parent, child.id: child}, rep1 + rep2


def _own_names(toml_text: str) -> list[str]:
    return list(tomllib.loads(toml_text).get("constants", {}))
