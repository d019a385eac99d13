"""The composer: a per-packet path as a chain of stages, each backed by a calibrated sub-model (the Design page's
paths and every modelled path's composition).

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
(:data:`CODE`); a stage is a record (:class:`Stage`, one per component in :data:`STAGES`) and an option
a function of the inputs it declares (:class:`Option`): the compositor hands each option those inputs,
so no option reads the scenario itself.  A named composition has one code per stage and computes
only that option's cost, and a grid of compositions computes each option on the states that choose
it (:class:`_States`), its inputs taken at those states.
Reference: the modules named above; seed threads 000-004.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
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


# ---------------------------------------------------------------- the states a cost is computed on
class _States:
    """The states a cost is computed on: every state of the grid (``idx`` None) or a subset of them.

    ``s(a)`` is input ``a`` on these states: ``a`` itself for every state; for a subset, the
    values at the flat indices ``idx`` of ``a`` broadcast to the grid ``of`` the subset was taken
    from.  ``shape``: the shape of the arrays ``s`` gives (the grid's, or ``(len(idx),)``);
    ``flat``: whether an option may be computed on its own states only, which needs every
    constant to be a scalar (with a leading axis of constant sets, the intervals, each option is
    computed on the whole grid and broadcast).  Every formula is element-wise, so a state's value
    is the same either way, bit for bit.
    """

    __slots__ = ("idx", "shape", "flat", "of")

    def __init__(self, shape, flat: bool, idx=None, of=None):
        self.shape, self.flat, self.idx, self.of = shape, flat, idx, of

    def __call__(self, a):
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


# ---------------------------------------------------------------- stages and their declared inputs
class Option(NamedTuple):
    """One option of a stage: the names of the inputs it reads and its cost [cycles]
    ``cost(c, *values)`` of the profile constants ``c`` and those inputs' values, in the order
    declared.  The compositor hands it the values on the option's own states (a subset of a grid
    of mixed options), so an option never reads the scenario itself.  An input is a typed model
    input (a key of :func:`skbmodel.model.inputs`: a new scenario parameter is read by naming it
    here), a stage's explicit option codes (:data:`STAGE_INPUTS`) or a derived input
    (:data:`DERIVED` and those of :func:`_inputs`)."""
    inputs: tuple[str, ...]
    cost: Callable


class Stage(NamedTuple):
    """A stage (or a choice inside one): the input whose codes choose the option (``by``) and the
    entry of each code, an :class:`Option` or a further :class:`Stage` chosen on that option's
    states; a code with no entry costs 0."""
    by: str
    options: dict


class Derived(NamedTuple):
    """An input computed from others (``f(c, *values)`` of the inputs it names), on the states of
    the option that reads it.  ``shared``: the same for every composition of one evaluation (no
    stage option in it): computed on every state once and kept in the evaluation's memo."""
    inputs: tuple[str, ...]
    f: Callable
    shared: bool = False


#: the input names of the stages' explicit option codes (``from`` resolved against ``d_from``)
STAGE_INPUTS = {"d_rx": "rx", "d_skb": "skb", "d_zero": "zero", "d_hand": "hand", "d_free": "free",
                "d_free_where": "where", "d_rest": "rest", "d_stage": "stage"}


def _alloc_bulk(n, c):
    return slub.alloc_bulk_cycles(n, fast_pair_cycles=c["slub_fast_pair_cycles"],
                                  bulk_obj_pair_cycles=c["slub_bulk_obj_pair_cycles"],
                                  free_share=c["slub_free_share"])


def _where(cond, a, b):
    """``np.where`` that evaluates only the side a scalar ``cond`` selects (``a``, ``b``: thunks)."""
    if np.ndim(cond) == 0:
        return a() if cond else b()
    return np.where(cond, a(), b())


def _const(name: str) -> Option:
    """An option whose cost is the profile constant ``name``."""
    return Option((), lambda c: c[name])


def _free_share(c):
    return np.asarray(c["slub_free_share"], dtype=float)


def _bulk_call(c):
    return slub.bulk_call_pair_cycles(c["slub_fast_pair_cycles"], c["slub_bulk_obj_pair_cycles"])


