"""Design your own path: a per-packet path composed of stages, each backed by a calibrated sub-model.

A composition picks one option per stage; every option's cost comes from the sub-models and the
profile constants the four modelled paths use (:mod:`skbmodel.physics.slub`, :mod:`skbmodel.physics.zeroing`,
:mod:`skbmodel.physics.page_pool`, :mod:`skbmodel.physics.page_alloc`, :mod:`skbmodel.physics.cpumap`,
:mod:`skbmodel.physics.kfree_skb_list`, :mod:`skbmodel.physics.napi_cache`): no stage has a free constant of its
own.  The cost is that of the CPU the composition describes -- with a cpumap hand-off, the
destination CPU (the bottleneck of the modelled cpumap path).  Components [cycles] are the
:data:`skbmodel.model.COMPONENTS`; their sum divided by the clock is ``path.ns_per_packet``.

Stages and options (state keys ``d_*``; ``from`` = as in the starting path ``d_from``):

* RX buffer (``d_rx``): ``pp_direct`` page_pool direct recycle (``pp_fast``); ``pp_ring`` recycle
  through the ptr_ring (``pp_ring``); ``page_single`` the page allocator one page at a time
  (``page_slow + bulk_cycles(1) - bulk_cycles(64)``); ``page_bulk`` refill in bulk of
  ``N = d_rx_bulk`` (``page_slow + bulk_cycles(N) - bulk_cycles(64)``,
  :func:`skbmodel.physics.page_alloc.refill_extra_cycles`);
  ``pp_mix`` ptr_ring for a share ``pp_recycle`` of the pages, the page allocator (bulk ``N``) for
  the rest; ``none`` (in the rest of the path).  After a hand-off the CPU pays the return side of
  a page it did not allocate (:func:`skbmodel.physics.page_pool.return_side_cycles`).
* skb head (``d_skb``): ``slab_one`` ``kmem_cache_alloc``; ``slab_bulk`` ``kmem_cache_alloc_bulk`` of
  ``N = d_skb_bulk`` (:func:`skbmodel.physics.slub.alloc_bulk_cycles`); ``napi_cache`` ``napi_skb_cache_get``:
  the cache's share of ``napi_cache_pair`` when the free stage refills it, else its refill from SLUB
  in bulk of ``NAPI_SKB_CACHE_BULK`` = 16; ``none`` (no skb, e.g. an XDP drop or the skb comes
  with the rest of the path).
* zeroing (``d_zero``): ``memset`` of ``K = d_zero_bytes`` (rep stos); ``gfp_zero`` the whole object
  (memset_erms); ``none``.
* hand-off (``d_hand``): ``none``; ``cpumap_same`` cpumap to a CPU of the same L3; ``cpumap_cross`` to the
  machine's nearest level on another node; ``path`` (the cpumap start) at the placement ``place``:
  ``cpumap_xfer_lines * xcpu_line * f`` (``f``: the level's line factor,
  :func:`skbmodel.physics.placement.line_factor`; cpumap builds the skbs
  of one batch, CPUMAP_BATCH = 8, with one ``kmem_cache_alloc_bulk``: the skb head of the cpumap
  start).
* skb free (``d_free``): ``slab_one`` ``kmem_cache_free``; ``slab_bulk`` ``kmem_cache_free_bulk`` of
  ``N = d_free_bulk``; ``defer`` ``skb_attempt_defer_free``: the skb freed on another CPU (the
  socket's) comes back through this CPU's defer list and ``skb_defer_free_flush`` puts it into the
  NAPI cache (the ``napi_cache`` cost plus one cacheline moved at the placement's level,
  :func:`skbmodel.physics.placement.line_cycles`); ``napi_cache``
  ``napi_skb_cache_put`` on this CPU, seed 001's same-CPU case (its share of ``napi_cache_pair``; when the
  skb head does not take from the cache, the cache flushes half of it, 32, with
  ``kmem_cache_free_bulk``); ``kfree_skb_list`` the qdisc drop list of ``drop_batch`` in calls of
  ``KFREE_SKB_BULK_SIZE`` (:func:`skbmodel.physics.kfree_skb_list.free_per_drop_cycles`); ``none``.
  ``d_free_where``: ``local`` (the object's slab is the CPU slab) or ``remote`` (``__slab_free``,
  ``slub_free_slow_extra`` per object plus the slab freelist line's excess move at the placement's level
  over the same L3; in bulk the list free's terms once per slab page).  The free's other CPU
  (:func:`other_cpu_free_cycles`): the freeing CPU of a deferred free, the slab's CPU of a remote one.
* rest of path (``d_rest``): the fitted base of a modelled path (``veth``, ``cpumap``, ``xdp_pass``,
  ``kfree_skb_list``) or ``custom`` ``d_rest_ns`` [ns].  The ``kfree_skb_list`` base is pktgen
  into fq_codel: only the dropped packets are freed here, ``d = 1 - W T`` of them (the wire
  feedback of :mod:`skbmodel.physics.kfree_skb_list`).
* rest stage (``d_stage``): ``none``, or one named stage of the rest (:data:`REST_STAGE_OPTIONS`: GRO, the
  driver's RX poll, the stack's receive, ...) priced at ``k = d_stage_pct`` % of its named time:
  ``R' = R (1 - f (1 - k/100))`` with ``R`` the rest [cycles] and ``f`` the stage's fraction of the rest in the
  rest's published perf profile (:func:`skbmodel.params.rest_stage_fractions`, :func:`stage_fraction`);
  the way a change to the functions of one stage (kernel-symbols.toml) is priced when no sub-model costs them.

This module is the one place a path's stages are put together: the four modelled paths are the
named compositions :data:`STARTS` (data), which :func:`per_packet` evaluates for :mod:`skbmodel.model`
as it evaluates a user's composition.  Inside the model a stage option is an integer code
(:data:`CODE`); a named composition has one code per stage and computes only that option's cost, and a
grid of compositions computes each option on the states that choose it (:class:`_States`).
Reference: the modules named above; seed threads 000-004.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from .physics import cpumap, kfree_skb_list, page_alloc, page_pool, placement, rest as _rest, slub, units, zeroing
# the stages, their options and the design keys are inputs: they live in the input schema
from .params import (DEFAULTS, KEY_NAMES, KEYS, NUMERIC, OPTION_LABELS, OPTION_SHORT,  # noqa: F401 - re-exported
                     REST_STAGE_OPTIONS, START_PATHS, START_SHORT, STAGE_CHOICES, choices_of,
                     rest_stage_fractions)
from .params import CROSS_NODE_KEY, PLACEMENTS, line_ns_of

#: The starting compositions: each modelled path as explicit options.  ``"path"`` in a number's
#: place means: the path's own control (``xdp_batch``, ``zero``/``zero_bytes``, the kernel batch).
STARTS: dict[str, dict[str, str]] = {
    "veth": dict(d_rx="none", d_skb="slab_bulk", d_zero="path", d_hand="none", d_free="none",
                 d_free_where="local", d_rest="veth", d_stage="none"),
    "cpumap": dict(d_rx="pp_mix", d_skb="slab_bulk", d_zero="gfp_zero", d_hand="path", d_free="slab_one",
                   d_free_where="local", d_rest="cpumap", d_stage="none"),
    "xdp_pass": dict(d_rx="pp_direct", d_skb="napi_cache", d_zero="path", d_hand="none", d_free="slab_one",
                     d_free_where="local", d_rest="xdp_pass", d_stage="none"),
    "kfree_skb_list": dict(d_rx="none", d_skb="none", d_zero="none", d_hand="none", d_free="kfree_skb_list",
                           d_free_where="remote", d_rest="kfree_skb_list", d_stage="none"),
}

NAPI_SKB_CACHE_BULK = cpumap.NAPI_SKB_CACHE_BULK
#: the model's codes of the placements (``place``)
PLACE_CODES = {p: i for i, p in enumerate(PLACEMENTS)}
#: napi_skb_cache_put flushes half of the 64-entry cache with kmem_cache_free_bulk (net/core/skbuff.c)
NAPI_SKB_CACHE_HALF = 32


#: The Design page's comparison when B names none: the veth path
COMPARE_PATH = "veth"


def compare_params(scenario_a: Mapping, b_overrides: Mapping) -> tuple[dict, dict]:
    """``(A, B)`` model parameters of the Design page: A the composition (scenario A with ``path=design``), B
    the comparison: the same scenario with B's ``path`` (default :data:`COMPARE_PATH`) and, for a second
    composition, B's stages ``d_*`` (each default: its stage's default, not A's)."""
    a = {**scenario_a, "path": "design"}
    b = {**a, "path": b_overrides.get("path", COMPARE_PATH)}
    b.update({k: b_overrides.get(k, DEFAULTS[k]) for k in KEY_NAMES})
    return a, b


