"""Kernel configuration of a profile: memcg kmem accounting, debug options, preemption, VM or bare metal.

In the public data these move costs as much as the CPU does, so a profile states the configuration its
constants were measured under (``[config]`` in its TOML, :mod:`skbmodel.profile`; an inheriting
profile keeps its parent's fields unless it states its own).  Each field defaults to
``"not stated"``: most published numbers do not say.

Only one field moves a constant here, the one the public data measure on one machine with
everything else held: **memcg kmem accounting active**.  On the kernels of 2015-2016 (one cgroup
with kmem accounting enabled at runtime), every ``kmem_cache_alloc``/``kmem_cache_free`` looked up
the per-memcg cache: the SLUB fast path (alloc + free of one object) went from 46 to 71 TSC cycles
on the same i7-4790K and kernel (corpus rows ``slub-i7-4790k-2016-01-fastpath`` and
``slub-i7-4790k-2016-01-fastpath-memcg-active``, Jesper Dangaard Brouer, kfree_bulk V2 series,
2016-01), a factor :data:`MEMCG_ACTIVE_FAST_PAIR` = 71 / 46 = 1.54 on the per-call fast pair::

    slub_fast_pair_cycles(active) = slub_fast_pair_cycles(not active) * 71 / 46

The bulk API pays the lookup once per call, so the bulk curves converge (the memcg-active bulk
column equals the inactive one from 16 objects up in the same series).  Compiled in but unused
(``CONFIG_MEMCG_KMEM=y`` without a kmem-accounted cgroup) costs nothing measurable: 15.2 against
14.7 ns per object in the one-at-a-time column of the 2015-12 RFC series
(``slub-2015-12-kfree-bulk-rfc-memcg-compiled-loop`` against ``...-nomemcg-loop``, bulk 1), within
that benchmark's run-to-run spread, so ``off`` and ``compiled`` are one state.  Since 4.5
(a9bb7e620efd, "memcg: only account kmem allocations marked as __GFP_ACCOUNT") kmem accounting is
opt-in: only ``__GFP_ACCOUNT`` allocations and ``SLAB_ACCOUNT`` caches are charged, and the skb head
cache (like the benchmark's own cache) is neither, so the hook costs a flag test.  The corpus's
memcg-active series ran on trees up to 4.5-rc, so the term applies to profiles of kernels up to 4.5
and is refused from 4.6 on (:data:`MEMCG_TERM_BEFORE`); 5.9's object-cgroup rework (10d5a62,
"mm: memcg/slab: use a single set of kmem_caches for all allocations") changed only the charged path.

``preempt``, ``debug`` and ``machine`` (bare metal or VM) are stated for reference: the public data
hold no pair of runs that differ in one of them alone, so they move no constant.
"""
from __future__ import annotations

import dataclasses

from . import era

NOT_STATED = "not stated"
#: each field: its allowed values (``not stated`` always allowed) and what it means
FIELDS: dict[str, tuple[tuple[str, ...], str]] = {
    "memcg_kmem": (("off", "compiled", "active"),
                   "memcg kmem accounting: off (not built), compiled (CONFIG_MEMCG_KMEM=y, no accounted cgroup) "
                   "or active (a cgroup with kmem accounting in use)"),
    "preempt": (("none", "voluntary", "full", "rt"), "preemption model (CONFIG_PREEMPT_*)"),
    "debug": (("off", "on"), "debug options that slow the allocator (lockdep, KASAN, slub_debug, ...)"),
    "machine": (("bare metal", "vm"), "bare metal or a virtual machine"),
}
#: memcg kmem active / not active, SLUB per-call fast pair (71 / 46 TSC cycles, see the module text)
MEMCG_ACTIVE_FAST_PAIR = 71.0 / 46.0
MEMCG_SOURCE = ("memcg kmem active x 71/46 = 1.54 on the per-call fast pair: corpus rows "
                "slub-i7-4790k-2016-01-fastpath (46 cycles) and slub-i7-4790k-2016-01-fastpath-memcg-active "
                "(71 cycles), same i7-4790K and kernel (Jesper Dangaard Brouer, kfree_bulk V2 series, 2016-01)")
#: the per-memcg cache lookup the term describes exists in kernels before this release
MEMCG_TERM_BEFORE = "4.6"


class ConfigError(ValueError):
    """A configuration field or value that is not known: one line naming it."""


