"""Unit conversions: the only place where cycles become nanoseconds or packet rates.

Every model function works in CPU cycles (``_cycles``) because that is what the
kernel's ``time_bench`` microbenchmarks report (``cycles(tsc)``).  Conversions to
wall time and to packet rates happen here and nowhere else.
"""
from __future__ import annotations

import numpy as np

NS_PER_S = 1e9


def cycles_to_ns(cycles, ghz):
    """Convert CPU cycles to nanoseconds.

    ``ns = cycles / ghz``

    Parameters
    ----------
    cycles : array_like [cycles]
    ghz : array_like [GHz] clock that counts the cycles (the TSC for time_bench).
    """
    return np.asarray(cycles, dtype=float) / np.asarray(ghz, dtype=float)


def ns_to_cycles(ns, ghz):
    """Convert nanoseconds to CPU cycles: ``cycles = ns * ghz``."""
    return np.asarray(ns, dtype=float) * np.asarray(ghz, dtype=float)


def ns_to_mpps(ns_per_packet):
    """Packet rate [Mpps] of a CPU that spends ``ns_per_packet`` [ns] per packet.

    ``mpps = 1e3 / ns``; a non-positive time gives ``inf``.
    """
    ns = np.asarray(ns_per_packet, dtype=float)
    with np.errstate(divide="ignore"):
        mpps = 1e3 / ns
    return np.where(ns > 0, mpps, np.inf) if np.any(ns <= 0) else mpps


def mpps_to_ns(mpps):
    """Time per packet [ns] at a rate of ``mpps`` [Mpps]: ``ns = 1e3 / mpps``."""
    m = np.asarray(mpps, dtype=float)
    with np.errstate(divide="ignore"):
        ns = 1e3 / m
    return np.where(m > 0, ns, np.inf) if np.any(m <= 0) else ns


def mpps_to_pps(mpps):
    """[Mpps] -> [packets/s]."""
    return np.asarray(mpps, dtype=float) * 1e6


def ns_to_krps(ns_per_request):
    """Request rate [Krps] of one CPU spending ``ns_per_request`` [ns] per request."""
    return ns_to_mpps(ns_per_request) * 1e3


def krps_to_ns(krps):
    """Time per request [ns] at ``krps`` [Krps]."""
    return mpps_to_ns(np.asarray(krps, dtype=float) / 1e3)


def gbps_to_mpps(gbps, packet_bytes):
    """Packet rate [Mpps] that a bit rate ``gbps`` [Gbit/s] of packets of ``packet_bytes`` [bytes] is:
    ``mpps = gbps * 1e3 / (8 * packet_bytes)``.

    The bits are the packets' own bytes, as pktgen and throughput tools count them (no preamble, no
    inter-frame gap: :func:`skbmodel.physics.budget.line_rate_mpps` is the wire's rate).  Seed 000's pktgen
    line "2396594pps 1150Mb/sec" at 60-byte packets is this formula: 1.150 * 1e3 / 480 = 2.396 Mpps.
    """
    return np.asarray(gbps, dtype=float) * 1e3 / (8.0 * np.asarray(packet_bytes, dtype=float))


# Conversions between the units the seed CSV uses and the unit an output is stated in.
_TO_BASE = {
    # unit: (base unit, factor to base)
    "cycles": ("cycles", 1.0),
    "ns": ("ns", 1.0),
    "Mpps": ("Mpps", 1.0),
    "pps": ("Mpps", 1e-6),
    "Kpps": ("Mpps", 1e-3),
    "Krps": ("Krps", 1.0),
    "bytes": ("bytes", 1.0),
    "objects": ("objects", 1.0),
    "packets": ("packets", 1.0),
    "GHz": ("GHz", 1.0),
    "%": ("%", 1.0),
}


def convert(value, from_unit: str, to_unit: str):
    """Convert ``value`` between two compatible units of this project (e.g. pps -> Mpps)."""
    if from_unit == to_unit:
        return np.asarray(value, dtype=float)
    fb, ff = _TO_BASE[from_unit]
    tb, tf = _TO_BASE[to_unit]
    if fb != tb:
        raise ValueError(f"cannot convert {from_unit} to {to_unit}")
    return np.asarray(value, dtype=float) * ff / tf
