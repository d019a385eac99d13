"""Grids of questions: up to three parameters swept together over fixed value sets, one output,
its 90 % interval, and its paired difference to the baseline (scenario A) with a verdict per cell.

The whole grid is one vectorised evaluation (:func:`skbmodel.uncertainty.evaluate_with_intervals`
and :func:`skbmodel.uncertainty.delta_intervals` over an ``(n1, n2, n3)`` parameter grid).  Each
axis sweeps the value set :data:`AXES` gives it (fixed, so no link sizes a computation).  An axis on
a Design stage (``d_*``) evaluates the composed path (``path=design``) for the grid and for the
baseline alike.

**Tied sizes.**  Where the kernel frees or allocates a batch in one call, the bulk size follows
the batch: with a veth start, the skb free's ``kmem_cache_free_bulk`` size (``d_free_bulk``)
follows ``VETH_XDP_BATCH`` (``xdp_batch``), the batch veth allocates with
``kmem_cache_alloc_bulk`` (drivers/net/veth.c, ``veth_xdp_rcv_bulk_skb``), unless the grid sweeps
``d_free_bulk`` itself.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import model, uncertainty
from .physics import noise
from .params import AXES, AXIS_CHOICES, MODEL_PARAMS  # noqa: F401 - the grid's vocabulary
from .schema import GRID_OUTPUTS

_P = {p.key: p for p in MODEL_PARAMS}
#: The outputs a grid can show (costs and rates of the paths and the microbenchmarks).
OUTPUTS = GRID_OUTPUTS

#: ``{tied key: the key it follows}`` (see the module docstring), for a veth start
TIED = {"d_free_bulk": "xdp_batch"}
NONE = "none"  # an unused axis

#: Verdict codes of the cells (index into :data:`skbmodel.physics.noise.VERDICTS`, -1: the baseline itself)
SURE, NOISE, UNSURE = range(3)


#: Short labels of the choices a grid shows (legends and table cells), where the schema's are long.
SHORT = {("d_free", "from"): "free in the rest (kmem_cache_free)", ("d_free", "slab_bulk"): "kmem_cache_free_bulk",
         ("d_free", "napi_cache"): "free to the NAPI skb cache", ("d_skb", "from"): "skb head as in the path",
         ("d_skb", "slab_one"): "kmem_cache_alloc", ("d_skb", "slab_bulk"): "kmem_cache_alloc_bulk",
         ("d_skb", "napi_cache"): "NAPI skb cache", ("zero", "memset"): "memset",
         ("zero", "gfp_zero"): "__GFP_ZERO"}


def label_of(key: str, value) -> str:
    """A value as the page shows it (a choice by its short or schema label)."""
    if _P[key].kind != "choice":
        return f"{value:g}"
    return SHORT.get((key, str(value))) or _P[key].label_of(value)


def grid_params(base: Mapping, axes) -> tuple[dict, list[tuple[str, tuple]]]:
    """``(params, used axes)``: ``base`` with each axis key an array over its values on its own
    dimension (``(n1, 1, 1)``, ``(1, n2, 1)``, ...), the tie applied and ``path=design`` when a Design
    stage is swept."""
    used = [(k, AXES[k]) for k in axes if k and k != NONE]
    if len({k for k, _ in used}) != len(used):
        raise ValueError(f"an axis is given twice: {[k for k, _ in used]}")
    n = len(used)
    p = dict(base)
    for i, (k, vals) in enumerate(used):
        shape = [1] * n
        shape[i] = len(vals)
        p[k] = np.asarray(vals).reshape(shape)
    if any(k.startswith("d_") for k, _ in used):
        p["path"] = "design"
    keys = {k for k, _ in used}
    for tied, follows in TIED.items():
        if follows in keys and tied not in keys and str(p.get("d_from", "veth")) == "veth":
            p[tied] = p[follows]
    return p, used


def cell_params(base: Mapping, axes, index) -> dict:
    """The scalar scenario of one grid cell (``index``: one position per used axis), tie applied."""
    p, used = grid_params(base, axes)
    for (k, vals), i in zip(used, index):
        p[k] = vals[i]
    for tied, follows in TIED.items():
        if follows in dict(used) and tied not in dict(used) and str(p.get("d_from", "veth")) == "veth":
            p[tied] = p[follows]
    return p


def baseline(base: Mapping, axes) -> dict:
    """The baseline scenario: ``base`` (scenario A), on the composed path when a Design stage is swept."""
    p = dict(base)
    if any(k and k.startswith("d_") for k in axes):
        p["path"] = "design"
    return p


def evaluate(base: Mapping, axes, output: str = "path.ns_per_packet", profile=None) -> dict:
    """Evaluate ``output`` over the grid of ``axes`` (up to three keys of :data:`AXES`) on top of scenario
    ``base``, and its paired difference to the baseline (:func:`baseline`).

    Returns a dict of arrays of the grid's shape: ``value``, ``lo``, ``hi`` [output unit] (90 %
    interval), ``delta``, ``delta_lo``, ``delta_hi`` [output unit] (paired, B = the cell, A = the
    baseline), ``verdict`` (codes :data:`SURE`, :data:`NOISE`, :data:`UNSURE`, for outputs in ns or
    Mpps against the baseline's ``noise_ns``), and ``axes`` (``[(key, values)]``), ``base_value``.
    """
    if output not in OUTPUTS:
        raise ValueError(f"unknown grid output {output!r}; one of {', '.join(OUTPUTS)}")
    prof = model.profile_of(base, profile)
    p, used = grid_params(base, axes)
    a = baseline(base, axes)
    a_grid = dict(a, noise_ns=np.reshape(float(a.get("noise_ns", prof.value("noise_floor_ns"))), (1,) * len(used)))
    val, iv = uncertainty.evaluate_with_intervals(p, prof, [output])
    d, div = uncertainty.delta_intervals(a_grid, p, prof, prof, [output])  # A as a (1, 1, 1) grid: paired
    v = np.asarray(val[output], dtype=float)
    shape = v.shape
    delta = np.broadcast_to(np.asarray(d[output], dtype=float), shape)
    lo, hi = (np.broadcast_to(np.asarray(x, dtype=float), shape) for x in div[output])
    unit = model.OUTPUT_UNITS[output]
    base_v = float(np.asarray(model.evaluate(a, prof)[output]))
    if unit == "Mpps":  # the verdict's noise floor is per packet: the difference in time per packet
        with np.errstate(divide="ignore"):
            d_ns = 1e3 / v - 1e3 / base_v
    else:
        d_ns = delta
    nf = float(base.get("noise_ns", prof.value("noise_floor_ns")) or prof.value("noise_floor_ns"))
    measurable = noise.measurable(d_ns, nf)
    sure = (lo > 0) | (hi < 0)
    verdict = np.where(~measurable, NOISE, np.where(sure, SURE, UNSURE))
    return dict(value=v, lo=np.asarray(iv[output][0], dtype=float) * np.ones(shape),
                hi=np.asarray(iv[output][1], dtype=float) * np.ones(shape), delta=delta, delta_lo=lo,
                delta_hi=hi, verdict=verdict, axes=used, base_value=base_v, output=output, unit=unit,
                noise_ns=nf)


def rows(res: Mapping) -> list[dict]:
    """The grid as table rows: one per cell, the axis values, value, interval, Δ, its interval, verdict."""
    out = []
    for idx in np.ndindex(res["value"].shape):
        r = {k: label_of(k, vals[i]) for (k, vals), i in zip(res["axes"], idx)}
        r.update(value=float(res["value"][idx]), lo=float(res["lo"][idx]), hi=float(res["hi"][idx]),
                 delta=float(res["delta"][idx]), delta_lo=float(res["delta_lo"][idx]),
                 delta_hi=float(res["delta_hi"][idx]), verdict=noise.VERDICTS[int(res["verdict"][idx])])
        out.append(r)
    return out
