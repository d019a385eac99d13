"""Leave one out: how well a profile derived from a machine description predicts a CPU it never saw.

Leave one CPU out (:func:`leave_one_cpu_out`): each described CPU with published page_pool
numbers is derived from the *other* CPUs only and its numbers predicted (a measured CPU such as the
EPYC 9684X without its own profile and rows, a CPU no profile measures from every measured CPU); next
to each, the naive prediction (the other CPUs' mean ns, the same on every CPU).  Runs under a boot
option whose cost the derivation does not count (:data:`UNPRICED_CONDITIONS`: SRSO's safe-RET return
thunk) are listed, not predicted.

Leave one instruction set out (:func:`leave_one_isa_out`) predicts the Kunpeng 920's published page_pool
points from the x86 CPUs alone, priced with what the kernel does differently on arm64
(:func:`skbmodel.evidence.derivation.pp_counts.isa_cost_cycles`); the figures, before and after the translation, are in
docs/validation.md.  SLUB, zeroing and the page allocator (:func:`leave_one_cpu_out_costs`): each CPU's
published points predicted by :func:`skbmodel.evidence.derivation.opcounts.derive_costs` without its own data.

Every record is in the row's unit (TSC cycles, or ns for an arm64 run) with a 90 % interval
(:data:`skbmodel.uncertainty.LEVEL`) and the naive prediction next to it: the other CPUs' mean ns, the
same on every CPU.  The derivation itself is :mod:`skbmodel.evidence.derivation.derive`.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import re

import numpy as np

from ... import model, uncertainty
from ...machine import era
from ...machine.description import Description, derived_id, descriptions, load
from ...machine.profile import Profile, load_profile
from .derive import derive, untranslated
from .opcounts import COST_MODEL, INFERRED_CPU, MEASURES, cost_training, row_uarch
from .pp_counts import DERIVED_PP, since_split, training

# ---- leave one CPU out -------------------------------------------------------------------

PROTOCOL = "other CPU"
_PP_OUTPUTS = ("page_pool.fast_cycles", "page_pool.ring_cycles", "page_pool.slow_cycles",
               "page_pool.nosoftirq01_cycles", "page_pool.nosoftirq02_cycles", "page_pool.nosoftirq03_cycles")


def _naive_profile(base: Profile, train: list[dict], ghz: float, kernel: str) -> Profile:
    """The naive prediction as a profile: the other CPUs' mean ns of each cost, the same on every CPU."""
    vals = {k: float(np.mean([t["ns"][k] for t in train])) * ghz for k in DERIVED_PP}
    return dataclasses.replace(base.with_values(vals), kernels=(kernel, kernel))


#: boot options under which a published run's costs hold work the derivation does not count: such a
#: run is listed, not predicted (the same machine's run without the option is)
UNPRICED_CONDITIONS = {
    "spec_rstack_overflow=safe-ret": (
        "SRSO's safe-RET return thunk (AMD Zen 3/4's default): every kernel function return pays about 11 TSC "
        "cycles more on the EPYC 9684X (time_bench_sample function call 14 against 3 cycles, the same machine "
        "and kernel booted with spec_rstack_overflow=ibpb); the derivation counts instructions and locked "
        "operations, not returns"),
}


def unpriced_condition(conditions) -> str | None:
    """The :data:`UNPRICED_CONDITIONS` key a corpus row's conditions name, if any."""
    return next((k for k in UNPRICED_CONDITIONS if k in str(conditions)), None)


def _page_pool_rows(df) -> list[tuple]:
    """The single page_pool points of the corpus whose CPU a description names (:func:`row_uarch`), as
    ``(row, description name)``, in the order of the descriptions."""
    ds = descriptions()
    pp = df[(df["x_name"] == "") & df["output"].isin(_PP_OUTPUTS)]
    owned = [(r, row_uarch(r, ds)) for r in pp.itertuples(index=False)]
    return [(r, name) for d in ds for r, name in owned if name == d]