def help_text() -> str:
    """The design keys and their options, one line each (for ``eval --help``)."""
    lines = ["path=design selects the composed path; d_from=<veth|cpumap|xdp_pass|kfree_skb_list> starts it "
             "from a modelled path and these keys change single stages (b_ prefix: scenario B):"]
    for key, label, kind, default, lo, hi, unit, _ in KEYS:
        if kind == "choice":
            allowed = "|".join(choices_of(key))
        else:
            allowed = f"{lo:g}..{hi:g}" + (f" {unit}" if unit else "")
        lines.append(f"  {key}={allowed} (default {default}): {label}")
    return "\n".join(lines)


# ---------------------------------------------------------------- option codes
#: Each stage's options as the model's integer codes (the index): the choices a user has, then
#: ``path``, the placeholder the named compositions use for "the path's own control" (the sidebar's
#: zeroing method, the cpumap path's node placement).
OPTIONS: dict[str, tuple[str, ...]] = {k: opts + (("path",) if k in ("d_zero", "d_hand") else ())
                                       for k, (_, opts) in STAGE_CHOICES.items()}
CODE: dict[str, dict[str, int]] = {k: {o: i for i, o in enumerate(v)} for k, v in OPTIONS.items()}
CODE["d_from"] = {p: i for i, p in enumerate(START_PATHS)}
FROM = 0  # "from" is the first option of every stage
_RX, _SKB, _ZERO, _HAND, _FREE, _WHERE, _REST, _STAGE = (CODE[k] for k in STAGE_CHOICES)
#: The skb bulk of each modelled path: an input of the scenario, a profile constant or a number.
START_SKB_BULK = {"veth": "xdp_batch", "cpumap": "cpumap_batch", "xdp_pass": NAPI_SKB_CACHE_BULK,
                  "kfree_skb_list": NAPI_SKB_CACHE_BULK}
