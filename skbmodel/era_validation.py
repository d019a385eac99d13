"""Out of sample across kernels: each published point predicted by the profile of its CPU and kernel era.

A CPU may have one profile per kernel era (``kernels`` in the profile file, :mod:`skbmodel.era`).
Every single published number of the corpus measured on a CPU that has shipped profiles is given
to the profile whose kernel range holds the number's kernel:

* ``fitted``: the profile's own constants cite the row's series -- reproduced, not a prediction;
* ``predicted``: any other row (another run, another test, another kernel of the era): the
  out-of-sample figure.  Next to it, what the default profile (``e5-1650v4`` era of 2021-2023
  kernels, the model as shipped before eras) predicts for the same point;
* left out, with the reason: no profile's range holds the kernel, the kernel cannot be read, or
  the run used another kernel configuration (debug options) than any profile describes.
"""
from __future__ import annotations

import numpy as np

from . import era, model, parsers, validation
from .profile import DEFAULT_PROFILE, Profile, available_profiles, load_profile

#: the CPU each shipped profile describes, as corpus rows name it
PROFILE_CPUS = {
    "e5-1650v4": "E5-1650 v4", "e5-1650v4-2025": "E5-1650 v4", "i7-4790k": "i7-4790K",
    "xeon-gold-6140": "Gold 6140", "xeon-platinum-8481c": "Platinum 8481C",
}
#: words of a row's kernel description that mark a configuration no profile describes
OTHER_CONFIG = ("debug",)


def protocol(pid: str) -> str:
    """The summary's protocol name for the points an era profile predicts."""
    return f"era profile {pid}"


def _unit(unit: str) -> str:
    u = str(unit).strip()
    return "cycles" if u.startswith("cycles") else u


def row_kernel(row) -> str | None:
    """The row's mainline kernel: from its ``kernel`` text, else from the date of its ``source``."""
    return era.kernel_of(row.kernel) or era.kernel_of(row.source)


def _predict(prof: Profile, output: str, unit: str) -> float:
    out = model.evaluate({}, prof)[output]
    return float(validation.to_measured_unit(out, model.OUTPUT_UNITS[output], unit, prof.ghz))


def era_points(df) -> list[dict]:
    """One record per single published point on a profiled CPU: which era profile it belongs to,
    whether that profile was fitted to it, its prediction and error, and the default profile's."""
    profiles = {pid: load_profile(pid) for pid in PROFILE_CPUS if pid in available_profiles()}
    default = load_profile(DEFAULT_PROFILE)
    out = []
    for r in df[(df["x_name"] == "") & df["output"].isin(list(model.OUTPUT_UNITS))].itertuples(index=False):
        cands = [pid for pid, cpu in PROFILE_CPUS.items() if pid in profiles and cpu in r.cpu]
        if not cands:
            continue
        unit = _unit(r.unit)
        if not parsers.compatible(r.output, unit):
            continue
        kernel = row_kernel(r)
        rec = dict(id=r.id, output=r.output, cpu=r.cpu, kernel_text=r.kernel, kernel=kernel, measured=float(r.value),
                   unit=unit, subsystem=r.subsystem, profile=None, kernels=None, role="left out", why="",
                   predicted=None, rel_error=None, default_predicted=None, default_rel_error=None)
        text = str(r.kernel).lower()
        inside = [pid for pid in cands if era.in_range(kernel, profiles[pid].kernels)]
        if any(w in text for w in OTHER_CONFIG):
            rec["why"] = "another kernel configuration (debug options) than any profile describes"
        elif kernel is None:
            rec["why"] = "the kernel is not stated"
        elif not inside:
            rec["why"] = (f"kernel {kernel}: no profile of this CPU covers it ("
                          + ", ".join(f"{p} {'..'.join(profiles[p].kernels)}" for p in cands) + ")")
        else:
            pid = inside[0]
            prof = profiles[pid]
            cited = " ".join(c.source for c in prof.constants.values() if c.name in _own(pid))
            pred = _predict(prof, r.output, unit)
            dpred = _predict(default, r.output, unit)
            rec.update(profile=pid, kernels=list(prof.kernels), predicted=pred,
                       rel_error=(pred - rec["measured"]) / rec["measured"], default_predicted=dpred,
                       default_rel_error=(dpred - rec["measured"]) / rec["measured"],
                       role="fitted" if r.series in cited else "predicted")
        out.append(rec)
    return out


def _own(pid: str) -> set[str]:
    """Constants a profile's own file sets (not inherited)."""
    prof = load_profile(pid)
    if not prof.inherits:
        return set(prof.constants)
    parent = load_profile(prof.inherits)
    return {k for k, c in prof.constants.items() if parent.constants.get(k) != c}


def summarise(points: list[dict]) -> list[dict]:
    """Per subsystem and era profile: the predicted points' MAPE and max |error|, and the default
    profile's MAPE on the same points (``default_mape``)."""
    acc: dict[tuple[str, str], list[dict]] = {}
    for p in points:
        if p["role"] == "predicted":
            acc.setdefault((p["subsystem"], p["profile"]), []).append(p)
    out = []
    for (sub, pid), ps in sorted(acc.items()):
        e = np.abs([p["rel_error"] for p in ps])
        d = np.abs([p["default_rel_error"] for p in ps])
        out.append(dict(subsystem=sub, protocol=protocol(pid), profile=pid, points=len(ps), mape=float(np.mean(e)),
                        max_error=float(np.max(e)), default_mape=float(np.mean(d)),
                        fitted_to=sorted(q["id"] for q in points if q["profile"] == pid and q["role"] == "fitted"),
                        predicted=[q["id"] for q in ps]))
    return out


def format_points(points: list[dict]) -> list[str]:
    """Markdown table lines of :func:`era_points` (the report's section)."""
    lines = ["| row | CPU kernel | profile (kernels) | role | measured | predicted | error | default profile |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    for p in points:
        if p["profile"] is None:
            lines.append(f"| {p['id']} | {p['kernel'] or '?'} | — | left out: {p['why']} | {p['measured']:.6g} | — | "
                         "— | — |")
            continue
        lines.append(f"| {p['id']} | {p['kernel']} | {p['profile']} ({'..'.join(p['kernels'])}) | {p['role']} | "
                     f"{p['measured']:.6g} | {p['predicted']:.6g} | {p['rel_error'] * 100:+.1f} % | "
                     f"{p['default_predicted']:.6g} ({p['default_rel_error'] * 100:+.1f} %) |")
    return lines
