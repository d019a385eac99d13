"""Other kernel, one profile per era: published points on a profiled CPU, each predicted by the shipped profile
of its kernel era.

A thin protocol over :mod:`skbmodel.evidence.era_validation` (which pairs each corpus row with the profile
of its kernel era, :mod:`skbmodel.machine.era`, and the default profile's prediction next to it): the
rows in their own unit, the relative error per subsystem and profile.
"""
from __future__ import annotations

from .. import era_validation
from .base import add_arguments as add_arguments  # no options of its own
from .base import Inputs

NAME = "eras"
TITLE = "published points on a profiled CPU, each predicted by the profile of its kernel era"


def run(inputs: Inputs) -> dict:
    eras = era_validation.era_points(inputs.df)
    return dict(summary=era_validation.summarise(eras), eras=eras)


def format(rep: dict) -> list[str]:
    lines = ["", "Published points on a profiled CPU, each predicted by the profile of its kernel era (`fitted`: the "
             "profile's own constants cite it; the last column is the default profile's prediction)", ""]
    return lines + era_validation.format_points(rep["eras"])