#: ``STARTS`` as codes: one row per start path, for one gather per stage.
_START_CODES = {k: np.array([CODE[k][STARTS[p][k]] for p in START_PATHS], dtype=np.int8) for k in STAGE_CHOICES}


def _resolve(x, key: str, from_masks=None) -> np.ndarray:
    """The explicit option code of stage ``key`` of the composed path: ``from`` replaced by the start's.

    ``from_masks``: for an array ``d_from``, ``d_from == i`` of each start ``i`` as int8 0/1, shared
    by the stages.
    """
    opt, start = x[key], _START_CODES[key]
    if from_masks is None or np.ndim(opt) == 0:
        return np.where(opt == FROM, start[x["d_from"]], opt)
    # in integer arithmetic on the 0/1 masks: a select through a mask of scattered states costs a
    # branch per state, and a gather by int8 codes an index conversion per state; same codes
    st = from_masks[0] * start[0]
    for i in range(1, len(start)):
        st += from_masks[i] * start[i]
    return opt + (opt == FROM).view(np.int8) * st


def resolved(params: Mapping) -> dict[str, str]:
    """Scalar state -> ``{stage key: explicit option}`` (``from`` resolved against ``d_from``)."""
    x = {k: np.asarray(CODE[k][params.get(k, DEFAULTS[k])]) for k in ("d_from", *STAGE_CHOICES)}
    out = {k: OPTIONS[k][int(_resolve(x, k))] for k in STAGE_CHOICES}
    if out["d_hand"] == "path":  # the cpumap start follows the sidebar's placement
        out["d_hand"] = "cpumap_same" if params.get("place", "same_l3") == "same_l3" else "cpumap_cross"
    if out["d_zero"] == "path":
        out["d_zero"] = "gfp_zero" if params.get("zero", "gfp_zero") == "gfp_zero" else "memset"
    return out


# ---------------------------------------------------------------- stage costs [cycles]
class _States:
    """The states a cost is computed on: every state of the grid (``idx`` None) or a subset of them.

    ``s(a)`` is input ``a`` on these states: ``a`` itself for every state; for a subset, the
    values at the flat indices ``idx`` of ``a`` broadcast to the grid ``of`` the subset was taken
    from.  A callable ``a`` is an input derived from others: ``a(s)``, computed on these states
    only.  ``shape``: the shape of the arrays ``s`` gives (the grid's, or ``(len(idx),)``);
    ``flat``: whether an option may be computed on its own states only, which needs every
    constant to be a scalar (with a leading axis of constant sets, the intervals, each option is
    computed on the whole grid and broadcast).  Every formula is element-wise, so a state's value
    is the same either way, bit for bit.
    """

    __slots__ = ("idx", "shape", "flat", "of")

    def __init__(self, shape, flat: bool, idx=None, of=None):
        self.shape, self.flat, self.idx, self.of = shape, flat, idx, of

    def __call__(self, a):
        if callable(a):
            return a(self)
        if self.idx is None or np.ndim(a) == 0:
            return a
        a = np.asarray(a)
        return (a if a.shape == self.of else np.broadcast_to(a, self.of)).reshape(-1)[self.idx]

    def sub(self, idx) -> _States:
        """The states at the flat indices ``idx`` of arrays of this set's shape (of a subset: the
        indices into the grid it was taken from, so that every ``s(a)`` takes an input of the grid)."""
        if self.idx is None:
            return _States((idx.size,), True, idx, self.shape)
        return _States((idx.size,), True, self.idx[idx], self.of)


#: every state, with no subsets: the named compositions (each stage has one option)
_EVERY = _States(None, False)


def _pick(opt, table: dict, s: _States, default=0.0):
    """``table[opt]`` element-wise for the option codes ``opt`` on the states ``s``; an entry is a
    value or a function of the states it is computed on (``f(s)``); codes not in ``table`` give
    ``default``.

    A scalar ``opt`` (a named composition) computes its one option only.  An array computes each
    option present in it on that option's states only (``s.sub``), when ``opt`` spans the states'
    grid and the constants are scalars; otherwise each present option on the whole grid.
    """
    if np.ndim(opt) == 0:
        f = table.get(int(opt), default)
        return f(s) if callable(f) else f
    subsets = s.flat and np.shape(opt) == s.shape
    res = None
    for code, f in table.items():
        idx = np.flatnonzero(opt == code)
        if not idx.size:
            continue
        if subsets:
            if res is None:  # one output buffer, written option by option at its states' indices
                res = np.full(opt.shape, default, dtype=float)
            res.reshape(-1)[idx] = f(s.sub(idx)) if callable(f) else f
            continue
        v = f(s) if callable(f) else f
        shape = np.broadcast_shapes(opt.shape, np.shape(v), np.shape(res) if res is not None else ())
        if res is None:
            res = np.full(shape, default, dtype=float)
        elif shape != res.shape:  # an option with a leading axis of constant sets (the intervals)
            res = np.broadcast_to(res, shape).copy()
        if shape == opt.shape:
            # the option's states by index: a copy through a mask of scattered states costs several
            # times as much (a branch per state); same values either way
            res.reshape(-1)[idx] = np.broadcast_to(v, shape).reshape(-1)[idx] if np.ndim(v) else v
        else:
            np.copyto(res, v, where=opt == code)
    return np.asarray(default, dtype=float) if res is None else res


def _once(memo: dict, key: str, f):
    """``f()`` computed once per evaluation: the compositions of one evaluation share ``memo`` for
    the costs that depend only on the inputs and the constants, not on the stage options."""
    if key not in memo:
        memo[key] = f()
    return memo[key]


