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
CPUs they never saw is :mod:`skbmodel.evidence.leave_one_out`.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import re

import numpy as np

from ..physics import noise
from ..machine import era
from ..machine.custom import GHZ_RANGE
from ..machine.description import (NEEDED, Description, Figure, UarchError, derived_id, descriptions, load,
                                   measured_on)
from ..machine.profile import Constant, Profile, available_profiles, load_profile, own_names

#: the page_pool constants the derivation gives, and the model output of each (TSC cycles)
DERIVED_PP = {"pp_fast_cycles": "page_pool.fast_cycles", "pp_ring_cycles": "page_pool.ring_cycles",
              "page_slow_cycles": "page_pool.slow_cycles"}
#: base profile per era (``True``: kernels since the split)
ERA_BASE = {False: "e5-1650v4", True: "e5-1650v4-2025"}
LATEST_KERNEL = "6.16"
#: relative sd of a derived constant when fewer than two measured CPUs are left to give a spread
FALLBACK_REL_SD = 0.3
#: locked read-modify-write instructions per page of each bench_page_pool_simple cost, by era (``True``:
#: the newer, :func:`cost_era`: since :data:`skbmodel.machine.era.DIRECT_RECYCLE_ANY_CONTEXT` for the fast path
#: and the ptr_ring, since :data:`BENCH_EXTRA_REF_SINCE` for the slow path), counted in the kernel source:
#:
#: * ``pp_fast_cycles``: none -- ``__page_pool_get_cached`` pops ``pool->alloc.cache``,
#:   ``page_pool_recycle_direct`` -> ``page_pool_recycle_in_cache`` pushes it; the refcount checks
#:   are plain reads (``page_ref_count``; since 6.7 ``page_pool_unref_netmem`` skips the atomic when
#:   it holds the only reference), the stats are plain or per-CPU increments.
#: * ``pp_ring_cycles``: 1 -- ``ptr_ring_produce(_bh)`` takes ``producer_lock`` (``lock cmpxchg``;
#:   the unlock is a plain store); ``page_pool_refill_alloc_cache`` consumes without a lock (Yunsheng
#:   Lin, "page_pool: remove spinlock in page_pool_refill_alloc_cache()", netdev 2022-01-07,
#:   Message-ID <20220107090042.13605-1-linyunsheng@huawei.com>).
#: * ``page_slow_cycles``, the older benchmark (kernels before 6.5): 2 -- the 5.17 benchmark returns the
#:   page with ``page_pool_release_page`` (``atomic_inc_return(&pool->pages_state_release_cnt)``) and
#:   ``put_page`` (``lock dec``); the pcp free list is guarded by ``local_lock_irqsave`` (no locked
#:   instruction); the refill allocates 64 pages per ``alloc_pages_bulk`` call (its locks amortised).
#:   (On 6.0 to 6.4 the pcp spinlock below would add one; no measured point falls there.)
#: * ``page_slow_cycles``, the newer benchmark (kernels from 6.5): 5 -- ``page_pool_release_page`` was
#:   made private (commit 535b9c61bdef), so the benchmark holds an extra reference: ``get_page``, the
#:   release counter, ``put_page`` in ``page_pool_return_page``, the benchmark's last ``put_page``, and the
#:   pcp list's ``pcp_spin_trylock`` in ``free_unref_page`` (pcp lists under a spinlock since 6.0, Mel
#:   Gorman, "mm/page_alloc: protect PCP lists with a spinlock").
LOCKED_OPS = {False: {"pp_fast_cycles": 0, "pp_ring_cycles": 1, "page_slow_cycles": 2},
              True: {"pp_fast_cycles": 0, "pp_ring_cycles": 1, "page_slow_cycles": 5}}


def since_split(kernel: str) -> bool:
    return era.version_key(kernel) >= era.version_key(era.DIRECT_RECYCLE_ANY_CONTEXT)


#: the out-of-tree bench_page_pool_simple returns the slow path's page through an extra reference
#: (``get_page``, ``page_pool_put_page``, ``put_page``) on kernels from this release: its own
#: ``LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)`` test keeps ``page_pool_release_page`` + ``put_page``
#: only before it (netoptimizer/prototype-kernel commit 7fb2a9c, Jesper Dangaard Brouer, "Fix page_pool:
#: newer kernel unexported page_pool_release_page()", 2023-08-19, after kernel commit 535b9c61bdef
#: "net: page_pool: hide page_pool_release_page()"); a run on a later kernel cannot build the older form
BENCH_EXTRA_REF_SINCE = "6.5"


def cost_era(kernel: str, name: str) -> bool:
    """Whether the page_pool cost ``name`` (:data:`DERIVED_PP`) on mainline ``kernel`` takes the newer
    era's counts (:data:`LOCKED_OPS`, :data:`PERCPU_RMW`, :data:`SPINLOCK_OPS`, the instruction count).

    The slow path follows what the benchmark runs, its extra reference from
    :data:`BENCH_EXTRA_REF_SINCE`; the fast path and the ptr_ring follow the kernel split
    :data:`skbmodel.machine.era.DIRECT_RECYCLE_ANY_CONTEXT`.
    """
    if name == "page_slow_cycles":
        return era.version_key(kernel) >= era.version_key(BENCH_EXTRA_REF_SINCE)
    return since_split(kernel)


def training(exclude: tuple[str, ...] = (), isa: str = "x86") -> list[dict]:
    """The measured CPUs' page_pool costs: one record per (description, profile), of the cores of one
    instruction set (``isa``), with each cost in TSC cycles (``tsc``, at ``ghz``), ns, core cycles at
    the turbo clock (``core``) and the instruction count of :func:`derive` (``instr``); an arm64
    profile's clock is its core clock."""
    out = []
    for d in descriptions().values():
        if d.name in exclude or d.isa != isa:
            continue
        for pid in d.profiles:
            if pid not in available_profiles():
                continue
            prof = load_profile(pid)
            if not _measures_page_pool(prof):
                continue
            # a profile measured on another SKU of the die (its name names the SKU) converts with that SKU's clocks
            dp = d.for_cpu(prof.name)
            new = since_split(prof.kernels[0])
            eras = {k: cost_era(prof.kernels[0], k) for k in DERIVED_PP}
            scale = dp.value("turbo_ghz") / (dp.value("tsc_ghz") if "tsc_ghz" in dp.figures else prof.ghz)
            core = {k: prof.value(k) * scale for k in DERIVED_PP}
            out.append(dict(uarch=d.name, profile=pid, cpu=prof.name, new_era=new, eras=eras, ghz=prof.ghz,
                            tsc={k: prof.value(k) for k in DERIVED_PP}, core=core,
                            instr={k: instr_count(core[k], dp, eras[k], k) for k in DERIVED_PP},
                            ns={k: prof.value(k) / prof.ghz for k in DERIVED_PP}))
    return out


