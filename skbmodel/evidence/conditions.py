"""Whether a seed measurement was taken under the conditions of a scenario.

A seed row (:data:`skbmodel.evidence.validation.ROWS`) was measured on one machine (its ``profile``) with
its own parameters: the ones it records (``RowSpec.state``) and, for every other parameter, that
profile's defaults, which are what the row is evaluated with in validation (the measured build's
184 B ``zero_bytes``, 0 % clones, the same NUMA node ...).  A chart draws the scenario's curve; a seed
point belongs on it as a measurement only when

* it was measured on the scenario's machine (:func:`skbmodel.uncertainty.machine`: the same profile, an
  archived version of it or a custom profile built on it; the same CPU model under another kernel
  configuration is another machine), and
* every parameter in which the row's conditions and the scenario differ either is one the chart
  sweeps (its x axis, or a family of lines it draws: ``free``) or does not change the measured
  output.  "Does not change" is the model's own answer, asked on the row's profile: the output with
  the row's conditions against the output with that one parameter set to the scenario's value
  (relative difference below :data:`SAME_REL`).  A clock change moves a rate but not a cycle count,
  so a cycles point stays a measurement at another ``ghz`` while a Mpps point does not.

:func:`matches` is the one rule; every chart, the PNG/SVG export and the HTML report draw seed points
through it (skbview.charts.base.add_seed_points).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping
from functools import lru_cache

import numpy as np

from .. import model
from ..links import state as sk_state
from ..machine.profile import Profile, load_profile
from ..uncertainty import machine

#: two model values closer than this (relative) are one value: a parameter that moves the output less
#: is not a condition of the measurement
SAME_REL = 1e-9
#: parameters that are not conditions of a measurement: the profile itself (compared as a machine)
#: and the clock, which is a property of the profile when the machines differ
_NOT_CONDITIONS = frozenset({"cpu"})


@dataclasses.dataclass(frozen=True)
class Match:
    """The answer of :func:`matches`: ``ok`` when the row is a measurement of the scenario; otherwise
    ``reason`` names the condition it was measured under (``"measured on Intel Xeon E5-1650 v4 (other
    CPU)"``, ``"measured with 0 % cloned skbs in drop list"``), several joined by ``"; "``."""
    ok: bool
    reason: str = ""

    def __iter__(self):  # ``ok, reason = matches(...)``
        return iter((self.ok, self.reason))


def cpu_model(prof: Profile) -> str:
    """The CPU model of a profile's name, without clock, lab or kernel notes
    (``"Intel Xeon E5-1650 v4"`` of ``"Intel Xeon E5-1650 v4 @ 3.60GHz (seed 002/004 test lab)"``)."""
    name = prof.name.split(" (", 1)[0].split(" @ ", 1)[0].split(",", 1)[0]
    return name.strip()


def _conditions(profile_id: str, recorded: tuple) -> dict:
    """Every model parameter of a seed row as it was measured: its profile's defaults, then the
    parameters the row records (``recorded``: the parameters validation evaluates the row with)."""
    return {**model.default_params(profile_id), **dict(recorded)}


def condition_text(key: str, value) -> str:
    """One measurement condition in words: ``"0 % cloned skbs in drop list"``,
    ``"cpumap destination node: same"``, ``"bytes zeroed by memset 184 bytes"``."""
    p = sk_state.PARAMS[key]
    label = p.label.split(" (", 1)[0]
    if p.choices:
        return f"{label}: {p.label_of(value)}"
    if "(fraction)" in p.label:
        return f"{float(value) * 100:g} % {label[0].lower() + label[1:]}"
    unit = f" {p.unit}" if getattr(p, "unit", "") else ""
    return f"{label[0].lower() + label[1:]} {sk_state.fmt_value(value)}{unit}"


def machine_text(row_profile: Profile, scenario_cpu_model: str) -> str:
    """Why a row of another machine is not a measurement of the scenario's (whose CPU model is
    ``scenario_cpu_model``): another CPU, or the same CPU model under another kernel configuration."""
    if cpu_model(row_profile) == scenario_cpu_model:
        return f"measured on {scenario_cpu_model} with {row_profile.configuration_label} (other kernel)"
    return f"measured on {cpu_model(row_profile)} (other CPU)"