def _page_return(c, ratio, factor):
    return page_pool.return_side_cycles(ratio, factor, pp_ring_cycles=c["pp_ring_cycles"],
                                        page_slow_cycles=c["page_slow_cycles"],
                                        page_alloc_share=c["page_alloc_share"], xcpu_line_cycles=c["xcpu_line_cycles"])


def _napi_put(c, skb_from_cache, extra):
    """``napi_skb_cache_put``: its share of the pair; a cache nobody takes from overflows, and half of it
    goes back to SLUB in one bulk free."""
    fs = _free_share(c)
    flush = fs * (c["slub_bulk_obj_pair_cycles"] + _bulk_call(c) / NAPI_SKB_CACHE_HALF)
    return fs * c["napi_cache_pair_cycles"] + _where(skb_from_cache, lambda: 0.0, lambda: flush + extra)


_SLUB_KEYS = dict(fast_pair_cycles="slub_fast_pair_cycles", bulk_obj_pair_cycles="slub_bulk_obj_pair_cycles",
                  free_share="slub_free_share", free_slow_extra_cycles="slub_free_slow_extra_cycles",
                  slab_bytes="slub_slab_bytes", object_bytes="slub_object_bytes", slab_locality="slab_locality")


def _zero(gfp):
    """The zeroing option of a fixed method (``gfp``: ``__GFP_ZERO``, else ``memset``) of ``zero_b`` bytes."""
    return Option(("zero_b",), lambda c, nbytes: zeroing.zero_skb_cycles(gfp, nbytes, c["slub_object_bytes"], **c))


#: Inputs derived from others, the same in every evaluation (see :class:`Derived`; a :class:`Stage`: its
#: cost, an input chosen by codes).
DERIVED: dict[str, Derived | Stage] = {
    "recycle": Derived(("pp_recycle",), lambda c, r: np.clip(np.asarray(r, dtype=float), 0.0, 1.0)),
    "page_slow_n": Derived(("d_rx_bulk",), lambda c, n: c["page_slow_cycles"] + page_alloc.refill_extra_cycles(n, c),
                           shared=True),
    "free_n": Derived(("d_free_bulk",), lambda c, n: np.maximum(np.asarray(n, dtype=float), 1.0)),
    # one line's move at the state's placement: the same for every composition of the evaluation
    "line": Derived(("place", "ghz"), lambda c, place, ghz: placement.line_cycles(
        place, line_ns_of(c), c["xcpu_line_cycles"], ghz), shared=True),
    # a remote free (__slab_free of an object of another CPU's slab) writes the slab's freelist, a line the
    # slab's CPU last wrote: beyond the same-L3 move inside slub_free_slow_extra, the excess line - xcpu_line
    # (a choice: the line's move is computed on the remote states only)
    "free_extra": Stage("remote", {True: Option(("line",), lambda c, line: c["slub_free_slow_extra_cycles"] + line
                                                - c["xcpu_line_cycles"])}),
    "free_one": Derived((), lambda c: slub.free_one_cycles(fast_pair_cycles=c["slub_fast_pair_cycles"],
                                                           free_share=c["slub_free_share"]), shared=True),
    "napi_get": Derived((), lambda c: (1.0 - _free_share(c)) * c["napi_cache_pair_cycles"]),
    "napi_refill": Derived((), lambda c: _alloc_bulk(NAPI_SKB_CACHE_BULK, c), shared=True),
    "kfl_free": Derived(("kfl_bulk", "drop_batch", "clone_frac"),
                        lambda c, *a: kfree_skb_list.free_per_drop_cycles(*a, c), shared=True),
}


def _options(stage: str, **entries) -> dict:
    """``{code: entry}`` of a stage's options by name."""
    return {CODE[stage][name]: e for name, e in entries.items()}