def instr_count(core_cycles: float, d: Description, new_era: bool, name: str) -> float:
    """The instruction count [uops] behind a measured cost: ``(core - n_locked * lock_add) * issue_width``.

    ``core_cycles``: the cost in core cycles at the turbo clock; ``d``: the CPU's description;
    ``new_era``: the cost's newer era (:func:`cost_era`); ``name``: the constant (:data:`DERIVED_PP`).
    The inverse of :func:`cost_cycles`.
    """
    return (core_cycles - LOCKED_OPS[new_era][name] * d.value("lock_add_cycles")) * d.value("issue_width")


def cost_cycles(instr: float, d: Description, new_era: bool, name: str, ghz: float) -> float:
    """One page_pool cost on CPU ``d`` [TSC cycles at ``ghz`` GHz] from its instruction count.

    ``(instr / issue_width + n_locked * lock_add_cycles) * ghz / turbo_ghz``: ``instr`` [uops]
    retired at the core's rename width (``issue_width``, uops per cycle), ``n_locked``
    (:data:`LOCKED_OPS`) locked read-modify-writes at ``lock_add_cycles`` each, all at the
    single-core turbo clock (``turbo_ghz``), counted by the ``ghz`` clock (the TSC; an arm64 core:
    its core clock).  Figures from the description (Intel Optimization Reference Manual, AMD and
    Arm software optimization guides, Agner Fog's instruction tables, uops.info).
    """
    core = instr / d.value("issue_width") + LOCKED_OPS[new_era][name] * d.value("lock_add_cycles")
    return core * ghz / d.value("turbo_ghz")



# ---- another instruction set: an arm64 core from the x86 CPUs' instruction counts -----------

#: ``this_cpu_*`` read-modify-writes per page of each bench_page_pool_simple cost, by kernel era (as
#: :data:`LOCKED_OPS`): the page_pool recycle statistics.  ``recycle_stat_inc`` is ``this_cpu_inc`` of a
#: field of ``pool->recycle_stats`` (net/core/page_pool.c): ``cached`` on the fast path
#: (``page_pool_recycle_in_cache``), ``ring`` on the ptr_ring return (``page_pool_recycle_in_ring``) and
#: ``released_refcnt`` on the slow path where the benchmark's extra reference makes
#: ``__page_pool_put_page`` give the page back (the newer era; the older benchmark released the page with
#: ``page_pool_release_page``, which counts nothing).  On x86 each is one ``%gs``-prefixed instruction
#: without a lock prefix, already inside the x86 CPUs' instruction count; on arm64 it is a preempt-count
#: toggle around an atomic (:data:`ARM64_PERCPU_EXTRA_INSTR`, :func:`percpu_rmw_price`).  What else the
#: paths do per CPU is ISA-neutral: ``alloc_stat_inc`` is a plain increment of the pool's own field, and the
#: page allocator's ``__count_vm_events`` is a ``raw_cpu`` op, a plain load, add and store on arm64 too
#: (include/asm-generic/percpu.h).  The statistics need CONFIG_PAGE_POOL_STATS (``default n`` in
#: net/Kconfig), which drivers ``select`` (mainline's IDPF entry, drivers/net/ethernet/intel/idpf/Kconfig)
#: and Huawei's openEuler kernel selects by default (openeuler/kernel pull request 3100, "Default select
#: PAGE_POOL_STATS, add command queue trace for hns3"): taken as set (the corpus's arm64 server does not
#: state its configuration; without the statistics nothing differs and the translation adds nothing).
PERCPU_RMW = {False: {"pp_fast_cycles": 1, "pp_ring_cycles": 1, "page_slow_cycles": 0},
              True: {"pp_fast_cycles": 1, "pp_ring_cycles": 1, "page_slow_cycles": 1}}
#: the page_pool statistics exist since 5.18 (Joe Damato, "page_pool: Add allocation stats" and "Add
#: recycle stats", net-next 2022-03): no per-CPU operation on these paths before
PAGE_POOL_STATS_SINCE = "5.18"
#: from 6.18 the non-return ``this_cpu_*`` ops are load atomics (``LDADD`` with an unused destination,
#: executed in the L1) instead of ``STADD``, which several cores execute "far" in the interconnect (mainline
#: commit "arm64: Use load LSE atomics for the non-return per-CPU atomic operations", v6.18-rc6): priced
#: as ``lock_add_cycles`` from then
PERCPU_LOAD_ATOMICS_SINCE = "6.18"
#: arm64 instructions one ``this_cpu`` RMW adds to x86's single instruction: ``preempt_disable_notrace``
#: (load, add, store of the thread_info preempt count) and ``preempt_enable_notrace`` (load, subtract,
#: store, branch on zero) of arch/arm64/include/asm/preempt.h (``_pcp_protect`` in
#: arch/arm64/include/asm/percpu.h); the ``tpidr_el1`` read and the address add stand for x86's ``%gs``
#: addressing one for one.  Priced at the rename width like every other instruction.  They exist with
#: CONFIG_PREEMPT_COUNT (a preemptible or PREEMPT_DYNAMIC kernel); without it the toggles are compiler
#: barriers, 1.75 cycles less at a width of 4, below what the derivation resolves
ARM64_PERCPU_EXTRA_INSTR = 7
#: the locked operations of :data:`LOCKED_OPS` that are a spinlock acquisition (the ptr_ring's
#: ``producer_lock``; the pcp list's ``pcp_spin_trylock`` of the newer slow path), which an in-run
#: ``spin_lock``+``spin_unlock`` baseline prices
SPINLOCK_OPS = {False: {"pp_fast_cycles": 0, "pp_ring_cycles": 1, "page_slow_cycles": 0},
                True: {"pp_fast_cycles": 0, "pp_ring_cycles": 1, "page_slow_cycles": 1}}


def percpu_rmw_count(kernel: str, name: str) -> int:
    """``this_cpu`` RMWs per page of the page_pool cost ``name`` on ``kernel`` (:data:`PERCPU_RMW`)."""
    if era.version_key(kernel) < era.version_key(PAGE_POOL_STATS_SINCE):
        return 0
    return PERCPU_RMW[cost_era(kernel, name)][name]


def bracket_sd(f: Figure) -> float:
    """Relative sd of a bracketed figure: ``ln(high / low) / (2 z)``, its ``low``-``high`` range taken as a
    90 % range (``z`` of :data:`skbmodel.physics.noise.LEVEL`); 0 without a bracket."""
    if not f.bracket:
        return 0.0
    return math.log(f.bracket[1] / f.bracket[0]) / (2.0 * noise.z_value(noise.LEVEL))


