"""Constants carried from one CPU to another where the derivation gives none: as core cycles counted by the
target's clock, or as time for a line that waits on the interconnect (:data:`CARRIED_AS_NS`), with the spread
such a carry showed between measured CPUs.  Part of the derivation, :mod:`skbmodel.evidence.derivation.derive`."""
from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from ...machine.description import Description, measured_on
from ...machine.profile import Constant, Profile, load_profile
from .pp_counts import DERIVED_PP, counting_clock, training

#: constants carried between CPUs as ns, not as core cycles: a cacheline moving between two cores'
#: caches waits on the interconnect (mesh, Infinity Fabric), whose clock is not the core's
CARRIED_AS_NS = ("xcpu_line_cycles",)


def carry_factor(src: Description, src_ghz: float, dst: Description, dst_ghz: float, as_ns: bool = False) -> float:
    """Cycles counted on CPU ``src`` at ``src_ghz`` -> cycles counted on ``dst`` at ``dst_ghz`` [ratio].

    ``src_turbo / src_ghz * dst_ghz / dst_turbo``: the cost's core cycles on the source core, which runs
    a busy loop at its turbo clock (:func:`cost_cycles`), carried unchanged as core cycles (as the
    derivation carries a residual, :func:`derive_cost`) and counted by the target's clock.  ``as_ns``:
    the cost is carried as time (:data:`CARRIED_AS_NS`), scaled by how long one line takes to move between
    two cores of one L3 on each machine, ``dst_ghz / src_ghz * t_dst / t_src`` (``t``: the description's
    ``topology.line_ns.same_l3``, the median one-way CAS latency of a published core-to-core run; the kernel
    path's move is one such transfer, :class:`skbmodel.machine.description.Topology`); ``dst_ghz / src_ghz``
    where either description has no topology."""
    if as_ns:
        ts, td = (x.topology.ns("same_l3") if x.topology else None for x in (src, dst))
        return dst_ghz / src_ghz * (td / ts if ts and td else 1.0)
    return src.value("turbo_ghz") / src_ghz * dst_ghz / dst.value("turbo_ghz")


def carry_residuals(exclude: tuple[str, ...] = ()) -> list[tuple[str, str, str, float]]:
    """Measured kernel code carried unchanged between CPUs of one kernel era: ``[(to, from, cost, ln error)]``.

    For every pair of measured profiles of two different CPUs (:func:`training`, less ``exclude``) and every
    page_pool cost of :data:`DERIVED_PP` whose kernel era (:func:`cost_era`) the two share, ``ln(core_to /
    core_from)``: the error of taking one CPU's core cycles (under load, at its turbo clock) for the other's,
    as :func:`carried_constants` takes a path base.  A pair is listed both ways (the same magnitude,
    mirrored), as a carry in either direction is one a profile can make.
    """
    tr = training(exclude=exclude)
    return [(t["profile"], u["profile"], k, math.log(t["core"][k] / u["core"][k]))
            for t in tr for k in DERIVED_PP for u in tr
            if u["uarch"] != t["uarch"] and u["eras"][k] == t["eras"][k]]


@functools.lru_cache(maxsize=8)
def carry_spread(exclude: tuple[str, ...] = ()) -> tuple[float | None, int, str]:
    """The relative sd of one move of a constant from the CPU that measured it to another [1, in ``ln``]:
    ``(s, residuals, profiles)``.

    ``s = sqrt(mean(e^2))`` over :func:`carry_residuals` (each ``e = ln(core_to / core_from)``): the
    same-era carry error of measured kernel code, the population a path base belongs to (kernel code
    paths measured on one CPU in core cycles, carried unchanged within a kernel era).  Not
    :func:`transfer_spread`: its residuals are the derivation's (counted operations plus a fitted residual)
    between records years of kernel apart, so they hold kernel drift that a same-era carry does not have
    (docs/intervals.md, "Constants carried to another CPU").  ``None`` and 0 with fewer than two CPUs.
    """
    res = carry_residuals(exclude)
    if not res:
        return None, 0, ""
    s = float(np.sqrt(np.mean(np.square([e for *_, e in res]))))
    return s, len(res), ", ".join(sorted({r[0] for r in res}))


