"""Write the CPU profiles that come from the public measurement corpus (not from the seed threads).

    python scripts/corpus_profiles.py           # (re)write skbmodel/profiles/<id>.toml for each
    python scripts/corpus_profiles.py --check   # exit 1 if a written profile differs from what this gives
                                                # (numbers compared within their rounding, see same_profile)

Each profile inherits ``e5-1650v4`` (``kunpeng-920``: ``e5-1650v4-2025``) and lists what the corpus
measured on its CPU, each constant with the rows it comes from:

* ``i7-4790k``: the SLUB constants fitted to the detached-freelist fallback and bulk curves of the
  2016-01 kfree_bulk series (28 points, 6 constants; kind ``fitted``, standard errors and
  correlations from the fit), the clock from the cycles/ns pairs.
* ``xeon-gold-6140``, ``xeon-platinum-8481c``: the clock and the bench_page_pool_simple costs
  (kind ``published``, time_bench precision); every other constant is inherited from the E5-1650 v4,
  which the profile's notes say.
* ``kunpeng-920``: the arm64 server of the page_pool threads (Huawei, model not stated; taken to be
  a Kunpeng 920): its page_pool costs (ns x the assumed core clock), the cache sizes from its description.
* ``e5-1650v4-2025``: the E5-1650 v4 on the kernels of 2025 (an era profile): the page_pool costs of
  one out-of-tree bench run on v6.15; the other runs of that era are kept out, to be predicted.
* ``epyc-9684x``: the EPYC 9684X (Genoa-X, Zen 4) of xdp-project's page_pool08_bench_AMD (2025-02):
  the clock and the bench_page_pool_simple costs of the v6.13 run booted with
  spec_rstack_overflow=ibpb (tasklet tests, as the other profiles), and its time_bench_sample
  alloc_page + put_page loop as ``page_single_cycles``; the DMA-fix and safe-RET runs are not its data.
* ``epyc-9684x-srso``: the same machine and kernel booted with the stock SRSO mitigation (safe-RET):
  the page_pool costs and single-page loop of that run.
* ``epyc-7351``: the EPYC 7351 (Naples, Zen 1) of prototype-kernel pull request #39 (2020-06): the
  clock and the start-ups of its two 256 B memsets (time_bench_memset), each the row less four lines at
  the derived per-line cost (two rows at one size do not split a start-up from a per-line cost).

Where a CPU's own data stop, a profile takes what :func:`skbmodel.evidence.derivation.derive.derive` gives it from its
machine description (the page_pool costs and cache sizes of ``i7-4790k``), each such constant's source
starting ``derived:``; the rest is inherited.  Each profile states the kernels its own constants
were measured on (``kernels``, :mod:`skbmodel.machine.era`).

Run ``python scripts/archive_profiles.py`` after a change (share links record profile versions).
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tomllib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skbmodel.evidence import corpus, protocols, reruns, userfit  # noqa: E402  (after the path set-up)
from skbmodel.machine import description, era, kconfig  # noqa: E402  (after the path set-up)
from skbmodel.evidence.derivation import derive, opcounts, pp_counts  # noqa: E402  (after the path set-up)
from skbmodel.physics import zeroing  # noqa: E402  (after the path set-up)
from skbmodel.machine.profile import PROFILE_DIR, Constant, Profile, load_profile  # noqa: E402

BASE = "e5-1650v4"
#: how a profile's notes say where its path bases come from
CARRIED = ("carried from {b}'s CPU as core cycles, unmeasured here "
           "(skbmodel.evidence.derivation.carry.carried_constants)")
TB = "time_bench precision: whole-cycle rounding sd 0.29 cycles and 1 % run-to-run"


def _row(df, rid: str):
    r = df[df["id"] == rid]
    if r.empty:
        raise SystemExit(f"corpus row {rid} is missing")
    return r.iloc[0]


def _tb_sd(v: float) -> float:
    return float(np.hypot(0.29, 0.01 * v))


def _published(name, value, unit, source, sd, sd_text, clock: str = "", scale: str = "linear") -> Constant:
    return Constant(name=name, value=float(value), unit=unit, kind="published",
                    source=f"{source}; uncertainty: {sd_text}", stderr=float(sd), clock=clock, scale=scale)


def _one_run(df, name: str, value: float, source: str) -> Constant:
    """A constant taken from one published run of a time_bench loop: its sd is what another run of the same
    benchmark on the same CPU may show (:mod:`skbmodel.evidence.reruns`) and its rounding, on log scale."""
    sp = reruns.spread(reruns.repeats(df))
    v = float(value)
    sd = v * float(np.hypot(0.29 / v, sp["s_rerun"]))
    return _published(name, v, "cycles", source, round(sd, 4),
                      f"one run of many: whole-cycle rounding sd 0.29 cycles and the run-to-run spread, sd of ln "
                      f"{sp['s_rerun']:.3f} between two published runs of one benchmark on one CPU on other days or "
                      f"kernels (skbmodel.evidence.reruns: {sp['repeats']} repeats in {sp['groups']} groups, "
                      f"{sp['dof']} degrees of freedom), in quadrature", scale="log")


def i7_4790k(df) -> Profile:
    base = load_profile(BASE)
    series = ("slub-i7-4790k-2016-01-kfree-bulk-loop", "slub-i7-4790k-2016-01-kfree-bulk-bulk")
    ms = []
    for s in series:
        g = df[df["series"] == s].sort_values("x_value")
        ms += protocols.curves.curve_measurements(s, str(g["output"].iloc[0]), "bulk", g["x_value"], g["value"],
                                                  "cycles")
    free = ["slub_fast_pair_cycles", "slub_loop_call_cycles", "slub_bulk_obj_pair_cycles",
            "slub_free_slow_extra_cycles", "slub_refill_cycles", "l1_miss_cycles"]
    ghz = float(df[df["series"] == series[0]]["ghz"].iloc[0])
    res = userfit.fit(ms, base, free, label="i7-4790k", ghz=None)
    if not res.ok:
        raise SystemExit("; ".join(res.errors))
    fitted = res.profile
    src = df[df["series"] == series[0]]["source"].iloc[0]
    consts = {"ghz": _published("ghz", ghz, "GHz", f"Intel Core i7-4790K @ 4.00GHz (the corpus series {series[0]}: "
                                "cycles / ns = 4.0)", 0.0, "0: the TSC clock")}
    for j, n in enumerate(free):
        c = base.constants[n]
        consts[n] = Constant(name=n, value=round(fitted.value(n), 4), unit=c.unit, kind="fitted",
                             source=(f"the 28 rows of public corpus series {series[0]} and {series[1]} "
                                     f"(slab_bulk_test01 fallback and bulk columns, bulk 1-250; {src}); "
                                     "uncertainty: from the fit's "
                                     "Jacobian, cov = s2 inv(J^T J)"),
                             bounds=fitted.constants[n].bounds, stderr=round(res.stderr[n], 6))
    consts.update(page_allocator_2017(df))
    consts.update(derived_where_unmeasured("haswell", ghz, "4.5", consts))
    # the series' conditions: "no PREEMPT, CONFIG_MEMCG_KMEM=y (not active)"
    prof = Profile(id="i7-4790k", name="Intel Core i7-4790K @ 4.00GHz (2015-2016 SLUB bulk API threads)",
                   constants=consts, inherits=BASE, kernels=("4.2", "4.5"),
                   config={"memcg_kmem": "compiled", "preempt": "none"}, sockets=1, numa_nodes=1,
                   topology_source="Intel ARK, Core i7-4790K: a desktop part (one socket, one memory controller)",
                   notes=("SLUB constants fitted to the published detached-freelist curves of this CPU; the page_pool "
                          "costs, the zeroing costs and cache sizes derived from its description (haswell, kernel 4.5; "
                          "skbmodel.evidence.derivation.derive); the page allocator from the 2017 bulk RFC "
                          "thread (4.10-rc2, "
                          "the CPU "
                          "inferred from its 4.00 GHz TSC); the path bases " + CARRIED.format(b="e5-1650v4") + ": a "
                          "Haswell desktop part, not the Broadwell-EP server part"))
    return prof.with_correlation(free, np.asarray(res.corr, dtype=float))


def page_allocator_2017(df) -> dict:
    """The page allocator of the 2017 list-based bulk RFC (corpus series pa-2017-rfc-*, 4.10-rc2), taken
    to be this CPU's (the message does not name it: TSC 4.00 GHz from cycles/ns, the tester's i7-4790K;
    skbmodel.evidence.derivation.opcounts.INFERRED_CPU): one page at a time, and ``p + c/n`` over bulk 2..128
    (least squares,
    as the E5-1650 v4's array curve); the step past the pcp list at 256 gives the buddy cost per page."""
    single = _row(df, "pa-2017-rfc-single")
    g = df[df["series"] == "pa-2017-rfc-bulk-list"].sort_values("x_value")
    n, v = g["x_value"].to_numpy(float), g["value"].to_numpy(float)
    fit = (n >= 2) & (n <= 128)
    (p, c), *_ = np.linalg.lstsq(np.column_stack([np.ones(fit.sum()), 1.0 / n[fit]]), v[fit], rcond=None)
    resid = v[fit] - (p + c / n[fit])
    sd = float(np.sqrt(np.sum(resid ** 2) / max(fit.sum() - 2, 1)))
    high = load_profile(BASE).value("pcp_high_pages")
    v256 = float(v[n == 256][0])
    buddy = (v256 - (p + c / 256.0)) * 256.0 / (256.0 - high)
    src = (f"{single['source']}; the CPU is not named there, taken to be this one (TSC 4.00 GHz from cycles/ns, "
           "skbmodel.evidence.derivation.opcounts.INFERRED_CPU); kernel 4.10-rc2")
    return {
        "page_single_cycles": _one_run(df, "page_single_cycles", single["value"],
                                       f"page_bench04_bulk single-page baseline, corpus row pa-2017-rfc-single: {src}"),
        "page_bulk_page_cycles": _published("page_bulk_page_cycles", round(float(p), 3), "cycles",
                                            "least squares p + c/n over bulk 2..128 of corpus series "
                                            f"pa-2017-rfc-bulk-list (list API): {src}", round(sd, 3),
                                            "the fit's residual sd"),
        "page_bulk_call_cycles": _published("page_bulk_call_cycles", round(float(c), 3), "cycles",
                                            "the call cost c of the same fit over corpus series pa-2017-rfc-bulk-list "
                                            "(see page_bulk_page_cycles)",
                                            round(sd * 2.0, 3), "twice the fit's residual sd (c is the "
                                            "difference of the short bulks)"),
        "page_buddy_extra_cycles": _published("page_buddy_extra_cycles", round(buddy, 3), "cycles",
                                              f"the step at bulk 256 of pa-2017-rfc-bulk-list ({v256:g} cycles) over "
                                              f"the fit, x 256 / (256 - pcp_high {high:g}): {src}",
                                              30.0, "one published step only: sd 30 cycles"),
    }


def derived_where_unmeasured(uarch_name: str, ghz: float, kernel: str, own: dict, cpu: str | None = None) -> dict:
    """The constants :func:`skbmodel.evidence.derivation.derive.derive` gives a CPU that its own data does not (the
    derived
    page_pool costs and the description's cache sizes), each with its derivation as source (``cpu``: the
    SKU of the description the profile was measured on, whose figures replace the description's)."""
    prof = derive.derive(uarch_name, ghz=ghz, kernel=kernel, cpu=cpu)
    base = load_profile(prof.inherits)
    return {k: c for k, c in prof.constants.items()
            if k not in own and k != "ghz" and base.constants.get(k) != c}


def kunpeng_920(df) -> Profile:
    """The arm64 server of the page_pool threads (Huawei; taken to be a Kunpeng 920): its page_pool
    costs from the mainline ("before") runs of the kernels since the direct-recycle change, in ns at
    the core clock; the spread between those runs is the uncertainty."""
    desc = description.load("kunpeng-920")
    ghz = desc.value("base_ghz")
    runs = ("pp-arm64-2024-before-tasklet", "pp-arm64-2025-01-before-tasklet")
    clock = f"the core clock: {desc.figures['base_ghz'].source} (description {desc.name})"
    consts = {"ghz": _published("ghz", ghz, "GHz", clock, 0.0,
                                "0: the clock is a scenario input (an arm64 profile counts core cycles)")}
    for n, suffix in (("pp_fast_cycles", "fast"), ("pp_ring_cycles", "ring"), ("page_slow_cycles", "slow")):
        ns = np.array([float(_row(df, f"{r}-{suffix}")["value"]) for r in runs])
        r0 = _row(df, f"{runs[-1]}-{suffix}")
        consts[n] = _published(n, round(float(ns.mean()) * ghz, 3), "cycles",
                               f"the mean of corpus rows {runs[0]}-{suffix} and {runs[1]}-{suffix} "
                               f"({', '.join(f'{v:g}' for v in ns)} ns, tasklet test, mainline net-next 2024-10 and "
                               f"2025-01) x the core clock {ghz:g} GHz; {r0['source'][:120]}",
                               round(float(ns.std(ddof=1)) * ghz, 3),
                               "the sd between the two runs (the same machine, two kernels of one era)",
                               clock=pp_counts.counting_clock(desc))
    consts.update(derived_where_unmeasured("kunpeng-920", ghz, "6.13", consts))
    return Profile(id="kunpeng-920", name="arm64 server, Huawei (taken to be a HiSilicon Kunpeng 920; page_pool "
                   "threads 2024-2025)", constants=consts, inherits="e5-1650v4-2025", kernels=("6.12", "6.13"),
                   notes=("page_pool costs measured on this CPU (ns, converted at the assumed 2.6 GHz core clock: "
                          "the corpus names neither the model nor the clock); the cache sizes from its description "
                          "(kunpeng-920); SLUB, zeroing and the page allocator derived from it "
                          "(skbmodel.evidence.derivation.derive: the "
                          "x86 counts and residuals, no arm64 CPU measures them); the path bases "
                          + CARRIED.format(b="e5-1650v4-2025") + " (an x86 CPU: another instruction set too)"))


def page_pool_profile(df, pid: str, name: str, ghz_row: str, rows: dict, caches: dict, note: str,
                      kernels: tuple[str, str], config: dict | None = None, topology: dict | None = None) -> Profile:
    consts = {}
    r0 = _row(df, ghz_row)
    consts["ghz"] = _published("ghz", r0["ghz"], "GHz", f"{r0['cpu']} (corpus row {ghz_row})", 0.0, "0: the TSC clock")
    for n, rid in rows.items():
        r = _row(df, rid)
        consts[n] = _one_run(df, n, r["value"], f"{r['conditions'].split(';')[0] if 'ns=' in r['conditions'] else ''} "
                                                f"corpus row {rid}: {r['source'][:160]}".strip())
    for n, (v, src) in caches.items():
        consts[n] = _published(n, v, "bytes", src, 0.0, "0: a documented cache size")
    return Profile(id=pid, name=name, constants=consts, inherits=BASE, notes=note, kernels=kernels,
                   config=config or {}, **(topology or {}))


def build(df) -> list[Profile]:
    gold = page_pool_profile(
        df, "xeon-gold-6140", "Intel Xeon Gold 6140 @ 2.30GHz (Skylake-SP; 2022 page_pool stats thread)",
        "pp-gold6140-2022-control-tasklet-fast",
        {"pp_fast_cycles": "pp-gold6140-2022-control-tasklet-fast",
         "pp_ring_cycles": "pp-gold6140-2022-control-tasklet-ring",
         "page_slow_cycles": "pp-gold6140-2022-control-tasklet-slow"},
        {"l2_bytes": (1048576.0, "L2 cache per core, Intel Xeon Scalable (Skylake-SP): 1 MiB")},
        "page_pool costs and clock measured on this CPU (control kernel); the rest inherited from e5-1650v4 "
        "unmeasured", ("5.17", "5.17"))
    spr = page_pool_profile(
        df, "xeon-platinum-8481c", "Intel Xeon Platinum 8481C @ 2.70GHz (Sapphire Rapids; 2025 page_pool bench)",
        "pp-spr8481c-2025-upstream-bench-fast",
        {"pp_fast_cycles": "pp-spr8481c-2025-upstream-bench-fast",
         "pp_ring_cycles": "pp-spr8481c-2025-upstream-bench-ring",
         "page_slow_cycles": "pp-spr8481c-2025-upstream-bench-slow"},
        {"l1d_bytes": (49152.0, "L1d cache per core, Intel Sapphire Rapids: 48 KiB"),
         "l2_bytes": (2097152.0, "L2 cache per core, Intel Sapphire Rapids: 2 MiB")},
        "page_pool costs and clock measured on this CPU (upstream selftest bench, no-softirq context); the rest "
        "inherited from e5-1650v4 unmeasured", ("6.16", "6.16"), config={"machine": "vm"})  # Google Cloud A3 VM
    e5_2025 = page_pool_profile(
        df, "e5-1650v4-2025", "Intel Xeon E5-1650 v4 @ 3.60GHz, 2025 kernels (page_pool era of 6.13-6.16)",
        "pp-e51650v4-2025-oot-nosoftirq-01",
        {"pp_fast_cycles": "pp-e51650v4-2025-oot-nosoftirq-01",
         "pp_ring_cycles": "pp-e51650v4-2025-oot-nosoftirq-02",
         "page_slow_cycles": "pp-e51650v4-2025-oot-nosoftirq-03"},
        {},
        "The E5-1650 v4 of e5-1650v4 on the kernels of 2025: the page_pool costs are the out-of-tree "
        "bench_page_pool_simple run on net.git v6.15-12438 (no-softirq page_pool01/02/03, which since 6.8 "
        "measure the fast path, the ptr_ring and the slow path); everything else is inherited from e5-1650v4 "
        "(2021-2023 kernels), unmeasured on these kernels. Fitted to that one run only: the upstream "
        "selftest run (2025-06) and the tasklet run of 2025-01 on this CPU are predicted, not used "
        "(python -m skbmodel validate --out-of-sample)", ("6.13", "6.16"),
        topology=dict(sockets=1, numa_nodes=1, topology_source="the machine of e5-1650v4: Intel ARK, Xeon "
                      "E5-1650 v4: a single-socket part (max CPU configuration 1), one node"))
    gold = with_derived(gold, "skylake-sp", "5.17")
    spr = with_derived(spr, "sapphire-rapids", "6.16")
    return [i7_4790k(df), gold, spr, e5_2025, kunpeng_920(df), epyc_9684x(df), epyc_9684x_srso(df), epyc_7351(df)]


#: the Cloudflare Gen 12 server of page_pool08_bench_AMD: one socket; its nodes per socket (NPS1, 2 or 4, a
#: BIOS setting) are not stated, so a cross-node placement is offered (another NPS node of the socket)
GEN12_TOPOLOGY = dict(sockets=1, topology_source=(
    "Cloudflare blog, 'Cloudflare's 12th Generation servers' (2024-09-25): Gen 12 is a 2U1N single-socket "
    "EPYC 9684X server; the NUMA nodes per socket (NPS1, 2 or 4, a BIOS setting) are not stated"))
#: the EPYC 9684X run that is the profile's data: v6.13 booted with spec_rstack_overflow=ibpb
EPYC_RUN = "pp-epyc9684x-2025-02-v613-ibpb"


def _epyc_rows(run: str) -> dict[str, str]:
    """The constants one EPYC 9684X boot of page_pool08_bench_AMD gives and its corpus rows."""
    return {"pp_fast_cycles": f"{run}-tasklet-fast", "pp_ring_cycles": f"{run}-tasklet-ring",
            "page_slow_cycles": f"{run}-tasklet-slow", "page_single_cycles": f"{run}-sample-page-alloc-put"}


def _epyc_boot(df, pid: str, run: str, mode: str, thunk: str, note: str) -> Profile:
    """One boot of the EPYC 9684X of page_pool08_bench_AMD on v6.13: its rows, its return thunk, the rest derived."""
    prof = page_pool_profile(
        df, pid, f"AMD EPYC 9684X 96-Core Processor (Genoa-X, Zen 4; 2025-02 page_pool bench, v6.13, {mode})",
        f"{run}-tasklet-fast", _epyc_rows(run), {}, note, ("6.13", "6.13"),
        config={"return_thunk": thunk, "machine": "bare metal"}, topology=GEN12_TOPOLOGY)
    return with_derived(prof, "zen4-genoa", "6.13", cpu="EPYC 9684X")


def epyc_9684x(df) -> Profile:
    """The AMD EPYC 9684X (Genoa-X, Zen 4) of xdp-project's page_pool08_bench_AMD (2025-02).

    Its data: the v6.13 run booted with spec_rstack_overflow=ibpb (plain returns, what the derivation's
    counts describe).  The tasklet tests give the page_pool costs, as on the Gold 6140, the Kunpeng 920
    and the E5-1650 v4 seed: they run the three paths in softirq context (recycle_direct), which the
    constants name on every kernel; the same run's no-softirq tests measure the same paths only since 6.8
    and stay out-of-sample points.  ``page_single_cycles`` is time_bench_sample's alloc_page + put_page
    loop, the single-page loop of page_bench04_bulk.  The DMA-fix kernel (an unmerged series) and the
    safe-RET boots are other configurations: predicted or listed by the validation, not used here.
    """
    return _epyc_boot(df, "epyc-9684x", EPYC_RUN, "spec_rstack_overflow=ibpb", "srso-ibpb",
        "page_pool costs (tasklet tests), the single-page allocator cost (time_bench_sample alloc_page + "
        "put_page, page_bench04's single-page loop) and the clock measured on this CPU: v6.13 booted with "
        "spec_rstack_overflow=ibpb (no per-return thunk); its no-softirq tests, the DMA-fix kernel's runs and "
        "the safe-RET boots are not its data (python -m skbmodel validate --out-of-sample predicts or lists "
        "them); machine bare metal: the source names the server, a Cloudflare Gen 12 (CF Gen 12), a hardware "
        "generation, and boots its kernels with kexec, not stated in so many words; the rest inherited from "
        "e5-1650v4 unmeasured")


#: the same machine and kernel booted with the default SRSO mitigation (safe-RET return thunk)
EPYC_SRSO_RUN = "pp-epyc9684x-2025-02-v613-srso"


def epyc_9684x_srso(df) -> Profile:
    """The EPYC 9684X of :func:`epyc_9684x` on the same v6.13 kernel booted with the stock SRSO mitigation
    (safe-RET: every kernel return jumps through the return thunk): the page_pool costs and the single-page
    loop of that run, the rest as :func:`epyc_9684x` (its derived SLUB, zeroing and page-allocator constants
    count plain returns, as the derivation's training CPUs: under safe-RET they are low)."""
    prof = _epyc_boot(df, "epyc-9684x-srso", EPYC_SRSO_RUN, "SRSO safe-RET, the stock mitigation", "srso-safe-ret",
        "page_pool costs (tasklet tests), the single-page allocator cost (time_bench_sample alloc_page + "
        "put_page) and the clock measured on this CPU: v6.13 booted with the default SRSO mitigation, safe-RET "
        "(every kernel function return jumps through the return thunk), the stock configuration of a Zen 4 "
        "kernel; the same machine as epyc-9684x (spec_rstack_overflow=ibpb); its no-softirq tests are "
        "not its data; every other constant that times kernel code (SLUB, zeroing, the page allocator's other "
        "constants, the path bases) pays the thunk per return (skbmodel.machine.kconfig.return_thunk_terms): "
        "derived or carried with plain returns, as for epyc-9684x; the rest inherited from e5-1650v4 unmeasured")
    return with_return_thunk(prof, epyc_9684x(df), set(_epyc_rows(EPYC_SRSO_RUN)))


def with_return_thunk(prof: Profile, plain: Profile, measured: set[str]) -> Profile:
    """``prof`` (booted with a return thunk) with the thunk's price per return on every constant that times
    kernel code and was not measured under it (``measured``): those were derived or carried with plain
    returns.  The density of returns comes from the counted page_pool paths of ``plain``, the same machine
    booted with plain returns."""
    values = {**prof.values(), **{k: plain.value(k) for k in kconfig.RETURNS_V613}}
    terms = kconfig.return_thunk_terms({"return_thunk": "srso-ibpb"}, prof.config, values)
    consts = dict(prof.constants)
    for name, (extra, sd, why) in terms.items():
        if name in measured or name not in consts:
            continue
        c = consts[name]
        consts[name] = dataclasses.replace(
            c, value=round(c.value + extra, 4), stderr=round(float(np.hypot(c.stderr, sd)), 6),
            source=f"{c.value:g} cycles with plain returns ({c.source.split('; uncertainty:')[0]}) + {extra:.1f}: "
                   f"{why}; uncertainty: {c.stderr:g} of the plain-return value and the count's bracket half-width "
                   f"x the price, in quadrature")
    return dataclasses.replace(prof, constants=consts)


#: the EPYC 7351's rows (time_bench_memset, 256 B), each with the start-up it gives and the per-line cost
#: it shares: memset_256 is an inline rep stosq, memset_variable_step(256) the out-of-line memset, which
#: on Zen 1 (no ERMS, REP_GOOD) is __memset's rep stosq + rep stosb of the remainder
ZEN1_ROWS = {"stos_setup_cycles": ("zero-epyc7351-2020-const-256", "stos_line_cycles",
                                   "memset_256, a compile-time size: an inline rep stosq"),
             "erms_setup_cycles": ("zero-epyc7351-2020-erms-256", "erms_line_cycles",
                                   "memset_variable_step(256), the out-of-line memset: on Zen 1 (no ERMS, "
                                   "REP_GOOD) rep stosq + rep stosb of the remainder")}


def epyc_7351(df) -> Profile:
    """The AMD EPYC 7351 (Naples, Zen 1) of Stefano Brivio's time_bench_memset run in prototype-kernel pull
    request #39 (2020-06): two memsets of 256 B, the inline rep stosq and the out-of-line memset.

    Each row is ``setup + line * L`` at L = 4 lines (the 44-entry store queue, 352 B, holds them all: no
    drain term), so the two rows fix two sums, not the split of a start-up from a per-line cost.  The
    per-line cost is the derivation's (the E5-1650 v4's residual at Zen 1's string-store rate), and each
    start-up is what its row leaves: ``row - L * line``.  Its sd is the row's time_bench precision and L
    times the line's sd, correlated with the line so that the row itself is reproduced to its precision.
    The kernel is not stated; :func:`skbmodel.machine.era.kernel_of` dates 2020-06 to the release after it, 5.8.
    """
    desc = description.load("zen1-naples").for_cpu("EPYC 7351")
    rows = {k: _row(df, rid) for k, (rid, _line, _what) in ZEN1_ROWS.items()}
    r0 = rows["stos_setup_cycles"]
    ghz = float(r0["ghz"])
    kernel = era.kernel_of(r0["kernel"])
    derived = derived_where_unmeasured("zen1-naples", ghz, kernel, {}, cpu="EPYC 7351")
    sb_lines = derived["store_buffer_bytes"].value / 64.0
    consts = {"ghz": _published("ghz", ghz, "GHz", f"{r0['cpu']}: TSC {ghz:g} GHz from the row's cycles/ns "
                                f"(corpus row {ZEN1_ROWS['stos_setup_cycles'][0]})", 0.0, "0: the TSC clock")}
    own, shares = {}, []  # per row: its lines, the line's sd and the start-up's sd
    for k, (rid, line_name, what) in ZEN1_ROWS.items():
        r = rows[k]
        lines = float(zeroing.cachelines(float(r["x_value"])))
        if lines > sb_lines:  # the drain would enter the row: it would no longer be start-up + lines alone
            raise SystemExit(f"{rid}: {lines:g} lines overflow the store buffer ({sb_lines:g} lines)")
        line = derived[line_name]
        row_sd = _tb_sd(float(r["value"]))
        sd = float(np.hypot(row_sd, lines * line.stderr))
        own[k] = _published(
            k, round(float(r["value"]) - lines * line.value, 3), "cycles",
            f"corpus row {rid} ({r['value']:g} cycles at {r['x_value']:g} B, time_bench_memset {what}) "
            f"less {lines:g} lines x {line_name} "
            f"({line.value:g} cycles, derived: see that constant): two rows at one size fix start-up + "
            f"{lines:g} lines of each memset, not the split, so the per-line cost is the derivation's and the "
            f"start-up what the row leaves; no drain term ({lines:g} lines fit the {sb_lines * 64:g} B store "
            f"buffer); kernel not stated (2020-06), dated {kernel} (skbmodel.machine.era); {r['source']}",
            round(sd, 3), f"the row's {TB} (sd {row_sd:.2f}) and {lines:g} x the line's sd "
            f"({line.stderr:g}), correlated with the line so that the row is reproduced to its precision")
        shares.append((lines, line.stderr, sd))
    consts.update(derived)
    consts.update(own)
    prof = Profile(id="epyc-7351", name="AMD EPYC 7351 16-Core Processor (Naples, Zen 1; 2020-06 time_bench_memset, "
                   "prototype-kernel pull request #39)", constants=consts, inherits=BASE, kernels=(kernel, kernel),
                   notes=("the zeroing start-ups (the inline rep stosq of memset_256 and the out-of-line memset of "
                          "memset_variable_step(256), on Zen 1 __memset's rep stosq body: no ERMS) and the clock "
                          "measured on this CPU, each start-up its 256 B row less four lines at the derived per-line "
                          f"cost; the kernel not stated (2020-06: dated {kernel}, skbmodel.machine.era); the "
                          "page_pool costs, "
                          "SLUB, zeroing (the rest of it) and the page allocator derived from its description "
                          f"(zen1-naples with the EPYC 7351's clocks, {desc.value('tsc_ghz'):g} GHz base, "
                          f"{desc.value('turbo_ghz'):g} GHz boost; kernel {kernel}; "
                          f"skbmodel.evidence.derivation.derive); "
                          "the rest (the "
                          "path bases) " + CARRIED.format(b="e5-1650v4")))
    # setup = row - L * line: cov(setup, line) = -L var(line); the two start-ups share the line (the
    # variable-size memset is priced as the stos constants on this core), so they covary by L^2 var(line)
    names = ["stos_setup_cycles", "stos_line_cycles", "erms_setup_cycles", "erms_line_cycles"]
    (la, sa, da), (lb, sb, db) = shares
    corr = np.array([[1.0, -la * sa / da, la * lb * sa * sb / (da * db), -la * sa / da],
                     [-la * sa / da, 1.0, -lb * sb / db, 1.0],
                     [la * lb * sa * sb / (da * db), -lb * sb / db, 1.0, -lb * sb / db],
                     [-la * sa / da, 1.0, -lb * sb / db, 1.0]])
    # the drain is derived on its own: uncorrelated with the others (the base's fitted correlation dropped)
    names.append("stos_drain_line_cycles")
    corr = np.pad(corr, ((0, 1), (0, 1)))
    corr[4, 4] = 1.0
    return prof.with_correlation(names, corr)


def with_derived(prof: Profile, uarch_name: str, kernel: str, cpu: str | None = None) -> Profile:
    """``prof`` with what :func:`skbmodel.evidence.derivation.derive.derive` gives its CPU where the profile has no
    data of its
    own (SLUB, zeroing, the page allocator), said in its notes (``cpu``: the description's SKU)."""
    consts = dict(prof.constants)
    consts.update(derived_where_unmeasured(uarch_name, prof.ghz, kernel, consts, cpu=cpu))
    own = " (the rest of it)" if any(opcounts.COST_MODEL.get(k, ("",))[0] == "page_alloc"
                                     for k in prof.constants) else ""
    notes = prof.notes.replace("; the rest inherited from e5-1650v4 unmeasured",
                               f"; SLUB, zeroing and the page allocator{own} derived from its description "
                               f"({uarch_name}, kernel {kernel}; skbmodel.evidence.derivation.derive); the rest "
                               f"(the path bases) "
                               + CARRIED.format(b="e5-1650v4"))
    return dataclasses.replace(prof, constants=consts, notes=notes)


def same_profile(committed, fresh, rel: float = 1e-4, abs_: float = 2e-4) -> bool:
    """The committed profile file says what a fresh build gives: text and structure equal, numbers within
    ``rel`` or ``abs_`` (fitted values are kept to 4 decimals, far inside their standard errors; the last
    digits of a fit differ between numpy/BLAS builds and must not make the file stale)."""
    if isinstance(committed, dict) and isinstance(fresh, dict):
        return committed.keys() == fresh.keys() and all(same_profile(committed[k], fresh[k], rel, abs_)
                                                         for k in fresh)
    if isinstance(committed, list) and isinstance(fresh, list):
        return len(committed) == len(fresh) and all(same_profile(c, f, rel, abs_) for c, f in zip(committed, fresh))
    if isinstance(committed, float) or isinstance(fresh, float):
        return (isinstance(committed, (int, float)) and isinstance(fresh, (int, float))
                and math.isclose(committed, fresh, rel_tol=rel, abs_tol=abs_))
    return committed == fresh


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    df = corpus.load_corpus()
    return write_profiles({p.id: p.to_toml() for p in build(df)}, args.check, "scripts/corpus_profiles.py")


def write_profiles(texts: dict[str, str], check: bool, script: str, stale: list[str] = ()) -> int:
    """Write each ``{profile id: TOML text}`` into the profiles folder, or with ``check`` list those whose
    committed file says something else (:func:`same_profile`); exit code 1 when any is out of date
    (``stale``: names already found out of date by the caller)."""
    stale = list(stale)
    for pid, text in texts.items():
        path = PROFILE_DIR / f"{pid}.toml"
        if check:
            if not path.is_file() or not same_profile(tomllib.loads(path.read_text()), tomllib.loads(text)):
                stale.append(path.name)
            continue
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"out of date: {', '.join(stale)}; run python {script}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