def percpu_rmw_price(d: Description, kernel: str, inrun_atomic: float | None = None) -> tuple[float, float, str]:
    """The atomic of one arm64 ``this_cpu`` RMW [core cycles], its relative sd and where it comes from.

    From :data:`PERCPU_LOAD_ATOMICS_SINCE` on, a load atomic: ``lock_add_cycles`` (sd: its
    :func:`bracket_sd`).  Before, ``STADD``:
    ``inrun_atomic`` when given (a ``time_bench`` ``atomic_inc`` of the same run, which is that
    instruction, relative sd 0: a measurement), else the description's ``percpu_atomic_cycles`` with
    :func:`bracket_sd`, else ``lock_add_cycles`` (said so in the source; as the load atomic, with that
    figure's :func:`bracket_sd`).
    """
    lock = d.figures["lock_add_cycles"]
    if era.version_key(kernel) >= era.version_key(PERCPU_LOAD_ATOMICS_SINCE):
        return (lock.value, bracket_sd(lock),
                f"a load atomic since {PERCPU_LOAD_ATOMICS_SINCE}, priced as lock_add_cycles: {lock.source}")
    if inrun_atomic is not None:
        return float(inrun_atomic), 0.0, "the run's own time_bench atomic_inc (the same STADD)"
    f = d.figures.get("percpu_atomic_cycles")
    if f is None:
        return lock.value, 0.0, f"the description has no percpu_atomic_cycles: lock_add_cycles taken ({lock.source})"
    return f.value, bracket_sd(f), f.source


def isa_cost_cycles(instr: float, d: Description, kernel: str, name: str, ghz: float, percpu: float,
                    spinlock: float | None = None) -> tuple[float, float, float]:
    """One page_pool cost of an arm64 core ``d`` from the x86 CPUs' instruction count [TSC cycles at ``ghz``],
    the share of it that is the per-CPU atomics and the share that is the locked RMWs at ``lock_add_cycles``.

    ``core = (instr + n_pcpu * extra) / issue_width + (n_locked - n_spin) * lock_add + n_spin * spinlock
    + n_pcpu * percpu``, ``cost = core * ghz / turbo_ghz``.  ``instr`` [instructions]: the x86 CPUs' count
    (:func:`instr_count`), taken as the arm64 core's for the same C code (one arm64 instruction per x86
    fused-domain uop: an assumption, no public figure compares the two for kernel code); ``n_pcpu``
    (:func:`percpu_rmw_count`) ``this_cpu`` RMWs, each ``extra`` = :data:`ARM64_PERCPU_EXTRA_INSTR`
    instructions more than on x86 and one atomic at ``percpu`` core cycles (:func:`percpu_rmw_price`);
    ``n_locked`` (:data:`LOCKED_OPS`) locked RMWs as on x86 (LSE ``CASA``/``LDADD``), at
    ``lock_add_cycles``, of which ``n_spin`` (:data:`SPINLOCK_OPS`) at ``spinlock`` core cycles when an
    in-run spinlock baseline is given (its lock and unlock instructions are then counted twice, a few
    cycles).  Not counted: the ``dmb ishst`` of ``__ptr_ring_produce``'s ``smp_wmb`` and the release store
    of ``spin_unlock`` (compiler barriers and plain stores on x86): no published cost for them.
    """
    new = cost_era(kernel, name)
    n_pcpu = percpu_rmw_count(kernel, name)
    n_lock = LOCKED_OPS[new][name]
    n_spin = SPINLOCK_OPS[new][name] if spinlock is not None else 0
    width, lock = d.value("issue_width"), d.value("lock_add_cycles")
    atomics, locked = n_pcpu * percpu, (n_lock - n_spin) * lock
    core = (instr + n_pcpu * ARM64_PERCPU_EXTRA_INSTR) / width + locked + n_spin * (spinlock or 0.0) + atomics
    return core * ghz / d.value("turbo_ghz"), atomics / core, locked / core

def _measures_page_pool(prof: Profile) -> bool:
    """Whether the profile's page_pool costs are its own data (not inherited, not derived)."""
    parent = load_profile(prof.inherits) if prof.inherits else None
    own = [k for k in DERIVED_PP if parent is None or parent.constants.get(k) != prof.constants[k]]
    return len(own) == len(DERIVED_PP) and not any(prof.constants[k].source.startswith("derived:") for k in own)


def _era_points(train: list[dict], new: bool, name: str | None = None) -> list[dict]:
    """The training records of the era ``new`` (of the cost ``name``, :func:`cost_era`; None: the kernel
    split), or all of them when that era has none."""
    return [t for t in train if (t["new_era"] if name is None else t["eras"][name]) == new] or train


def spread(train: list[dict]) -> tuple[float, int]:
    """Relative sd of a derived cost and the number of residuals behind it.

    Inner leave one CPU out over ``train``: each training CPU's measured costs are predicted by
    :func:`cost_cycles` from the instruction counts of the *other* training CPUs (of its era where
    they have one, else of every era), and ``sd = sqrt(mean(((measured - predicted) / predicted)^2))``
    over its profiles and the three costs.  Fewer than two CPUs: :data:`FALLBACK_REL_SD` and 0.
    """
    cpus = sorted({t["uarch"] for t in train})
    if len(cpus) < 2:
        return FALLBACK_REL_SD, 0
    res = []
    for cpu in cpus:
        rest = [t for t in train if t["uarch"] != cpu]
        for t in (t for t in train if t["uarch"] == cpu):
            d = load(cpu).for_cpu(t.get("cpu"))
            for k in DERIVED_PP:
                pts = _era_points(rest, t["eras"][k], k)
                pred = cost_cycles(float(np.mean([p["instr"][k] for p in pts])), d, t["eras"][k], k, t["ghz"])
                res.append((t["tsc"][k] - pred) / pred)
    return float(np.sqrt(np.mean(np.square(res)))), len(res)


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
        pts = _era_points(train, nk, k)
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
                             "(skbmodel.evidence.derive.isa_cost_cycles; "
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
    priced = ("priced at this core's rename width, locked-op latency and per-CPU atomic (skbmodel.evidence.derive."
              "isa_cost_cycles)" if translate else "priced at this core's rename width and locked-op latency")
    notes = (f"derived from the {d.uarch} description ({d.name}) for kernel {kernel}: the clock and the cache "
             f"sizes from the description, the page_pool costs from the instruction counts measured on {who} "
             f"{priced}; "
             f"{costs_note(costs)}; the path bases and the other cycles of {base.id} carried as core cycles "
             f"(skbmodel.evidence.derive.carried_constants); every other constant inherited from {base.id}, "
             "not derived")
    return Profile(id=f"derived-{d.name}", name=f"{d.cpu} (derived: {d.uarch}, kernel {kernel})",
                   constants=consts, inherits=base.id, notes=notes, kernels=(lo, hi),
                   fit_names=base.fit_names, fit_correlation=base.fit_correlation)


def shipped_derived(name: str) -> Profile:
    """The profile shipped as ``skbmodel/profiles/derived-<name>.toml``: :func:`derive` for the latest
    kernel at the description's TSC clock (an arm64 core: its core clock), listing only the constants
    that differ from its base profile (the rest it inherits).  ``scripts/derived_profiles.py`` writes it."""
    d = load(name)
    full = derive(name, ghz=None if "tsc_ghz" in d.figures else d.value("base_ghz"))
    base = load_profile(full.inherits)
    own = {k: c for k, c in full.constants.items() if base.constants.get(k) != c}
    return dataclasses.replace(full, id=derived_id(name), constants=own)


