"""Out of sample across kernels: each published point predicted by the profile of its CPU and kernel era.

A CPU may have one profile per kernel era (``kernels`` in the profile file, :mod:`skbmodel.machine.era`).
Every single published number of the corpus measured on a CPU that has shipped profiles is given
to the profile whose kernel range holds the number's kernel:

* ``fitted``: the profile's own constants cite the row's series -- reproduced, not a prediction;
* ``predicted``: any other row (another run, another test, another kernel of the era): the
  out-of-sample figure.  Next to it, what the default profile (``e5-1650v4`` era of 2021-2023
  kernels, the model as shipped before eras) predicts for the same point;
* left out, with the reason: no profile's range holds the kernel, the kernel cannot be read, or
  the run used another kernel configuration (debug options) than any profile describes.

Whole-path rates (:func:`rate_points`): a published cpumap rate predicted by a profile moved to the
row's kernel, in the run's own scenario, next to the naive prediction (a seed lab's measured value of
the same quantity, unchanged).  Protocol :data:`RATE_PROTOCOL`: the profile was fitted to the same
lab's earlier run; :data:`OTHER_CPU_PROTOCOL`: the row's CPU has a profile that never saw a cpumap
rate (its cpumap constants are carried over from another lab's fit).  The other cpumap and
kfree_skb_list rates of the corpus are listed with the reason they are not predicted
(:data:`RATE_LEFT_OUT`), and :data:`RATE_STATEMENTS` says what no figure covers yet.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..machine import era
from .. import model
from . import parsers, validation
from ..physics import units
from ..machine.profile import DEFAULT_PROFILE, Profile, available_profiles, load_profile

#: the CPU each shipped profile describes, as corpus rows name it
PROFILE_CPUS = {
    "e5-1650v4": "E5-1650 v4", "e5-1650v4-2025": "E5-1650 v4", "i7-4790k": "i7-4790K",
    "xeon-gold-6140": "Gold 6140", "xeon-platinum-8481c": "Platinum 8481C",
}
#: words of a row's kernel description that mark a configuration no profile describes
OTHER_CONFIG = ("debug",)


def protocol(pid: str) -> str:
    """The summary's protocol name for the points an era profile predicts."""
    return f"era profile {pid}"


def _unit(unit: str) -> str:
    u = str(unit).strip()
    return "cycles" if u.startswith("cycles") else u


def row_kernel(row) -> str | None:
    """The row's mainline kernel: from its ``kernel`` text, else from the date of its ``source``."""
    return era.kernel_of(row.kernel) or era.kernel_of(row.source)


def _predict(prof: Profile, output: str, unit: str) -> float:
    out = model.evaluate({}, prof)[output]
    return float(validation.to_measured_unit(out, model.OUTPUT_UNITS[output], unit, prof.ghz))


def era_points(df) -> list[dict]:
    """One record per single published point on a profiled CPU: which era profile it belongs to,
    whether that profile was fitted to it, its prediction and error, and the default profile's."""
    profiles = {pid: load_profile(pid) for pid in PROFILE_CPUS if pid in available_profiles()}
    default = load_profile(DEFAULT_PROFILE)
    out = []
    # whole-path rates are predicted in their own run's scenario (rate_points), not at the default state
    sel = (df["x_name"] == "") & df["output"].isin(list(model.OUTPUT_UNITS)) & ~df["subsystem"].isin(RATE_SUBSYSTEMS)
    for r in df[sel].itertuples(index=False):
        cands = [pid for pid, cpu in PROFILE_CPUS.items() if pid in profiles and cpu in r.cpu]
        if not cands:
            continue
        unit = _unit(r.unit)
        if not parsers.compatible(r.output, unit):
            continue
        kernel = row_kernel(r)
        rec = dict(id=r.id, output=r.output, cpu=r.cpu, kernel_text=r.kernel, kernel=kernel, measured=float(r.value),
                   unit=unit, subsystem=r.subsystem, profile=None, kernels=None, role="left out", why="",
                   predicted=None, rel_error=None, default_predicted=None, default_rel_error=None)
        text = str(r.kernel).lower()
        inside = [pid for pid in cands if era.in_range(kernel, profiles[pid].kernels)]
        if any(w in text for w in OTHER_CONFIG):
            rec["why"] = "another kernel configuration (debug options) than any profile describes"
        elif kernel is None:
            rec["why"] = "the kernel is not stated"
        elif not inside:
            rec["why"] = (f"kernel {kernel}: no profile of this CPU covers it ("
                          + ", ".join(f"{p} {'..'.join(profiles[p].kernels)}" for p in cands) + ")")
        else:
            pid = inside[0]
            prof = profiles[pid]
            cited = " ".join(c.source for c in prof.constants.values() if c.name in _own(pid))
            pred = _predict(prof, r.output, unit)
            dpred = _predict(default, r.output, unit)
            rec.update(profile=pid, kernels=list(prof.kernels), predicted=pred,
                       rel_error=(pred - rec["measured"]) / rec["measured"], default_predicted=dpred,
                       default_rel_error=(dpred - rec["measured"]) / rec["measured"],
                       role="fitted" if r.series in cited else "predicted")
        out.append(rec)
    return out