def unpriced_points(df) -> list[dict]:
    """The page_pool points of a described CPU that :func:`leave_one_cpu_out` lists but does not predict:
    runs under a boot option of :data:`UNPRICED_CONDITIONS`, each with the option and the measured cost."""
    return [dict(id=r.id, uarch=name, kernel=era.kernel_of(r.kernel) or "", output=r.output,
                 measured=float(r.value), unit=str(r.unit), condition=unpriced_condition(r.conditions))
            for r, name in _page_pool_rows(df) if unpriced_condition(r.conditions)]


def leave_one_cpu_out(df) -> list[dict]:
    """Every published page_pool point of a described CPU, predicted from the other CPUs.

    A row's CPU is the one of a measured profile or one a description's ``match`` patterns recognise
    (:func:`row_uarch`): a CPU no profile measures is predicted from every measured CPU.  One record per
    point: measured, the derived profile's prediction and 90 % interval, the naive prediction; points
    whose kernel cannot be read, that ran a debug configuration or a boot option the derivation does not
    price (:data:`UNPRICED_CONDITIONS`) are left out.
    """
    out = []
    z = uncertainty.z_value(uncertainty.LEVEL)
    for r, name in _page_pool_rows(df):
        kernel = era.kernel_of(r.kernel) or era.kernel_of(r.source)
        if (kernel is None or "debug" in str(r.kernel).lower() or not str(r.unit).startswith("cycles")
                or unpriced_condition(r.conditions)):
            continue
        prof = derive(name, ghz=float(r.ghz), kernel=kernel, exclude=(name,), cpu=r.cpu)
        train = training(exclude=(name,))
        naive = _naive_profile(prof, train, float(r.ghz), kernel)
        pred = float(model.evaluate({}, prof)[r.output])
        sd = _output_sd(prof, r.output)
        npred = float(model.evaluate({}, naive)[r.output])
        meas = float(r.value)
        out.append(dict(id=r.id, uarch=name, cpu=r.cpu, kernel=kernel, output=r.output, measured=meas,
                        predicted=pred, lo=pred - z * sd, hi=pred + z * sd, naive=npred,
                        rel_error=(pred - meas) / meas, naive_rel_error=(npred - meas) / meas,
                        inside=bool(pred - z * sd <= meas <= pred + z * sd),
                        rel_half_width=float(z * sd / pred), trained_on=sorted({t["profile"] for t in train})))
    return out


def _output_sd(prof: Profile, output: str) -> float:
    """One sd of a page_pool output from its derived constant's stderr (each output reads one constant)."""
    base = float(model.evaluate({}, prof)[output])
    for k in DERIVED_PP:
        bumped = dataclasses.replace(prof, constants={**prof.constants, k: dataclasses.replace(
            prof.constants[k], value=prof.constants[k].value + 1.0)})
        if float(model.evaluate({}, bumped)[output]) != base:
            return prof.constants[k].stderr
    return 0.0


def summarise(points: list[dict]) -> list[dict]:
    """The "other CPU" row of the out-of-sample summary, with ``baseline_mape`` (the naive
    prediction's error on the same points), the 90 % intervals' coverage and median half-width."""
    if not points:
        return []
    e = np.abs([p["rel_error"] for p in points])
    b = np.abs([p["naive_rel_error"] for p in points])
    return [dict(subsystem="page_pool", protocol=PROTOCOL, points=len(points), mape=float(np.mean(e)),
                 max_error=float(np.max(e)), baseline_mape=float(np.mean(b)),
                 coverage=float(np.mean([p["inside"] for p in points])),
                 median_rel_half_width=float(np.median([p["rel_half_width"] for p in points])),
                 cpus=sorted({p["uarch"] for p in points}))]


def format_unpriced(points: list[dict]) -> list[str]:
    """The lines of :func:`unpriced_points`: one per boot option, its reason and the rows it holds out."""
    lines = []
    for cond, why in UNPRICED_CONDITIONS.items():
        mine = [p for p in points if p["condition"] == cond]
        if mine:
            rows = ", ".join(f"{p['id']} ({p['measured']:.6g})" for p in mine)
            lines.append(f"Listed, not predicted: {len(mine)} points run with {cond}: {why}. {rows}")
    return lines


