"""Seed rows, leave one out: the profile's fitted constants refitted without a row's own source (or without the
row), the row then predicted; and, for the calibration itself, rows minus fitted constants per subsystem.

A row of the left-out source is *predicted* when every fitted constant it depends on is still determined
by the other sources (linear estimability: its gradient lies in the span of the other rows' gradients,
:func:`_not_estimable`), and otherwise labelled as not predictable out of sample (its constants come only
from its own source).  Seeds that quote the same measurement form one source (:func:`source_groups`); rows
that restate others (:data:`RESTATED`) are left out on both sides.  :func:`in_sample_dof` gives the
calibration's degrees of freedom and labels the subsystems whose rows are reproduced by construction.
The rows: the seed threads (``skbmodel.evidence.validation.ROWS``, docs/validation.md).
"""
from __future__ import annotations

import numpy as np

from ...machine.profile import Profile, load_profile, own_names
from .. import calibration, userfit, seed_checks, validation
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs, num, subsystem_of, summary_rows
from ..observations import seed_observations

NAME = "seed-rows"
TITLE = "seed rows with their source (or the row) left out, and the calibration's degrees of freedom"

def source_groups() -> dict[str, str]:
    """``{row id: source}``; seeds that quote the same measurement (``004 / 000``) form one source."""
    obs = seed_observations()
    parent: dict[str, str] = {}

    def find(a):
        while parent.setdefault(a, a) != a:
            a = parent[a]
        return a
    for o in obs.values():
        files = [f.strip().split(" ")[0] for f in o.seed.split("/") if f.strip()]
        for f in files:
            parent[find(f)] = find(files[0])
    label: dict[str, list[str]] = {}
    for f in list(parent):
        label.setdefault(find(f), []).append(f[:3])
    names = {root: "seed " + " + ".join(sorted(set(v))) for root, v in label.items()}
    return {rid: names[find(o.seed.split("/")[0].strip().split(" ")[0])] for rid, o in obs.items()}


def free_names(profile_id: str) -> list[str]:
    """The constants the calibration fits in this profile's own file (a child inherits the rest)."""
    prof = load_profile(profile_id)
    own = own_names(profile_id)
    return [n for n in own if prof.constants[n].kind == "fitted"]


def _not_estimable(j_train: np.ndarray, g: np.ndarray, names: list[str], tol: float = 1e-6) -> list[str]:
    """Constants along which a row's gradient ``g`` leaves the row space of ``j_train``.

    A prediction is out of sample only if the training rows determine the combination of constants
    it depends on (linear estimability): ``g`` must lie in the span of the training rows' gradients.
    """
    if not np.any(g):
        return []
    if j_train.size == 0:
        return [n for n, gi in zip(names, g) if gi]
    _u, sv, vt = np.linalg.svd(j_train, full_matrices=False)
    rank = int(np.sum(sv > sv.max() * 1e-8)) if sv.size else 0
    proj = vt[:rank].T @ (vt[:rank] @ g)
    rest = g - proj
    if np.linalg.norm(rest) <= tol * max(np.linalg.norm(g), 1e-12) + 1e-9:
        return []
    return [n for n, r in zip(names, rest) if abs(r) > 1e-3 * np.abs(rest).max()]


def leave_one_row_out(profiles: dict[str, Profile] | None = None) -> list[dict]:
    """Each covered seed row predicted with the constants refitted on every other row.

    Same record as :func:`leave_one_source_out`; a row is predicted only if the other rows still
    determine what it depends on (rows that restate others are left out on both sides, so that a
    row is never predicted from its own copy in another unit).
    """
    return _leave_out(profiles, lambda s: s.id, "the other rows")


def _leave_out(profiles, key, others: str) -> list[dict]:
    profiles = profiles or {}
    specs = [s for s in seed_checks.ROWS if s.tol_kind != "exact" and s.id not in RESTATED]
    out = []
    for pid in sorted({s.profile for s in specs}):
        prof = profiles.get(pid) or load_profile(pid)
        rows = [s for s in specs if s.profile == pid]
        names = free_names(pid)
        # rows per tolerance, constants per 1 %: estimability does not depend on either scale
        jac = userfit.jacobian(prof, rows, names, relative=True)
        for src in sorted({key(s) for s in rows}):
            held = [i for i, s in enumerate(rows) if key(s) == src]
            train = [i for i in range(len(rows)) if i not in held]
            j_train = jac[train]
            constrained = [n for j, n in enumerate(names) if np.any(j_train[:, j])]
            refit = prof
            if train and constrained:
                refit, _ = calibration.fit_profile(prof, [rows[i] for i in train], free=constrained)
            on_bound = [n for n in constrained if userfit.bound_hit(refit, n)]
            preds = validation.predict_rows([rows[i] for i in held], {pid: refit})
            for i, p in zip(held, preds):
                s = rows[i]
                m, unit = validation.measured_of(s)
                missing = _not_estimable(j_train, jac[i], names)
                missing += [n for j, n in enumerate(names) if n in on_bound and jac[i, j] and n not in missing]
                rec = dict(id=s.id, subsystem=subsystem_of(s.output), left_out=src, profile=pid, measured=m,
                           predicted=float(p), unit=unit, rel_error=float((p - m) / m) if m else 0.0)
                if missing:
                    # no number: a constant the other rows leave free (or pin to a bound) sets it, and
                    # any digit would be the optimiser's, not the model's
                    rec.update(predicted=None, rel_error=None, status="not predictable",
                               why=f"{others} do not determine {', '.join(missing)}"
                                   + (" (the refit ends on a bound)" if set(missing) & set(on_bound) else ""))
                else:
                    rec.update(status="predicted", why="")
                out.append(rec)
    return out


