"""Kernel eras: which mainline kernel a published number was measured on, and which profile describes it.

The same CPU's costs move between kernels (the E5-1650 v4's page_pool slow path: 162 cycles in
2023, 243 in 2025-01, 265 in 2025-06), so a CPU may have one profile per era, each stating the
kernels it describes (``kernels = ["6.13", "6.16"]`` in its file, :mod:`skbmodel.machine.profile`).

Published numbers name their kernel loosely: ``net.git v6.15-12438-g...``, ``~6.4 (2023-06)``,
``net-next 2025-01``.  :func:`kernel_of` reads an explicit ``v6.15``/``~6.4``/``6.12-rc`` first and
otherwise dates it: a tree of month ``YYYY-MM`` is taken as the first mainline release after the
15th of that month (net-next of 2025-01 carries the 6.13 release candidates; one release of slack
either way, which the era ranges allow for).  Release dates: kernel.org, the mainline release
announcements on linux-kernel (Linus Torvalds), 4.0 to 6.18.
"""
from __future__ import annotations

import datetime as _dt
import re

#: mainline release dates (kernel.org / the release announcements on linux-kernel)
RELEASES = {
    "4.0": "2015-04-12", "4.1": "2015-06-22", "4.2": "2015-08-30", "4.3": "2015-11-01", "4.4": "2016-01-10",
    "4.5": "2016-03-14", "4.6": "2016-05-15", "4.7": "2016-07-24", "4.8": "2016-10-02", "4.9": "2016-12-11",
    "4.10": "2017-02-19", "4.11": "2017-04-30", "4.12": "2017-07-02", "4.13": "2017-09-03", "4.14": "2017-11-12",
    "4.15": "2018-01-28", "4.16": "2018-04-01", "4.17": "2018-06-03", "4.18": "2018-08-12", "4.19": "2018-10-22",
    "4.20": "2018-12-23", "5.0": "2019-03-03", "5.1": "2019-05-05", "5.2": "2019-07-07", "5.3": "2019-09-15",
    "5.4": "2019-11-24", "5.5": "2020-01-26", "5.6": "2020-03-29", "5.7": "2020-05-31", "5.8": "2020-08-02",
    "5.9": "2020-10-11", "5.10": "2020-12-13", "5.11": "2021-02-14", "5.12": "2021-04-25", "5.13": "2021-06-27",
    "5.14": "2021-08-29", "5.15": "2021-10-31", "5.16": "2022-01-09", "5.17": "2022-03-20", "5.18": "2022-05-22",
    "5.19": "2022-07-31", "6.0": "2022-10-02", "6.1": "2022-12-11", "6.2": "2023-02-19", "6.3": "2023-04-23",
    "6.4": "2023-06-25", "6.5": "2023-08-27", "6.6": "2023-10-30", "6.7": "2024-01-07", "6.8": "2024-03-10",
    "6.9": "2024-05-12", "6.10": "2024-07-14", "6.11": "2024-09-15", "6.12": "2024-11-17", "6.13": "2025-01-19",
    "6.14": "2025-03-24", "6.15": "2025-05-25", "6.16": "2025-07-27", "6.17": "2025-09-28", "6.18": "2025-11-30",
}

#: since this kernel ``page_pool_put_page(..., allow_direct=true)`` recycles into the pool's direct
#: cache in any context: the "no-softirq" page_pool01 test then measures the fast path.  Before it,
#: direct recycling required ``in_softirq()`` and page_pool01 outside softirq fell back to the
#: ptr_ring.  The published numbers bracket the change: no-softirq page_pool01 = page_pool02 on
#: 5.17-rc (Xeon Gold 6140, 44 vs 45 cycles, corpus pp-gold6140-2022-control-nosoftirq-01/02) and on
#: 6.6-rc (arm64, 57.3 vs 57.0 ns, corpus pp-arm64-2023-before-nosoftirq-01/02); = the tasklet fast
#: path on 6.12-rc (arm64, 26.3 vs 26.4 ns, pp-arm64-2024-before-*) and later.  The release inside the
#: bracket is uncertain: 6.8 (Jakub Kicinski's "net: page_pool: add a lockdep check for recycling in
#: hardirq", which replaced the softirq test with a lockdep assertion) is the reading assumed here.
DIRECT_RECYCLE_ANY_CONTEXT = "6.8"


def version_key(v: str) -> tuple[int, int]:
    """``"6.15"`` -> ``(6, 15)``."""
    major, minor = str(v).split(".")[:2]
    return int(major), int(minor)


def year_of(kernel: str) -> float:
    """The release date of mainline ``kernel`` as a fractional year (``"6.3"`` -> 2023.31)."""
    d = _dt.date.fromisoformat(RELEASES[kernel])
    return d.year + (d.timetuple().tm_yday - 1) / 365.25


def year_of_range(kernels: tuple[str, str]) -> float:
    """The middle of a profile's kernel range ``(first, last)`` as a fractional year."""
    return (year_of(kernels[0]) + year_of(kernels[1])) / 2.0


def release_after(day: _dt.date) -> str | None:
    """The first mainline release on or after ``day`` (None past the table)."""
    for v, d in sorted(RELEASES.items(), key=lambda kv: kv[1]):
        if _dt.date.fromisoformat(d) >= day:
            return v
    return None


_EXPLICIT = re.compile(r"(?:\bv|~|\blinux-|\bkernel )(\d)\.(\d{1,2})(?!\d)")
_BARE = re.compile(r"(?<![\d.])(\d)\.(\d{1,2})(?:\.\d+)?(?:-rc\d*)?(?![\d.])")
_MONTH = re.compile(r"\b(20\d\d)-(0[1-9]|1[0-2])\b")


def kernel_of(text: str) -> str | None:
    """The mainline release a published kernel description refers to (``"6.15"``), or None.

    An explicit version (``v6.15-12438``, ``~6.4``, ``6.12-rc``, ``4.10.0-rc2``) wins; otherwise the
    month (``net-next 2025-01``) dates it (:func:`release_after` the 15th).
    """
    s = str(text or "")
    for rx in (_EXPLICIT, _BARE):
        m = rx.search(s)
        if m and f"{m.group(1)}.{m.group(2)}" in RELEASES:
            return f"{m.group(1)}.{m.group(2)}"
    m = _MONTH.search(s)
    if m:
        return release_after(_dt.date(int(m.group(1)), int(m.group(2)), 15))
    return None


def in_range(version: str | None, kernels) -> bool:
    """Whether ``version`` lies in a profile's ``kernels`` range (inclusive); False when either is unknown."""
    if not version or not kernels:
        return False
    lo, hi = kernels
    return version_key(lo) <= version_key(version) <= version_key(hi)


def direct_recycle_any_context(kernels) -> bool:
    """Whether a profile's kernels recycle directly outside softirq (decided by its first kernel; a
    profile without a stated range is taken as before the change, the era of the shipped constants)."""
    return bool(kernels) and version_key(kernels[0]) >= version_key(DIRECT_RECYCLE_ANY_CONTEXT)
