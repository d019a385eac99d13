"""Zeroing an skb: constant-size ``memset`` (rep stos) vs ``__GFP_ZERO`` (memset_erms).

Seed 002 (Xeon E5-1650 v4, time_bench_memset): the cost moves in cacheline steps (184 and
192 bytes cost the same 37 cycles), the constant-size ``rep stos`` carries a large setup cost and
gets expensive once its stores overflow the store buffer (512 B: 72 cycles), while the
variable-size ``memset_erms`` that ``__GFP_ZERO`` ends up calling (it zeroes the whole object)
has a smaller setup and a small per-line cost (256 B: 31, 512 B: 35 cycles).
"""
from __future__ import annotations

import numpy as np


def cachelines(nbytes, cacheline_bytes=64):
    """Cachelines touched by zeroing ``nbytes`` from an aligned start: ``ceil(nbytes / line)``."""
    return np.ceil(np.maximum(np.asarray(nbytes, dtype=float), 0.0) / cacheline_bytes)


def rep_stos_cycles(nbytes, *, stos_setup_cycles, stos_line_cycles, stos_drain_line_cycles,
                    store_buffer_bytes, cacheline_bytes=64):
    """Constant-size ``memset`` compiled to ``rep stos`` [cycles].

    ``setup + line * L + drain * max(0, L - store_buffer_bytes / line_bytes)``, ``L = ceil(n / 64)``.

    Lines that fit in the store buffer retire at ``line`` cycles; beyond its capacity
    (Broadwell: 42 entries x 8 B = 336 B) stores drain at the L1 write rate, ``drain`` extra per line.
    Reference: seed 002 rows mem-01, mem-02, mem-04, mem-06.
    """
    lines = cachelines(nbytes, cacheline_bytes)
    sb_lines = np.asarray(store_buffer_bytes, dtype=float) / cacheline_bytes
    return (stos_setup_cycles + stos_line_cycles * lines
            + stos_drain_line_cycles * np.maximum(lines - sb_lines, 0.0))


def erms_cycles(nbytes, *, erms_setup_cycles, erms_line_cycles, cacheline_bytes=64):
    """Variable-size ``memset_erms`` (what ``__GFP_ZERO`` calls) [cycles]: ``setup + line * L``.

    Reference: seed 002 rows mem-03 (256 B, 31 cycles) and mem-05 (512 B, 35 cycles).
    """
    return erms_setup_cycles + erms_line_cycles * cachelines(nbytes, cacheline_bytes)


def zero_skb_cycles(method_is_gfp_zero, zero_bytes, object_bytes, **c):
    """Cost of clearing one skb [cycles] with the chosen method.

    ``memset`` clears ``zero_bytes`` (``offsetof(struct sk_buff, tail)``, 184 B in seed 002) with
    ``rep stos``; ``__GFP_ZERO`` clears the whole ``object_bytes`` object with ``memset_erms``.
    """
    stos = rep_stos_cycles(zero_bytes, **{k: c[k] for k in (
        "stos_setup_cycles", "stos_line_cycles", "stos_drain_line_cycles", "store_buffer_bytes",
        "cacheline_bytes")})
    erms = erms_cycles(object_bytes, **{k: c[k] for k in ("erms_setup_cycles", "erms_line_cycles",
                                                           "cacheline_bytes")})
    return np.where(method_is_gfp_zero, erms, stos)