def parse(raw, origin: str = "<config>") -> dict[str, str]:
    """The ``[config]`` table: known fields, each one of its values or ``not stated``."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{origin}: [config] must be a table")
    out = {}
    for k, v in raw.items():
        if k not in FIELDS:
            raise ConfigError(f"{origin}: config.{k} is not a configuration field ({', '.join(FIELDS)})")
        allowed = FIELDS[k][0] + (NOT_STATED,)
        if not isinstance(v, str) or v not in allowed:
            raise ConfigError(f"{origin}: config.{k} = {v!r}: expected one of {', '.join(allowed)}")
        out[k] = v
    return out


def resolved(config: dict) -> dict[str, str]:
    """Every field, ``not stated`` where the profile does not say."""
    return {k: config.get(k, NOT_STATED) for k in FIELDS}


def describe(config: dict) -> str:
    """``memcg kmem compiled, PREEMPT none, debug not stated, machine not stated``."""
    c = resolved(config)
    return (f"memcg kmem {c['memcg_kmem']}, PREEMPT {c['preempt']}, debug {c['debug']}, "
            f"machine {c['machine']}")


def _memcg_active(value: str) -> bool | None:
    return None if value == NOT_STATED else value == "active"


def memcg_factor(have: dict, want: dict, kernels) -> tuple[float, str]:
    """Factor on ``slub_fast_pair_cycles`` from configuration ``have`` to ``want`` and why.

    1 with the reason when nothing moves it: the same memcg state, a state not stated, or kernels
    since :data:`MEMCG_TERM_BEFORE`.  Raises :class:`ConfigError` when the change cannot be made
    honestly (an unstated starting state, or a kernel where no public number describes the cost).
    """
    a, b = _memcg_active(resolved(have)["memcg_kmem"]), _memcg_active(resolved(want)["memcg_kmem"])
    if b is None or a == b:
        return 1.0, "no change of memcg kmem state"
    if a is None:
        raise ConfigError("memcg_kmem: the base profile does not state its memcg kmem state, so no term can be "
                          "applied to it")
    last = kernels[-1] if kernels else None
    if last is None or era.version_key(last) >= era.version_key(MEMCG_TERM_BEFORE):
        raise ConfigError(f"memcg_kmem: the measured term (per-memcg cache lookup) describes kernels before "
                          f"{MEMCG_TERM_BEFORE}; this profile describes kernels {'..'.join(kernels) or 'not stated'}")
    return (MEMCG_ACTIVE_FAST_PAIR if b else 1.0 / MEMCG_ACTIVE_FAST_PAIR), MEMCG_SOURCE


def with_config(profile, want: dict):
    """``profile`` under configuration ``want`` (fields not given keep the profile's): the configuration
    stated, and the sourced terms applied to the constants they move (their source says so)."""
    want = {**profile.config, **parse(want)}
    factor, why = memcg_factor(profile.config, want, profile.kernels)
    consts = dict(profile.constants)
    if factor != 1.0:
        c = consts["slub_fast_pair_cycles"]
        consts[c.name] = dataclasses.replace(
            c, value=round(c.value * factor, 4), stderr=round(c.stderr * factor, 6), kind="assumed",
            source=f"{c.value:g} cycles of {profile.id} ({resolved(profile.config)['memcg_kmem']}) x {factor:.3f}: "
                   f"{why}; uncertainty: scaled with the value")
    return dataclasses.replace(profile, constants=consts, config=want)


def parse_settings(items) -> dict[str, str]:
    """``["memcg_kmem=active", ...]`` (the CLI's ``--set``) -> ``{field: value}``, each checked."""
    out = {}
    for item in items or ():
        key, sep, value = str(item).partition("=")
        if not sep:
            raise ConfigError(f"--set {str(item)[:40]!r}: expected field=value, e.g. memcg_kmem=active")
        out[key.strip()] = value.strip()
    return parse(out, "--set")


def configured(base, want: dict):
    """A profile inheriting ``base`` under configuration ``want``: it lists the configuration and the
    constants the configuration's terms move (``python -m skbmodel profile configure``)."""
    full = with_config(base, want)
    tag = "-".join(f"{k}-{v}".replace(" ", "-") for k, v in parse(want).items())
    own = {k: c for k, c in full.constants.items() if base.constants[k] != c}
    return dataclasses.replace(full, id=f"{base.id}-{tag}"[:64], name=f"{base.name}; {describe(full.config)}",
                               constants=own, inherits=base.id,
                               notes=f"{base.id} under kernel configuration {describe(full.config)}: "
                                     + (", ".join(f"{k} moved by the configuration" for k in own)
                                        or "no measured term moves a constant"))
