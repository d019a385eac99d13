"""Where two CPUs meet: the cost of one cache line's move between them at a level of the machine's topology.

Every cross-CPU term of the model (cpumap's ring slots, the recycled page's return and the kthread's wake-up
lines, :mod:`skbmodel.physics.cpumap`; a deferred or remote skb free, :mod:`skbmodel.composer`) moves lines that
one CPU last wrote and the other now reads or writes.  One such move is one one-way CAS latency of the
machine's level (:class:`skbmodel.machine.description.Topology`: a read miss answered from the other core's
cache, or a read-for-ownership that invalidates it; a line whose memory is homed on a node neither CPU is in
first asks that home's directory, the ``other_l3_far`` level).

The fitted constant ``xcpu_line_cycles`` is the move in the calibration runs (seed 003: another core of the same
node, on its Xeon one L3 per socket: ``same_l3``), and the fitted path bases hold those moves; a placement
``L`` adds the difference of the published latencies::

    line(L) = xcpu_line + (t_L - t_same_l3) * ghz            [cycles]
    factor(L) = line(L) / xcpu_line                          [1]

``t`` [ns]: one latency per placement code (0 = the same L3), from the description of the profile's CPU
(:func:`skbmodel.model.level_constants`); ``factor`` scales a cost made of such moves (the page_pool
ptr_ring's), as ``numa_remote_factor`` did for the one cross-node level before.
Reference: nviennot/core-to-core-latency (``src/bench/cas.rs``), ``skbmodel/data/core-to-core-levels.csv``.
"""
from __future__ import annotations

import numpy as np


def level_ns(place, line_ns):
    """The one-way line latency [ns] of the placement codes ``place``: ``line_ns[place]`` (``line_ns``: one
    latency per code, scalars)."""
    code = np.asarray(place)
    if all(np.ndim(t) == 0 for t in line_ns):  # one gather (codes index the table)
        return np.asarray(line_ns, dtype=float)[code if code.dtype.kind in "iu" else code.astype(np.int64)]
    out = line_ns[0]  # a leading axis of constant sets (the intervals): select code by code
    for i in range(1, len(line_ns)):
        out = np.where(code == i, line_ns[i], out)
    return out


def line_cycles(place, line_ns, xcpu_line_cycles, ghz):
    """One line's move between the two CPUs [cycles]: ``xcpu_line + (t_place - t_0) * ghz``."""
    return xcpu_line_cycles + (level_ns(place, line_ns) - line_ns[0]) * np.asarray(ghz, dtype=float)


def line_factor(place, line_ns, xcpu_line_cycles, ghz):
    """``line_cycles / xcpu_line`` [1]: 1 at code 0 (the same L3, the calibration's placement)."""
    base = np.asarray(xcpu_line_cycles, dtype=float)
    return line_cycles(place, line_ns, xcpu_line_cycles, ghz) / np.where(base > 0, base, 1.0)
