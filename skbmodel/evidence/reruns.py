"""Run-to-run spread: how far another published run of the same benchmark on the same CPU lands.

A profile that takes a constant from one published run carries that run's own noise, and its kernel's
drift, not only the benchmark's rounding.  The corpus holds repeats: the same benchmark (page_pool's
``bench_page_pool_simple``, the page allocator's single-page loop) on the same CPU in other runs, on
other days or kernels, with no change to the measured code between them.  Each group of
:data:`RERUN_GROUPS` names such repeats and why they are repeats; a patch that changes the measured
path (the DMA-fix series on the EPYC 9684X, the "after" runs of the arm64 patch series), another
mitigation or a debug kernel configuration are no repeat and are not listed.

The spread is pooled over the groups, per benchmark quantity, as the sd of ln of the value::

    sigma^2 = sum_g sum_i (ln v_gi - mean_g ln v)^2 / sum_g (n_g - 1)
    s_rerun = sqrt(2) * sigma

``s_rerun`` is the sd of ln of the ratio of two runs: what another run may show against the one a
constant was taken from (both runs carry their own noise).  A published constant's sd is
``value * hypot(rounding / value, s_rerun)`` on log scale (``scripts/corpus_profiles.py``).

Out of sample (:func:`coverage`): for each group, ``s_rerun`` from the other groups alone, and each
pair of its runs judged by whether one lies inside the other's 90 % interval
``v exp(+-z s_rerun)``.

Reference: the corpus rows each group names (docs/corpus.md); pooled variance, e.g. NIST/SEMATECH
e-Handbook of Statistical Methods, 7.4.3.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .. import uncertainty

#: ``(name, CPU text the rows name, series texts, why they are repeats)``: the rows of one CPU whose series
#: contains one of the texts, at one point (no varied input), per output.
RERUN_GROUPS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("E5-1650 v4, 2025 kernels", "E5-1650 v4", ("2025-upstream-bench", "2025-01-tasklet"),
     "the upstream selftest benchmark on net-next 2025-06 and the out-of-tree module on the 2025-01 testlab "
     "kernel: one page_pool code path (6.8+), two runs months apart"),
    ("E5-1650 v4, 2021 page allocator branches", "E5-1650 v4",
     ("pa-2021-03-arraypatch", "2021-locallock-v1r15", "2021-bulk-rebase-v5r9"),
     "page_bench04's single-page loop on three 2021 branches of the bulk allocator series, which change the "
     "bulk API and the per-CPU list's lock, not the single-page path's work"),
    ("Xeon Gold 6140, control and stats kernels", "Gold 6140", ("2022-control", "2022-stats"),
     "Joe Damato's control kernel and the same tree with the page_pool stats counters: the author measured "
     "them as a check that the counters cost nothing, and notes run-to-run variation"),
    ("2.0 GHz x86, u64_stats before and after", "TSC ~2.0 GHz", ("u64stats-before", "u64stats-after"),
     "a stats-only change (u64_stats sync of the page_pool counters) measured before and after on one machine"),
    ("arm64 server, upstream kernels 2023-2025", "Huawei", ("2023-before", "2024-before", "2025-01-before"),
     "the 'before' runs of three patch threads: upstream net-next of 2023-09, 2024-10 and 2025-01, unpatched"),
    ("Xeon Platinum 8481C, two postings", "8481C", ("upstream-bench", "v5"),
     "the selftest benchmark's two postings (v5 and the merged one) run on the same A3 VM and kernel era"),
)


#: the quantities a profile takes from one run whose code path is one across the kernels of a group: the
#: softirq (tasklet) page_pool tests and the single-page loop (the process-context tests changed path at 6.8,
#: which a group's kernels may straddle)
RERUN_OUTPUTS = ("page_pool.fast_cycles", "page_pool.ring_cycles", "page_pool.slow_cycles", "page_alloc.single_cycles")


def _rows(df, cpu: str, texts: tuple[str, ...]):
    pat = "|".join(texts)
    return df[df["cpu"].str.contains(cpu, regex=False) & df["series"].str.contains(pat, regex=True)
              & (df["x_name"] == "") & df["output"].isin(RERUN_OUTPUTS)]


def repeats(df, groups=RERUN_GROUPS) -> list[dict]:
    """Each group's repeats per output: ``{group, output, ids, values}`` with at least two runs."""
    out = []
    for name, cpu, texts, _ in groups:
        for output, h in _rows(df, cpu, texts).groupby("output"):
            if len(h) >= 2:
                out.append(dict(group=name, output=output, ids=list(h["id"]), values=[float(v) for v in h["value"]]))
    return out


def spread(reps: list[dict]) -> dict:
    """Pooled ``sigma`` (sd of ln of one run), ``s_rerun = sqrt(2) sigma``, degrees of freedom, groups and
    repeats of :func:`repeats`' rows."""
    ss, dof = 0.0, 0
    for r in reps:
        ln = np.log(np.asarray(r["values"], dtype=float))
        ss += float(np.sum((ln - ln.mean()) ** 2))
        dof += ln.size - 1
    sigma = math.sqrt(ss / dof) if dof else float("nan")
    return dict(sigma=sigma, s_rerun=math.sqrt(2.0) * sigma, dof=dof, repeats=len(reps),
                groups=len({r["group"] for r in reps}))


def coverage(df, level: float = uncertainty.LEVEL) -> dict:
    """Leave one group out: each pair of runs of a group judged with ``s_rerun`` of the other groups;
    ``{points, inside, coverage, groups, pairs: [...]}`` (a pair: both ways, one point each)."""
    reps = repeats(df)
    z = uncertainty.z_value(level)
    pairs = []
    for name in dict.fromkeys(r["group"] for r in reps):
        s = spread([r for r in reps if r["group"] != name])["s_rerun"]
        for r in (r for r in reps if r["group"] == name):
            for (ia, va), (ib, vb) in itertools.permutations(zip(r["ids"], r["values"]), 2):
                lo, hi = va * math.exp(-z * s), va * math.exp(z * s)
                pairs.append(dict(group=name, output=r["output"], constant_from=ia, rerun=ib, constant=va, measured=vb,
                                  lo=lo, hi=hi, inside=bool(lo <= vb <= hi), s_rerun=s))
    inside = [p["inside"] for p in pairs]
    return dict(points=len(pairs), inside=int(sum(inside)), coverage=float(np.mean(inside)) if pairs else float("nan"),
                groups=len({p["group"] for p in pairs}), pairs=pairs)