def _shared(memo: dict, key: str, s: _States, f, *inputs):
    """``f(*inputs)`` on the states ``s``, shared through ``memo`` as :func:`_once`: computed on
    every state it is kept for the other compositions; on a subset it is their values when they
    are kept, else computed on the subset alone."""
    if key in memo:
        return s(memo[key])
    if s.idx is None:
        memo[key] = f(*inputs)
        return memo[key]
    return f(*(s(a) for a in inputs))


def _where(cond, a, b):
    """``np.where`` that evaluates only the side a scalar ``cond`` selects (``a``, ``b``: thunks)."""
    if np.ndim(cond) == 0:
        return a() if cond else b()
    return np.where(cond, a(), b())


def rx_cycles(rx, handed, factor, recycle_ratio, rx_bulk, c, memo, s):
    """RX buffer per packet [cycles] (see the module docstring) on the states ``s``.

    Without a hand-off, alloc + return on this CPU; after a cpumap hand-off, the return side of a
    page the source CPU allocated (:func:`skbmodel.physics.page_pool.return_side_cycles`, ratio 1 for the
    ptr_ring, 0 for the page allocator).
    """
    r = lambda s: np.clip(np.asarray(s(recycle_ratio), dtype=float), 0.0, 1.0)  # noqa: E731
    slow_n = lambda s: _shared(memo, "page_slow_n", s, lambda n: c["page_slow_cycles"]  # noqa: E731
                               + page_alloc.refill_extra_cycles(n, c), rx_bulk)
    kw = dict(pp_ring_cycles=c["pp_ring_cycles"], page_slow_cycles=c["page_slow_cycles"],
              page_alloc_share=c["page_alloc_share"], xcpu_line_cycles=c["xcpu_line_cycles"])

    def mix(s):
        ratio = r(s)
        return ratio * c["pp_ring_cycles"] + (1.0 - ratio) * slow_n(s)
    local = {_RX["pp_direct"]: c["pp_fast_cycles"], _RX["pp_ring"]: c["pp_ring_cycles"],
             _RX["page_single"]: lambda s: c["page_slow_cycles"] + page_alloc.refill_extra_cycles(1.0, c),
             _RX["page_bulk"]: slow_n, _RX["pp_mix"]: mix}
    ret = lambda ratio: lambda s: page_pool.return_side_cycles(s(ratio), s(factor), **kw)  # noqa: E731
    remote = {_RX["pp_direct"]: c["pp_fast_cycles"], _RX["pp_ring"]: ret(1.0), _RX["page_single"]: ret(0.0),
              _RX["page_bulk"]: ret(0.0), _RX["pp_mix"]: ret(r)}
    # handed off or not first, then the option on each side's own states
    return _pick(handed, {False: lambda s: _pick(s(rx), local, s), True: lambda s: _pick(s(rx), remote, s)}, s)


def _alloc_bulk(n, c):
    return slub.alloc_bulk_cycles(n, fast_pair_cycles=c["slub_fast_pair_cycles"],
                                  bulk_obj_pair_cycles=c["slub_bulk_obj_pair_cycles"],
                                  free_share=c["slub_free_share"])


def skb_cycles(skb, skb_bulk, feeds, c, memo, s):
    """skb head per packet [cycles] on the states ``s``; ``skb_bulk``: N of ``slab_bulk``;
    ``feeds``: whether the free stage puts skbs back into this CPU's NAPI cache."""
    get = lambda: (1.0 - np.asarray(c["slub_free_share"], dtype=float)) * c["napi_cache_pair_cycles"]  # noqa: E731
    refill = lambda: _once(memo, "alloc_bulk_napi", lambda: _alloc_bulk(NAPI_SKB_CACHE_BULK, c))  # noqa: E731
    return _pick(skb, {_SKB["slab_one"]: lambda s: _alloc_bulk(1.0, c),
                       _SKB["slab_bulk"]: lambda s: _alloc_bulk(s(skb_bulk), c),
                       _SKB["napi_cache"]: lambda s: _where(s(feeds), get, refill)}, s)


def zero_cycles(zero, is_gfp, zero_bytes, path_bytes, c, s):
    """Zeroing per packet [cycles] on the states ``s``: ``memset`` (rep stos) of ``zero_bytes``,
    ``__GFP_ZERO`` of the object (memset_erms), or the path's own method (``is_gfp``) of its own
    ``path_bytes`` (:func:`skbmodel.physics.zeroing.zero_skb_cycles`)."""
    clear = lambda gfp, nbytes: lambda s: zeroing.zero_skb_cycles(  # noqa: E731
        s(gfp), s(nbytes), c["slub_object_bytes"], **c)
    return _pick(zero, {_ZERO["memset"]: clear(False, zero_bytes), _ZERO["gfp_zero"]: clear(True, zero_bytes),
                        _ZERO["path"]: clear(is_gfp, path_bytes)}, s)


def hand_cycles(handed, factor, c, s):
    """Cross-CPU transfer per packet on the destination [cycles]: ``xfer_lines * xcpu_line * f`` (``f`` the
    hand-off level's line factor, :func:`skbmodel.physics.placement.line_factor`)."""
    return _pick(handed, {True: lambda s: c["cpumap_xfer_lines"] * c["xcpu_line_cycles"] * s(factor)}, s)