#: The stages, one per component [cycles] (see the module docstring for each option's cost).
#: RX buffer: without a hand-off, alloc + return on this CPU; after a cpumap hand-off, the return side
#: of a page the source CPU allocated (:func:`skbmodel.physics.page_pool.return_side_cycles`, ratio 1
#: for the ptr_ring, 0 for the page allocator): handed off or not first, then the option on each side's
#: own states.  skb free: per dropped skb for ``kfree_skb_list``.
STAGES: dict[str, Stage] = {
    "skb alloc": Stage("skb", _options(
        "d_skb", slab_one=Option((), lambda c: _alloc_bulk(1.0, c)),
        slab_bulk=Option(("skb_n",), lambda c, n: _alloc_bulk(n, c)),
        # feeds: the free stage puts skbs back into this CPU's NAPI cache, else it refills from SLUB
        napi_cache=Option(("feeds", "napi_get", "napi_refill"),
                          lambda c, feeds, get, refill: _where(feeds, lambda: get, lambda: refill)))),
    "zeroing": Stage("zero", _options(
        "d_zero", memset=_zero(False), gfp_zero=_zero(True),
        path=Option(("is_gfp", "zero_bytes"),
                    lambda c, gfp, nbytes: zeroing.zero_skb_cycles(gfp, nbytes, c["slub_object_bytes"], **c)))),
    "page alloc/recycle": Stage("handed", {
        False: Stage("rx", _options(
            "d_rx", pp_direct=_const("pp_fast_cycles"), pp_ring=_const("pp_ring_cycles"),
            page_single=Option((), lambda c: c["page_slow_cycles"] + page_alloc.refill_extra_cycles(1.0, c)),
            page_bulk=Option(("page_slow_n",), lambda c, slow: slow),
            pp_mix=Option(("recycle", "page_slow_n"), lambda c, r, slow: r * c["pp_ring_cycles"] + (1.0 - r) * slow))),
        True: Stage("rx", _options(
            "d_rx", pp_direct=_const("pp_fast_cycles"),
            pp_ring=Option(("factor",), lambda c, f: _page_return(c, 1.0, f)),
            page_single=Option(("factor",), lambda c, f: _page_return(c, 0.0, f)),
            page_bulk=Option(("factor",), lambda c, f: _page_return(c, 0.0, f)),
            pp_mix=Option(("recycle", "factor"), _page_return)))}),
    # xfer_lines * xcpu_line * f (f the hand-off level's line factor, skbmodel.physics.placement.line_factor)
    "cross-CPU transfer": Stage("handed", {
        True: Option(("factor",), lambda c, f: c["cpumap_xfer_lines"] * c["xcpu_line_cycles"] * f)}),
    "rest of path": Stage("rest", _options(
        "d_rest", veth=_const("veth_base_cycles"), cpumap=_const("cpumap_dst_stack_cycles"),
        xdp_pass=Option((), cpumap.xdp_pass_rest_cycles), kfree_skb_list=_const("kfl_base_cycles"),
        custom=Option(("d_rest_ns", "ghz"),
                      lambda c, ns, ghz: np.asarray(ns, dtype=float) * np.asarray(ghz, dtype=float)))),
    "skb free": Stage("free", _options(
        "d_free", slab_one=Option(("free_one", "free_extra"), lambda c, one, extra: one + extra),
        # the remote list free (the costliest option) on the states that free to a remote slab only
        slab_bulk=Stage("remote", {
            True: Option(("free_n",), lambda c, n: slub.free_remote_list_cycles(
                n, n, 0.0, **{a: c[k] for a, k in _SLUB_KEYS.items()})),
            False: Option(("free_n",), lambda c, n: _free_share(c) * (c["slub_bulk_obj_pair_cycles"]
                                                                       + _bulk_call(c) / n))}),
        napi_cache=Option(("skb_from_cache", "free_extra"), _napi_put),
        # another CPU (the socket's) hands the skb back through this CPU's defer list; skb_defer_free_flush
        # then puts it into the NAPI cache: one cacheline pulled across at the two CPUs' level
        defer=Option(("skb_from_cache", "free_extra", "line"),
                     lambda c, cached, extra, line: _napi_put(c, cached, extra) + line),
        kfree_skb_list=Option(("kfl_free",), lambda c, v: v))),
}


class _Inputs(NamedTuple):
    """What the compositor hands the options of one composition: the inputs of this composition by name
    (a value, or a :class:`Derived`), the typed model inputs ``x``, the constants and the evaluation's memo;
    a name is looked up in ``values``, then ``x``, then :data:`DERIVED`."""
    values: dict
    x: Mapping
    c: Mapping
    memo: dict

    def get(self, name: str):
        v = self.values.get(name, _MISSING)
        if v is _MISSING:
            v = self.x[name] if name in self.x else DERIVED[name]
        return v


_MISSING = object()