def format_points(points: list[dict]) -> list[str]:
    lines = ["| row | CPU (description) | kernel | measured | derived | 90 % interval | error | naive | naive error |",
             "|---|---|---|---:|---:|---|---:|---:|---:|"]
    for p in points:
        lines.append(f"| {p['id']} | {p['uarch']} | {p['kernel']} | {p['measured']:.6g} | {p['predicted']:.4g} | "
                     f"{p['lo']:.4g} – {p['hi']:.4g} | {p['rel_error'] * 100:+.1f} % | {p['naive']:.4g} | "
                     f"{p['naive_rel_error'] * 100:+.1f} % |")
    return lines



# ---- leave one instruction set out: arm64 from the x86 CPUs --------------------------------

ISA_PROTOCOL = "other ISA (arm64 from x86)"
ISA_INRUN_PROTOCOL = "other ISA, in-run baselines"
#: the corpus outputs of an arm64 page_pool run (published in ns: its cycle counter is the ~100 MHz arch
#: timer) and the model output each is
ISA_OUTPUTS = {"page_pool.fast_cycles": "page_pool.fast_cycles", "page_pool.ring_cycles": "page_pool.ring_cycles",
               "page_pool.slow_cycles": "page_pool.slow_cycles",
               "other:page_pool.nosoftirq01_ns": "page_pool.nosoftirq01_cycles",
               "other:page_pool.nosoftirq02_ns": "page_pool.nosoftirq02_cycles",
               "other:page_pool.nosoftirq03_ns": "page_pool.nosoftirq03_cycles"}
#: the in-run baselines of a run that the in-run variant reads, and the key of :func:`derive`'s ``inrun``
INRUN_OUTPUTS = {"other:atomic_inc_ns": "atomic", "other:spin_lock_unlock_ns": "spinlock"}
_THREAD = re.compile(r"^(.*?)-(?:before|after)-")


def _thread(row_id: str) -> str:
    """The thread of a corpus row: its id before ``-before-``/``-after-`` (one machine, one mail thread)."""
    m = _THREAD.match(str(row_id))
    return m.group(1) if m else str(row_id)


def _inrun_baselines(df, d: Description, rows) -> dict[str, dict]:
    """Per thread, the in-run baselines of :data:`INRUN_OUTPUTS` among ``rows`` (the machine's rows), in
    core cycles at the description's turbo clock (the baseline loops run one core), mean over the thread's
    runs, and the row ids they come from."""
    out = {}
    turbo = d.value("turbo_ghz")
    base = rows[rows["output"].isin(list(INRUN_OUTPUTS)) & rows["unit"].eq("ns")]
    for r in base.itertuples(index=False):
        rec = out.setdefault(_thread(r.id), {"ids": [], "values": {}})
        rec["ids"].append(r.id)
        rec["values"].setdefault(INRUN_OUTPUTS[r.output], []).append(float(r.value) * turbo)
    return {t: {**{k: float(np.mean(v)) for k, v in rec["values"].items()},
                "source": ", ".join(sorted(rec["ids"]))} for t, rec in out.items()}