def leave_one_source_out(profiles: dict[str, Profile] | None = None) -> list[dict]:
    """Each covered seed row predicted with the constants refitted without its own source.

    Returns one dict per row: id, subsystem, left_out (the source), measured, predicted, unit,
    rel_error and ``status``: ``"predicted"``, or ``"not predictable"`` with ``why`` naming the
    constants that the other sources do not determine (:func:`_not_estimable`, or a refit that ends
    on a bound).  Exact rows (kernel constants, inputs) and rows that restate others are left out.
    """
    group = source_groups()
    return _leave_out(profiles, lambda s: group[s.id], "the other sources")


#: seed rows that restate other rows: the same measurement in another unit, or arithmetic on others
RESTATED = {"kfl-02": "kfl-01 in ns", "kfl-04": "kfl-03 in ns", "kfl-05": "kfl-01 minus kfl-03",
            "kfl-08": "kfl-06 and kfl-07 as a time saving", "cpm-02": "the same rate as cpm-01",
            "cpm-04": "cpm-03 minus cpm-05", "cpm-07": "cpm-06 minus cpm-08"}


def in_sample_dof(profiles: dict[str, Profile] | None = None) -> list[dict]:
    """Per subsystem: independent seed rows, the fitted constants they determine, degrees of freedom.

    Rows that restate others (:data:`RESTATED`) do not count.  A constant belongs to the subsystems
    whose rows determine it in the calibration's stage that fits it (microbenchmark rows first,
    then the system rows with the microbenchmark constants fixed, :func:`calibration.fit_profile`).
    ``by_construction`` is true when the rows are no more than the constants: the fit then
    reproduces them whatever the model says, and they are no validation.
    """
    profiles = profiles or {}
    specs = [s for s in seed_checks.ROWS if s.tol_kind != "exact"]
    per_sub: dict[str, dict] = {}
    for pid in sorted({s.profile for s in specs}):
        prof = profiles.get(pid) or load_profile(pid)
        rows = [s for s in specs if s.profile == pid]
        names = free_names(pid)
        sens = calibration.row_sensitivity(prof, rows, names)
        micro = np.array([s.microbenchmark for s in rows])
        for i, s in enumerate(rows):
            d = per_sub.setdefault(subsystem_of(s.output), dict(rows=[], restated=[], constants=set()))
            d["restated" if s.id in RESTATED else "rows"].append(s.id)
        for j, n in enumerate(names):
            stage = micro if np.any(sens[micro, j]) else ~micro
            for i in np.flatnonzero(sens[:, j] & stage):
                per_sub[subsystem_of(rows[i].output)]["constants"].add(n)
    out = []
    for sub, d in sorted(per_sub.items()):
        n_rows, n_const = len(d["rows"]), len(d["constants"])
        out.append(dict(subsystem=sub, rows=n_rows, row_ids=d["rows"], restated=d["restated"],
                        fitted_constants=sorted(d["constants"]), dof=n_rows - n_const,
                        by_construction=n_rows <= n_const))
    return out


def run(inputs: Inputs) -> dict:
    loso = leave_one_source_out(inputs.profiles)
    loro = leave_one_row_out(inputs.profiles)
    acc: dict[tuple[str, str], list[float]] = {}
    for rows, protocol in ((loso, "seed rows, source left out"), (loro, "seed rows, row left out")):
        for r in rows:
            if r["status"] == "predicted":
                acc.setdefault((r["subsystem"], protocol), []).append(abs(r["rel_error"]))
    return dict(summary=summary_rows(acc), loso=loso, loro=loro, in_sample=in_sample_dof(inputs.profiles))


def format(rep: dict) -> list[str]:
    lines = []
    for title, key in (("Seed rows, leave one source out", "loso"), ("Seed rows, leave one row out", "loro")):
        lines += ["", title, "", "| row | subsystem | left out | measured | predicted | unit | error | status |",
                  "|---|---|---|---:|---:|---|---:|---|"]
        for r in rep[key]:
            err = f"{r['rel_error'] * 100:+.1f} %" if r["status"] == "predicted" else "—"
            status = r["status"] + (f": {r['why']}" if r["why"] else "")
            lines.append(f"| {r['id']} | {r['subsystem']} | {r['left_out']} | {num(r['measured'])} | "
                         f"{num(r['predicted'])} | {r['unit']} | {err} | {status} |")
    lines += ["", "In sample (the calibration itself): rows minus fitted constants", "",
              "| subsystem | independent rows | fitted constants they determine | degrees of freedom | |",
              "|---|---:|---|---:|---|"]
    for d in rep["in_sample"]:
        label = "reproduced by construction, not a validation" if d["by_construction"] else ""
        lines.append(f"| {d['subsystem']} | {d['rows']} | {', '.join(d['fitted_constants']) or '—'} | {d['dof']} | "
                     f"{label} |")
    return lines