def untranslated(d: Description, kernel: str, exclude: tuple[str, ...], ghz: float) -> dict[str, float]:
    """The page_pool constants as derived before the ISA translation: the x86 CPUs' instruction counts at
    the core's width and locked-op latency alone (:func:`cost_cycles`), for the before/after comparison."""
    train, out = training(exclude=exclude), {}
    for k in DERIVED_PP:
        nk = cost_era(kernel, k)
        pts = _era_points(train, nk, k)
        out[k] = cost_cycles(float(np.mean([t["instr"][k] for t in pts])), d, nk, k, ghz)
    return out


# ---- SLUB, zeroing and the page allocator: operation counts x per-operation cost ----------

#: per-operation figures of a description the counts below multiply [core cycles per operation];
#: ``line_store`` is one 64-byte line of ``rep stos``, ``64 / rep_stos_bytes_per_cycle``
OP_FIGURES = ("cmpxchg16b_cycles", "lock_add_cycles", "l2_latency_cycles", "l3_latency_cycles",
              "rep_stos_startup_cycles", "line_store")
#: the pcp lists are protected by a spinlock since v6.0 (Mel Gorman, "mm/page_alloc: protect PCP
#: lists with a spinlock", commit 4b23a68f9536): one locked ``spin_trylock`` per list access; before,
#: ``local_lock_irqsave`` (5.13-5.19) or ``local_irq_save``, no locked operation
PCP_SPINLOCK = "6.0"


def _pcp_locks(kernel: str, per_access: float) -> float:
    return per_access if era.version_key(kernel) >= era.version_key(PCP_SPINLOCK) else 0.0


#: ``constant: (subsystem, counts(kernel) -> {figure: operations}, residual fitted?, code path)``.
#: The counts are read from the kernel's code path; what the description has no figure for (the
#: instructions around the operations) is the residual, core cycles fitted on the CPUs that measure
#: the constant (``True``), or nothing (``False``: the constant is the counted operations alone).
COST_MODEL = {
    "slub_fast_pair_cycles": (
        "slub", lambda k: {"cmpxchg16b_cycles": 2.0}, True,
        "slab_alloc_node -> __slab_alloc_node and do_slab_free: one this_cpu_cmpxchg_double (x86: cmpxchg16b "
        "on the per-CPU freelist and tid; this_cpu_try_cmpxchg128 since 6.5) each"),
    "slub_bulk_obj_pair_cycles": (
        "slub", lambda k: {}, True,
        "__kmem_cache_alloc_bulk pops c->freelist with interrupts off (local_lock_irq), kmem_cache_free_bulk "
        "groups objects per slab with build_detached_freelist: no atomic operation per object"),
    "slub_loop_call_cycles": (
        "slub", lambda k: {}, True, "the generic bulk fallback's calls and loop set-up, once per run"),
    "slub_free_slow_extra_cycles": (
        "slub", lambda k: {"cmpxchg16b_cycles": 1.0}, True,
        "__slab_free -> slab_update_freelist: one locked cmpxchg16b on the slab's freelist and counters"),
    "slub_refill_cycles": (
        "slub", lambda k: {"cmpxchg16b_cycles": 2.0, "lock_add_cycles": 1.0}, True,
        "___slab_alloc: get_partial_node takes n->list_lock (one locked operation), the slab's freelist is "
        "taken with __slab_update_freelist and the old CPU slab deactivated with another (deactivate_slab)"),
    "l1_miss_cycles": (
        "slub", lambda k: {"l2_latency_cycles": 2.0}, False,
        "per object past the usable L1d: the alloc and the free each load the object's free-pointer line "
        "(get_freepointer, set_freepointer) from the L2"),
    "l2_miss_cycles": (
        "slub", lambda k: {"l3_latency_cycles": 2.0, "l2_latency_cycles": -2.0}, False,
        "per object past the L2: the same two free-pointer lines from the L3 instead of the L2"),
    "stos_setup_cycles": (
        "zeroing", lambda k: {"rep_stos_startup_cycles": 1.0}, True,
        "a compile-time-size memset is an inline rep stosq (one start-up per call)"),
    "stos_line_cycles": (
        "zeroing", lambda k: {"line_store": 1.0}, True, "rep stosq: one 64-byte line per line_store"),
    "stos_drain_line_cycles": (
        "zeroing", lambda k: {}, True, "stores past the store buffer wait for the L1 (no figure: residual only)"),
    "erms_setup_cycles": (
        "zeroing", lambda k: {"rep_stos_startup_cycles": 1.0}, True,
        "memset_erms (arch/x86/lib/memset_64.S): one rep stosb start-up per call"),
    "erms_line_cycles": (
        "zeroing", lambda k: {"line_store": 1.0}, True, "rep stosb: one 64-byte line per line_store"),
    "page_single_cycles": (
        "page_alloc", lambda k: {"l2_latency_cycles": 2.0, "lock_add_cycles": _pcp_locks(k, 2.0)}, True,
        "__alloc_pages -> get_page_from_freelist -> rmqueue_pcplist and __free_pages -> free_unref_page: "
        "the page's struct page line on the pcp list twice, the pcp spinlock twice since 6.0"),
    "page_bulk_page_cycles": (
        "page_alloc", lambda k: {"l2_latency_cycles": 2.0, "lock_add_cycles": _pcp_locks(k, 1.0)}, True,
        "alloc_pages_bulk: __rmqueue_pcplist per page (struct page line), and the page freed one at a time "
        "(free_unref_page: struct page line, the pcp spinlock since 6.0)"),
    "page_bulk_call_cycles": (
        "page_alloc", lambda k: {"lock_add_cycles": _pcp_locks(k, 1.0)}, True,
        "alloc_pages_bulk: the zone and pcp-list set-up and one pcp lock per call"),
    "page_buddy_extra_cycles": (
        "page_alloc", lambda k: {"l3_latency_cycles": 1.0, "lock_add_cycles": 1.0 / 31.0}, True,
        "rmqueue_bulk refills the pcp list under zone->lock (one locked operation per batch of 31 pages), "
        "__rmqueue splits buddies whose struct pages are cold (one L3 access per page)"),
}
#: constants of these subsystems that are no per-CPU cost (kernel, benchmark or workload properties):
#: inherited from the era's base profile on every CPU
NOT_CPU_COSTS = ("slub_object_bytes", "slub_slab_bytes", "slub_free_share", "slab_fill_fraction",
                 "l1_usable_fraction", "slab_locality", "cacheline_bytes", "pcp_high_pages", "page_alloc_share")
