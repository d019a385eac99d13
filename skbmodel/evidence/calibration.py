"""Fit the ``fitted`` constants of the CPU profiles to the seed rows and write the profiles.

Objective: the tolerance-normalised residuals ``z_i = (pred_i - meas_i) / tol_i`` of the rows of
:mod:`skbmodel.evidence.validation`.  Levenberg-Marquardt (numpy only, finite-difference Jacobian, box
bounds by clipping) minimises ``sum z_i^2``; then least ``p``-th powers ``sum |z_i|^p`` for ``p`` = 4, 8, 16 move the
solution towards the minimax (Chebyshev) fit, since every tolerance is a band on the worst row, not on the average.

The model is evaluated for all rows of a profile in one vectorised call per Jacobian column.
Order: ``e5-1650v4`` first (SLUB, zeroing, veth, kfree_skb_list, NAPI rows), then
``xeon-platinum-iavf`` (cpumap rows) on top of the refitted parent; the parent's cpumap
constants, which have no measurement of their own, take the child's fitted cycles carried to the
parent's CPU (:func:`skbmodel.evidence.derivation.carry.carried_constants`: core cycles, the cross-CPU line as ns).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from ..physics import units
from . import seed_checks, validation
from ..machine.profile import PROFILE_DIR, Profile, listed_constants, load_profile, parse_profile

CHILD_COPIED = ("cpumap_src_base_cycles", "cpumap_dst_stack_cycles", "cpumap_redirect_cycles", "xcpu_line_cycles")


def fd_jacobian(fun, x, h, central: bool = False, f0=None):
    """Finite-difference Jacobian ``d fun_i / d x_j`` [rows x len(x)] of a vectorised ``fun``.

    ``fun`` maps a ``(K, n)`` stack of points to ``(K, rows)``; every column's step (``x + h_j e_j``, and
    ``x - h_j e_j`` when ``central``) is one row of a single call, so the model is evaluated once per
    Jacobian instead of once per column.  Forward differences take ``f0 = fun(x)`` when given.
    """
    x = np.asarray(x, dtype=float)
    if not x.size:
        return np.empty((np.shape(fun(x))[-1], 0))
    h = np.broadcast_to(np.asarray(h, dtype=float), x.shape)
    steps = np.diag(h)
    if central:
        f = fun(np.concatenate([x + steps, x - steps]))
        return ((f[:x.size] - f[x.size:]) / (2 * h[:, None])).T
    f = fun(np.concatenate([x + steps, x[None, :]])) if f0 is None else fun(x + steps)
    base = f[-1] if f0 is None else f0
    return ((f[:x.size] - base) / h[:, None]).T


def least_squares(fun, x0, lo, hi, weights=None, max_iter=100, tol=1e-12):
    """Levenberg-Marquardt for ``min sum w * fun(x)^2`` with ``lo <= x <= hi`` (clipped).

    ``fun`` is vectorised (:func:`fd_jacobian`): a point ``(n,)`` gives ``(rows,)``, a stack ``(K, n)``
    gives ``(K, rows)``.  Returns ``(x, residuals)``.
    """
    x = np.clip(np.asarray(x0, dtype=float), lo, hi)
    w = np.ones_like(fun(x)) if weights is None else np.asarray(weights, dtype=float)
    sw = np.sqrt(w)
    r = fun(x) * sw
    cost = r @ r
    lam = 1e-3
    for _ in range(max_iter):
        h = 1e-6 * np.maximum(np.abs(x), 1.0)
        jac = fd_jacobian(lambda xs: fun(xs) * sw, x, h, f0=r)
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
    z0 = residual_fun(prof, specs, [])(np.array([]))
    for rows, names in fit_stages(prof, specs, free, staged):
        if not names:
            continue
        x0 = np.array([prof.value(n) for n in names])
        lo = np.array([prof.constants[n].bounds[0] if prof.constants[n].bounds else -np.inf for n in names])
        hi = np.array([prof.constants[n].bounds[1] if prof.constants[n].bounds else np.inf for n in names])
        x, _ = minimax_fit(residual_fun(prof, rows, names), x0, lo, hi)
        prof = prof.with_values(dict(zip(names, np.round(x, 4))))
    z1 = residual_fun(prof, specs, [])(np.array([]))
    return prof, [(s.id, float(a), float(b)) for s, a, b in zip(specs, z0, z1)]


def fit_stages(prof: Profile, specs, free, staged: bool = True) -> list[tuple[list, list[str]]]:
    """``[(rows, constants), ...]`` in the order :func:`fit_profile` fits them (see there)."""
    specs = [s for s in specs if s.tol_kind != "exact"]
    free = list(free)
    micro = [s for s in specs if s.microbenchmark]
    if staged and micro and len(micro) < len(specs):
        first = [n for n in free if _depends(prof, micro, n)]
        return [(micro, first), (specs, [n for n in free if n not in first])]
    return [(specs, free)]


# ---------------------------------------------------------------- uncertainty of the fitted constants
#: time_bench prints whole cycles: rounding is uniform on +-0.5 cycle, sd 1/sqrt(12) cycles
TIME_BENCH_ROUNDING_SD = 1.0 / np.sqrt(12.0)
#: run-to-run spread of a time_bench result (relative sd) where the seed states none
TIME_BENCH_REL_SD = 0.01
#: seed 002: per-packet noise of one veth run [ns/packet]
VETH_NOISE_NS = 2.0
#: other system throughputs (pktgen, xdp-bench, netbench): relative sd of one run
SYSTEM_REL_SD = 0.03
_UNCERTAINTY_MARK = "; uncertainty: "


def measurement_sd(spec, value: float, unit: str, ghz: float) -> float:
    """One standard deviation of a measured row [the row's own ``unit``].

    * time_bench microbenchmarks (cycles): ``sqrt(0.29**2 + (0.01 v)**2)`` -- whole-cycle rounding
      (uniform +-0.5 cycle) plus 1 % run-to-run spread; in ns the rounding is ``0.29 / ghz``.
    * veth throughputs: the seed's 2 ns/packet noise, ``sd_Mpps = v**2 * 2e-3`` for a rate ``v`` in Mpps.
    * a row whose tolerance is an absolute band in ns (the kfree_skb_list saving): that band.
    * other system throughputs: 3 % of the value.
    """
    v = abs(float(value))
    if spec.microbenchmark:
        rounding = TIME_BENCH_ROUNDING_SD / ghz if unit == "ns" else TIME_BENCH_ROUNDING_SD
        return float(np.hypot(rounding, TIME_BENCH_REL_SD * v))
    if spec.output.startswith("veth."):
        mpps = float(units.convert(v, unit, "Mpps"))
        return float(units.convert(mpps ** 2 * VETH_NOISE_NS / 1e3, "Mpps", unit))
    if spec.tol_kind == "abs" and unit == "ns":
        return float(spec.tol)
    return SYSTEM_REL_SD * v


#: Seed rows that repeat another row's measurement (another unit, or arithmetic on other rows):
#: they carry no information of their own, so the covariance leaves them out.
REDUNDANT_ROWS = {
    "kfl-02": "kfl-01 in ns (same time_bench line)", "kfl-04": "kfl-03 in ns (same time_bench line)",
    "kfl-05": "kfl-01 - kfl-03", "kfl-08": "computed from kfl-06 and kfl-07",
    "cpm-02": "the same run as cpm-01 (one CPU does everything)",
    "cpm-04": "cpm-03 - cpm-05", "cpm-07": "cpm-06 - cpm-08",
}


def _fit_cov(prof: Profile, specs, names) -> dict:
    """Covariance of ``names`` from the rows ``specs`` they were fitted to (see :func:`fit_covariance`).

    Constants that share no row are independent sub-fits (e.g. SLUB and zeroing): each connected
    group of constants and rows gets its own residual variance and degrees of freedom.
    """
    specs = [s for s in specs if s.tol_kind != "exact" and s.id not in REDUNDANT_ROWS]
    names = list(names)
    x = np.array([prof.value(n) for n in names])
    meas = [validation.measured_of(s) for s in specs]
    m = np.array([v for v, _ in meas])
    sd = np.array([measurement_sd(s, v, u, prof.ghz) for s, (v, u) in zip(specs, meas)])

    predict = validation.RowPredictor(specs, {prof.id: prof})

    def pred(xx):
        return predict({prof.id: _named(names, xx)})
    p0 = pred(x)
    # central differences, in measured units per constant unit
    jac = fd_jacobian(pred, x, 1e-4 * np.maximum(np.abs(x), 1.0), central=True)
    dep = np.abs(jac) * np.maximum(np.abs(x), 1.0) > 1e-9 * np.maximum(np.abs(p0), 1e-12)[:, None]
    k_all = len(names)
    cov = np.zeros((k_all, k_all))
    info = [None] * k_all
    group = list(range(k_all))  # union-find over constants that share a row

    def root(i):
        while group[i] != i:
            i = group[i]
        return i
    for row in dep:
        js = np.flatnonzero(row)
        for j in js[1:]:
            group[root(j)] = root(js[0])
    for g in sorted({root(j) for j in range(k_all)}):
        cols = [j for j in range(k_all) if root(j) == g]
        rows = np.any(dep[:, cols], axis=1)
        jw = jac[np.ix_(rows, cols)] / sd[rows, None]
        rw = (p0[rows] - m[rows]) / sd[rows]
        n, k = int(rows.sum()), len(cols)
        # never below the rows' own precision: with 1-5 degrees of freedom the residual variance
        # alone can be ~0 (mem-01 and mem-02 agree to the cycle, as whole-cycle readings often do)
        s2 = max(float(rw @ rw / (n - k)), 1.0) if n > k else 1.0
        cov[np.ix_(cols, cols)] = s2 * np.linalg.pinv(jw.T @ jw)
        for j in cols:
            info[j] = dict(n=n, k=k, s2=s2, rows=[s.id for s, u in zip(specs, rows) if u])
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = np.where(np.outer(se, se) > 0, cov / np.outer(se, se), 0.0)
    np.fill_diagonal(corr, 1.0)
    return dict(stderr=se, corr=np.clip(corr, -1.0, 1.0), info=info)


def fit_covariance(prof: Profile, specs, names) -> tuple[np.ndarray, np.ndarray]:
    """Standard errors [constant units] and correlation matrix of the fitted constants ``names``.

    Linearised least squares at the optimum: with ``J`` the Jacobian of the rows' predictions
    (measured units) with respect to the constants (constant units), each row scaled by its
    measurement sd ``sigma_i`` (:func:`measurement_sd`, so that rows in different units combine),

    ``cov = s2 * inv(J_w^T J_w)``, ``J_w = J / sigma``, ``s2 = sum(((pred - meas) / sigma)**2) / (n - k)``

    over the ``n`` rows that depend on at least one of the ``k`` constants (rows that only repeat
    another row, :data:`REDUNDANT_ROWS`, left out; constants sharing no row fitted as separate
    groups, each with its own ``n``, ``k`` and ``s2``).  With ``n > k`` the residual variance
    ``s2`` scales the covariance, but never below 1 (the rows' own precision: with so few degrees
    of freedom a residual variance near 0 is luck, not precision); with ``n == k`` (constants
    determined exactly, as for most seed fits) ``s2 = 1``: the rows' own measurement precision.
    For rows of one unit
    and equal ``sigma`` this is ``s2 * inv(J^T J)`` with ``s2`` the residual variance in measured
    units.  Reference: Press et al., *Numerical Recipes*, 3rd ed., section 15.4 (general linear
    least squares, covariance of the parameters); the minimax polish of :func:`minimax_fit` is
    ignored (the optimum is close to the least-squares one within the tolerances).
    """
    res = _fit_cov(prof, specs, names)
    return res["stderr"], res["corr"]


def _uncertainty_text(res: dict, j: int) -> str:
    i = res["info"][j]
    rows = ", ".join(i["rows"])
    how = (f"residual variance of rows {rows} ({i['n']} rows, {i['k']} constants, s2 = {i['s2']:.3g} "
           "in units of the rows' measurement sd, at least 1)" if i["n"] > i["k"] else
           f"rows {rows} determine {i['k']} constant(s) exactly, so their own precision "
           "(time_bench: whole-cycle rounding sd 0.29 cycles and 1 % run-to-run; veth: 2 ns/packet; "
           "other throughputs 3 %)")
    return f"{_UNCERTAINTY_MARK}stderr {res['stderr'][j]:.3g} from the fit's Jacobian, cov = s2 inv(J^T J), {how}"


def _strip_uncertainty(source: str) -> str:
    return source.split(_UNCERTAINTY_MARK)[0]


def with_fit_uncertainty(prof: Profile, specs, free=None, staged: bool = True) -> Profile:
    """``prof`` with ``stderr`` (and the source text saying how) on each fitted constant and the
    correlations among them, stage by stage as :func:`fit_profile` fits them.

    Constants of different stages are uncorrelated here: a later stage takes the earlier stage's
    constants as exact, as the fit does.
    """
    free = list(free or prof.fitted_names())
    consts = dict(prof.constants)
    names_all, blocks = [], []
    for rows, names in fit_stages(prof, specs, free, staged):
        if not names:
            continue
        res = _fit_cov(prof, rows, names)
        for j, n in enumerate(names):
            c = consts[n]
            consts[n] = dataclasses.replace(c, stderr=float(np.round(res["stderr"][j], 6)),
                                            source=_strip_uncertainty(c.source) + _uncertainty_text(res, j))
        names_all += names
        blocks.append(res["corr"])
    corr = np.zeros((len(names_all), len(names_all)))
    i = 0
    for b in blocks:
        corr[i:i + len(b), i:i + len(b)] = b
        i += len(b)
    return dataclasses.replace(prof, constants=consts).with_correlation(names_all, np.round(corr, 6))


def _named(names, x) -> dict:
    """``{name: value}`` of a point ``(n,)``, or ``{name: K values}`` of a stack of points ``(K, n)``."""
    x = np.asarray(x, dtype=float)
    return {n: x[..., j] for j, n in enumerate(names)}


def residual_fun(prof: Profile, specs, names):
    """The normalised residuals of ``specs`` as a function of the constants ``names``: vectorised, a
    point ``(n,)`` gives ``(rows,)`` and a stack ``(K, n)`` gives ``(K, rows)`` in one evaluation."""
    predict = validation.RowPredictor(specs, {prof.id: prof})

    def fun(x):
        return validation.residuals_normalised(specs, predict({prof.id: _named(names, x)}))
    return fun


def _depends(prof: Profile, specs, name: str) -> bool:
    """Whether any row of ``specs`` changes when constant ``name`` moves by 1 %."""
    fun = residual_fun(prof, specs, [name])
    v = prof.value(name)
    moved, at = fun(np.array([[v * 1.01 + 1e-6], [v]]))
    return bool(np.any(np.abs(moved - at) > 1e-9))


def row_sensitivity(prof: Profile, specs, names) -> np.ndarray:
    """Boolean matrix ``[row, name]``: whether row ``i`` changes when constant ``names[j]`` moves by 1 %.

    Used to say which measurements a fitted constant was fitted from.
    """
    specs = list(specs)
    names = list(names)
    out = np.zeros((len(specs), len(names)), dtype=bool)
    if not specs or not names:
        return out
    fun = residual_fun(prof, specs, names)
    x = np.array([prof.value(n) for n in names])
    moved = fun(np.concatenate([x[None, :] + np.diag(x * 0.01 + 1e-6), x[None, :]]))
    return (np.abs(moved[:-1] - moved[-1]) > 1e-9).T


def calibrate(out_dir: Path | str = PROFILE_DIR) -> tuple[dict[str, Profile], list]:
    """Refit the shipped profiles and write them to ``out_dir``; returns ``(profiles, report)``."""
    out_dir = Path(out_dir)
    parent = load_profile(seed_checks.E5)
    child_file = (PROFILE_DIR / f"{seed_checks.PLAT}.toml").read_text()
    rows_e5 = [s for s in seed_checks.ROWS if s.profile == seed_checks.E5]
    rows_pl = [s for s in seed_checks.ROWS if s.profile == seed_checks.PLAT]
    parent, rep1 = fit_profile(parent, rows_e5)
    parent = with_fit_uncertainty(parent, rows_e5)
    child = parse_profile(child_file, origin=seed_checks.PLAT, resolve_parent=lambda _id: parent)
    own_names = list(listed_constants(child_file))
    own_fitted = [n for n in own_names if child.constants[n].kind == "fitted"]
    child, rep2 = fit_profile(child, rows_pl, free=own_fitted)
    child = with_fit_uncertainty(child, rows_pl, free=own_fitted)
    # the parent's cpumap constants follow the child's fit (no cpumap measurement on the parent CPU),
    # carried from the child's CPU as core cycles (the cross-CPU line as ns), with a move's uncertainty
    from ..machine import description  # here: a derivation reads the shipped profiles, which import this module's users
    from .derivation import carry  # here: a derivation reads the shipped profiles, which import this module's users
    carried = carry.carried_constants(description.measured_on(parent.id)[0], parent.ghz, child, CHILD_COPIED)
    parent = dataclasses.replace(parent, constants={**parent.constants, **carried})
    # the child's file keeps only the constants it lists itself; the rest it inherits
    child_out = dataclasses.replace(child, constants={n: child.constants[n] for n in own_names})
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{parent.id}.toml").write_text(parent.to_toml())
    (out_dir / f"{child.id}.toml").write_text(child_out.to_toml())
    return {parent.id: parent, child.id: child}, rep1 + rep2