def _value(name: str, s: _States, inp: _Inputs):
    """Input ``name`` on the states ``s``: a value taken at those states, a derived one computed there."""
    v = inp.get(name)
    if isinstance(v, Stage):
        return _cost(v, s, inp)
    if not isinstance(v, Derived):
        return s(v)
    if v.shared and name in inp.memo:
        return s(inp.memo[name])
    out = v.f(inp.c, *(_value(k, s, inp) for k in v.inputs))
    if v.shared and (s.idx is None or not v.inputs):  # kept only when computed on every state
        inp.memo[name] = out
    return out


def _cost(entry, s: _States, inp: _Inputs):
    """The cost [cycles] of a stage entry on the states ``s``: an option from its declared inputs, a stage
    through :func:`_pick` of its options."""
    if isinstance(entry, Option):
        return entry.cost(inp.c, *(_value(k, s, inp) for k in entry.inputs))
    return _pick(s(inp.get(entry.by)), entry.options, s, inp)


def _pick(opt, table: dict, s: _States, inp: _Inputs, default=0.0):
    """The entry ``table[opt]`` (:func:`_cost`) element-wise for the option codes ``opt`` on the states
    ``s``; codes not in ``table`` give ``default``.

    A scalar ``opt`` (a named composition) computes its one option only.  An array computes each
    option present in it on that option's states only (``s.sub``), when ``opt`` spans the states'
    grid and the constants are scalars; otherwise each present option on the whole grid.
    """
    if np.ndim(opt) == 0:
        f = table.get(int(opt))
        return default if f is None else _cost(f, s, inp)
    subsets = s.flat and np.shape(opt) == s.shape
    res = None
    for code, f in table.items():
        idx = np.flatnonzero(opt == code)
        if not idx.size:
            continue
        if subsets:
            if res is None:  # one output buffer, written option by option at its states' indices
                res = np.full(opt.shape, default, dtype=float)
            res.reshape(-1)[idx] = _cost(f, s.sub(idx), inp)
            continue
        v = _cost(f, s, inp)
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


def _start_bulk(c, start, xdp_batch):
    """The skb bulk of the start ``d_from`` (:data:`START_SKB_BULK`)."""
    # indexing, not np.take: np.take of int8 codes is several times slower (same gather)
    n = np.array([np.nan, np.nan, NAPI_SKB_CACHE_BULK, NAPI_SKB_CACHE_BULK])[start]
    n = np.where(start == CODE["d_from"]["veth"], xdp_batch, n)
    return np.where(start == CODE["d_from"]["cpumap"], c["cpumap_batch"], n)


def _cross_level(c) -> float:
    """The machine's nearest cross-node level (another socket where it has none: refused)."""
    cross = c.get(CROSS_NODE_KEY, -1.0)
    return float(PLACE_CODES["other_socket"] if np.all(np.asarray(cross) < 0) else cross)


def _hand_factor(c, h, place, ghz):
    """The line factor of the hand-off's level: the state's placement for the cpumap start, the same L3 for
    cpumap_same, the machine's nearest cross-node level for cpumap_cross."""
    level = np.where(h == _HAND["cpumap_cross"], _cross_level(c),
                     np.where(h == _HAND["cpumap_same"], 0, place))
    return placement.line_factor(level, line_ns_of(c), c["xcpu_line_cycles"], ghz)


@functools.lru_cache(maxsize=1)
def _fraction_table() -> np.ndarray:
    """``[d_rest code, d_stage code]`` -> the stage's fraction of that rest (shipped data: read once)."""
    table = np.zeros((len(OPTIONS["d_rest"]), len(OPTIONS["d_stage"])))
    for path in START_PATHS:
        fr = rest_stage_fractions(path)
        for option, stage_id in REST_STAGE_OPTIONS.items():
            table[_REST[path], _STAGE[option]] = fr.get(stage_id, 0.0)
    return table


def stage_fraction(rest, stage) -> np.ndarray:
    """The fraction of the rest ``rest`` that the named stage ``stage`` is (option codes of ``d_rest`` and
    ``d_stage``, element-wise): :func:`skbmodel.evidence.perfprofile.rest_fractions` of the modelled path whose
    rest it is; 0 for a stage its profile does not name, for a custom rest and for ``none``."""
    return _fraction_table()[rest, stage]