#: which constants a measured profile's own data give, and the kernel of that data (where a profile's
#: other constants are inherited or come from another CPU's published tables, they are not listed)
MEASURES = {
    "e5-1650v4": {
        # seed 004 rows kfl-01..kfl-04 (net-next 2023-01) and seed 000 (kfree_skb_list, 2023-01)
        **dict.fromkeys(("slub_fast_pair_cycles", "slub_bulk_obj_pair_cycles", "slub_free_slow_extra_cycles"), "6.2"),
        # seed 002 (time_bench_memset, 2021-01)
        **dict.fromkeys(("stos_setup_cycles", "stos_line_cycles", "stos_drain_line_cycles", "erms_setup_cycles",
                         "erms_line_cycles"), "5.11"),
        # corpus pa-e51650v4-2021-* (mel/linux.git mm-bulk-rebase-v5r9, 2021-03)
        **dict.fromkeys(("page_single_cycles", "page_bulk_page_cycles", "page_bulk_call_cycles"), "5.12"),
    },
    "i7-4790k": {
        # corpus slub-i7-4790k-2016-01-kfree-bulk-* (AKPM mm tree 2016-01)
        **dict.fromkeys(("slub_fast_pair_cycles", "slub_loop_call_cycles", "slub_bulk_obj_pair_cycles",
                         "slub_free_slow_extra_cycles", "slub_refill_cycles", "l1_miss_cycles"), "4.5"),
        # corpus pa-2017-rfc-* (4.10-rc2; CPU inferred, see INFERRED_CPU)
        **dict.fromkeys(("page_single_cycles", "page_bulk_page_cycles", "page_bulk_call_cycles",
                         "page_buddy_extra_cycles"), "4.10"),
    },
    "epyc-9684x": {
        # corpus pp-epyc9684x-2025-02-v613-ibpb-sample-page-alloc-put (time_bench_sample's alloc_page +
        # put_page loop, page_bench04's single-page loop; v6.13, spec_rstack_overflow=ibpb: plain returns)
        "page_single_cycles": "6.13",
    },
    "epyc-7351": {
        # corpus zero-epyc7351-2020-const-256 and -erms-256 (time_bench_memset, prototype-kernel pull
        # request #39, 2020-06, kernel not stated: dated 5.8 by skbmodel.machine.era): the two start-ups, each the
        # row less four derived lines (one size cannot split a start-up from a per-line cost)
        **dict.fromkeys(("stos_setup_cycles", "erms_setup_cycles"), "5.8"),
    },
}
#: corpus series whose CPU the corpus does not name, with the description they were measured on
INFERRED_CPU = {
    "slub-2023-kfree-skb-list-": ("broadwell-ep", "109 cycles 30.532 ns, the numbers of seed 004 row kfl-01, whose "
                                  "test lab is the E5-1650 v4 (profile e5-1650v4)"),
    "pa-2017-rfc-": ("haswell", "inferred, not stated: TSC 4.00 GHz from cycles/ns (158 cycles 39.593 ns) and the "
                     "tester's i7-4790K @ 4.00GHz of the SLUB threads of 2015-2016; the E5-1650 v4 counts 3.6"),
}
def _profile_year(prof: Profile) -> float:
    return era.year_of_range(prof.kernels or (LATEST_KERNEL, LATEST_KERNEL))


def op_costs(d: Description, fallback: dict[str, float] | None = None) -> tuple[dict[str, float], list[str]]:
    """The per-operation costs of description ``d`` [core cycles per operation], and the figures it lacks.

    ``line_store = 64 / rep_stos_bytes_per_cycle``; a figure the description lacks takes ``fallback``'s
    value (the training CPUs' mean: the derivation then carries their cycles over), named in the list.
    """
    out, missing = {}, []
    for name in OP_FIGURES:
        fig = "rep_stos_bytes_per_cycle" if name == "line_store" else name
        if fig in d.figures:
            out[name] = 64.0 / d.value(fig) if name == "line_store" else d.value(fig)
        else:
            missing.append(fig)
            if fallback is not None:
                out[name] = fallback[name]
    return out, missing


def counted_cycles(counts: dict[str, float], costs: dict[str, float]) -> float:
    """``sum(count_i * cost_i)`` [core cycles]: the operations of a code path at a CPU's costs."""
    return float(sum(n * costs[f] for f, n in counts.items() if n))


#: corpus outputs that measure one constant of :data:`COST_MODEL` by themselves (the benchmark runs that
#: constant's code path alone), so that a published run of a described CPU on another kernel trains the
#: derivation as a profile does: ``slab_bulk_test01``'s "kmem fastpath reuse" allocates and frees one
#: object again and again, every pair served by the CPU slab (corpus row slub-e51650v4-2020-fastpath).
#: A row counts where it adds a kernel era: at least :data:`DIRECT_MIN_YEARS` from every other record of
#: its CPU and constant (a profile, or a row taken before), so that one era of one CPU is one record
DIRECT_MEASURES = {"other:slub.fastpath_reuse_cycles": "slub_fast_pair_cycles"}
DIRECT_MIN_YEARS = 1.0


@functools.lru_cache(maxsize=1)
def _direct_rows_all() -> tuple[tuple[str, str, str, str, float], ...]:
    """``(uarch, constant, row id, kernel, TSC cycles)`` of every corpus row of :data:`DIRECT_MEASURES` on a
    described x86 CPU whose kernel is known (the shipped corpus, read once per process)."""
    from .corpus import load_corpus  # imported here: the model's import does not read the corpus

    ds = descriptions()
    df = load_corpus()
    out = []
    for r in df[df["output"].isin(list(DIRECT_MEASURES))].itertuples(index=False):
        name = row_uarch(r, ds)
        kernel = era.kernel_of(r.kernel) or era.kernel_of(r.source)
        if name is None or ds[name].isa != "x86" or kernel is None:
            continue
        if "memcg-active" in str(r.series):  # a configuration the model does not describe (see leave_one_out._judged)
            continue
        if str(r.unit).startswith("cycles"):
            out.append((name, DIRECT_MEASURES[r.output], r.id, kernel, float(r.value)))
    return tuple(out)


def _direct_rows(exclude: tuple[str, ...]) -> list[tuple[str, str, str, str, float]]:
    """:func:`_direct_rows_all` without the CPUs of ``exclude``."""
    return [row for row in _direct_rows_all() if row[0] not in exclude]


def _record(d: Description, source: str, k: str, kernel: str, tsc_cycles: float, tsc_ghz: float) -> dict:
    costs, _ = op_costs(d)
    core = tsc_cycles * d.value("turbo_ghz") / d.value("tsc_ghz")
    return dict(uarch=d.name, profile=source, kernel=kernel, year=era.year_of(kernel), core=core,
                ns=tsc_cycles / tsc_ghz, costs=costs,
                residual=core - counted_cycles(COST_MODEL[k][1](kernel), costs))


