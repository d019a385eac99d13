"""One scenario of a state (A, or B of the A/B comparison): its model parameters and its CPU profile,
resolved once, and the model's functions applied to it.

:func:`skbmodel.question.scenario_of` reads scenario B from the codec's state (A plus B's overrides, on B's
profile or A's): no consumer slices the ``b_`` keys itself.  :attr:`Scenario.key` keys the caches.
The mapping functions of :mod:`skbmodel.model` and
:mod:`skbmodel.uncertainty` stay for the CLI, the benchmarks and the fit.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

from . import model, uncertainty
from .machine.custom import decode_cached
from .machine.profile import Profile, profile_version


@dataclasses.dataclass(frozen=True, eq=False)
class Scenario:
    """Model parameters (read-only ``{key: scalar or array}``) and the CPU profile they run on."""

    params: Mapping
    profile: Profile

    @classmethod
    def from_params(cls, params: Mapping, profile: Profile | None = None) -> Scenario:
        """A scenario from model parameters; ``profile`` default: the one ``params`` names (its custom
        profile's link text ``prof``, else its shipped ``cpu``)."""
        text = params.get("prof") if profile is None else None
        if text:
            profile = decode_cached(str(text))
        return cls(MappingProxyType(dict(params)), model.profile_of(params, profile))

    @property
    def key(self) -> tuple:
        """A hashable identity of a scalar scenario: its parameters, its profile and that profile's version."""
        return (tuple(sorted((k, str(v)) for k, v in self.params.items())), self.profile.id,
                profile_version(self.profile))

    def replace(self, **override) -> Scenario:
        """The same scenario with some parameters replaced (scalars or sweep arrays)."""
        return Scenario(MappingProxyType({**self.params, **override}), self.profile)

    def inputs(self) -> dict:
        """The model's typed inputs (floats, booleans, option codes): :func:`skbmodel.model.inputs`."""
        return model.inputs(self.params, self.profile)

    def evaluate(self, outputs=None) -> dict:
        """:func:`skbmodel.model.evaluate` of ``outputs`` (default: every output)."""
        return model.evaluate(self.params, self.profile, outputs=outputs)

    def breakdown_ns(self) -> dict:
        """The chosen path's components [ns]: :func:`skbmodel.model.breakdown_ns`."""
        return model.breakdown_ns(self.params, self.profile)

    def with_intervals(self, outputs) -> tuple[dict, dict]:
        """``(values, intervals)`` of ``outputs``: :func:`skbmodel.uncertainty.evaluate_with_intervals`."""
        return uncertainty.evaluate_with_intervals(self.params, self.profile, outputs)

    def delta(self, other: Scenario, outputs=None) -> tuple[dict, dict]:
        """``other − self`` with paired intervals: :func:`skbmodel.uncertainty.delta_intervals`."""
        return uncertainty.delta_intervals(self.params, other.params, self.profile, other.profile, outputs)