@functools.lru_cache(maxsize=1)
def veth_page_fraction() -> float:
    """The share of the veth rest its published perf profile puts in the RX page's stages
    (:data:`skbmodel.physics.rest.RX_PAGE_STAGES`) [1]: what an RX buffer stage replaces."""
    fr = rest_stage_fractions("veth")
    return float(sum(fr.get(k, 0.0) for k in _rest.RX_PAGE_STAGES))


def restaged_cycles(rest_c, rest, stage, pct):
    """The rest [cycles] with its named stage ``stage`` priced at ``pct`` % of its named time:
    ``rest_c (1 - f (1 - pct/100))``, ``f`` = :func:`stage_fraction` (``rest``, ``stage``: option codes)."""
    return rest_c * (1.0 - stage_fraction(rest, stage) * (1.0 - np.asarray(pct, dtype=float) / 100.0))


def _inputs(x, c, path: str | None, memo: dict) -> _Inputs:
    """Every input the options may declare: the typed inputs ``x``, each stage's explicit option codes
    (:data:`STAGE_INPUTS`) of the named composition ``path`` (scalar codes) or of the ``d_*`` inputs
    (``path`` None), what the codes imply and the derived inputs."""
    if path is not None:
        opt = {k: CODE[k][STARTS[path][k]] for k in STAGE_CHOICES}
        n = START_SKB_BULK[path]
        skb_n = x[n] if n in x else (c[n] if isinstance(n, str) else float(n))
        zero_b = x["zero_bytes"]
    else:
        d_from = x["d_from"]
        masks = [(d_from == i).view(np.int8) for i in range(len(START_PATHS))] if np.ndim(d_from) else None
        opt = {k: _resolve(x, k, masks) for k in STAGE_CHOICES}
        skb_n = Derived(("d_skb", "start_bulk", "d_skb_bulk"),
                        lambda c, code, start, n: np.where(code == FROM, start, n))
        zero_b = x["d_zero_bytes"]
    hand, free, skb = opt["d_hand"], opt["d_free"], opt["d_skb"]
    if np.ndim(hand) == 0 and hand == _HAND["path"]:  # the cpumap start: the state's placement
        factor = Derived(("line",), lambda c, line: line / np.where(c["xcpu_line_cycles"] > 0,
                                                                    c["xcpu_line_cycles"], 1.0))
    else:
        factor = Derived(("hand", "place", "ghz"), _hand_factor)
    values = {**{STAGE_INPUTS[k]: v for k, v in opt.items()},
              "start_bulk": Derived(("d_from", "xdp_batch"), _start_bulk), "skb_n": skb_n, "zero_b": zero_b,
              "handed": hand != _HAND["none"], "factor": factor,
              "feeds": (free == _FREE["napi_cache"]) | (free == _FREE["defer"]),
              "remote": opt["d_free_where"] == _WHERE["remote"], "skb_from_cache": skb == _SKB["napi_cache"]}
    return _Inputs(values, x, c, memo)


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


def _drop_feedback(other, free, ghz, c):
    """The qdisc drop path's ``(T [ns], d)`` of the other components and the free per dropped skb [cycles]."""
    return kfree_skb_list.drop_feedback_ns(units.cycles_to_ns(other, ghz), units.cycles_to_ns(free, ghz),
                                           c["kfl_wire_kpps"])