def free_cycles(free, remote, free_bulk, skb_from_cache, line, x, c, memo, s):
    """skb free per packet [cycles] (per dropped skb for ``kfree_skb_list``) on the states ``s``.

    ``line``: one line's move between this CPU and the other one at their placement [cycles]
    (:func:`skbmodel.physics.placement.line_cycles`).  A remote free (``__slab_free`` of an object of another
    CPU's slab) writes the slab's freelist, a line the slab's CPU last wrote: beyond the same-L3 move inside
    ``slub_free_slow_extra``, the excess ``line - xcpu_line`` per object."""
    fs = np.asarray(c["slub_free_share"], dtype=float)
    extra = lambda s: _where(s(remote), lambda: c["slub_free_slow_extra_cycles"] + s(line)  # noqa: E731
                             - c["xcpu_line_cycles"], lambda: 0.0)
    call = lambda: slub.bulk_call_pair_cycles(c["slub_fast_pair_cycles"], c["slub_bulk_obj_pair_cycles"])  # noqa: E731

    def one(s):
        fast = c["slub_fast_pair_cycles"]
        return _once(memo, "free_one", lambda: slub.free_one_cycles(fast_pair_cycles=fast,
                                                                    free_share=c["slub_free_share"])) + s(extra)

    def bulk(s):
        n = lambda s: np.maximum(np.asarray(s(free_bulk), dtype=float), 1.0)  # noqa: E731
        kw = dict(fast_pair_cycles="slub_fast_pair_cycles", bulk_obj_pair_cycles="slub_bulk_obj_pair_cycles",
                  free_share="slub_free_share", free_slow_extra_cycles="slub_free_slow_extra_cycles",
                  slab_bytes="slub_slab_bytes", object_bytes="slub_object_bytes", slab_locality="slab_locality")
        # the remote list free (the costliest option) on the states that free to a remote slab only
        return _pick(s(remote), {
            True: lambda s2: slub.free_remote_list_cycles(s2(n), s2(n), 0.0, **{a: c[k] for a, k in kw.items()}),
            False: lambda s2: fs * (c["slub_bulk_obj_pair_cycles"] + call() / s2(n))}, s)

    def napi(s):
        put = fs * c["napi_cache_pair_cycles"]
        # a cache nobody takes from overflows: half of it goes back to SLUB in one bulk free
        return put + _where(s(skb_from_cache), lambda: 0.0,
                            lambda: fs * (c["slub_bulk_obj_pair_cycles"] + call() / NAPI_SKB_CACHE_HALF) + s(extra))

    # another CPU (the socket's) hands the skb back through this CPU's defer list; skb_defer_free_flush
    # then puts it into the NAPI cache: one cacheline pulled across at the two CPUs' level
    kfl = lambda s: _shared(memo, "kfl_free", s, lambda *a: kfree_skb_list.free_per_drop_cycles(*a, c),  # noqa: E731
                            x["kfl_bulk"], x["drop_batch"], x["clone_frac"])
    return _pick(free, {_FREE["slab_one"]: one, _FREE["slab_bulk"]: bulk, _FREE["napi_cache"]: napi,
                        _FREE["defer"]: lambda s: napi(s) + s(line),
                        _FREE["kfree_skb_list"]: kfl}, s)


def rest_cycles(rest, rest_ns, ghz, c, s):
    """Rest of the path [cycles] on the states ``s``: a modelled path's fitted base or ``rest_ns * ghz``."""
    custom = lambda s: np.asarray(s(rest_ns), dtype=float) * np.asarray(s(ghz), dtype=float)  # noqa: E731
    return _pick(rest, {_REST["veth"]: c["veth_base_cycles"], _REST["cpumap"]: c["cpumap_dst_stack_cycles"],
                        _REST["xdp_pass"]: lambda s: cpumap.xdp_pass_rest_cycles(c),
                        _REST["kfree_skb_list"]: c["kfl_base_cycles"], _REST["custom"]: custom}, s)


_FRACTIONS: list[np.ndarray] = []


def stage_fraction(rest, stage) -> np.ndarray:
    """The fraction of the rest ``rest`` that the named stage ``stage`` is (option codes of ``d_rest`` and
    ``d_stage``, element-wise): :func:`skbmodel.evidence.perfprofile.rest_fractions` of the modelled path whose
    rest it is; 0 for a stage its profile does not name, for a custom rest and for ``none``."""
    if not _FRACTIONS:
        table = np.zeros((len(OPTIONS["d_rest"]), len(OPTIONS["d_stage"])))
        for path in START_PATHS:
            fr = rest_stage_fractions(path)
            for option, stage_id in REST_STAGE_OPTIONS.items():
                table[_REST[path], _STAGE[option]] = fr.get(stage_id, 0.0)
        _FRACTIONS.append(table)
    return _FRACTIONS[0][rest, stage]


def restaged_cycles(rest_c, rest, stage, pct):
    """The rest [cycles] with its named stage ``stage`` priced at ``pct`` % of its named time:
    ``rest_c (1 - f (1 - pct/100))``, ``f`` = :func:`stage_fraction` (``rest``, ``stage``: option codes)."""
    return rest_c * (1.0 - stage_fraction(rest, stage) * (1.0 - np.asarray(pct, dtype=float) / 100.0))


