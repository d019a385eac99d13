"""Kernel configuration, SRSO return thunk: the EPYC 9684X's runs booted with SRSO's safe-RET return thunk,
predicted from the same kernel's ``spec_rstack_overflow=ibpb`` run.

A thin protocol over :mod:`skbmodel.machine.kconfig`: the ibpb run plus the kernel function returns of each
loop, counted in the v6.13 source (``skbmodel.machine.kconfig.RETURNS_V613``, bracketed over the compiler's
inlining choices), times the run's own price of one return [TSC cycles] (its time_bench_sample function
call, 14 - 3 cycles); naive: the ibpb run unchanged.
"""
from __future__ import annotations

from ...machine import kconfig
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs

NAME = "srso"
TITLE = "runs under SRSO's safe-RET return thunk, predicted from the same kernel's ibpb run"


def run(inputs: Inputs) -> dict:
    srso = kconfig.srso_predictions(inputs.df)
    return dict(summary=kconfig.summarise_srso(srso), srso=srso)


def format(rep: dict) -> list[str]:
    lines = ["", "Kernel configuration (protocol \"kernel config (SRSO return thunk)\"): the EPYC 9684X's runs "
             "booted with SRSO's safe-RET return thunk, predicted as the same kernel's spec_rstack_overflow=ibpb run "
             "plus the kernel function returns of each loop, counted in the v6.13 source "
             "(`skbmodel.machine.kconfig.RETURNS_V613`, "
             "bracketed over the compiler's inlining choices), times the run's own price of one return (its "
             "time_bench_sample function call, 14 - 3 cycles); naive: the ibpb run unchanged.  The spinlock row "
             "checks the count and is not in the figures.", ""]
    return lines + kconfig.format_srso(rep["srso"])