def per_packet(x, c, path: str | None = None, memo: dict | None = None) -> Composed:
    """The :class:`Composed` breakdown [cycles], ns per packet [ns] and drop fraction of a composition.

    ``path``: one of the modelled paths, composed as in :data:`STARTS`; None: the composition of the
    ``d_*`` inputs.  ``x``: the typed model inputs of :func:`skbmodel.model.inputs` (option codes);
    ``c``: profile constants (scalars or arrays with a leading constant axis); ``memo``: a dict the
    compositions of one evaluation share (costs that do not depend on the stage options).
    Each component is its stage of :data:`STAGES`, each option given the inputs it declares on its
    own states.  ``ns = sum(components) / ghz``; with the ``kfree_skb_list`` rest (pktgen into
    fq_codel), the free is paid for the dropped share only: ``T = (B + F) / (1 + W F)``,
    ``d = clip(1 - W T, 0, 1)``, ``T = B + d F`` (B: every other component, F: the free per dropped
    skb, W: the wire rate); ``drop_fraction`` is ``d`` there and 0 elsewhere.
    """
    memo = {} if memo is None else memo
    inp = _inputs(x, c, path, memo)
    s = _EVERY if path is not None else _states(x, c, memo)
    rest, free = inp.values["rest"], inp.values["free"]
    ghz = x["ghz"]
    parts = {k: _cost(stage, s, inp) for k, stage in STAGES.items()}
    # a free stage replaces the free a rest already holds (skbmodel.physics.rest)
    parts["rest of path"] = parts["rest of path"] - _rest.overlap_cycles(
        rest == _REST["veth"], free != _FREE["none"], slub.free_one_cycles(
            fast_pair_cycles=c["slub_fast_pair_cycles"], free_share=c["slub_free_share"]))
    # an RX buffer stage replaces the RX page a rest already holds, as its perf profile names it
    parts["rest of path"] = parts["rest of path"] - _rest.rx_overlap_cycles(
        rest == _REST["veth"], inp.values["rx"] != _RX["none"], c["veth_base_cycles"], veth_page_fraction())
    if np.any(inp.values["stage"] != _STAGE["none"]):  # a named composition re-prices no stage
        parts["rest of path"] = restaged_cycles(parts["rest of path"], rest, inp.values["stage"], x["d_stage_pct"])
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
    if np.ndim(drop) == 0:
        t_ns, d = _drop_feedback(other, free, ghz, c)
        parts["skb free"] = d * free
        return Composed(parts, t_ns, d, free)
    if s.flat and drop.shape == s.shape:  # the feedback on the qdisc drop states only
        idx = np.flatnonzero(drop)
        sub = s.sub(idx)
        free_d = sub(free)
        t_ns, d = _drop_feedback(sub(other), free_d, sub(ghz), c)
        parts["skb free"] = _merge(free, idx, d * free_d, s.shape)
        if plain_ns.shape == s.shape and plain_ns.flags.c_contiguous:  # a new array of this evaluation: in place
            plain_ns.reshape(-1)[idx] = t_ns
        else:
            plain_ns = _merge(plain_ns, idx, t_ns, s.shape)
        return Composed(parts, plain_ns, _merge(0.0, idx, d, s.shape), free)
    t_ns, d = _drop_feedback(other, free, ghz, c)
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
    inp = _inputs(x, c, path, {} if memo is None else memo)
    free, where = inp.values["free"], inp.values["where"]
    moved = (free == _FREE["defer"]) | ((where == _WHERE["remote"])
                                         & ((free == _FREE["slab_one"]) | (free == _FREE["slab_bulk"])))
    return np.where(moved, _value("line", _EVERY, inp), 0.0)


# ---------------------------------------------------------------- compositions that make no sense
def problems(params: Mapping, prefix: str = "") -> list[tuple[str, str]]:
    """``[(stage, message), ...]`` for a composition the kernel does not allow or that makes no sense.

    Checked on a scalar state (``prefix`` ``"b_"`` for scenario B); empty when the composition is
    usable.  The model still evaluates such a state (bulk sizes below 1 count as 1), so a link with
    them opens; the page and the CLI show these messages instead of its numbers.
    """
    def g(k):
        return params.get(prefix + k, DEFAULTS.get(k))
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
    if opt["d_stage"] != "none":
        name = OPTION_LABELS[opt["d_stage"]].removeprefix("re-price the rest's ")
        if opt["d_rest"] == "custom":
            out.append(("rest stage", f"a custom rest has no named stages: {name} cannot be re-priced in it"))
        elif float(stage_fraction(CODE["d_rest"][opt["d_rest"]], CODE["d_stage"][opt["d_stage"]])) <= 0:
            out.append(("rest stage", f"the {opt['d_rest']} rest's published perf profile names no {name}: "
                                      "re-pricing it would change nothing"))
        elif opt["d_rest"] == "veth" and opt["d_rx"] != "none" and REST_STAGE_OPTIONS[opt["d_stage"]] in \
                _rest.RX_PAGE_STAGES:
            out.append(("rest stage", f"the RX buffer stage replaces the veth rest's {name}: re-price the RX "
                                      "buffer stage instead"))
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
