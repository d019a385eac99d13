"""Each covered seed row, evaluated under that row's own conditions, against its measurement.

Tolerances (what "reproduces the row" means): microbenchmark cycles and ns +-5 %, throughputs +-3 %, every veth row
within +-2 ns/packet, the kfree_skb_list saving within the 2 ns noise floor, constants exactly,
and cpumap drops must equal src - dst exactly (and match the measured drops within 3 %).

Not every row is evidence.  Each carries its kind (:func:`evidence_of_rows`):

* ``predicted``: the model had freedom to miss it (its subsystem has more independent rows than
  fitted constants);
* ``reproduced by construction``: its subsystem's rows are no more than the constants fitted to
  them (0 degrees of freedom), so the fit reproduces them whatever the model says;
* ``restates an input``: a profile constant, a state default or an input returned unchanged.
"""
from __future__ import annotations

import functools
import json

import numpy as np

from .. import folders, model
from ..physics import units
from .observations import seed_observations
from ..machine.profile import Profile, available_profiles, load_profile

from .seed_checks import ROWS, RowSpec

#: Seed rows the model does not cover, and why.
NOT_COVERED = {
    "kfl-09": "pktgen through the driver TX path (no drops): the model has no driver TX cost",
    "kfl-10": "per-queue pktgen scaling: multi-queue TX is outside the model",
    "kfl-12": "an input condition (flow control on the wire), used as constant kfl_wire_kpps",
    "mem-c1": "188 B was a mis-statement in the thread; the measured build's 184 B is the zero_bytes default",
}

UNIT_OF_OUTPUT = {"const:slub_object_bytes": "bytes", "const:slub_slab_bytes": "bytes",
                  "state:kfl_bulk": "objects", "state:drop_batch": "packets"}


def _output_unit(spec: RowSpec) -> str:
    return UNIT_OF_OUTPUT.get(spec.output) or model.OUTPUT_UNITS[spec.output]


def measured_of(spec: RowSpec) -> tuple[float, str]:
    """``(value, unit)`` a row is compared with: given directly, or the seed observation ``id``."""
    if spec.measured is not None:
        return float(spec.measured), str(spec.unit)
    o = seed_observations()[spec.id]
    return o.value, o.unit


def to_measured_unit(v, out_unit: str, unit: str, ghz):
    """Convert a prediction to the measured unit; cycles and ns convert with the profile clock."""
    if out_unit == "cycles" and unit == "ns":
        return units.cycles_to_ns(v, ghz)
    if out_unit == "ns" and unit == "cycles":
        return units.ns_to_cycles(v, ghz)
    return units.convert(v, out_unit, unit)


class RowPredictor:
    """The rows ``specs`` made ready for repeated prediction (a fit calls it hundreds of times): each
    profile's states stacked once, the outputs the rows read, their measured units.

    Call it with ``constants`` (``{profile id: {name: value}}``, see :func:`predict_rows`) for the
    predictions in the rows' measured units.
    """

    def __init__(self, specs, profiles: dict[str, Profile] | None = None):
        self.specs = list(specs)
        profiles = profiles or {}
        self.groups = []
        by_profile: dict[str, list[int]] = {}
        for i, s in enumerate(self.specs):
            by_profile.setdefault(s.profile, []).append(i)
        for pid, idx in by_profile.items():
            prof = profiles.get(pid) or load_profile(pid)
            keys = {k for i in idx for k in self.specs[i].state}
            base = _base_state(pid)
            base["ghz"] = prof.value("ghz")
            params = {k: np.array([self.specs[i].state.get(k, base[k]) for i in idx]) for k in set(base) | keys}
            outputs = {self.specs[i].output for i in idx} - set(UNIT_OF_OUTPUT)
            units_of = [(_output_unit(self.specs[i]), measured_of(self.specs[i])[1]) for i in idx]
            self.groups.append((pid, prof, idx, params, outputs, units_of, "ghz" in keys))

    def __call__(self, constants: dict[str, dict] | None = None) -> np.ndarray:
        constants = constants or {}
        sets = {np.size(v) for c in constants.values() for v in c.values() if np.ndim(v)}
        if len(sets) > 1:
            raise ValueError(f"predict_rows: constant sets of different lengths {sorted(sets)}")
        lead = (sets.pop(),) if sets else ()
        preds = np.empty(lead + (len(self.specs),))
        for pid, prof, idx, params, outputs, units_of, own_ghz in self.groups:
            given = constants.get(pid, {})
            cvals = {**prof.values(), **{k: (np.reshape(v, (-1, 1)) if np.ndim(v) else v) for k, v in given.items()}}
            if not own_ghz and "ghz" in given:
                params = {**params, "ghz": np.broadcast_to(cvals["ghz"], lead + (len(idx),))}
            # one vectorised evaluation for all rows of this profile, of the outputs they read only
            out = model.evaluate(params, prof, constants=cvals, outputs=outputs) if outputs else {}
            for j, i in enumerate(idx):
                o = self.specs[i].output
                if o.startswith("const:"):
                    v = np.reshape(cvals[o[6:]], lead or ())
                elif o.startswith("state:"):
                    v = params[o[6:]][..., j]
                else:
                    v = out[o][..., j]
                preds[..., i] = to_measured_unit(v, *units_of[j], params["ghz"][..., j])
        return preds


