"""The page_pool costs' instruction and locked-operation counts per kernel era, and the training set of
measured CPUs they are fitted on: the counted half of the derivation (:mod:`skbmodel.evidence.derivation.derive`, whose
docstring gives the whole method)."""
from __future__ import annotations

import math

import numpy as np

from ...physics import noise
from ...machine import era
from ...machine.description import Description, Figure, descriptions, load
from ...machine.profile import Profile, available_profiles, load_profile

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
            if not measures_page_pool(prof):
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

def measures_page_pool(prof: Profile) -> bool:
    """Whether the profile's page_pool costs are its own data (not inherited, not derived)."""
    parent = load_profile(prof.inherits) if prof.inherits else None
    own = [k for k in DERIVED_PP if parent is None or parent.constants.get(k) != prof.constants[k]]
    return len(own) == len(DERIVED_PP) and not any(prof.constants[k].source.startswith("derived:") for k in own)


def era_points(train: list[dict], new: bool, name: str | None = None) -> list[dict]:
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
                pts = era_points(rest, t["eras"][k], k)
                pred = cost_cycles(float(np.mean([p["instr"][k] for p in pts])), d, t["eras"][k], k, t["ghz"])
                res.append((t["tsc"][k] - pred) / pred)
    return float(np.sqrt(np.mean(np.square(res)))), len(res)



def counting_clock(d: Description) -> str:
    """The clock a profile of CPU ``d`` counts its cycles in (:data:`skbmodel.machine.profile.CLOCKS`): the TSC
    on x86, the core clock on a core without one (arm64: ``ghz`` is then the description's base clock)."""
    return "tsc" if "tsc_ghz" in d.figures else "core"