def _start_bulk(x, c):
    """The skb bulk of the start ``d_from`` (:data:`START_SKB_BULK`) on the states ``s``: a derived input."""
    def f(s):
        start = s(x["d_from"])
        # indexing, not np.take: np.take of int8 codes is several times slower (same gather)
        n = np.array([np.nan, np.nan, NAPI_SKB_CACHE_BULK, NAPI_SKB_CACHE_BULK])[start]
        n = np.where(start == CODE["d_from"]["veth"], s(x["xdp_batch"]), n)
        return np.where(start == CODE["d_from"]["cpumap"], c["cpumap_batch"], n)
    return f


def _stages(x, c, path: str | None, memo: dict | None = None):
    """The explicit option codes of every stage and the numbers they take: of the named composition
    ``path`` (scalar codes), or of the ``d_*`` inputs (``path`` None).  A number that only one option
    reads is a derived input (:class:`_States`), computed on that option's states."""
    if path is not None:
        opt = {k: CODE[k][STARTS[path][k]] for k in STAGE_CHOICES}
        n = START_SKB_BULK[path]
        skb_n = x[n] if n in x else (c[n] if isinstance(n, str) else float(n))
        zero_b = x["zero_bytes"]
    else:
        d_from = x["d_from"]
        masks = [(d_from == i).view(np.int8) for i in range(len(START_PATHS))] if np.ndim(d_from) else None
        opt = {k: _resolve(x, k, masks) for k in STAGE_CHOICES}
        start_bulk = _start_bulk(x, c)
        skb_n = lambda s: np.where(s(x["d_skb"]) == FROM, start_bulk(s), s(x["d_skb_bulk"]))  # noqa: E731
        zero_b = x["d_zero_bytes"]
    hand = opt["d_hand"]
    handed = hand != _HAND["none"]
    # the hand-off's level: the state's placement for the cpumap start, the same L3 for cpumap_same, the
    # machine's nearest cross-node level for cpumap_cross (another socket where it has none: refused)
    cross = c.get(CROSS_NODE_KEY, -1.0)
    cross = float(PLACE_CODES["other_socket"] if np.all(np.asarray(cross) < 0) else cross)

    def hand_place(s):
        h = s(hand)
        return np.where(h == _HAND["cpumap_cross"], cross, np.where(h == _HAND["cpumap_same"], 0, s(x["place"])))
    table = line_ns_of(c)
    memo = {} if memo is None else memo
    moved = lambda place, ghz: placement.line_cycles(place, table, c["xcpu_line_cycles"], ghz)  # noqa: E731
    # one line's move at the state's placement: the same for every composition of the evaluation
    line = lambda s: _shared(memo, "place_line", s, moved, x["place"], x["ghz"])  # noqa: E731

    def factor(s):
        if np.ndim(hand) == 0 and hand == _HAND["path"]:  # the cpumap start: the state's placement
            return s(line) / np.where(c["xcpu_line_cycles"] > 0, c["xcpu_line_cycles"], 1.0)
        return placement.line_factor(hand_place(s), table, c["xcpu_line_cycles"], s(x["ghz"]))
    return opt, dict(skb_n=skb_n, zero_b=zero_b, handed=handed, factor=factor, line=line)


class Composed(NamedTuple):
    """A composition evaluated: ``parts`` [cycles] in COMPONENTS order, ``ns`` per packet [ns], the
    drop fraction ``d`` and the free per dropped skb ``F`` [cycles] of the qdisc drop path (0 and the
    skb free stage's cost elsewhere)."""
    parts: dict
    ns: np.ndarray
    drop_fraction: np.ndarray
    free_per_drop: np.ndarray


def _states(x, c, memo: dict) -> _States:
    """Every state of the composed path's grid (the inputs' broadcast shape), with subsets allowed
    when every constant is a scalar; once per evaluation."""
    if "_states" not in memo:
        grid = np.broadcast_shapes(*(np.shape(v) for v in x.values()))
        # a profile's constants are floats: np.ndim would convert each one to an array first
        memo["_states"] = _States(grid, all(type(v) is float or np.ndim(v) == 0 for v in c.values()))
    return memo["_states"]


def _merge(base, idx, v, shape):
    """A copy of ``base`` (broadcast to ``shape``) with the values ``v`` at its flat indices ``idx``."""
    # a new C-ordered buffer, so that the write by flat index goes through reshape(-1) (np.array of a
    # broadcast view may keep its layout, and reshape(-1) would then write into a copy)
    out = np.empty(shape)
    out[...] = base
    out.reshape(-1)[idx] = v
    return out