def _own(pid: str) -> set[str]:
    """Constants a profile's own file sets (not inherited)."""
    prof = load_profile(pid)
    if not prof.inherits:
        return set(prof.constants)
    parent = load_profile(prof.inherits)
    return {k for k, c in prof.constants.items() if parent.constants.get(k) != c}


def summarise(points: list[dict]) -> list[dict]:
    """Per subsystem and era profile: the predicted points' MAPE and max |error|, and the default
    profile's MAPE on the same points (``default_mape``)."""
    acc: dict[tuple[str, str], list[dict]] = {}
    for p in points:
        if p["role"] == "predicted":
            acc.setdefault((p["subsystem"], p["profile"]), []).append(p)
    out = []
    for (sub, pid), ps in sorted(acc.items()):
        e = np.abs([p["rel_error"] for p in ps])
        d = np.abs([p["default_rel_error"] for p in ps])
        out.append(dict(subsystem=sub, protocol=protocol(pid), profile=pid, points=len(ps), mape=float(np.mean(e)),
                        max_error=float(np.max(e)), default_mape=float(np.mean(d)),
                        fitted_to=sorted(q["id"] for q in points if q["profile"] == pid and q["role"] == "fitted"),
                        predicted=[q["id"] for q in ps]))
    return out


def format_points(points: list[dict]) -> list[str]:
    """Markdown table lines of :func:`era_points` (the report's section)."""
    lines = ["| row | CPU kernel | profile (kernels) | role | measured | predicted | error | default profile |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    for p in points:
        if p["profile"] is None:
            lines.append(f"| {p['id']} | {p['kernel'] or '?'} | — | left out: {p['why']} | {p['measured']:.6g} | — | "
                         "— | — |")
            continue
        lines.append(f"| {p['id']} | {p['kernel']} | {p['profile']} ({'..'.join(p['kernels'])}) | {p['role']} | "
                     f"{p['measured']:.6g} | {p['predicted']:.6g} | {p['rel_error'] * 100:+.1f} % | "
                     f"{p['default_predicted']:.6g} ({p['default_rel_error'] * 100:+.1f} %) |")
    return lines


# ---- whole-path rates (cpumap, kfree_skb_list) on another kernel of the same lab ----------------

#: protocol name of the rates a lab's profile predicts on another kernel than it was fitted on
RATE_PROTOCOL = "same lab, other kernel"
#: protocol name of the rates a profile predicts on its own CPU when its cpumap constants were fitted in
#: another lab (on another CPU), on another kernel than either
OTHER_CPU_PROTOCOL = "other CPU, other kernel"
#: the subsystems whose published rates this protocol examines
RATE_SUBSYSTEMS = ("cpumap", "kfree_skb_list")


@dataclasses.dataclass(frozen=True)
class RatePoint:
    """A published rate that a lab's profile predicts on the row's own kernel.

    ``output`` is the model output that is the benchmark's quantity (``why`` says why), ``state`` the
    scenario of the run, ``naive_row`` the seed row of the same quantity whose measured value the naive
    prediction carries over unchanged, ``protocol`` the protocol the point belongs to."""
    row: str
    profile: str
    output: str
    state: dict
    naive_row: str
    why: str
    protocol: str = RATE_PROTOCOL


RATE_POINTS = (
    RatePoint("cpumap-2024-olek-udp-mpps-base", "xeon-platinum-iavf", "cpumap.dst_mpps",
              dict(pp_recycle=1.0, place="same_l3"), "cpm-08",
              "the destination CPU's rate: the source CPU only XDP-redirects (7.9 Mpps in the same lab's 2023 run), "
              "the kthread builds skbs (kmem_cache_alloc_bulk, no GRO before the series) and the stack runs to the "
              "UDP lookup with a software checksum, as in seed 003; skb page_pool recycling is in since 6.4 "
              "(pp_recycle 1); one NUMA node, as in seed 003"),
    RatePoint("cpumap-e51650v4-2019-udpnoports-baseline", "e5-1650v4", "path.mpps",
              dict(path="design", d_from="cpumap", d_skb="slab_one", d_zero="memset", pp_recycle=0.0, place="same_l3"),
              "cpm-05",
              "the destination CPU's rate (cpumap_kthread pps; the source CPU forwards 14.7 Mpps, so the "
              "destination is the bottleneck and the composed destination path's rate is the benchmark's quantity): "
              "the model's cpumap destination with the skb stage of 5.1 before the series, build_skb's one "
              "kmem_cache_alloc per skb (d_skb slab_one) and memset of the head (d_zero memset of the zero_bytes "
              "default, offsetof(struct sk_buff, tail) of seed 002's build; the 5.1 layout is not stated); i40e has "
              "no page_pool and the destination frees each page with page_frag_free (the author's perf at qsize 128 "
              "shows free_pcppages_bulk: the driver's page reuse fails), so no page comes back through a ring "
              "(pp_recycle 0, as in seed 003's baseline cpm-05, the naive row); one CPU socket. Not in the model: "
              "one ptr_ring consume per frame (batched in the fitted 6.3 kernel), IPv4 UDP whose checksum "
              "(pktgen's, not stated) may not be verified, against seed 003's IPv6 UDP with a software checksum",
              OTHER_CPU_PROTOCOL),
    RatePoint("cpumap-e51650v4-2019-udpnoports-p3-skb-bulk-alloc", "e5-1650v4", "cpumap.dst_mpps",
              dict(pp_recycle=0.0, place="same_l3"), "cpm-05",
              "the destination CPU's rate, as for the baseline row; patch 3 allocates the batch's skbs with one "
              "kmem_cache_alloc_bulk of CPUMAP_BATCH 8 with __GFP_ZERO, the model's cpumap destination as it is "
              "(the profile's cpumap_batch 8, gfp_zero); pp_recycle 0 as for the baseline. Not in the model: "
              "patch 1's batched ptr_ring consume (in this row; measured +14 ns/packet faster than the baseline in "
              "the same runs) and patch 2's refactor, and the checksum difference of the baseline row",
              OTHER_CPU_PROTOCOL),
)

_NO_GRO = ("the model's cpumap destination has no GRO: a GRO instance or a CPU-pinned threaded NAPI replaced "
           "netif_receive_skb_list (aggregation, GRO bookkeeping and NAPI-cache skbs), a mechanism the model lacks "
           "and no constant describes")
_TCP = ("a TCP throughput in bits per second (MTU-sized segments, GRO, TSO, a socket and a user-space copy): "
        "the model has no TCP path, and no frame rate can be read from it")
_IXGBE = ("ixgbe has no page_pool (its pages are reused by refcount, freed remotely with page_frag_free), the "
          "CPU and clock are not stated, and pktgen's default UDP frames (IPv4, checksum 0 unless its UDPCSUM flag is "
          "set) leave the stack no checksum to verify: the profile's cpumap constants are fitted to an iavf "
          "page_pool run of IPv6 UDP with a software checksum, so neither the machine nor the path is one a "
          "profile describes")
_REMOTE_DROP = ("the source CPU's rate with XDP_DROP on the destination (no skb is built), on ixgbe (no page_pool) "
                "and a CPU that is not stated: the model's source base is fitted to iavf and its page side is "
                "page_pool's")
_E5_LACKS = ("{what}, a mechanism the model's cpumap destination does not have (its stack base is one lump fitted "
             "on a 6.3 kernel that already has it, so the model cannot tell this row from the predicted {near})")
_E5_QSIZE = ("a cpumap queue of 64 frames instead of 128: the queue size moves the rate through the i40e driver's "
             "page reuse (the author sees free_pcppages_bulk at 128), which the model does not describe (no page "
             "reuse by refcount, no queue size)")
#: why each other published cpumap / kfree_skb_list rate of the corpus is not predicted
RATE_LEFT_OUT = {
    "cpumap-e51650v4-2019-udpnoports-p1-ptr-ring-batch": _E5_LACKS.format(
        what="patch 1 batches the ptr_ring consume (8 frames)", near="baseline row"),
    "cpumap-e51650v4-2019-udpnoports-p2-build-skb-around": _E5_LACKS.format(
        what="patches 1-2: the batched ptr_ring consume and build_skb_around (a refactor, still one "
             "kmem_cache_alloc per skb)", near="baseline row"),
    "cpumap-e51650v4-2019-udpnoports-p4-prefetchw-page": _E5_LACKS.format(
        what="patch 4 prefetches each frame's struct page for write", near="patch 3 row"),
    "cpumap-e51650v4-2019-udpnoports-p5-skb-list": _E5_LACKS.format(
        what="patch 5 passes the batch's skbs as one list (netif_receive_skb_list_core), on top of patch 4's "
             "prefetch", near="patch 3 row"),
    "cpumap-e51650v4-2019-udpnoports-p4-qsize64": _E5_QSIZE, "cpumap-e51650v4-2019-udpnoports-p5-qsize64": _E5_QSIZE,
    "cpumap-2024-olek-udp-thread-gro-off": _NO_GRO, "cpumap-2024-olek-udp-thread-gro-on": _NO_GRO,
    "cpumap-2024-olek-udp-bulk-gro-off": _NO_GRO, "cpumap-2024-olek-udp-mpps-bulk-napi": _NO_GRO,
    "cpumap-2024-dxu-aug-napi-gro": _TCP, "cpumap-2024-dxu-aug-base": _TCP, "cpumap-2024-dxu-nov-base-a": _TCP,
    "cpumap-2024-dxu-nov-base-b": _TCP, "cpumap-2024-dxu-nov-lorenzo-v2": _TCP, "cpumap-2024-dxu-nov-olek-v2": _TCP,
    "cpumap-2024-olek-tcp-direct-t1": _TCP, "cpumap-2024-olek-tcp-direct-t8f16": _TCP,
    "cpumap-2024-olek-tcp-cpumap-t1-base": _TCP, "cpumap-2024-olek-tcp-cpumap-t1-gro": _TCP,
    "cpumap-2024-olek-tcp-cpumap-t8f16-base": _TCP, "cpumap-2024-olek-tcp-cpumap-t8f16-gro": _TCP,
    "cpumap-2021-lorenzo-ixgbe-skb-core": _IXGBE, "cpumap-2021-lorenzo-ixgbe-skb-list": _IXGBE,
    "cpumap-2024-seb-ixgbe-base": _REMOTE_DROP, "cpumap-2024-seb-ixgbe-series": _REMOTE_DROP,
}

#: why no figure predicts a rate on another CPU, and why kfree_skb_list has no figure at all
RATE_STATEMENTS = (
    ("cpumap, other CPU",
     "one published source names the CPU of a cpumap rate besides seed 003: Jesper Brouer's 2019 runs of the "
     "cpumap bulk-optimization series on the E5-1650 v4 (xdp-project areas/cpumap/cpumap03-optimizations.org; "
     "5.1-rc4 bpf-next, i40e, xdp_redirect_cpu). The e5-1650v4 profile carries the cpumap bases over from the "
     "seed 003 fit (in cycles, +25 % sd for another CPU), so it never saw these rows: the baseline and the "
     "patch that bulk-allocates the skbs are predicted (protocol \"" + OTHER_CPU_PROTOCOL + "\", table above), "
     "each patch mapped to the model's skb stage; the patches of mechanisms the model lacks (batched ptr_ring "
     "consume, struct page prefetch, list RX) and the qsize-64 runs are listed above, not predicted; the "
     "iptables-raw drop runs of the same file end the stack at the raw PREROUTING hook, a depth no constant "
     "describes, and are not in the corpus (docs/corpus.md). Still not predicted: any cpumap rate on a CPU "
     "without a shipped profile. A derived profile (skbmodel.evidence.derivation.derive) inherits the same seed "
     "003 bases, so a "
     "figure there needs the cpumap bases (driver RX, the stack to the UDP lookup) derived from a machine "
     "description, which the model does not have; and the two predicted points are one lab, one kernel and "
     "one CPU, with one source CPU's page path (i40e's page reuse) that the model approximates by the page "
     "allocator."),
    ("kfree_skb_list",
     "no figure can be made.  The only published rates of the path the model describes (pktgen queue_xmit "
     "into a qdisc that drops, the drops freed with kfree_skb_list, the wire held back by flow control) are "
     "seed 000's pair, kfl-06 and kfl-07 (2,396,594 and 2,479,970 pps, one testlab, CPU not stated), and they "
     "fix the scenario's two constants exactly (kfl_base_cycles and slub_free_slow_extra_cycles: not "
     "predictable in the seed-row tables below).  The corpus holds no other run of this path, and a search of "
     "the stored mailing-list and commit text (pktgen_bench_xmit_mode_queue_xmit, kfree_skb_list bulk free) "
     "found none: the other pktgen queue_xmit rates found (e.g. Lukas Wunner, \"netfilter: Introduce egress hook\", "
     "Message-ID <14ab7e5af20124a34a50426fd570da7d3b0369ce.1583927267.git.lukas@wunner.de>, Core i7-3615QM on "
     "lo) have no qdisc drops, so kfree_skb_list frees nothing in them.  A figure needs a second published run "
     "of qdisc drops (another kernel or CPU, with its wire rate), and kfl_base_cycles (pktgen's skb alloc, the "
     "qdisc enqueue, fq_codel, freeing the data) derived rather than fitted."),
)


#: units of the constants that are costs of kernel code paths: these move between kernels
COST_UNITS = ("cycles", "ns")


def kernel_moved(prof: Profile, kernel: str) -> Profile:
    """``prof`` (measured on its :attr:`Profile.kernels`) used on mainline ``kernel``.

    The model's kernel-era code paths follow ``kernel``.  Each cost of a kernel code path (a constant in
    :data:`COST_UNITS`) keeps its value but gains the kernel drift over the years between, as an
    independent error: ``sd' = sqrt(sd^2 + (d * sqrt(|year(kernel) - year(prof)|) * value)^2)``, with
    ``d`` [1/sqrt(year)] :func:`skbmodel.evidence.derivation.opcounts.kernel_drift` of the constant's subsystem (its
    :data:`~skbmodel.evidence.derivation.opcounts.COST_MODEL` entry; page_pool's for the others), a random walk
    fitted on CPUs
    measured in two kernel eras.  The fitted covariances are kept: the correlations among the fitted
    constants shrink by the ratio of the old to the new sd.  The same kernel: ``prof`` unchanged.
    """
    from .derivation import opcounts
    dy = abs(era.year_of(kernel) - era.year_of_range(prof.kernels))
    if dy == 0.0:
        return prof
    drifts: dict[str, float] = {}
    consts, scale = dict(prof.constants), {}
    for k, c in prof.constants.items():
        if c.unit not in COST_UNITS:
            continue
        sub = opcounts.COST_MODEL[k][0] if k in opcounts.COST_MODEL else "page_pool"
        if sub not in drifts:
            drifts[sub] = opcounts.kernel_drift(sub=sub)[0]
        sd = math.hypot(c.stderr, drifts[sub] * math.sqrt(dy) * abs(c.value))
        scale[k] = c.stderr / sd if sd > 0 else 1.0
        consts[k] = dataclasses.replace(c, stderr=sd)
    moved = dataclasses.replace(prof, kernels=(kernel, kernel), constants=consts)
    names = [n for n in prof.fit_names if n in scale]
    if names:
        s = np.array([scale[n] for n in names])
        moved = moved.with_correlation(names, prof.correlation(names) * np.outer(s, s) + np.diag(1.0 - s * s))
    return moved


def rate_points(df) -> list[dict]:
    """Each :data:`RATE_POINTS` row predicted by its lab's profile moved to the row's kernel
    (:func:`kernel_moved`: the kernel-era code paths follow it, the costs keep their values and gain the
    kernel drift), with the dashboard's 90 % interval and the naive prediction (the lab's seed value
    carried over)."""
    from .. import uncertainty
    from .observations import seed_observations
    rows = df.set_index("id")
    out = []
    for p in RATE_POINTS:
        r = rows.loc[p.row]
        kernel = era.kernel_of(r["kernel"]) or era.kernel_of(r["source"])
        prof = load_profile(p.profile)
        moved = kernel_moved(prof, kernel)
        params = model.default_params(p.profile)
        params.update(p.state)
        v, iv = uncertainty.evaluate_with_intervals(params, moved, outputs=[p.output])
        unit = _unit(r["unit"])

        def conv(x):
            return float(validation.to_measured_unit(float(np.ravel(x)[0]), model.OUTPUT_UNITS[p.output], unit,
                                                     prof.ghz))
        pred, lo, hi = conv(v[p.output]), *sorted(conv(x) for x in iv[p.output])
        seed = seed_observations()[p.naive_row]
        naive = float(units.convert(seed.value, _unit(seed.unit), unit))
        meas = float(r["value"])
        cited = " ".join(c.source for c in prof.constants.values())
        out.append(dict(id=p.row, subsystem=r["subsystem"], output=p.output, profile=p.profile,
                        profile_kernels=list(prof.kernels), kernel=kernel, measured=meas, unit=unit, predicted=pred,
                        lo=lo, hi=hi, inside=bool(lo <= meas <= hi), rel_error=(pred - meas) / meas,
                        rel_half_width=(hi - lo) / 2 / abs(pred), naive=naive, naive_row=p.naive_row,
                        naive_rel_error=(naive - meas) / meas, protocol=p.protocol,
                        fitted=bool(r["series"] in cited or _message_id(r["source"]) in cited), why=p.why))
    return out


def _message_id(source: str) -> str:
    """The Message-ID a corpus source names (``<...>``), or the whole text."""
    s = str(source)
    i, j = s.find("<"), s.find(">")
    return s[i:j + 1] if 0 <= i < j else s


def rates_left_out(df) -> list[dict]:
    """Every published rate of :data:`RATE_SUBSYSTEMS` in the corpus that no :data:`RATE_POINTS` entry
    predicts, with the reason (:data:`RATE_LEFT_OUT`; a row without one says so)."""
    predicted = {p.row for p in RATE_POINTS}
    sel = df[df["subsystem"].isin(RATE_SUBSYSTEMS) & ~df["id"].isin(predicted)]
    return [dict(id=r.id, subsystem=r.subsystem, measured=float(r.value), unit=str(r.unit), kernel=str(r.kernel),
                 why=RATE_LEFT_OUT.get(r.id, "not examined: no reason recorded"))
            for r in sel.itertuples(index=False)]


def summarise_rates(points: list[dict]) -> list[dict]:
    """Per subsystem and protocol, the predicted points of :func:`rate_points` (those the profile was not
    fitted to): MAPE and max |error|, the naive prediction's MAPE (``baseline_mape``), the 90 % intervals'
    coverage."""
    out = []
    for sub, proto in sorted({(p["subsystem"], p["protocol"]) for p in points if not p["fitted"]}):
        ps = [p for p in points if p["subsystem"] == sub and p["protocol"] == proto and not p["fitted"]]
        e = np.abs([p["rel_error"] for p in ps])
        out.append(dict(subsystem=sub, protocol=proto, points=len(ps), mape=float(np.mean(e)),
                        max_error=float(np.max(e)),
                        baseline_mape=float(np.mean(np.abs([p["naive_rel_error"] for p in ps]))),
                        coverage=float(np.mean([p["inside"] for p in ps])),
                        median_rel_half_width=float(np.median([p["rel_half_width"] for p in ps]))))
    return out


def _rate(x: float, digits: int | None = None) -> str:
    """A rate as the report prints it: ``digits`` significant figures (all of a measurement when None),
    large packet counts without an exponent and with thousands separators."""
    v = float(f"{x:.{digits}g}") if digits else float(x)
    return f"{v:,.0f}" if abs(v) >= 1e4 else (f"{v:.{digits}g}" if digits else f"{v:.6g}")


def format_rates(points: list[dict], left_out: list[dict]) -> list[str]:
    """The report's section on whole-path rates: the predicted points, the rows left out, the statements."""
    lines = ["", "Whole-path rates: a published cpumap or kfree_skb_list rate predicted in its run's scenario by a "
             "profile moved to the row's own kernel (its interval adds the kernel drift of each cost over the years "
             "between, era_validation.kernel_moved). Protocol \"" + RATE_PROTOCOL + "\": the profile of the lab that "
             "measured it, fitted to the lab's earlier run; naive: the lab's earlier measured value of the same "
             "quantity, unchanged. Protocol \"" + OTHER_CPU_PROTOCOL + "\": the profile of the row's CPU, whose "
             "cpumap constants come from another lab's fit on another CPU (seed 003) and never saw the row; naive: "
             "that lab's measured value of the same quantity and page path, unchanged",
             "",
             "| row | protocol | output | profile (fitted on) -> kernel | measured | predicted | 90 % interval | error "
             "| naive | naive error |", "|---|---|---|---|---:|---:|---|---:|---:|---:|"]
    for p in points:
        role = " (fitted: not a prediction)" if p["fitted"] else ""
        lines.append(f"| {p['id']}{role} | {p['protocol']} | {p['output']} | {p['profile']} "
                     f"({'..'.join(p['profile_kernels'])}) -> {p['kernel']} | {_rate(p['measured'])} {p['unit']} | "
                     f"{_rate(p['predicted'], 3)} | {_rate(p['lo'], 3)} – {_rate(p['hi'], 3)} | "
                     f"{p['rel_error'] * 100:+.1f} % | {_rate(p['naive'], 3)} ({p['naive_row']}) | "
                     f"{p['naive_rel_error'] * 100:+.1f} % |")
    for s in summarise_rates(points):
        lines += ["", f"{s['subsystem']}, {s['protocol']}: {s['points']} point(s) predicted: MAPE "
                  f"{s['mape'] * 100:.1f} %, max {s['max_error'] * 100:.1f} % "
                  f"(naive {s['baseline_mape'] * 100:.1f} %); the 90 % intervals hold {s['coverage'] * 100:.0f} % of "
                  f"the points, median relative half-width {s['median_rel_half_width'] * 100:.1f} %"]
    lines += [""] + [f"* {p['id']}: {p['why']}." for p in points]
    lines += ["", f"{RATE_PROTOCOL}: the model has no mechanism that changed on this path between the fitted kernel "
              "and the row's (kthread, netif_receive_skb_list, kmem_cache_alloc_bulk of 8), so its prediction is the "
              "lab's earlier rate, and its interval holds only the fitted constants' uncertainty (no structural sd is "
              "estimated for cpumap): the gap is what changed between the runs that the model does not describe.",
              "", f"{OTHER_CPU_PROTOCOL}: the prediction moves the seed 003 bases (in cycles) to the row's clock and "
              "adds what the model knows of the row's CPU and run (the E5-1650 v4's SLUB, zeroing and page-allocator "
              "costs; the skb stage of the row's kernel; no page recycling); the interval holds the 25 % sd each "
              "carried-over base gets for another CPU and the kernel drift, which makes it wide (more than +-50 %). "
              "Two points of one lab and kernel: no accuracy claim beyond them.",
              "", "Published rates not predicted, and why:", "", "| row | measured | kernel | why |",
              "|---|---:|---|---|"]
    for r in left_out:
        v = f"{r['measured']:.0f}" if r["measured"] >= 1e4 else f"{r['measured']:.6g}"
        lines.append(f"| {r['id']} | {v} {r['unit']} | {r['kernel'][:40]} | {r['why']} |")
    for name, text in RATE_STATEMENTS:
        lines += ["", f"**{name}**: {text}"]
    return lines
