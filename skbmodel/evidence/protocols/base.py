"""What every out-of-sample protocol shares: its inputs, the summary row it reports, the report's number format.

A protocol (one module of :mod:`skbmodel.evidence.protocols`) has one shape, after Kerncraft's
``kerncraft/models/`` (each model owns its options and its report):

* ``NAME``, ``TITLE``: the name ``validate --out-of-sample --protocol NAME`` selects it by, and one line
  saying what it predicts from what;
* ``run(inputs) -> dict``: its part of the report (:func:`skbmodel.evidence.outofsample.report`), in the
  report's keys; ``summary`` (rows of :func:`summary_rows`: points, MAPE and max |error| [fraction] per
  subsystem) and ``coverage`` (per group, the share of measured points inside their 90 % intervals) are
  the two tables every protocol adds to;
* ``format(rep) -> list[str]``: its section of the text report, read from the whole (rounded) report;
* ``add_arguments(group)``: its own options on the ``validate`` command (an ``argparse`` argument group);
  :func:`add_arguments` here for a protocol that has none.

Errors are relative, ``(predicted - measured) / measured``; a number in the text report is printed as the
report holds it, rounded to :data:`SIG_FIGS` significant figures.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np

from ... import schema
from ...machine.profile import Profile

#: subsystem of a seed row's kernel constant (``const:``) or state condition (``state:``)
_NON_OUTPUT_SUBSYSTEM = {"const": "kernel", "state": "kernel"}
#: subsystem of each section of outputs (the part before the dot), from the output schema
_SECTION_SUBSYSTEM = {o.name.split(".", 1)[0]: o.subsystem for o in schema.OUTPUTS}
#: significant figures of a computed number in the report: the model predicts to a few per cent
#: and the fits stop at a tolerance, so a fourth digit is noise (it differs between numpy/BLAS builds)
SIG_FIGS = 3


@dataclasses.dataclass
class Inputs:
    """What a protocol runs on: the public corpus (``df``, :func:`skbmodel.evidence.corpus.load_corpus`),
    the profiles to use instead of the shipped ones (``{profile id: Profile}``, None: the shipped ones) and
    the ``validate`` command's options (``args``, None: every protocol's defaults)."""
    df: object
    profiles: dict[str, Profile] | None = None
    args: object = None
    _shared: dict = dataclasses.field(default_factory=dict, repr=False)

    def option(self, name: str, default=None):
        """The value of a protocol's own option (its ``dest``), ``default`` when not given."""
        value = getattr(self.args, name, None)
        return default if value is None else value

    def shared(self, name: str, compute):
        """``compute(self)``, once for every protocol that reads it under ``name`` (the corpus curves fitted on
        three points: the curves' own protocol and the differences between them)."""
        if name not in self._shared:
            self._shared[name] = compute(self)
        return self._shared[name]


def add_arguments(group) -> None:
    """A protocol without options of its own adds nothing to its argument group."""


def subsystem_of(output: str) -> str:
    """Subsystem a model output belongs to (``slub.bulk_cycles`` -> ``slub``; :mod:`skbmodel.schema`)."""
    if output in schema.BY_NAME:
        return schema.BY_NAME[output].subsystem
    prefix = re.split(r"[.:]", output, maxsplit=1)[0]
    return _NON_OUTPUT_SUBSYSTEM.get(prefix) or _SECTION_SUBSYSTEM.get(prefix, "other")


def unit_of(unit: str) -> str:
    """A corpus row's unit as the model's: ``cycles(tsc)`` and the like are ``cycles``."""
    u = unit.strip()
    return "cycles" if u.startswith("cycles") else u


def summary_rows(errors: dict[tuple[str, str], list[float]]) -> list[dict]:
    """Summary rows from ``{(subsystem, protocol): [|relative error| of each point predicted]}``: points, MAPE
    (the mean) and max |error|, sorted by subsystem and protocol; a key without points gives no row."""
    return [dict(subsystem=k[0], protocol=k[1], points=len(v), mape=float(np.mean(v)), max_error=float(np.max(v)))
            for k, v in sorted(errors.items()) if v]


def pct(x: float | None) -> str:
    """A fraction as a per cent with one decimal, ``—`` for none or NaN."""
    return "—" if x is None or x != x else f"{x * 100:.1f} %"


def num(x: float | None) -> str:
    """A value as the report holds it (rounded already): no exponent, no digits it does not have."""
    if x is None or x != x:
        return "—"
    return f"{x:.0f}" if abs(x) >= 1e4 else f"{x:.{SIG_FIGS + 3}g}"