def predict_rows(specs, profiles: dict[str, Profile] | None = None, constants: dict[str, dict] | None = None):
    """Predicted value of each row in the row's *measured* unit: an array, one per spec.

    A constant of ``constants`` may be a 1-D array of ``K`` values (the same length for all): the rows
    are then predicted for each of the ``K`` constant sets in the one vectorised evaluation per profile
    (:func:`skbmodel.model.evaluate` broadcasts a ``(K, 1)`` constant against the rows), and the result
    is ``(K, len(specs))``.  A fit's finite-difference Jacobian is one such call.
    """
    return RowPredictor(specs, profiles)(constants)


@functools.lru_cache(maxsize=64)
def _base_state_cached(pid: str, shipped: bool) -> dict:
    return model.default_params(pid if shipped else None)


def _base_state(pid: str) -> dict:
    """The default state of profile ``pid`` (a profile that is not shipped: the default profile's)."""
    return dict(_base_state_cached(pid, pid in available_profiles()))


def residuals_normalised(specs, preds):
    """Residual / tolerance for each row (|x| <= 1 means within tolerance); ``preds`` may carry a leading
    axis of constant sets (:func:`predict_rows`)."""
    preds = np.asarray(preds, dtype=float)
    out = np.empty(preds.shape)
    for i, s in enumerate(specs):
        m, m_unit = measured_of(s)
        p = preds[..., i]
        if s.tol_kind == "rel":
            out[..., i] = (p - m) / (abs(m) * s.tol)
        elif s.tol_kind == "abs_ns":
            # compare time per packet: 1e3/Mpps
            mn = units.mpps_to_ns(units.convert(m, m_unit, "Mpps"))
            pn = units.mpps_to_ns(units.convert(p, m_unit, "Mpps"))
            out[..., i] = (pn - mn) / s.tol
        elif s.tol_kind == "abs":
            out[..., i] = (p - m) / s.tol
        else:
            out[..., i] = np.where(np.isclose(p, m, rtol=1e-12, atol=1e-12), 0.0, np.where(p > m, np.inf, -np.inf))
    return out


#: kinds of evidence a row gives, strongest first
EVIDENCE_KINDS = ("predicted", "reproduced by construction", "restates an input")

def evidence_of_rows(in_sample: list[dict] | None = None) -> dict[str, str]:
    """``{row id: kind}`` (:data:`EVIDENCE_KINDS`) for every row of :data:`ROWS`.

    ``in_sample``: the per-subsystem degrees of freedom (``skbmodel.evidence.protocols.seed_rows.in_sample_dof``),
    by default those of the committed out-of-sample report (:data:`skbmodel.folders.REPORT_JSON`).  An
    exact row restates an input; a row (or a row that restates it in another unit) of a subsystem with no
    degree of freedom is reproduced by construction; every other row is predicted.
    """
    if in_sample is None:
        in_sample = json.loads(folders.REPORT_JSON.read_text())["in_sample"]
    built = {i for d in in_sample if d["by_construction"] for i in (*d["row_ids"], *d["restated"])}
    return {s.id: ("restates an input" if s.tol_kind == "exact" else
                   "reproduced by construction" if s.id in built else "predicted") for s in ROWS}


def evidence_counts(rows: list[dict]) -> dict[str, dict]:
    """``{kind: {"rows": n, "ok": n within tolerance}}`` of :func:`validate`'s rows, every kind listed."""
    return {k: dict(rows=sum(r["evidence"] == k for r in rows), ok=sum(r["evidence"] == k and r["ok"] for r in rows))
            for k in EVIDENCE_KINDS}


def evidence_summary(rows: list[dict]) -> str:
    """One line: the rows within tolerance counted by kind of evidence, predicted first."""
    c = evidence_counts(rows)
    p, b, r = (c[k] for k in EVIDENCE_KINDS)
    return (f"{p['ok']} of {p['rows']} predicted rows within tolerance; {b['ok']} of {b['rows']} reproduced by "
            f"construction (0 degrees of freedom: no evidence); {r['ok']} of {r['rows']} restate an input "
            "(not evidence)")


def seed_rows_line() -> str:
    """The Validation page's line on its seed rows (:func:`evidence_summary` of :func:`validate`)."""
    return evidence_summary(validate())


def validate(profiles: dict[str, Profile] | None = None) -> list[dict]:
    """Every covered row: id, measured, predicted, unit, relative error, tolerance, ok, evidence."""
    specs = list(ROWS)
    preds = predict_rows(specs, profiles)
    norm = residuals_normalised(specs, preds)
    obs = seed_observations()
    pred_of = dict(zip([s.id for s in specs], preds))
    evidence = evidence_of_rows()
    rows = []
    for s, p, z in zip(specs, preds, norm):
        o = obs[s.id]
        ok = bool(abs(z) <= 1.0)
        if s.output == "cpumap.drop_mpps":
            # drops must be the predicted src - dst exactly (the table's own rule)
            src_id, dst_id = {"cpm-04": ("cpm-03", "cpm-05"), "cpm-07": ("cpm-06", "cpm-08")}[s.id]
            ok = ok and bool(np.isclose(p, pred_of[src_id] - pred_of[dst_id], rtol=0, atol=1e-9))
        tol = {"rel": f"±{s.tol * 100:g} %", "abs_ns": f"±{s.tol:g} ns/packet", "abs": f"±{s.tol:g} {o.unit}",
               "exact": "exact"}[s.tol_kind]
        rows.append(dict(id=s.id, system=o.system, quantity=o.quantity, profile=s.profile, measured=o.value,
                         predicted=float(p), unit=o.unit,
                         rel_error=float((p - o.value) / o.value) if o.value else 0.0,
                         tolerance=tol, ok=ok, evidence=evidence[s.id], note=s.note))
    return rows