def cost_training(exclude: tuple[str, ...] = ()) -> dict[str, list[dict]]:
    """Per constant of :data:`COST_MODEL`, the measured CPUs' values: one record per profile of
    :data:`MEASURES` and per corpus row of :data:`DIRECT_MEASURES` (x86 only: the counts are x86 code
    paths), with the value in core cycles (``value * turbo / tsc`` of its description), ns, the kernel of
    the data and the residual ``core - counted`` at its own per-operation costs."""
    out = {k: [] for k in COST_MODEL}
    ds = descriptions()
    for d in ds.values():
        if d.name in exclude or d.isa != "x86":
            continue
        for pid in d.profiles:
            if pid not in MEASURES or pid not in available_profiles():
                continue
            prof = load_profile(pid)
            own = set(own_names(pid))
            sku = d.for_cpu(prof.name)  # the clocks of the SKU the profile was measured on
            for k, kernel in MEASURES[pid].items():
                # a core without ERMS runs the variable-size memset as __memset's rep stosq body, priced
                # as the stos constants (NO_ERMS_AS): it says nothing of an ERMS core's rep stosb, and the
                # same string instruction's start-up is already the CPU's stos record of that era
                if k in NO_ERMS_AS and not d.has_erms:
                    continue
                if k in own:  # else listed, but the profile file does not hold it (yet): inherited
                    out[k].append(_record(sku, pid, k, kernel, prof.value(k), prof.ghz))
    for name, k, rid, kernel, tsc_cycles in _direct_rows(exclude):
        year = era.year_of(kernel)
        if all(t["uarch"] != name or abs(t["year"] - year) >= DIRECT_MIN_YEARS for t in out[k]):
            out[k].append(_record(ds[name], f"corpus {rid}", k, kernel, tsc_cycles, ds[name].value("tsc_ghz")))
    return out


def kernel_drift(exclude: tuple[str, ...] = (), sub: str = "page_pool",
                 train: dict[str, list[dict]] | None = None) -> tuple[float, str]:
    """Relative drift of a cost of subsystem ``sub`` between kernels [1/sqrt(year)] and where it comes from.

    ``d^2 = mean(ln(c_a / c_b)^2 / |year_a - year_b|)`` over the costs of ``sub`` measured on one CPU in
    two kernels at least half a year apart: a random walk of the log cost over kernel time.  For
    page_pool the pairs are two profiles of one description (each dated by the middle of its
    ``kernels``); for SLUB, zeroing and the page allocator two training records of one constant
    (``train``, default :func:`cost_training` of ``exclude``: a profile and a corpus row of
    :data:`DIRECT_MEASURES`).  Without a pair, a
    subsystem takes the page_pool drift, and without a page_pool pair, the cross-CPU spread of
    :func:`spread` per year (an assumption).
    """
    terms, who = [], []
    if sub != "page_pool":
        for k, recs in (cost_training(exclude) if train is None else train).items():
            if COST_MODEL[k][0] != sub:
                continue
            for i, a in enumerate(recs):
                for b in recs[i + 1:]:
                    dy = abs(a["year"] - b["year"])
                    if a["uarch"] == b["uarch"] and dy >= 0.5:
                        who.append(f"{k} of {a['profile']} ({a['kernel']}) vs {b['profile']} ({b['kernel']})")
                        terms.append(math.log(a["core"] / b["core"]) ** 2 / dy)
        if not terms:
            return kernel_drift(exclude)
        d = math.sqrt(float(np.mean(terms)))
        return d, f"{d:.2f}/sqrt(year) from {', '.join(who)}"
    for d in descriptions().values():
        if d.name in exclude:
            continue
        profs = [load_profile(p) for p in d.profiles if p in available_profiles()]
        profs = [p for p in profs if _measures_page_pool(p)]
        for i, a in enumerate(profs):
            for b in profs[i + 1:]:
                dy = abs(_profile_year(a) - _profile_year(b))
                if dy < 0.5:
                    continue
                who.append(f"{a.id} vs {b.id}")
                terms += [math.log(a.value(k) / b.value(k)) ** 2 / dy for k in DERIVED_PP]
    if terms:
        d = math.sqrt(float(np.mean(terms)))
        return d, f"{d:.2f}/sqrt(year) from the page_pool costs of {', '.join(who)}"
    s = spread(training(exclude=exclude))[0]
    return s, (f"{s:.2f}/sqrt(year): no CPU of the training data was measured in two kernel eras, so one year "
               "of kernel changes is taken to move a cost as much as a change of CPU does (an assumption)")


def derive_cost(name: str, target: Description, kernel: str, train: list[dict], s_cpu: float,
                drift: float) -> dict:
    """One constant of :data:`COST_MODEL` for CPU ``target`` on ``kernel`` [core cycles], with its
    relative sd, from the measured CPUs ``train`` (:func:`cost_training`).

    ECM style: ``core = sum(count_i(kernel) * cost_i(target)) + residual``.  Each training CPU ``j``
    gives a candidate ``v_j = counted(target) + residual_j`` (``residual_j = core_j - counted(j)``, 0
    for a constant that is its counted operations alone); the candidates are combined in log space
    with weights ``1 / var_j``, ``var_j = s_cpu^2 + drift^2 |year(kernel) - year_j|`` (the spread
    between CPUs and a random walk over kernel time).  The relative sd is ``sqrt(1 / sum(1/var_j))``,
    or the weighted spread of the candidates when that is larger (two or more CPUs); with no training
    CPU the counted operations alone, at ``s_cpu``, or None when nothing is counted.
    """
    sub, counts, fitted, _path = COST_MODEL[name]
    fallback = {f: float(np.mean([t["costs"][f] for t in train])) for f in OP_FIGURES} if train else None
    costs, missing = op_costs(target, fallback)
    n = {f: c for f, c in counts(kernel).items() if c}
    if any(f not in costs for f in n):  # no training CPU to lend the figure
        return dict(core=None, rel_sd=None, missing=missing, who=[], counted=float("nan"))
    counted = counted_cycles(n, costs)
    year = era.year_of(kernel)
    if not train:
        if fitted or counted <= 0:
            return dict(core=None, rel_sd=None, missing=missing, who=[], counted=counted)
        return dict(core=counted, rel_sd=s_cpu, missing=missing, who=[], counted=counted)
    if fitted:
        cands = np.array([max(counted + t["residual"], 0.05 * t["core"]) for t in train])
    else:
        cands = np.full(len(train), counted)
    var = np.array([s_cpu ** 2 + drift ** 2 * abs(year - t["year"]) for t in train])
    w = 1.0 / var
    # the spread: of the candidates, or (counted operations alone) of measured / counted on each CPU
    logs = np.log(cands) if fitted else np.log([t["core"] / counted_cycles(counts(t["kernel"]), t["costs"])
                                                * counted for t in train])
    mean = float(np.sum(w * np.log(cands)) / np.sum(w))
    rel_var = float(1.0 / np.sum(w))
    if len(train) >= 2:
        spread = float(np.sum(w * (logs - np.average(logs, weights=w)) ** 2) / np.sum(w))
        spread *= len(train) / (len(train) - 1)
        rel_var = max(rel_var, spread)
    return dict(core=math.exp(mean), rel_sd=math.sqrt(rel_var), missing=missing, counted=counted,
                who=sorted({f"{t['uarch']} ({t['profile']}, {t['kernel']})" for t in train}))