def leave_one_isa_out(df, inrun: bool = False) -> list[dict]:
    """Every published page_pool point of a measured arm64 CPU, predicted from the x86 CPUs only.

    Each point's profile is :func:`derive` with every arm64 description excluded and ``from_isa="x86"``:
    no arm64 profile and no arm64 page_pool row is read.  ``inrun``: the run's own ``time_bench``
    baselines (:data:`INRUN_OUTPUTS`, rows of the same thread, :func:`_inrun_baselines`; a thread without
    them keeps the description's figures) price the per-CPU atomic and the spinlock.  One record per point,
    in ns (the rows' unit; the model's cycles at the description's clock): measured, derived with its 90 %
    interval (``pred +- z sd``), the naive prediction (the x86 CPUs' mean ns, :func:`_naive_profile`) and
    ``untranslated``, the derivation without the translation (:func:`untranslated`).
    """
    z = uncertainty.z_value(uncertainty.LEVEL)
    ds = descriptions()
    arm = tuple(n for n, d in ds.items() if d.isa != "x86")
    out, profs = [], {}
    for d in (d for d in ds.values() if d.isa != "x86" and d.profiles):
        mine = df[df["cpu"].astype(str).apply(lambda c: any(re.search(rx, c, re.I) for rx in d.match))]
        ghz = d.value("tsc_ghz") if "tsc_ghz" in d.figures else d.value("base_ghz")
        baselines = _inrun_baselines(df, d, mine) if inrun else {}
        rows = mine[mine["output"].isin(list(ISA_OUTPUTS)) & (mine["x_name"] == "") & mine["unit"].eq("ns")]
        for r in rows.itertuples(index=False):
            kernel = era.kernel_of(r.kernel) or era.kernel_of(r.source)
            if kernel is None or "debug" in str(r.kernel).lower():
                continue
            base = baselines.get(_thread(r.id), {})
            key = (d.name, kernel, tuple(sorted(base.items())))
            if key not in profs:
                prof = derive(d.name, ghz=ghz, kernel=kernel, exclude=arm, from_isa="x86", inrun=base)
                train = training(exclude=arm)
                profs[key] = (prof, _naive_profile(prof, train, ghz, kernel),
                              prof.with_values(untranslated(d, kernel, arm, ghz)), train)
            prof, naive, before, train = profs[key]
            output = ISA_OUTPUTS[r.output]
            pred = float(model.evaluate({}, prof)[output]) / ghz
            sd = _output_sd(prof, output) / ghz
            npred = float(model.evaluate({}, naive)[output]) / ghz
            upred = float(model.evaluate({}, before)[output]) / ghz
            meas = float(r.value)
            out.append(dict(id=r.id, uarch=d.name, cpu=r.cpu, kernel=kernel, output=output, measured=meas,
                            predicted=pred, lo=pred - z * sd, hi=pred + z * sd, naive=npred, untranslated=upred,
                            rel_error=(pred - meas) / meas, naive_rel_error=(npred - meas) / meas,
                            untranslated_rel_error=(upred - meas) / meas,
                            inside=bool(pred - z * sd <= meas <= pred + z * sd),
                            rel_half_width=float(z * sd / pred), inrun=base.get("source", ""),
                            trained_on=sorted({t["profile"] for t in train})))
    return out


def summarise_isa(points: list[dict], protocol: str) -> list[dict]:
    """The summary row of :func:`leave_one_isa_out`: as :func:`summarise`, under ``protocol``, with the
    MAPE of the untranslated derivation (``untranslated_mape``) next to the naive one."""
    rows = summarise(points)
    for row in rows:
        row.update(protocol=protocol,
                   untranslated_mape=float(np.mean(np.abs([p["untranslated_rel_error"] for p in points]))))
    return rows


def format_isa_points(points: list[dict]) -> list[str]:
    lines = ["| row | kernel | in-run baselines | measured ns | derived ns | 90 % interval | error | untranslated | "
             "naive | naive error |", "|---|---|---|---:|---:|---|---:|---:|---:|---:|"]
    for p in points:
        lines.append(f"| {p['id']} | {p['kernel']} | {p['inrun'] or '—'} | {p['measured']:.6g} | "
                     f"{p['predicted']:.4g} | {p['lo']:.4g} – {p['hi']:.4g} | {p['rel_error'] * 100:+.1f} % | "
                     f"{p['untranslated']:.4g} ({p['untranslated_rel_error'] * 100:+.1f} %) | {p['naive']:.4g} | "
                     f"{p['naive_rel_error'] * 100:+.1f} % |")
    return lines


# ---- leave one CPU out: SLUB, zeroing, the page allocator ------------------------------------

