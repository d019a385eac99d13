"""Whole-path rates: published packet rates [Mpps] of the seed labs' setups on other kernels, each predicted
by its lab's profile moved to the row's kernel.

A thin protocol over :mod:`skbmodel.evidence.era_validation`: :func:`~skbmodel.evidence.era_validation.rate_points`
(:data:`~skbmodel.evidence.era_validation.RATE_POINTS`; the kernel-era code paths follow the kernel, the costs
keep their values and gain the kernel drift; the dashboard's 90 % interval, and the naive prediction: the
lab's seed value carried over), and the runs it leaves out with the reason
(:func:`~skbmodel.evidence.era_validation.rates_left_out`).
"""
from __future__ import annotations

from .. import era_validation
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs

NAME = "rates"
TITLE = "published whole-path rates, each predicted in its own run's scenario"


def run(inputs: Inputs) -> dict:
    rates = era_validation.rate_points(inputs.df)
    return dict(summary=era_validation.summarise_rates(rates),
                rates=dict(points=rates, left_out=era_validation.rates_left_out(inputs.df)))


def format(rep: dict) -> list[str]:
    rates = rep.get("rates", {})
    return era_validation.format_rates(rates.get("points", []), rates.get("left_out", []))
