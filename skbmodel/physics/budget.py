"""Line-rate budget: packets per second a link carries and the time per packet it leaves.

Each Ethernet frame occupies ``frame_bytes + 20`` bytes on the wire (8 B preamble + SFD and a 12 B
inter-frame gap); ``frame_bytes`` includes the FCS.  10 Gbit/s at 64 B: 14.88 Mpps, 67.2 ns
(seed 000, row kfl-11).
"""
from __future__ import annotations

import numpy as np


WIRE_OVERHEAD_BYTES = 20  # preamble + SFD (8) + inter-frame gap (12), IEEE 802.3


def line_rate_mpps(link_gbps, frame_bytes):
    """Line rate [Mpps]: ``link_gbps * 1e3 / ((frame_bytes + 20) * 8)``."""
    bits = (np.asarray(frame_bytes, dtype=float) + WIRE_OVERHEAD_BYTES) * 8.0
    return np.asarray(link_gbps, dtype=float) * 1e3 / bits


def share_of_budget_pct(cost_ns, budget_ns):
    """``100 * cost_ns / budget_ns`` [%]: over 100, one CPU cannot keep up with the link."""
    return 100.0 * np.asarray(cost_ns, dtype=float) / np.asarray(budget_ns, dtype=float)