#: the outputs judged per subsystem, and the subsystem's summary name
COST_OUTPUTS = {"slub.loop_cycles": "slub", "slub.bulk_cycles": "slub", "zero.memset_cycles": "zeroing",
                "zero.erms_cycles": "zeroing", "page_alloc.single_cycles": "page_alloc",
                "page_alloc.bulk_cycles": "page_alloc"}
#: a subsystem's accuracy is claimed only with at least this many CPUs of one kernel era
MIN_CPUS_FOR_CLAIM = 3


def _judged(r) -> bool:
    """A corpus row the model describes: a SLUB curve of the upstream design (detached freelists,
    memcg kmem not active, the skb head's 256 B objects), a zeroing row, a page allocator row (a
    bulk of two or more: the list-based RFC of 2017 served a bulk of one through the bulk path, which
    the kernel's ``alloc_pages_bulk`` does not, commit 387ba26fb1cb)."""
    cond, series = str(r.conditions), str(r.series)
    if r.output.startswith("slub."):
        return ("design=detached-freelist" in cond and "memcg-active" not in series
                and r.x_name == "bulk" and "obj_bytes" not in cond)
    if r.output == "page_alloc.bulk_cycles":
        return r.x_name == "bulk" and float(r.x_value) >= 2
    return True


def _cost_naive(prof: Profile, exclude: tuple[str, ...], ghz: float) -> Profile:
    """The naive prediction: each derived constant as the training CPUs' mean ns x the clock (the base
    profile's ns where no training CPU measures it), the same on every CPU."""
    train = cost_training(exclude)
    base = load_profile(prof.inherits)
    vals = {}
    for k in COST_MODEL:
        ns = [t["ns"] for t in train[k]] or [base.value(k) / base.ghz]
        vals[k] = float(np.mean(ns)) * ghz
    return prof.with_values(vals)


def _cost_output_rel_sd(prof: Profile, params: dict, output: str) -> float:
    """Relative sd of one output from the derived constants' stderr (independent), by finite differences."""
    base = float(model.evaluate(params, prof)[output])
    var = 0.0
    for k in COST_MODEL:
        c = prof.constants.get(k)
        if c is None or not c.stderr:
            continue
        h = max(abs(c.value) * 1e-3, 1e-6)
        bumped = dataclasses.replace(prof, constants={**prof.constants, k: dataclasses.replace(c, value=c.value + h)})
        slope = (float(model.evaluate(params, bumped)[output]) - base) / h
        var += (slope * c.stderr) ** 2
    return math.sqrt(var) / base if base > 0 else float("inf")


def _own_through_base(prof: Profile, d: Description, params: dict, output: str) -> list[str]:
    """The constants of :data:`COST_MODEL` that ``output`` depends on and that ``prof`` (derived without
    ``d``'s data) inherits from a base profile measured on ``d`` itself (:data:`MEASURES`): where no other
    CPU measures a constant the derivation leaves it to the base, and when the left-out CPU is the base's,
    that is its own value, so the point is no prediction from the other CPUs."""
    base = prof.inherits
    if base not in d.profiles:
        return []
    at = float(model.evaluate(params, prof)[output])
    out = []
    for k in MEASURES.get(base, {}):
        c = prof.constants.get(k)
        if c is None or c.source.startswith("derived:"):
            continue
        if float(model.evaluate(params, prof.with_values({k: c.value + max(abs(c.value) * 1e-3, 1e-6)}))[output]) != at:
            out.append(k)
    return out


