"""Kernel configuration of a profile: memcg kmem accounting, return thunk, debug options, preemption, VM or
bare metal.

In the public data these move costs as much as the CPU does, so a profile states the configuration its
constants were measured under (``[config]`` in its TOML, :mod:`skbmodel.machine.profile`; an inheriting
profile keeps its parent's fields unless it states its own).  Each field defaults to
``"not stated"``: most published numbers do not say.

Two fields move constants.  The first is measured on one machine with everything else held:
**memcg kmem accounting active**.  On the kernels of 2015-2016 (one cgroup
with kmem accounting enabled at runtime), every ``kmem_cache_alloc``/``kmem_cache_free`` looked up
the per-memcg cache: the SLUB fast path (alloc + free of one object) went from 46 to 71 TSC cycles
on the same i7-4790K and kernel (corpus rows ``slub-i7-4790k-2016-01-fastpath`` and
``slub-i7-4790k-2016-01-fastpath-memcg-active``, Jesper Dangaard Brouer, kfree_bulk V2 series,
2016-01), a factor :data:`MEMCG_ACTIVE_FAST_PAIR` = 71 / 46 = 1.54 on the per-call fast pair::

    slub_fast_pair_cycles(active) = slub_fast_pair_cycles(not active) * 71 / 46

The bulk API pays the lookup once per call, so the bulk curves converge (the memcg-active bulk
column equals the inactive one from 16 objects up in the same series).  Compiled in but unused
(``CONFIG_MEMCG_KMEM=y`` without a kmem-accounted cgroup) costs nothing measurable: 15.2 against
14.7 ns per object in the one-at-a-time column of the 2015-12 RFC series
(``slub-2015-12-kfree-bulk-rfc-memcg-compiled-loop`` against ``...-nomemcg-loop``, bulk 1), within
that benchmark's run-to-run spread, so ``off`` and ``compiled`` are one state.  Since 4.5
(a9bb7e620efd, "memcg: only account kmem allocations marked as __GFP_ACCOUNT") kmem accounting is
opt-in: only ``__GFP_ACCOUNT`` allocations and ``SLAB_ACCOUNT`` caches are charged, and the skb head
cache (like the benchmark's own cache) is neither, so the hook costs a flag test.  The corpus's
memcg-active series ran on trees up to 4.5-rc, so the term applies to profiles of kernels up to 4.5
and is refused from 4.6 on (:data:`MEMCG_TERM_BEFORE`); 5.9's object-cgroup rework (10d5a62,
"mm: memcg/slab: use a single set of kmem_caches for all allocations") changed only the charged path.

**Return thunk** (``return_thunk``), predicted rather than fitted.  On AMD Zen 1-4 the default SRSO
mitigation (spec_rstack_overflow=safe-ret) sends every kernel ``ret`` through a return thunk;
spec_rstack_overflow=ibpb instead pays an IBPB on kernel entry and keeps a plain ``ret``.  The extra
cost of a path is its out-of-line function returns times the price of one::

    extra_cycles = n_returns * (function_call_cycles(safe-ret) - function_call_cycles(plain))

``n_returns`` is counted in the v6.13 source (6.13.7: net/core/page_pool.c, include/net/page_pool/helpers.h,
include/linux/ptr_ring.h, mm/page_alloc.c, mm/swap.c, kernel/locking/spinlock.c, kernel/Kconfig.locks) and
in bench_page_pool_simple, per loop iteration (:data:`RETURNS_V613`, each function with its file); the
price is the run's own time_bench_sample function-call pair where it has one, else 14 - 3 = 11 TSC cycles
on the EPYC 9684X (:data:`SRSO_SAFE_RET_PRICE_CYCLES`, one CPU).  The out-of-sample study of that
machine's safe-ret rows is evidence (:mod:`skbmodel.evidence.protocols.srso`).

``preempt``, ``debug`` and ``machine`` (bare metal or VM) are stated for reference: the public data
hold no pair of runs that differ in one of them alone, so they move no constant.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from . import era

NOT_STATED = "not stated"
#: each field: its allowed values (``not stated`` always allowed) and what it means
FIELDS: dict[str, tuple[tuple[str, ...], str]] = {
    "memcg_kmem": (("off", "compiled", "active"),
                   "memcg kmem accounting: off (not built), compiled (CONFIG_MEMCG_KMEM=y, no accounted cgroup) "
                   "or active (a cgroup with kmem accounting in use)"),
    "preempt": (("none", "voluntary", "full", "rt"), "preemption model (CONFIG_PREEMPT_*)"),
    "debug": (("off", "on"), "debug options that slow the allocator (lockdep, KASAN, slub_debug, ...)"),
    "machine": (("bare metal", "vm"), "bare metal or a virtual machine"),
    "return_thunk": (("none", "srso-safe-ret", "srso-ibpb"),
                     "what a kernel function return executes: none (a plain ret: no SRSO mitigation, or a CPU "
                     "it does not apply to), srso-safe-ret (AMD Zen 1-4 default: every ret jumps to the SRSO "
                     "return thunk) or srso-ibpb (spec_rstack_overflow=ibpb: IBPB on kernel entry, plain ret)"),
}
#: the return thunk in words, as the profile picker and the report say it
RETURN_THUNK_LABELS = {"none": "no return thunk (plain ret)",
                       "srso-safe-ret": "SRSO safe-RET (the Zen 1-4 default)",
                       "srso-ibpb": "spec_rstack_overflow=ibpb (IBPB, plain ret)",
                       NOT_STATED: "mitigations not stated"}
#: memcg kmem active / not active, SLUB per-call fast pair (71 / 46 TSC cycles, see the module text)
MEMCG_ACTIVE_FAST_PAIR = 71.0 / 46.0
MEMCG_SOURCE = ("memcg kmem active x 71/46 = 1.54 on the per-call fast pair: corpus rows "
                "slub-i7-4790k-2016-01-fastpath (46 cycles) and slub-i7-4790k-2016-01-fastpath-memcg-active "
                "(71 cycles), same i7-4790K and kernel (Jesper Dangaard Brouer, kfree_bulk V2 series, 2016-01)")
#: the per-memcg cache lookup the term describes exists in kernels before this release
MEMCG_TERM_BEFORE = "4.6"

#: The out-of-line function returns one loop iteration of bench_page_pool_simple executes on v6.13 (x86-64),
#: counted in the source of 6.13.7 and of the benchmark (see the module text).  Per constant, one row per
#: function: (function, source file, predicted, low, high, why).  ``predicted`` applies one rule fixed before
#: any comparison: an exported or noinline function returns; a static function the compiler may inline
#: (called once, or small at two sites) is inlined; a call that ends a function is a sibling call (no ret of
#: its own, -O2); locking follows x86-64 with PREEMPT_DYNAMIC (the x86 default: UNINLINE_SPIN_UNLOCK, so
#: spin_unlock is out of line), memcg built in.  ``low``/``high`` bracket the compiler's and the
#: configuration's choices.  Fractions are calls made once per refill of 64 pages (PP_ALLOC_CACHE_REFILL).
RETURNS_V613: dict[str, tuple[tuple[str, str, float, float, float, str], ...]] = {
    # tasklet_page_pool01 / no-softirq-page_pool01: alloc from and recycle_direct into the alloc cache
    "pp_fast_cycles": (
        ("page_pool_alloc_pages", "net/core/page_pool.c", 1, 1, 1, "EXPORT_SYMBOL, called by the module"),
        ("page_pool_alloc_netmem", "net/core/page_pool.c", 0, 0, 1,
         "EXPORT_SYMBOL in the same unit; inlined into page_pool_alloc_pages on v6.13 (the source's disassembly)"),
        ("page_pool_put_unrefed_netmem", "net/core/page_pool.c", 1, 1, 1,
         "EXPORT_SYMBOL; page_pool_recycle_direct, page_pool_put_netmem are static inline (page_pool/helpers.h)"),
        ("page_pool_recycle_in_cache", "net/core/page_pool.c", 0, 0, 1,
         "static, inside __always_inline __page_pool_put_page, which is expanded at two sites"),
    ),
    # tasklet_page_pool02: alloc from the cache, put_page into the ptr_ring under its producer lock
    "pp_ring_cycles": (
        ("page_pool_alloc_pages", "net/core/page_pool.c", 1, 1, 1, "EXPORT_SYMBOL"),
        ("page_pool_alloc_netmem", "net/core/page_pool.c", 0, 0, 1, "as on the fast path"),
        ("page_pool_refill_alloc_cache", "net/core/page_pool.c", 1 / 64, 1 / 64, 1 / 64,
         "noinline; once per 64 allocations (the ring's 64 pages move to the cache in one refill)"),
        ("page_pool_put_unrefed_netmem", "net/core/page_pool.c", 1, 1, 1, "EXPORT_SYMBOL"),
        ("page_pool_napi_local", "net/core/page_pool.c", 0, 0, 1, "static, two call sites"),
        ("page_pool_recycle_in_ring", "net/core/page_pool.c", 0, 0, 1, "static, called once"),
        ("_raw_spin_lock", "kernel/locking/spinlock.c", 1, 1, 1,
         "ptr_ring_produce's spin_lock (include/linux/ptr_ring.h); x86 selects no ARCH_INLINE_SPIN_LOCK"),
        ("_raw_spin_unlock", "kernel/locking/spinlock.c", 1, 0, 1,
         "out of line under UNINLINE_SPIN_UNLOCK (PREEMPT_BUILD: full or dynamic preemption)"),
    ),
    # tasklet_page_pool03 / no-softirq-page_pool03: an extra page reference makes put_page release the page
    "page_slow_cycles": (
        ("page_pool_alloc_pages", "net/core/page_pool.c", 1, 1, 1, "EXPORT_SYMBOL"),
        ("page_pool_alloc_netmem", "net/core/page_pool.c", 0, 0, 1, "as on the fast path"),
        ("refill + __page_pool_alloc_pages_slow + alloc_pages_bulk_noprof + pcp trylock/unlock",
         "net/core/page_pool.c, mm/page_alloc.c", 5 / 64, 4 / 64, 6 / 64,
         "noinline / exported; once per bulk refill of 64 pages (the ring is empty)"),
        ("prep_new_page", "mm/page_alloc.c", 0, 0, 1, "static, two call sites; per page of the bulk refill"),
        ("post_alloc_hook", "mm/page_alloc.c", 0, 0, 1, "non-static inline, also called from mm/compaction.c"),
        ("page_pool_set_pp_info", "net/core/page_pool.c", 0, 0, 1, "global, two call sites in the unit"),
        ("page_pool_put_unrefed_netmem", "net/core/page_pool.c", 1, 1, 1, "EXPORT_SYMBOL"),
        ("page_pool_return_page", "net/core/page_pool.c", 1, 1, 1, "static, seven call sites"),
        ("page_pool_clear_pp_info", "net/core/page_pool.c", 0, 0, 1, "global, one call site in the unit"),
        ("__folio_put", "mm/swap.c", 1, 1, 1, "EXPORT_SYMBOL; the benchmark's put_page drops the last reference"),
        ("__mem_cgroup_uncharge", "mm/memcontrol.c", 1, 0, 1,
         "mem_cgroup_uncharge's out-of-line part, returns at once for an uncharged folio; 0 without memcg"),
        ("free_unref_page", "mm/page_alloc.c", 0, 0, 1, "the last call of __folio_put: a sibling call"),
        ("get_pfnblock_flags_mask", "mm/page_alloc.c", 0, 0, 1, "global, same unit"),
        ("_raw_spin_trylock", "kernel/locking/spinlock.c", 1, 1, 1,
         "pcp_spin_trylock; x86 selects no ARCH_INLINE_SPIN_TRYLOCK"),
        ("free_unref_page_commit", "mm/page_alloc.c", 0, 0, 1, "static, two call sites"),
        ("_raw_spin_unlock", "kernel/locking/spinlock.c", 1, 0, 1, "pcp_spin_unlock; as on the ptr_ring path"),
    ),
}
#: process context (no-softirq-page_pool02): ptr_ring_produce_bh replaces the plain lock pair
RETURNS_V613_RING_PROCESS = tuple(r for r in RETURNS_V613["pp_ring_cycles"] if "_raw_spin" not in r[0]) + (
    ("_raw_spin_lock_bh", "kernel/locking/spinlock.c", 1, 1, 1, "x86 selects no ARCH_INLINE_SPIN_LOCK_BH"),
    ("_raw_spin_unlock_bh", "kernel/locking/spinlock.c", 1, 1, 1, "x86 selects no ARCH_INLINE_SPIN_UNLOCK_BH"),
    ("__local_bh_enable_ip", "kernel/softirq.c", 0, 0, 1, "the last call of _raw_spin_unlock_bh: a sibling call"),
)
#: the in-run baseline of bench_page_pool_simple and time_bench_sample: spin_lock + spin_unlock
RETURNS_V613_SPINLOCK = (
    ("_raw_spin_lock", "kernel/locking/spinlock.c", 1, 1, 1, "x86 selects no ARCH_INLINE_SPIN_LOCK"),
    ("_raw_spin_unlock", "kernel/locking/spinlock.c", 1, 0, 1, "out of line under UNINLINE_SPIN_UNLOCK"),
)
#: extra TSC cycles of one kernel function return through the SRSO safe-RET thunk, where the run does not
#: measure its own: time_bench_sample's call of a noinline empty function on the EPYC 9684X (Zen 4),
#: v6.13, 14 cycles booted with safe-ret against 3 with spec_rstack_overflow=ibpb
SRSO_SAFE_RET_PRICE_CYCLES = 14.0 - 3.0
SRSO_PRICE_SOURCE = ("11 TSC cycles per return: time_bench_sample function call 14 (safe-ret) - 3 (ibpb) cycles, "
                     "corpus rows pp-epyc9684x-2025-02-v613-srso-sample-function-call and ...-v613-ibpb-sample-"
                     "function-call (AMD EPYC 9684X, Zen 4, v6.13; measured on one CPU)")


def n_returns(rows) -> tuple[float, float, float]:
    """(predicted, low, high) returns per iteration of one table of :data:`RETURNS_V613`."""
    return tuple(float(sum(r[k] for r in rows)) for k in (2, 3, 4))


def return_thunk_cycles(n_returns, call_thunk_cycles=None, call_plain_cycles=None):
    """
    Extra cycles a path pays when every kernel function return goes through a return thunk.

    Parameters
    ----------
    n_returns : float or array_like
        Out-of-line function returns per operation [returns], e.g. from :data:`RETURNS_V613`.
    call_thunk_cycles, call_plain_cycles : float or array_like, optional
        The run's own price of one call and return of an empty noinline function [TSC cycles] booted
        with the thunk and without it (time_bench_sample's function call cost).  Both or neither:
        without them, :data:`SRSO_SAFE_RET_PRICE_CYCLES` (11, the EPYC 9684X, one CPU).

    Returns
    -------
    numpy.ndarray or float
        Extra cycles per operation [TSC cycles]::

            extra_cycles = n_returns * (call_thunk_cycles - call_plain_cycles)

    References
    ----------
    Jesper Dangaard Brouer, 'Benchmark page_pool on AMD CPU', xdp-project/xdp-project
    areas/mem/page_pool08_bench_AMD.org (2025-02): the same EPYC 9684X and v6.13 kernel booted with
    spec_rstack_overflow=safe-ret and =ibpb; docs.kernel.org admin-guide/hw-vuln/srso.
    """
    if (call_thunk_cycles is None) != (call_plain_cycles is None):
        raise ConfigError("return thunk price: give both function-call costs (with and without the thunk) or "
                          "neither")
    price = (SRSO_SAFE_RET_PRICE_CYCLES if call_thunk_cycles is None
             else np.asarray(call_thunk_cycles, float) - np.asarray(call_plain_cycles, float))
    return np.asarray(n_returns, float) * price


def _thunk_on(value: str) -> int:
    # srso-ibpb pays an IBPB per kernel entry, not per return: no per-return term
    return 1 if value == "srso-safe-ret" else 0


#: Constants that time kernel code with a fixed number of returns, counted without a table of their own:
#: (predicted, low, high, why) per operation.
RETURNS_FIXED: dict[str, tuple[float, float, float, str]] = {
    "erms_setup_cycles": (1, 1, 1, "the out-of-line memset (arch/x86/lib/memset_64.S __memset: rep stosb; RET), "
                                   "one return per call"),
    "stos_setup_cycles": (0, 0, 0, "an inline rep stosq (memset of a compile-time size): no call"),
    "slub_bulk_obj_pair_cycles": (0, 0, 1, "per object of kmem_cache_alloc_bulk / kmem_cache_free_bulk: the loop "
                                           "runs inside the one call (mm/slub.c), at most one helper per object"),
    "page_bulk_page_cycles": (0, 0, 1, "per page of alloc_pages_bulk: the loop runs inside the one call "
                                       "(mm/page_alloc.c), prep_new_page per page at most (static, two call sites)"),
}
#: Constants that time kernel code whose returns no table counts: a path's base, SLUB's pair and slow paths,
#: the page allocator.  Each holds returns at the density of the counted paths (:func:`return_density`).
RETURNS_BY_DENSITY = ("page_single_cycles", "page_bulk_call_cycles", "page_buddy_extra_cycles",
                      "slub_fast_pair_cycles", "slub_loop_call_cycles", "slub_refill_cycles",
                      "slub_free_slow_extra_cycles", "kfl_base_cycles", "veth_base_cycles",
                      "cpumap_src_base_cycles", "cpumap_dst_stack_cycles", "cpumap_redirect_cycles",
                      "cpumap_drop_dst_cycles", "cpumap_wake_cycles", "cpumap_sleep_cycles", "napi_base_cycles",
                      "napi_cache_pair_cycles")


def return_density(plain: dict, cycles: float) -> tuple[float, float, float]:
    """Returns per cycle of plain-ret kernel code [1/cycles] for code of ``cycles``: ``(predicted, low, high)``
    from the paths :data:`RETURNS_V613` counts, each its predicted count over its cycles on one CPU with a
    plain ret (``plain``: ``{constant: cycles}``).  Predicted: the density of the counted path nearest in
    length (on log scale): the counted paths are short and call-dense (page_pool's fast path, 2 returns in
    9 cycles on the EPYC 9684X; its slow path, 7.1 in 78) and a longer path spends more of its time inside
    its functions, so code longer than them all takes the longest one's.  Low and high: the least and the
    most of the counted densities."""
    rows = [(plain[name], n_returns(r)[0] / plain[name]) for name, r in RETURNS_V613.items() if plain.get(name, 0) > 0]
    length, dens = (np.array(v) for v in zip(*rows))
    near = int(np.argmin(np.abs(np.log(length / max(cycles, 1e-9)))))
    return float(dens[near]), float(dens.min()), float(dens.max())


def return_thunk_terms(have: dict, want: dict, values: dict | None = None) -> dict[str, tuple[float, float, str]]:
    """Per constant that times kernel code: (extra TSC cycles, their sd, why) from configuration ``have`` to
    ``want``; empty when the return thunk does not change or ``want`` does not state it.  A base that does
    not state its return thunk is taken as measured with a plain ret (no shipped profile was measured with
    the thunk), and the source says so.

    The page_pool paths pay their counted returns (:data:`RETURNS_V613`), the constants of
    :data:`RETURNS_FIXED` theirs; with ``values`` (``{constant: cycles}`` as measured under ``have``) every
    constant of :data:`RETURNS_BY_DENSITY` pays ``cycles x density`` returns (:func:`return_density` of the
    counted paths' plain-ret cycles), its sd half the density bracket's width.  Each at :data:`SRSO_PRICE_SOURCE`.
    """
    h, w = resolved(have)["return_thunk"], resolved(want)["return_thunk"]
    sign = _thunk_on(w) - _thunk_on(h)  # not stated is no thunk: _thunk_on gives it 0
    if w == NOT_STATED or sign == 0:
        return {}
    base = "not stated, taken as a plain ret" if h == NOT_STATED else h
    price = SRSO_SAFE_RET_PRICE_CYCLES
    out = {}
    counted = {name: n_returns(rows) for name, rows in RETURNS_V613.items()}
    for name, (n, lo, hi) in counted.items():
        out[name] = (n * price * sign, (hi - lo) / 2 * price,
                     f"return thunk {base} -> {w}: {n:.2f} returns per iteration (counted in v6.13, "
                     f"{lo:.2f}-{hi:.2f} over the compiler's and configuration's choices) x {SRSO_PRICE_SOURCE}")
    for name, (n, lo, hi, why) in RETURNS_FIXED.items():
        if n or hi:
            out[name] = (n * price * sign, (hi - lo) / 2 * price,
                         f"return thunk {base} -> {w}: {n:g} returns per operation ({lo:g}-{hi:g}: {why}) x "
                         f"{SRSO_PRICE_SOURCE}")
    if values is None:
        return out
    # plain-ret cycles of the counted paths: under the thunk they held their counted returns' price
    plain = {k: values[k] - (n * price if _thunk_on(h) else 0.0) for k, (n, _, _) in counted.items() if k in values}
    for name in RETURNS_BY_DENSITY:
        if name not in values:
            continue
        cycles = values[name]
        dens, d_lo, d_hi = return_density(plain, cycles)
        if _thunk_on(h):  # measured under the thunk: its plain-ret cycles are fewer
            cycles = cycles / (1.0 + dens * price)
        out[name] = (cycles * dens * price * sign, cycles * (d_hi - d_lo) / 2 * price,
                     f"return thunk {base} -> {w}: {cycles:.0f} plain-ret cycles x {dens:.3f} returns per cycle "
                     f"({d_lo:.3f}-{d_hi:.3f}: the counted page_pool paths' returns over their plain-ret cycles on "
                     f"this CPU, the nearest in length and their range; no count of this code of its own) x "
                     f"{SRSO_PRICE_SOURCE}")
    return out


class ConfigError(ValueError):
    """A configuration field or value that is not known: one line naming it."""


def parse(raw, origin: str = "<config>") -> dict[str, str]:
    """The ``[config]`` table: known fields, each one of its values or ``not stated``."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{origin}: [config] must be a table")
    out = {}
    for k, v in raw.items():
        if k not in FIELDS:
            raise ConfigError(f"{origin}: config.{k} is not a configuration field ({', '.join(FIELDS)})")
        allowed = FIELDS[k][0] + (NOT_STATED,)
        if not isinstance(v, str) or v not in allowed:
            raise ConfigError(f"{origin}: config.{k} = {v!r}: expected one of {', '.join(allowed)}")
        out[k] = v
    return out


def resolved(config: dict) -> dict[str, str]:
    """Every field, ``not stated`` where the profile does not say."""
    return {k: config.get(k, NOT_STATED) for k in FIELDS}


def describe(config: dict) -> str:
    """``memcg kmem compiled, PREEMPT none, debug not stated, machine not stated``; the return thunk is
    named only when stated (most profiles never say)."""
    c = resolved(config)
    out = (f"memcg kmem {c['memcg_kmem']}, PREEMPT {c['preempt']}, debug {c['debug']}, "
           f"machine {c['machine']}")
    return out if c["return_thunk"] == NOT_STATED else f"{out}, return thunk {c['return_thunk']}"


def _memcg_active(value: str) -> bool | None:
    return None if value == NOT_STATED else value == "active"


def memcg_factor(have: dict, want: dict, kernels) -> tuple[float, str]:
    """Factor on ``slub_fast_pair_cycles`` from configuration ``have`` to ``want`` and why.

    1 with the reason when nothing moves it: the same memcg state, a state not stated, or kernels
    since :data:`MEMCG_TERM_BEFORE`.  Raises :class:`ConfigError` when the change cannot be made
    honestly (an unstated starting state, or a kernel where no public number describes the cost).
    """
    a, b = _memcg_active(resolved(have)["memcg_kmem"]), _memcg_active(resolved(want)["memcg_kmem"])
    if b is None or a == b:
        return 1.0, "no change of memcg kmem state"
    if a is None:
        raise ConfigError("memcg_kmem: the base profile does not state its memcg kmem state, so no term can be "
                          "applied to it")
    last = kernels[-1] if kernels else None
    if last is None or era.version_key(last) >= era.version_key(MEMCG_TERM_BEFORE):
        raise ConfigError(f"memcg_kmem: the measured term (per-memcg cache lookup) describes kernels before "
                          f"{MEMCG_TERM_BEFORE}; this profile describes kernels {'..'.join(kernels) or 'not stated'}")
    return (MEMCG_ACTIVE_FAST_PAIR if b else 1.0 / MEMCG_ACTIVE_FAST_PAIR), MEMCG_SOURCE


def with_config(profile, want: dict):
    """``profile`` under configuration ``want`` (fields not given keep the profile's): the configuration
    stated, and the sourced terms applied to the constants they move (their source says so)."""
    want = {**profile.config, **parse(want)}
    factor, why = memcg_factor(profile.config, want, profile.kernels)
    consts = dict(profile.constants)
    for name, (extra, sd, why_rt) in return_thunk_terms(profile.config, want, profile.values()).items():
        c = consts[name]
        consts[name] = dataclasses.replace(
            c, value=round(c.value + extra, 4), stderr=round(float(np.hypot(c.stderr, sd)), 6), kind="assumed",
            source=f"{c.value:g} cycles of {profile.id} + {extra:.1f}: {why_rt}; uncertainty: the count's bracket "
                   f"half-width x the price, added in quadrature")
    if factor != 1.0:
        c = consts["slub_fast_pair_cycles"]
        consts[c.name] = dataclasses.replace(
            c, value=round(c.value * factor, 4), stderr=round(c.stderr * factor, 6), kind="assumed",
            source=f"{c.value:g} cycles of {profile.id} ({resolved(profile.config)['memcg_kmem']}) x {factor:.3f}: "
                   f"{why}; uncertainty: scaled with the value")
    return dataclasses.replace(profile, constants=consts, config=want)


def parse_settings(items) -> dict[str, str]:
    """``["memcg_kmem=active", ...]`` (the CLI's ``--set``) -> ``{field: value}``, each checked."""
    out = {}
    for item in items or ():
        key, sep, value = str(item).partition("=")
        if not sep:
            raise ConfigError(f"--set {str(item)[:40]!r}: expected field=value, e.g. memcg_kmem=active")
        out[key.strip()] = value.strip()
    return parse(out, "--set")


def configured(base, want: dict):
    """A profile inheriting ``base`` under configuration ``want``: it lists the configuration and the
    constants the configuration's terms move (``python -m skbmodel profile configure``)."""
    full = with_config(base, want)
    tag = "-".join(f"{k}-{v}".replace(" ", "-") for k, v in parse(want).items())
    own = {k: c for k, c in full.constants.items() if base.constants[k] != c}
    return dataclasses.replace(full, id=f"{base.id}-{tag}"[:64], name=f"{base.name}; {describe(full.config)}",
                               constants=own, inherits=base.id,
                               notes=f"{base.id} under kernel configuration {describe(full.config)}: "
                                     + (", ".join(f"{k} moved by the configuration" for k in own)
                                        or "no measured term moves a constant"))