def _same_l3_text(d: Description) -> str:
    return f"{d.topology.ns('same_l3'):g} ns" if d.topology else "not measured (taken as the other's)"


def carried_constants(d: Description, ghz: float, base: Profile, names,
                      exclude: tuple[str, ...] = ()) -> dict[str, Constant]:
    """The cycles constants ``names`` of ``base`` carried to CPU ``d`` counted at ``ghz`` [cycles].

    Each is a cost that ``base``'s CPU measured, or one carried to it already from the CPU that measured
    it (``origin``), converted with :func:`carry_factor` from ``base``'s clocks.  Its error is one move,
    from the CPU that measured it to ``d``, however often it was carried: on log scale (``scale = "log"``,
    a factor), ``s = sqrt(s_own^2 + s_move^2)``, with ``s_own`` the sd of its ``ln`` in the profile that
    measured it (:attr:`skbmodel.machine.profile.Constant.log_sd`: a fit's linear ``r = stderr / value``
    as ``sqrt(ln(1 + r^2))``, the log-normal of the same mean and sd) and ``s_move`` :func:`carry_spread`
    (0 when that CPU is ``d``: the constant keeps its own sd and scale)."""
    s_move, n_move, who = carry_spread(exclude)
    clock = counting_clock(d)
    src, how = measured_on(base.id)
    out = {}
    for k in names:
        c = base.constants[k]
        origin = c.origin or base.id
        o = load_profile(origin).constants[k] if c.origin else c
        measured = measured_on(origin)[0]
        move = 0.0 if measured is not None and measured.name == d.name or s_move is None else s_move
        as_ns = k in CARRIED_AS_NS
        f = 1.0 if src is None else carry_factor(src, base.ghz, d, ghz, as_ns)
        value = c.value * f
        own = o.log_sd if move else (o.stderr / o.value if o.value else 0.0)
        rel = math.hypot(own, move)
        if src is None:
            conv = (f"{c.value:g} cycles taken unchanged: the clocks that would convert them (the measured CPU's "
                    "TSC and turbo) are not known")
        elif as_ns:
            conv = (f"{c.value:g} cycles / {base.ghz:g} GHz = {c.value / base.ghz:.1f} ns x {f * base.ghz / ghz:.3g} "
                    f"(one line's move between two cores of one L3: {_same_l3_text(src)} on {src.name}, "
                    f"{_same_l3_text(d)} on {d.name}) x {ghz:g} GHz (carried as ns: a line's move between cores "
                    "waits on the interconnect, not on the core clock)")
        else:
            conv = (f"{c.value:g} cycles of {base.ghz:g} GHz x turbo {src.value('turbo_ghz'):g} / {base.ghz:g} = "
                    f"{c.value * src.value('turbo_ghz') / base.ghz:.1f} core cycles of {src.name} under load, carried "
                    f"as core cycles, x {ghz:g} / turbo {d.value('turbo_ghz'):g} GHz ({clock} cycles of {d.name})")
        unc = (f"sd of ln {rel:.2f} (log scale): its own {own:.2f} in {origin}, which measured it, and "
               f"{move:.2f} for one move to another CPU (skbmodel.evidence.derivation.carry.carry_spread: the "
               f"same-era page_pool "
               f"costs of {who} carried unchanged as core cycles, {n_move} residuals), in quadrature"
               if move else f"relative sd {rel:.2f}: its own in {origin} (measured on this CPU)")
        out[k] = dataclasses.replace(  # not fitted here: an assumption that the other CPU's cost carries
            c, value=round(value, 3), stderr=round(rel * value, 3), clock=clock, bounds=None,
            kind="assumed" if c.kind == "fitted" else c.kind, scale="log" if move else o.scale,
            origin=origin,
            source=f"carried from {base.id} ({how}): {conv}; there: {c.source.split('; uncertainty: ')[0]}; "
                   f"uncertainty: {unc}")
    return out