def leave_one_cpu_out_costs(df) -> list[dict]:
    """Every published SLUB, zeroing and page-allocator point of a described CPU (:func:`_judged`),
    predicted by :func:`derive` from the *other* CPUs' data only (``exclude``), next to the naive
    prediction (the other CPUs' mean ns).  The 90 % interval is log-normal,
    ``pred * exp(+-z * rel_sd)`` (positive and finite), ``rel_sd`` from the derived constants' stderr.
    A point whose constants no other CPU measures (only counted operations, or inherited) is kept; a
    CPU with no other CPU to train on for the subsystem is skipped (nothing to derive from), and so is a
    point that would read the left-out CPU's own value of a constant through the base profile
    (:func:`_own_through_base`: the E5-1650 v4's zeroing rows, whose per-line costs no other CPU measures)."""
    z = uncertainty.z_value(uncertainty.LEVEL)
    ds = descriptions()
    rows = df[df["output"].isin(list(COST_OUTPUTS))]
    out, profs = [], {}
    for r in rows.itertuples(index=False):
        name = row_uarch(r, ds)
        if name is None or not _judged(r) or not str(r.unit).startswith("cycles"):
            continue
        kernel = era.kernel_of(r.kernel) or era.kernel_of(r.source)
        if kernel is None or "debug" in str(r.kernel).lower() or unpriced_condition(r.conditions):
            continue
        sub = COST_OUTPUTS[r.output]
        train = cost_training(exclude=(name,))
        used = {t["profile"] for k, recs in train.items() if COST_MODEL[k][0] == sub for t in recs}
        if not used:
            continue
        ghz = float(r.ghz)
        key = (name, ghz, kernel, ds[name].for_cpu(r.cpu).cpu)
        if key not in profs:
            prof = derive(name, ghz=ghz, kernel=kernel, exclude=(name,), cpu=r.cpu)
            profs[key] = (prof, _cost_naive(prof, (name,), ghz))
        prof, naive = profs[key]
        x_name = outofsample_input(r.output, r.x_name)
        params = {x_name: float(r.x_value)} if x_name else {}
        if _own_through_base(prof, ds[name], params, r.output):
            continue
        pred = float(model.evaluate(params, prof)[r.output])
        npred = float(model.evaluate(params, naive)[r.output])
        rel = _cost_output_rel_sd(prof, params, r.output)
        lo, hi = pred * math.exp(-z * rel), pred * math.exp(z * rel)
        meas = float(r.value)
        out.append(dict(id=r.id, uarch=name, subsystem=sub, cpu=r.cpu, kernel=kernel, output=r.output,
                        x=float(r.x_value) if x_name else None, measured=meas, predicted=pred, lo=lo, hi=hi,
                        naive=npred, rel_error=(pred - meas) / meas, naive_rel_error=(npred - meas) / meas,
                        inside=bool(lo <= meas <= hi), rel_half_width=(hi - lo) / (2.0 * pred),
                        inferred_cpu=any(str(r.series).startswith(p) for p in INFERRED_CPU),
                        trained_on=sorted(used)))
    return out


def outofsample_input(output: str, x_name) -> str | None:
    """The model input of a corpus row's varied quantity (``bulk``, ``page_bulk``, ``zero_bytes``)."""
    if not isinstance(x_name, str) or not x_name:
        return None
    if output.startswith("page_alloc.") and x_name == "bulk":
        return "page_bulk"
    return {"bulk": "bulk", "zero_bytes": "zero_bytes"}.get(x_name)


def cpus_per_era(points: list[dict]) -> int:
    """The most CPUs of one kernel era (before/since the page_pool split release) among ``points``."""
    eras = {}
    for p in points:
        eras.setdefault(since_split(p["kernel"]), set()).add(p["uarch"])
    return max((len(v) for v in eras.values()), default=0)


def summarise_costs(points: list[dict]) -> list[dict]:
    """One "other CPU" row per subsystem of :func:`leave_one_cpu_out_costs`: MAPE, the naive MAPE, the
    90 % intervals' coverage and median relative half-width, and whether an accuracy is claimed
    (``claim``: at least :data:`MIN_CPUS_FOR_CLAIM` CPUs of one kernel era)."""
    out = []
    for sub in sorted({p["subsystem"] for p in points}):
        pts = [p for p in points if p["subsystem"] == sub]
        e = np.abs([p["rel_error"] for p in pts])
        b = np.abs([p["naive_rel_error"] for p in pts])
        out.append(dict(subsystem=sub, protocol=PROTOCOL, points=len(pts), mape=float(np.mean(e)),
                        max_error=float(np.max(e)), baseline_mape=float(np.mean(b)),
                        coverage=float(np.mean([p["inside"] for p in pts])),
                        median_rel_half_width=float(np.median([p["rel_half_width"] for p in pts])),
                        cpus=sorted({p["uarch"] for p in pts}),
                        claim=cpus_per_era(pts) >= MIN_CPUS_FOR_CLAIM))
    return out


