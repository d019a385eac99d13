"""Profiles derived from machine descriptions: a CPU predicted before it is measured.

Derivation (:func:`derive`), ECM style.  Each bench_page_pool_simple cost (one page allocated and
returned per loop, all of it L1-resident on one core) is split into a part that carries over
between cores of one instruction set as an *instruction count* and a part priced by the machine::

    cost_core = n_instr(era, cost) / issue_width + n_locked(era, cost) * lock_add_cycles
    cost_tsc  = cost_core * tsc_ghz / turbo_ghz

* ``n_locked`` is counted in the kernel source (:data:`LOCKED_OPS`): the fast path (pop from and
  push to ``pool->alloc.cache``) has no locked instruction; the ptr_ring return takes the
  producer spinlock once (the consumer side has been lockless since the 2022 removal of
  ``consumer_lock`` from ``page_pool_refill_alloc_cache``); the slow path pays the page's
  refcount and the pool's release counter, and since 6.0 the pcp list's spinlock.  A locked
  read-modify-write costs about the same on every recent Intel core (18-20 cycles) and far less
  on AMD (~8), so it is priced with the description's ``lock_add_cycles``.
* ``n_instr`` is what remains, in the core's own instructions; it is priced at the core's
  rename/allocate width ``issue_width`` (uops per cycle: 4 on Haswell to Cascade Lake, 6 on
  Golden Cove): a loop of dependent-free, L1-resident kernel code runs near that ceiling, which
  is why a Sapphire Rapids core needs about half the core cycles of a Broadwell core for the same
  fast path.  ``n_instr(era)`` is the one fitted quantity per cost and era (:func:`cost_era`: before
  or since :data:`skbmodel.machine.era.DIRECT_RECYCLE_ANY_CONTEXT`, for the slow path before or since the
  benchmark's extra reference, :data:`BENCH_EXTRA_REF_SINCE`): the mean over the measured CPUs of that era
  of ``(cost_core - n_locked * lock_add_cycles) * issue_width``, each CPU converted with its own
  description (6 quantities, fitted to 5 measured profiles of 4 x86 CPUs, 3 Intel and 1 AMD).
* The loop runs on one busy core, so at its single-core turbo clock (a cloud VM such as the
  8481C is priced like bare metal: nothing on these paths exits to the hypervisor).

Uncertainty: the relative sd of a derived constant is the root mean square of the relative errors
of the same derivation predicting each training CPU from the other training CPUs (an inner leave
one CPU out over the training set; :func:`spread`), pooled over the three costs.

The cache sizes come from the description; every other constant is inherited from the base
profile of the era (``e5-1650v4`` or ``e5-1650v4-2025``) and says so.

An arm64 core is derived from the arm64 CPUs measured (only the Kunpeng 920 of the corpus); with
none in its kernel era (or asked, ``from_isa="x86"``), from the x86 CPUs' instruction counts with
what the kernel does differently on arm64 priced on top (:func:`isa_cost_cycles`)::

    cost_core = (n_instr + n_pcpu * 7) / issue_width + n_locked * lock_add_cycles
                + n_pcpu * percpu_atomic_cycles

``n_pcpu`` (:data:`PERCPU_RMW`) is the page_pool statistics' ``this_cpu_inc`` per page: one
``%gs``-prefixed instruction on x86 (inside ``n_instr``), on arm64 a preempt-count toggle
(7 instructions more) around an LSE ``STADD``, which TaiShan v110 may execute outside its L1
(``percpu_atomic_cycles``, bracketed: not published); its locked RMWs are LSE atomics at the
description's ``lock_add_cycles`` (TaiShan v110: bracketed too, near or far by core), each bracket
widening the interval on its share of the cost (:func:`bracket_sd`).

SLUB, zeroing and the page allocator (:func:`derive_costs`): operation counts of each constant's kernel
code path times the description's per-operation costs [core cycles], plus a residual fitted on the CPUs
that measure the constant (:data:`COST_MODEL`, :data:`MEASURES`, and the corpus rows of
:data:`DIRECT_MEASURES`: the derivation reads the public corpus, which is why it lives with the
evidence); what the derivation does not give is carried from the base CPU (:func:`carried_constants`).
The descriptions are read by :mod:`skbmodel.machine.description`; how well the derived profiles predict
CPUs they never saw is :mod:`skbmodel.evidence.derivation.leave_one_out`.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ...machine import era
from ...machine.custom import GHZ_RANGE
from ...machine.description import NEEDED, Description, Figure, UarchError, load
from ...machine.profile import Constant, Profile, load_profile
from .carry import carried_constants
from .opcounts import costs_note, derive_costs
from .pp_counts import (ARM64_PERCPU_EXTRA_INSTR, DERIVED_PP, ERA_BASE, LATEST_KERNEL, LOCKED_OPS, SPINLOCK_OPS,
                        bracket_sd, cost_cycles, cost_era, counting_clock, era_points, isa_cost_cycles,
                        percpu_rmw_count, percpu_rmw_price, since_split, spread, training)

def derive(name: str, ghz: float | None = None, kernel: str | None = None, exclude: tuple[str, ...] = (),
           cpu: str | None = None, from_isa: str | None = None, inrun: dict | None = None,
           turbo: float | None = None) -> Profile:
    """The profile of CPU ``name`` derived from its description and the other CPUs' data.

    ``ghz``: the TSC clock of the machine (default: the description's); ``kernel``: the mainline
    release (default :data:`LATEST_KERNEL`); ``exclude``: descriptions whose data may not be used
    (leave one CPU out); ``cpu``: the machine's CPU as a row or a user names it, whose SKU figures
    (:meth:`Description.for_cpu`: another SKU of the same die, e.g. its turbo clock) replace the
    description's.  Raises :class:`UarchError` (one line) on bad input.

    An arm64 core derives from the measured arm64 CPUs of its kernel era; with none (or with
    ``from_isa="x86"``) from the x86 CPUs' instruction counts, priced with what differs on arm64
    (:func:`isa_cost_cycles`).  ``inrun``: in-run baselines of the machine for that translation,
    ``{"atomic": core cycles of a time_bench atomic_inc, "spinlock": of a spin_lock+unlock, "source": text}``
    (either may be missing or None).  ``turbo``: the core clock a busy loop runs at on the machine [GHz]
    (default: the description's, which is its reference part's: a desktop part of a server core's
    description boosts higher); every conversion between core and TSC cycles reads it.
    """
    if from_isa not in (None, "x86", "arm64"):
        raise UarchError(f"--from-isa {str(from_isa)[:20]!r}: expected x86 or arm64")
    d = load(name).for_cpu(cpu)
    if turbo is not None:
        if not (math.isfinite(turbo) and GHZ_RANGE[0] <= turbo <= GHZ_RANGE[1]):
            raise UarchError(f"--turbo {turbo!r}: expected a clock between {GHZ_RANGE[0]:g} and {GHZ_RANGE[1]:g} GHz")
        d = dataclasses.replace(d, figures={**d.figures, "turbo_ghz": Figure(
            "turbo_ghz", float(turbo), "GHz", "the core clock under load, given with --turbo")})
    kernel = LATEST_KERNEL if kernel is None else str(kernel).strip()
    if kernel not in era.RELEASES:
        first, last = min(era.RELEASES, key=era.version_key), max(era.RELEASES, key=era.version_key)
        raise UarchError(f"--kernel {kernel[:20]!r}: expected a mainline release between {first} and {last}, e.g. 6.12")
    if ghz is not None and not (math.isfinite(ghz) and GHZ_RANGE[0] <= ghz <= GHZ_RANGE[1]):
        raise UarchError(f"--ghz {ghz!r}: expected a clock between {GHZ_RANGE[0]:g} and {GHZ_RANGE[1]:g} GHz")
    for k in NEEDED if ghz is None else [n for n in NEEDED if n != "tsc_ghz"]:
        d.value(k)  # raises, naming the first figure the description lacks
    turbo = d.value("turbo_ghz")
    if ghz is None:
        ghz = d.value("tsc_ghz")
    new = since_split(kernel)
    train = training(exclude=exclude, isa=d.isa)
    translate = d.isa != "x86" and (from_isa == "x86" or not [t for t in train if t["new_era"] == new])
    isa_note = ""
    if translate:  # no core of its own ISA in this era, or asked for: the x86 counts, priced for arm64
        why = "asked for" if from_isa == "x86" else f"no {d.isa} CPU measured in this kernel era"
        isa_note = f" (x86 counts for an {d.isa} core: {why})"
        train = training(exclude=exclude)
    if not train:
        raise UarchError("no measured CPU is left to derive from")
    rel_sd, n_res = spread(train)
    base = load_profile(ERA_BASE[new])
    consts = dict(base.constants)
    fig = d.figures
    if "tsc_ghz" in fig and ghz == fig["tsc_ghz"].value:
        clock = fig["tsc_ghz"].source
    elif "tsc_ghz" not in fig and "base_ghz" in fig and ghz == fig["base_ghz"].value:
        clock = f"the core clock ({d.isa} counts no TSC cycles): {fig['base_ghz'].source}"
    else:
        clock = "given with --ghz"
    consts["ghz"] = Constant("ghz", float(ghz), "GHz", "published",
                             f"TSC clock: {clock}; uncertainty: 0: the clock is a scenario input")
    for k, f in (("l1d_bytes", fig["l1d_bytes"]), ("l2_bytes", fig["l2_bytes"])):
        consts[k] = Constant(k, f.value, "bytes", "published", f"{f.source} (description {d.name}); uncertainty: 0")
    width, lock = d.value("issue_width"), d.value("lock_add_cycles")
    spread_text = (f"the rms relative error of this derivation predicting each training CPU from the others "
                   f"({n_res} residuals), relative sd {rel_sd:.2f}" if n_res else
                   f"fewer than two measured CPUs to compare, an assumed relative sd {rel_sd:.2f}")
    inrun = inrun or {}
    whos = []
    for k in DERIVED_PP:
        nk = cost_era(kernel, k)
        pts = era_points(train, nk, k)
        who = ", ".join(sorted({f"{t['uarch']} ({t['profile']})" for t in pts}))
        whos.append(who)
        instr = float(np.mean([t["instr"][k] for t in pts]))
        n_lock = LOCKED_OPS[nk][k]
        if not translate:
            value = cost_cycles(instr, d, nk, k, ghz)
            consts[k] = Constant(k, round(value, 3), "cycles", "assumed",
                                 f"derived: ({instr:.0f} uops (mean of {who}{isa_note}, each from its own description) "
                                 f"/ issue width {width:g} + {n_lock} locked ops x {lock:g} cycles) x TSC {ghz:g} / "
                                 f"turbo {turbo:g} GHz ({fig['turbo_ghz'].source}; width: {fig['issue_width'].source}; "
                                 f"locked op: {fig['lock_add_cycles'].source}); uncertainty: {spread_text}",
                                 stderr=round(rel_sd * value, 3))
            continue
        pc, pc_sd, pc_src = percpu_rmw_price(d, kernel, inrun.get("atomic"))
        spin = inrun.get("spinlock")
        value, share, lshare = isa_cost_cycles(instr, d, kernel, k, ghz, pc, spin)
        lock_sd = bracket_sd(fig["lock_add_cycles"])
        sd = math.sqrt(rel_sd ** 2 + (share * pc_sd) ** 2 + (lshare * lock_sd) ** 2)
        n_pcpu, n_spin = percpu_rmw_count(kernel, k), (SPINLOCK_OPS[nk][k] if spin is not None else 0)
        spin_text = (f" ({n_spin} of them a spinlock at the run's spin_lock+unlock, {spin:.1f} cycles)"
                     if n_spin else "")
        in_run = f"; in-run baselines: {inrun['source']}" if inrun.get("source") else ""
        consts[k] = Constant(k, round(value, 3), "cycles", "assumed",
                             f"derived from the x86 CPUs for an {d.isa} core: (({instr:.0f} instructions (the x86 "
                             f"uops, mean of {who}, each from its own description) + {n_pcpu} this_cpu RMWs x "
                             f"{ARM64_PERCPU_EXTRA_INSTR} preempt-count instructions) / issue width {width:g} + "
                             f"{n_lock} locked ops x {lock:g} cycles{spin_text} + {n_pcpu} per-CPU atomics x "
                             f"{pc:.1f} cycles) x {ghz:g} / turbo {turbo:g} GHz "
                             "(skbmodel.evidence.derivation.pp_counts.isa_cost_cycles; "
                             f"width: {fig['issue_width'].source}; locked op: {fig['lock_add_cycles'].source}; "
                             f"per-CPU atomic: {pc_src}{in_run}); uncertainty: relative sd {sd:.2f}, {spread_text} "
                             f"and the per-CPU atomic's relative sd {pc_sd:.2f} on its share {share:.2f}"
                             + (f" and the locked op's {lock_sd:.2f} on its share {lshare:.2f}" if lock_sd else "")
                             + "; the "
                             "translation's own error is not in it (no second instruction set to measure it on)",
                             stderr=round(sd * value, 3))
    who = "; ".join(dict.fromkeys(whos))
    costs = derive_costs(d, float(ghz), kernel, exclude)
    consts.update(costs)
    clock_name = counting_clock(d)
    for k, c in consts.items():
        if c.unit == "cycles" and k in costs or k in DERIVED_PP:
            consts[k] = dataclasses.replace(c, clock=clock_name)
    # what the derivation does not give (the path bases, ...): the base CPU's cycles carried to this one
    consts.update(carried_constants(d, float(ghz), base, [k for k, c in base.constants.items()
                                                          if c.unit == "cycles" and consts[k] is c], exclude))
    lo, hi = kernel, kernel
    priced = ("priced at this core's rename width, locked-op latency and per-CPU atomic "
              "(skbmodel.evidence.derivation.pp_counts."
              "isa_cost_cycles)" if translate else "priced at this core's rename width and locked-op latency")
    notes = (f"derived from the {d.uarch} description ({d.name}) for kernel {kernel}: the clock and the cache "
             f"sizes from the description, the page_pool costs from the instruction counts measured on {who} "
             f"{priced}; "
             f"{costs_note(costs)}; the path bases and the other cycles of {base.id} carried as core cycles "
             f"(skbmodel.evidence.derivation.carry.carried_constants); every other constant inherited from {base.id}, "
             "not derived")
    return Profile(id=f"derived-{d.name}", name=f"{d.cpu} (derived: {d.uarch}, kernel {kernel})",
                   constants=consts, inherits=base.id, notes=notes, kernels=(lo, hi),
                   fit_names=base.fit_names, fit_correlation=base.fit_correlation)


def untranslated(d: Description, kernel: str, exclude: tuple[str, ...], ghz: float) -> dict[str, float]:
    """The page_pool constants as derived before the ISA translation: the x86 CPUs' instruction counts at
    the core's width and locked-op latency alone (:func:`cost_cycles`), for the before/after comparison."""
    train, out = training(exclude=exclude), {}
    for k in DERIVED_PP:
        nk = cost_era(kernel, k)
        pts = era_points(train, nk, k)
        out[k] = cost_cycles(float(np.mean([t["instr"][k] for t in pts])), d, nk, k, ghz)
    return out


# ---- SLUB, zeroing and the page allocator: operation counts x per-operation cost ----------