def per_packet(x, c, path: str | None = None, memo: dict | None = None) -> Composed:
    """The :class:`Composed` breakdown [cycles], ns per packet [ns] and drop fraction of a composition.

    ``path``: one of the modelled paths, composed as in :data:`STARTS`; None: the composition of the
    ``d_*`` inputs.  ``x``: the typed model inputs of :func:`skbmodel.model.inputs` (option codes);
    ``c``: profile constants (scalars or arrays with a leading constant axis); ``memo``: a dict the
    compositions of one evaluation share (costs that do not depend on the stage options).
    ``ns = sum(components) / ghz``; with the ``kfree_skb_list`` rest (pktgen into fq_codel), the
    free is paid for the dropped share only: ``T = (B + F) / (1 + W F)``, ``d = clip(1 - W T, 0, 1)``,
    ``T = B + d F`` (B: every other component, F: the free per dropped skb, W: the wire rate);
    ``drop_fraction`` is ``d`` there and 0 elsewhere.
    """
    memo = {} if memo is None else memo
    opt, n = _stages(x, c, path, memo)
    s = _EVERY if path is not None else _states(x, c, memo)
    rx, skb, free, where, rest = opt["d_rx"], opt["d_skb"], opt["d_free"], opt["d_free_where"], opt["d_rest"]
    ghz = x["ghz"]
    feeds = (free == _FREE["napi_cache"]) | (free == _FREE["defer"])
    rest_c = rest_cycles(rest, x["d_rest_ns"], ghz, c, s) - _rest.overlap_cycles(
        rest == _REST["veth"], free != _FREE["none"],
        slub.free_one_cycles(fast_pair_cycles=c["slub_fast_pair_cycles"], free_share=c["slub_free_share"]))
    if np.any(opt["d_stage"] != _STAGE["none"]):  # a named composition re-prices no stage
        rest_c = restaged_cycles(rest_c, rest, opt["d_stage"], x["d_stage_pct"])
    parts = {
        "skb alloc": skb_cycles(skb, n["skb_n"], feeds, c, memo, s),
        "zeroing": zero_cycles(opt["d_zero"], x["is_gfp"], n["zero_b"], x["zero_bytes"], c, s),
        "page alloc/recycle": rx_cycles(rx, n["handed"], n["factor"], x["pp_recycle"], x["d_rx_bulk"], c, memo, s),
        "cross-CPU transfer": hand_cycles(n["handed"], n["factor"], c, s),
        # a free stage replaces the free a rest already holds (skbmodel.physics.rest)
        "rest of path": rest_c,
        "skb free": free_cycles(free, where == _WHERE["remote"], x["d_free_bulk"], skb == _SKB["napi_cache"],
                                n["line"], x, c, memo, s),
    }
    other = parts["skb alloc"] + parts["zeroing"]
    for k in ("page alloc/recycle", "cross-CPU transfer", "rest of path"):
        # the same sum, left to right, into the one new buffer (a grid of fewer temporaries, whose fresh
        # pages cost more than the additions)
        if isinstance(other, np.ndarray) and other.shape == np.broadcast_shapes(other.shape, np.shape(parts[k])):
            other += parts[k]
        else:
            other = other + parts[k]
    plain_ns = units.cycles_to_ns(other + parts["skb free"], ghz)
    # the qdisc drop path: only the dropped share of the packets is freed on this CPU
    drop = rest == _REST["kfree_skb_list"]
    free = parts["skb free"]
    if not np.any(drop):
        return Composed(parts, plain_ns, 0.0, free)
    feedback = lambda other, free, ghz: kfree_skb_list.drop_feedback_ns(  # noqa: E731
        units.cycles_to_ns(other, ghz), units.cycles_to_ns(free, ghz), c["kfl_wire_kpps"])
    if np.ndim(drop) == 0:
        t_ns, d = feedback(other, free, ghz)
        parts["skb free"] = d * free
        return Composed(parts, t_ns, d, free)
    if s.flat and drop.shape == s.shape:  # the feedback on the qdisc drop states only
        idx = np.flatnonzero(drop)
        sub = s.sub(idx)
        free_d = sub(free)
        t_ns, d = feedback(sub(other), free_d, sub(ghz))
        parts["skb free"] = _merge(free, idx, d * free_d, s.shape)
        if plain_ns.shape == s.shape and plain_ns.flags.c_contiguous:  # a new array of this evaluation: in place
            plain_ns.reshape(-1)[idx] = t_ns
        else:
            plain_ns = _merge(plain_ns, idx, t_ns, s.shape)
        return Composed(parts, plain_ns, _merge(0.0, idx, d, s.shape), free)
    t_ns, d = feedback(other, free, ghz)
    parts["skb free"] = np.where(drop, d * free, free)
    return Composed(parts, np.where(drop, t_ns, plain_ns), np.where(drop, d, 0.0), free)


def other_cpu_free_cycles(x, c, path: str | None = None, memo: dict | None = None):
    """What a composition's skb free puts on the other CPU of its placement [cycles per packet]: the two-CPU
    side of the free stage, whose own CPU's part is the "skb free" component.

    * ``defer`` (``skb_attempt_defer_free``, net/core/skbuff.c): the freeing CPU (the socket's) appends the skb to
      this CPU's ``defer_list`` under ``defer_lock`` and counts ``defer_count``, lines of this CPU's
      ``softnet_data`` it last wrote when it flushed the list: one move at the placement's level;
    * a remote free of one object (``d_free_where=remote`` with ``slab_one`` or ``slab_bulk``): ``__slab_free``
      wrote the freelist of the slab another CPU allocates from; that CPU takes the line back at its next
      allocation from the slab: one move at the level per object;
    * otherwise 0 (the free stays on this CPU).

    ``x``, ``c``, ``path``: as :func:`per_packet`; the move: :func:`skbmodel.physics.placement.line_cycles`."""
    opt, n = _stages(x, c, path, memo)
    free, where = opt["d_free"], opt["d_free_where"]
    moved = (free == _FREE["defer"]) | ((where == _WHERE["remote"])
                                         & ((free == _FREE["slab_one"]) | (free == _FREE["slab_bulk"])))
    return np.where(moved, n["line"](_EVERY), 0.0)


