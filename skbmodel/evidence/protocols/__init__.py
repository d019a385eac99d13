"""The out-of-sample protocols: each predicts measurements that no fit saw, one module each.

Every protocol has one shape (:mod:`skbmodel.evidence.protocols.base`: ``NAME``, ``TITLE``, ``run``,
``format``, ``add_arguments``), so that the combined report (:func:`skbmodel.evidence.outofsample.report`)
and ``python -m skbmodel validate --out-of-sample`` iterate :data:`PROTOCOLS` and know none of them.  The
order is the text report's: the differences first (what a design review reads), then the curves and the
published points, the leave-one-out studies, the object sizes, the whole-path rates, the seed rows.
"""
from __future__ import annotations

from . import (curves, differences, eras, object_size, other_cpu, other_cpu_costs, other_isa, perf_stages, rates,
               reruns, same_cpu, seed_rows, srso)
from .base import Inputs

PROTOCOLS = (differences, curves, same_cpu, reruns, eras, other_cpu, srso, other_cpu_costs, other_isa, object_size,
             rates, seed_rows, perf_stages)
BY_NAME = {p.NAME: p for p in PROTOCOLS}
#: the protocols whose text comes before the combined summary and coverage tables
LEAD = (differences,)

__all__ = ["BY_NAME", "Inputs", "LEAD", "PROTOCOLS", "add_arguments", "selected"]


def add_arguments(parser) -> None:
    """``--protocol NAME`` (repeatable; default every protocol) and each protocol's own options, in an
    argument group named after it."""
    parser.add_argument("--protocol", action="append", choices=list(BY_NAME), metavar="NAME",
                        help="run only this out-of-sample protocol (repeatable; default all of them, each "
                             "listed below with its own options)")
    for p in PROTOCOLS:
        p.add_arguments(parser.add_argument_group(f"out-of-sample protocol {p.NAME}", p.TITLE))


def selected(names=None) -> tuple:
    """The protocols of ``names`` (``--protocol``) in :data:`PROTOCOLS` order; every protocol for none."""
    return tuple(p for p in PROTOCOLS if not names or p.NAME in names)