def format_cost_points(points: list[dict]) -> list[str]:
    lines = ["| row | subsystem | CPU (description) | kernel | x | measured | derived | 90 % interval | error | "
             "naive | naive error |", "|---|---|---|---|---:|---:|---:|---|---:|---:|---:|"]
    for p in points:
        x = "—" if p["x"] is None else f"{p['x']:g}"
        star = " *" if p["inferred_cpu"] else ""
        lines.append(f"| {p['id']} | {p['subsystem']} | {p['uarch']}{star} | {p['kernel']} | {x} | "
                     f"{p['measured']:.6g} | {p['predicted']:.4g} | {p['lo']:.4g} – {p['hi']:.4g} | "
                     f"{p['rel_error'] * 100:+.1f} % | "
                     f"{p['naive']:.4g} | {p['naive_rel_error'] * 100:+.1f} % |")
    return lines


# ---- derivation error: how far a derivation lands from measurement, carried into the derived constants ---

#: the family of each derived constant: the page_pool costs (:data:`DERIVED_PP`) and the SLUB, zeroing and
#: page-allocator constants by subsystem (:data:`COST_MODEL`); a family's leave-one-CPU-out residuals are
#: the error of deriving any of its constants
FAMILY = {**{k: "page_pool" for k in DERIVED_PP}, **{k: v[0] for k, v in COST_MODEL.items()}}


@functools.lru_cache(maxsize=1)
def derivation_residuals() -> tuple[tuple[str, str, float], ...]:
    """``(family, description, ln(derived / measured))`` of every leave-one-CPU-out point of the corpus
    (:func:`leave_one_cpu_out`, :func:`leave_one_cpu_out_costs`): each a CPU predicted without its own data."""
    from ..corpus import load_corpus
    df = load_corpus()
    return tuple((p.get("subsystem", "page_pool"), p["uarch"], math.log(p["predicted"] / p["measured"]))
                 for p in leave_one_cpu_out(df) + leave_one_cpu_out_costs(df))


def derivation_error(residuals, exclude: tuple[str, ...] = ()) -> dict[str, tuple[float, int, list[str]]]:
    """Per family, the rms of the residuals' ``ln(derived / measured)`` (an sd of ``ln``, bias included), the
    number of residuals and their CPUs, leaving out the CPUs of ``exclude`` (a CPU's own residuals may not
    widen its own prediction).  A family needs two residuals."""
    out = {}
    for fam in sorted({r[0] for r in residuals}):
        r = [(u, x) for f, u, x in residuals if f == fam and u not in exclude]
        if len(r) >= 2:
            out[fam] = (float(np.sqrt(np.mean(np.square([x for _, x in r])))), len(r), sorted({u for u, _ in r}))
    return out


def with_derivation_error(prof: Profile, errors: dict) -> Profile:
    """``prof`` with each derived constant's relative sd raised to its family's derivation error
    (:func:`derivation_error`) where that is larger, and uncorrelated with every other constant.

    The larger, not the sum in quadrature: the constant's own spread (the derivation over the training CPUs
    and a kernel drift) estimates the same error from fewer points, so adding both would count it twice; no
    sd is lowered.  A linear-scale constant (the page_pool costs) takes the sd of ``ln`` as its relative sd.
    Uncorrelated: a derived profile inherits its base's fit correlations, which are the base CPU's fitting
    errors (its zeroing start-up and per-line costs at -0.95 to -0.99), not a derivation's; kept, they
    cancel most of the derivation error of an output that sums the two."""
    consts = dict(prof.constants)
    derived = [k for k, c in prof.constants.items() if k in FAMILY and c.source.startswith("derived")]
    for k in derived:
        c, fam = prof.constants[k], FAMILY[k]
        if fam not in errors or c.value <= 0:
            continue
        rms, n, cpus = errors[fam]
        if rms * c.value > c.stderr:
            consts[k] = dataclasses.replace(
                c, stderr=round(rms * c.value, 3),
                source=f"{c.source}; derivation error: relative sd raised to {rms:.2f}, the rms of ln(derived / "
                       f"measured) of the leave-one-CPU-out {fam} predictions ({n} points on {', '.join(cpus)}; "
                       "skbmodel.evidence.derivation.leave_one_out.derivation_error)")
    names = list(prof.fit_names)  # a constant outside them is uncorrelated already
    corr = prof.correlation(names)
    for i, n in enumerate(names):
        if n in derived:
            corr[i, :], corr[:, i], corr[i, i] = 0.0, 0.0, 1.0
    return dataclasses.replace(prof, constants=consts).with_correlation(names, corr)


