"""SLUB, zeroing and the page allocator on a described CPU: operation counts of each constant's kernel code
path times the description's per-operation costs, plus a residual fitted on the CPUs that measure the
constant (:data:`COST_MODEL`), trained on the measured profiles and the corpus rows that measure one
constant alone (:data:`DIRECT_MEASURES`).  Part of the derivation, :mod:`skbmodel.evidence.derivation.derive`."""
from __future__ import annotations

import functools
import math
import re

import numpy as np

from ...machine import era
from ...machine.description import Description, descriptions, load
from ...machine.profile import Constant, Profile, available_profiles, load_profile, own_names
from .pp_counts import DERIVED_PP, LATEST_KERNEL, counting_clock, measures_page_pool, spread, training

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
    from ..corpus import load_corpus  # imported here: the model's import does not read the corpus

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
        profs = [p for p in profs if measures_page_pool(p)]
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
            "(skbmodel.evidence.derivation.opcounts.COST_MODEL)" if subs else "SLUB, zeroing and the page "
            "allocator inherited")


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