# ---------------------------------------------------------------- compositions that make no sense
def problems(params: Mapping, prefix: str = "") -> list[tuple[str, str]]:
    """``[(stage, message), ...]`` for a composition the kernel does not allow or that makes no sense.

    Checked on a scalar state (``prefix`` ``"b_"`` for scenario B); empty when the composition is
    usable.  The model still evaluates such a state (bulk sizes below 1 count as 1), so a link with
    them opens; the page and the CLI show these messages instead of its numbers.
    """
    g = lambda k: params.get(prefix + k, DEFAULTS.get(k))  # noqa: E731
    st = {k: g(k) for k in KEY_NAMES}
    st["place"], st["zero"] = g("place") or "same_l3", g("zero") or "gfp_zero"
    opt = resolved(st)
    out: list[tuple[str, str]] = []
    if opt["d_skb"] == "slab_bulk" and g("d_skb") != "from" and int(g("d_skb_bulk")) < 1:
        out.append(("skb head", "kmem_cache_alloc_bulk of 0 objects: a bulk holds at least 1 (d_skb_bulk)"))
    if opt["d_free"] == "slab_bulk" and int(g("d_free_bulk")) < 1:
        out.append(("skb free", "kmem_cache_free_bulk of 0 objects: a bulk holds at least 1 (d_free_bulk)"))
    if opt["d_rx"] in ("page_bulk", "pp_mix") and int(g("d_rx_bulk")) < 1:
        out.append(("RX buffer", "page allocator refill in bulk of 0 pages: a refill takes at least 1 (d_rx_bulk)"))
    handed = opt["d_hand"] != "none"
    if handed and opt["d_skb"] == "none":
        out.append(("hand-off", "a cpumap hand-off with no destination cost: the destination CPU builds the skb "
                                "from the xdp_frame, so the skb head stage cannot be none"))
    if handed and opt["d_rest"] == "custom" and float(g("d_rest_ns")) <= 0:
        out.append(("hand-off", "a cpumap hand-off with no destination cost: the rest of the path on the "
                                "destination CPU is 0 ns"))
    if handed and opt["d_rx"] == "pp_direct":
        out.append(("RX buffer", "page_pool direct recycle only runs in the pool's own NAPI context; after a "
                                 "cpumap hand-off the page comes back through the ptr_ring (pp_ring or pp_mix)"))
    if opt["d_skb"] == "none" and opt["d_free"] not in ("none", "kfree_skb_list"):
        out.append(("skb free", f"{OPTION_LABELS[opt['d_free']]} frees an skb the skb head stage never allocated "
                                "(skb head: none)"))
    out += _rest.refusals(opt)
    if opt["d_stage"] != "none":
        name = OPTION_LABELS[opt["d_stage"]].removeprefix("re-price the rest's ")
        if opt["d_rest"] == "custom":
            out.append(("rest stage", f"a custom rest has no named stages: {name} cannot be re-priced in it"))
        elif float(stage_fraction(CODE["d_rest"][opt["d_rest"]], CODE["d_stage"][opt["d_stage"]])) <= 0:
            out.append(("rest stage", f"the {opt['d_rest']} rest's published perf profile names no {name}: "
                                      "re-pricing it would change nothing"))
    if opt["d_free"] in ("napi_cache", "defer") and opt["d_rest"] == "kfree_skb_list":
        out.append(("skb free", "the qdisc drop path frees outside NAPI context (budget 0): the kernel does not "
                                "put these skbs into the NAPI skb cache"))
    return out


def problem_text(params: Mapping, prefix: str = "") -> str | None:
    """All :func:`problems` as one line (``stage: message; ...``), or None."""
    found = problems(params, prefix)
    return "; ".join(f"{s}: {m}" for s, m in found) if found else None


#: The number an option reads, where it has one of its own: ``{(stage key, option): numeric key}``.
OPTION_NUMBERS = {("d_rx", "page_bulk"): "d_rx_bulk", ("d_rx", "pp_mix"): "d_rx_bulk",
                  ("d_skb", "slab_bulk"): "d_skb_bulk", ("d_zero", "memset"): "d_zero_bytes",
                  ("d_free", "slab_bulk"): "d_free_bulk", ("d_rest", "custom"): "d_rest_ns",
                  **{("d_stage", o): "d_stage_pct" for o in REST_STAGE_OPTIONS}}


def keys_in_use(params: Mapping) -> tuple[str, ...]:
    """The design keys whose value changes the composition's cost (scalar state), in :data:`KEY_NAMES` order.

    A stage's number counts only under the option that reads it (:data:`OPTION_NUMBERS`); kept
    (``from``), the skb head's bulk and the zeroing come from the starting path's own controls; after
    a hand-off the RX buffer's refill is the source CPU's; the free's slab placement counts for the
    frees that reach SLUB (:func:`free_cycles`: a NAPI cache nobody takes from flushes to it).
    """
    opts = resolved(params)
    used = {"d_from", *STAGE_CHOICES}
    for (stage, option), key in OPTION_NUMBERS.items():
        if opts[stage] != option or (stage in ("d_skb", "d_zero") and params.get(stage, "from") == "from"):
            continue
        if stage == "d_rx" and opts["d_hand"] != "none":
            continue
        used.add(key)
    flushes = opts["d_free"] in ("napi_cache", "defer") and opts["d_skb"] != "napi_cache"  # the cache overflows
    if opts["d_free"] not in ("slab_one", "slab_bulk") and not flushes:
        used.discard("d_free_where")
    return tuple(k for k in KEY_NAMES if k in used)