def costs_note(costs: dict[str, Constant]) -> str:
    """The notes' clause on the derived SLUB, zeroing and page-allocator constants."""
    subs = sorted({COST_MODEL[k][0] for k in costs if k in COST_MODEL})
    names = {"slub": "SLUB", "zeroing": "zeroing", "page_alloc": "the page allocator"}
    return (f"{', '.join(names[s] for s in subs)} as operation counts of their kernel code paths x the "
            "description's per-operation costs plus residual core cycles fitted on the CPUs that measure them "
            "(skbmodel.evidence.derive.COST_MODEL)" if subs else "SLUB, zeroing and the page allocator inherited")


#: on a core without ERMS the variable-size ``memset`` (what ``__GFP_ZERO`` calls) is ``__memset``'s
#: X86_FEATURE_REP_GOOD body -- ``rep stosq`` of ``n / 8`` quadwords, then ``rep stosb`` of ``n % 8``
#: bytes (arch/x86/lib/memset_64.S, 5.x-6.1) -- the string instruction of the constant-size memset, so
#: its constants are derived as those (the ERMS ``rep stosb`` microcode of the training CPU says
#: nothing of it).  Not counted: the call and the zero-count ``rep stosb`` (no figure for either).
NO_ERMS_AS = {"erms_setup_cycles": "stos_setup_cycles", "erms_line_cycles": "stos_line_cycles"}


def transfer_spread(train_all: dict[str, list[dict]], exclude: tuple[str, ...], s_cpu: float,
                    drifts: dict[str, tuple[float, str]]) -> tuple[float | None, int]:
    """How far a constant moves from one CPU to another [relative sd], seen where two CPUs measure it.

    Inner leave one CPU out over the constants of :data:`COST_MODEL` with a fitted residual that two
    or more training CPUs measure: each CPU's measured core cycles are predicted by :func:`derive_cost`
    from the *other* CPUs' records, and ``sd = sqrt(mean(ln(measured / predicted)^2))`` over them.  This
    is the error of carrying a constant to a CPU that did not measure it, kernel drift between the
    records included (it is not taken out: the records are years apart, which makes the figure larger
    than a move between CPUs of one era would be).  ``None`` and 0 when no constant has two CPUs.
    """
    errs = []
    for k, recs in train_all.items():
        cpus = sorted({t["uarch"] for t in recs})
        if len(cpus) < 2 or not COST_MODEL[k][2]:
            continue
        drift = drifts[COST_MODEL[k][0]][0]
        for cpu in cpus:
            rest = [t for t in recs if t["uarch"] != cpu]
            target = load(cpu)
            for t in (t for t in recs if t["uarch"] == cpu):
                pred = derive_cost(k, target, t["kernel"], rest, s_cpu, drift)["core"]
                errs.append(math.log(t["core"] / pred))
    if not errs:
        return None, 0
    return float(np.sqrt(np.mean(np.square(errs)))), len(errs)


def derive_costs(d: Description, ghz: float, kernel: str, exclude: tuple[str, ...] = ()) -> dict[str, Constant]:
    """The SLUB, zeroing and page-allocator constants of CPU ``d`` for ``kernel`` at TSC clock ``ghz``
    [TSC cycles]: :func:`derive_cost` of each constant of :data:`COST_MODEL`, converted with the
    description's clocks, ``cost_tsc = core * ghz / turbo_ghz`` (a time_bench loop runs one core at
    turbo); ``stderr = rel_sd * cost_tsc`` on log scale (``scale = "log"``: ``rel_sd`` [1] is the sd of
    ``ln cost``).  ``store_buffer_bytes = store_buffer_entries * 8`` (one 8-byte rep stosq store per
    entry).  Constants without a count or data are left out (inherited).

    Log scale because every term of ``rel_sd`` is an sd of ``ln``: :func:`derive_cost` combines its
    candidates as ``ln`` with variances ``s_cpu^2 + drift^2 |dyear|`` (:func:`kernel_drift`: a random
    walk of ``ln cost``) and takes the weighted spread of their ``ln``, and :func:`transfer_spread` is the
    rms of ``ln(measured / predicted)``.  The error is a factor, so a constant alone has the interval
    ``[v exp(-z rel_sd), v exp(z rel_sd)]`` (:mod:`skbmodel.uncertainty`), never 0; read as a linear sd,
    ``v -+ z rel_sd v``, the sds of 0.4-1.1 these constants have put the 90 % lower bound below 0
    (docs/intervals.md, "Derived constants on log scale").  ``s_cpu`` (:func:`spread`) is an rms of
    relative residuals, ``~ ln`` residuals at the sizes it has; it enters here as the ``ln`` sd it
    approximates.

    On a core without ERMS (:attr:`Description.has_erms`) the ``erms_*`` constants are derived as their
    ``rep stosq`` counterparts (:data:`NO_ERMS_AS`).

    Single-CPU rule: a constant that fewer than two training CPUs measure shows no spread between CPUs,
    so its own relative sd (the page_pool spread and the kernel drift) only says how far the one CPU's
    value may be from itself.  Its relative sd is therefore at least :func:`transfer_spread`, the error
    with which the constants that two CPUs measure carry from one CPU to the other.  The note names the
    vendors behind that figure: where they are Intel cores only, a move to another vendor's core (another
    microcode for the same string instruction, another store path) is not in it either: a lower bound,
    stated as such.  :func:`transfer_spread` and not :func:`carry_spread` (the move of a carried path base):
    its residuals are this derivation's own (counted operations plus a residual fitted on the other CPUs,
    across kernel years), the error a derived constant of one CPU's data does have; it stays a floor
    (``max``) on ``rel_sd``, not a term added to it, so its kernel drift is not counted twice.
    """
    train_all = cost_training(exclude)
    s_cpu = spread(training(exclude=exclude))[0]
    drifts = {sub: kernel_drift(exclude, sub, train_all) for sub in {v[0] for v in COST_MODEL.values()}}
    s_move, n_move, move_who = _move_spread(exclude)
    clock = counting_clock(d)
    turbo = d.value("turbo_ghz")
    isa_note = "" if d.isa == "x86" else (f" ({d.isa}: the x86 code paths' counts and the x86 CPUs' residuals, "
                                          "a different instruction sequence)")
    out = {}
    for k in COST_MODEL:
        src = NO_ERMS_AS.get(k, k) if d.isa == "x86" and not d.has_erms else k
        sub, counts, fitted, path = COST_MODEL[src]
        drift, drift_note = drifts[sub]
        r = derive_cost(src, d, kernel, train_all[src], s_cpu, drift)
        if r["core"] is None:
            continue
        rel_sd = r["rel_sd"]
        n_cpus = len({t["uarch"] for t in train_all[src]})
        move_note = ""
        if n_cpus < 2 and s_move is not None:
            move_note = (f"; measured on {'one CPU' if n_cpus else 'no CPU'}: at least {s_move:.2f}, the rms "
                         f"error of carrying the constants two CPUs measure from one CPU to the other ({n_move} "
                         f"residuals, {move_who})")
            rel_sd = max(rel_sd, s_move)
        if src != k:
            path = (f"no ERMS ({d.features_source}): memset runs __memset's REP_GOOD body, rep stosq then "
                    f"rep stosb of the remainder, priced as {src}: {path}")
        value = r["core"] * ghz / turbo
        n = counts(kernel)
        ops = " + ".join(f"{c:g} x {f}" for f, c in n.items() if c) or "no counted operation"
        used = {"rep_stos_bytes_per_cycle" if f == "line_store" else f for f, c in n.items() if c}
        lent = [f for f in r["missing"] if f in used]
        lacks = f"; the description lacks {', '.join(lent)}: the training CPUs' mean taken" if lent else ""
        data = (f"residual core cycles fitted on {', '.join(r['who'])}" if fitted and r["who"] else
                f"checked against {', '.join(r['who'])}" if r["who"] else "no CPU measures it")
        out[k] = Constant(k, round(value, 3), "cycles", "assumed",
                          f"derived: {ops} ({path}) = {r['counted']:.1f} core cycles at the description's costs"
                          f"{lacks}; {data}{isa_note}; {r['core']:.1f} core cycles x TSC {ghz:g} / turbo {turbo:g} "
                          f"GHz; uncertainty: sd of ln {rel_sd:.2f} (log scale), the spread between CPUs "
                          f"({s_cpu:.2f}) and a kernel drift of {drift_note}{move_note}",
                          stderr=round(rel_sd * value, 3), clock=clock, scale="log")
    if "store_buffer_entries" in d.figures:
        f = d.figures["store_buffer_entries"]
        out["store_buffer_bytes"] = Constant(
            "store_buffer_bytes", f.value * 8.0, "bytes", "published",
            f"store_buffer_entries x 8 B = {f.value:g} x 8 B (one rep stosq store each): {f.source} "
            f"(description {d.name}); "
            "uncertainty: 0: a documented buffer size")
    return out