def _differing(cond: Mapping, scen: Mapping, free: Mapping) -> list[str]:
    keys = []
    for q in sk_state.MODEL_PARAMS:
        k = q.key
        if k in _NOT_CONDITIONS or k not in scen or k not in cond:
            continue
        if k in free and (free[k] is None or cond[k] in free[k]):
            continue  # the chart draws this parameter's value (an axis or one of its lines)
        a, b = cond[k], scen[k]
        same = a == b if isinstance(a, str) or isinstance(b, str) else math.isclose(float(a), float(b),
                                                                                 rel_tol=SAME_REL)
        if not same:
            keys.append(k)
    return keys


def matches(row, scenario, free: Mapping[str, Collection | None] | None = None) -> Match:
    """
    Whether seed row ``row`` is a measurement of ``scenario``.

    Parameters
    ----------
    row : skbmodel.evidence.seed_checks.RowSpec
        The seed row (its profile, output and recorded parameters).
    scenario : skbmodel.scenario.Scenario
        The scenario (its model parameters ``params``, every one of them, and its CPU ``profile``), as the
        question resolved it.
    free : mapping of parameter -> values or None, optional
        Parameters the chart draws the row at its own value of: ``None`` for an axis (any value),
        a collection for a family of lines (the row's value must be one of them).

    Returns
    -------
    Match
        ``ok`` when the row was measured on the scenario's machine and every other differing parameter
        leaves the row's output unchanged (within :data:`SAME_REL`); else ``reason``, the conditions
        it was measured under, in words.
    """
    return matches_all((row,), scenario, free)[0]


def matches_all(rows, scenario, free: Mapping[str, Collection | None] | None = None) -> list[Match]:
    """:func:`matches` of each of ``rows`` (one vectorised model evaluation per machine of the rows)."""
    free = dict(free or {})
    prof = scenario.profile
    # a parameter the chart draws along (free, any value) is no condition: out of the cache key
    scen = sorted((k, v) for k, v in scenario.params.items() if not (k in free and free[k] is None))
    keys = tuple((r.id, r.profile, r.output, tuple(sorted(r.state.items()))) for r in rows)
    return list(_match_all(keys, machine(prof), cpu_model(prof), tuple(scen),
                           tuple(sorted((k, None if v is None else tuple(v)) for k, v in free.items()))))


@lru_cache(maxsize=1024)
def _match_all(row_keys: tuple, scen_machine: str, scen_cpu_model: str, scen_items: tuple,
               free_items: tuple) -> tuple[Match, ...]:
    """:func:`matches_all` on hashable arguments (a chart asks again on every rerun)."""
    scen = dict(scen_items)
    reasons, conds, keys = [], [], []
    for _id, row_profile, output, row_state in row_keys:
        free = dict(free_items)
        reasons.append([])
        if scen_machine != row_profile:
            reasons[-1].append(machine_text(load_profile(row_profile), scen_cpu_model))
            free.setdefault("ghz", None)  # the clock is the other machine's
        conds.append(_conditions(row_profile, row_state))
        keys.append([] if output.startswith(("const:", "state:")) else _differing(conds[-1], scen, free))
    # per machine of the rows, one evaluation: each row's output at its own conditions and with each
    # differing parameter in turn set to the scenario's value
    for row_profile in {rk[1] for rk, ks in zip(row_keys, keys) if ks}:
        idx = [i for i, rk in enumerate(row_keys) if rk[1] == row_profile and keys[i]]
        entries = [(i, j) for i in idx for j in (None, *keys[i])]
        params = {k: np.array([scen[j] if k == j else conds[i][k] for i, j in entries]) for k in conds[idx[0]]}
        out = model.evaluate(params, load_profile(row_profile), outputs=tuple({row_keys[i][2] for i in idx}))
        at = {e: n for n, e in enumerate(entries)}
        for i in idx:
            y = np.asarray(out[row_keys[i][2]], dtype=float)
            keys[i] = [k for k in keys[i] if not math.isclose(y[at[i, k]], y[at[i, None]], rel_tol=SAME_REL)]
    return tuple(Match(not (r or ks), "; ".join(r + ["measured with " + condition_text(k, c[k]) for k in ks]))
                 for r, c, ks in zip(reasons, conds, keys))