def derivation_coverage(df) -> list[dict]:
    """Per family, the leave-one-CPU-out points' 90 % intervals as the pages show them
    (:func:`skbmodel.uncertainty.evaluate_with_intervals` on the profile derived without the point's CPU):
    ``before``, the derived constants' own spread; ``after``, raised to the derivation error of the *other*
    CPUs (:func:`with_derivation_error`, ``exclude`` the point's CPU).  Coverage, median relative
    half-width, MAPE (the same point values both ways), the points whose interval narrowed (``narrowed``) and a
    pooled row ``all``."""
    res = derivation_residuals()
    recs = []
    for p in leave_one_cpu_out(df) + leave_one_cpu_out_costs(df):
        r = df[df["id"] == p["id"]].iloc[0]
        prof = derive(p["uarch"], ghz=float(r.ghz), kernel=p["kernel"], exclude=(p["uarch"],), cpu=p["cpu"])
        x_name = outofsample_input(p["output"], r.x_name)
        params = {x_name: float(r.x_value)} if x_name else {}
        rec = dict(family=p.get("subsystem", "page_pool"), error=abs(p["rel_error"]))
        after = with_derivation_error(prof, derivation_error(res, (p["uarch"],)))
        for when, pr in (("before", prof), ("after", after)):
            f, iv = uncertainty.evaluate_with_intervals(params, pr, [p["output"]])
            v, (lo, hi) = float(np.asarray(f[p["output"]])), (float(np.asarray(b)) for b in iv[p["output"]])
            rec[when] = (bool(lo <= p["measured"] <= hi), (hi - lo) / (2.0 * v))
        rec["narrowed"] = rec["after"][1] < rec["before"][1] * (1.0 - 1e-6)
        recs.append(rec)
    out = []
    for fam in sorted({r["family"] for r in recs}) + ["all"]:
        rs = [r for r in recs if fam in ("all", r["family"])]
        row = dict(family=fam, points=len(rs), mape=float(np.mean([r["error"] for r in rs])),
                   narrowed=int(sum(r["narrowed"] for r in rs)))
        for when in ("before", "after"):
            row[f"coverage_{when}"] = float(np.mean([r[when][0] for r in rs]))
            row[f"median_rel_half_width_{when}"] = float(np.median([r[when][1] for r in rs]))
        out.append(row)
    return out


def shipped_derived(name: str) -> Profile:
    """The profile shipped as ``skbmodel/profiles/derived-<name>.toml``: :func:`derive` for the latest
    kernel at the description's TSC clock (an arm64 core: its core clock), each derived constant's spread at
    least the derivation error of its family (the leave-one-CPU-out residuals,
    :func:`with_derivation_error`), listing only the constants that differ from
    its base profile (the rest it inherits).  ``scripts/derived_profiles.py`` writes it."""
    d = load(name)
    full = derive(name, ghz=None if "tsc_ghz" in d.figures else d.value("base_ghz"))
    full = with_derivation_error(full, derivation_error(derivation_residuals()))
    base = load_profile(full.inherits)
    own = {k: c for k, c in full.constants.items() if base.constants.get(k) != c}
    return dataclasses.replace(full, id=derived_id(name), constants=own)