@functools.lru_cache(maxsize=8)
def _move_spread(exclude: tuple[str, ...] = ()) -> tuple[float | None, int, str]:
    """:func:`transfer_spread` over the training CPUs (less ``exclude``) and the vendors behind it:
    ``(relative sd, residuals, "Intel and AMD cores")``."""
    train_all = cost_training(exclude)
    s_cpu = spread(training(exclude=exclude))[0]
    drifts = {sub: kernel_drift(exclude, sub, train_all) for sub in {v[0] for v in COST_MODEL.values()}}
    s_move, n_move = transfer_spread(train_all, exclude, s_cpu, drifts)
    # the vendors of the CPUs behind s_move (the constants two or more CPUs measure)
    movers = sorted({load(t["uarch"]).vendor for k, recs in train_all.items()
                     if COST_MODEL[k][2] and len({t["uarch"] for t in recs}) >= 2 for t in recs})
    who = ("Intel cores only: another vendor's core is not in it" if movers == ["Intel"] else
           f"{' and '.join(movers)} cores")
    return s_move, n_move, who


def counting_clock(d: Description) -> str:
    """The clock a profile of CPU ``d`` counts its cycles in (:data:`skbmodel.machine.profile.CLOCKS`): the TSC
    on x86, the core clock on a core without one (arm64: ``ghz`` is then the description's base clock)."""
    return "tsc" if "tsc_ghz" in d.figures else "core"


#: constants carried between CPUs as ns, not as core cycles: a cacheline moving between two cores'
#: caches waits on the interconnect (mesh, Infinity Fabric), whose clock is not the core's
CARRIED_AS_NS = ("xcpu_line_cycles",)


def carry_factor(src: Description, src_ghz: float, dst: Description, dst_ghz: float, as_ns: bool = False) -> float:
    """Cycles counted on CPU ``src`` at ``src_ghz`` -> cycles counted on ``dst`` at ``dst_ghz`` [ratio].

    ``src_turbo / src_ghz * dst_ghz / dst_turbo``: the cost's core cycles on the source core, which runs
    a busy loop at its turbo clock (:func:`cost_cycles`), carried unchanged as core cycles (as the
    derivation carries a residual, :func:`derive_cost`) and counted by the target's clock.  ``as_ns``:
    the cost is carried as time, ``dst_ghz / src_ghz`` (:data:`CARRIED_AS_NS`)."""
    if as_ns:
        return dst_ghz / src_ghz
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
            conv = (f"{c.value:g} cycles / {base.ghz:g} GHz = {c.value / base.ghz:.1f} ns x {ghz:g} GHz (carried as "
                    "ns: a line's move between cores waits on the interconnect, not on the core clock)")
        else:
            conv = (f"{c.value:g} cycles of {base.ghz:g} GHz x turbo {src.value('turbo_ghz'):g} / {base.ghz:g} = "
                    f"{c.value * src.value('turbo_ghz') / base.ghz:.1f} core cycles of {src.name} under load, carried "
                    f"as core cycles, x {ghz:g} / turbo {d.value('turbo_ghz'):g} GHz ({clock} cycles of {d.name})")
        unc = (f"sd of ln {rel:.2f} (log scale): its own {own:.2f} in {origin}, which measured it, and "
               f"{move:.2f} for one move to another CPU (skbmodel.evidence.derive.carry_spread: the same-era page_pool "
               f"costs of {who} carried unchanged as core cycles, {n_move} residuals), in quadrature"
               if move else f"relative sd {rel:.2f}: its own in {origin} (measured on this CPU)")
        out[k] = dataclasses.replace(  # not fitted here: an assumption that the other CPU's cost carries
            c, value=round(value, 3), stderr=round(rel * value, 3), clock=clock, bounds=None,
            kind="assumed" if c.kind == "fitted" else c.kind, scale="log" if move else o.scale,
            origin=origin,
            source=f"carried from {base.id} ({how}): {conv}; there: {c.source.split('; uncertainty: ')[0]}; "
                   f"uncertainty: {unc}")
    return out


def row_uarch(r, ds: dict[str, Description]) -> str | None:
    """The description a corpus row was measured on: an inferred CPU (:data:`INFERRED_CPU`), the CPU of a
    measured profile, or a CPU the row names that a description's name patterns (``match``) recognise."""
    for prefix, (name, _why) in INFERRED_CPU.items():
        if str(r.series).startswith(prefix):
            return name
    for d in ds.values():
        if d.profiles and d.cpu.replace("Intel ", "") in str(r.cpu):
            return d.name
    if str(r.cpu).startswith(("not stated", "unstated")):
        return None
    for d in ds.values():
        if any(re.search(rx, str(r.cpu), re.I) for rx in d.match):
            return d.name
    return None
