"""The profiles and profile pairs a property is checked on, chosen for the cases they carry.

Eighteen of the 27 shipped profiles come out of one derivation (scripts/derived_profiles.py) from one
parent: a property that holds for one of them and for the parent holds, or fails, for the same reason
on the others. So a property over profiles runs on the profiles below, each there for a case no other
one carries, plus a fixed-seed draw of the rest (``drawn``) where breadth over constants helps. Every
parametrisation that uses these says beside it why.

A profile case is a profile id, or ``CUSTOM`` (a custom profile built on the e5-1650v4 that changes
constants of its own: what a user's fit produces)."""
from __future__ import annotations

import random

from skbmodel.machine import custom, profile as P
from skbmodel.links import state as sk_state

#: a custom profile on the e5-1650v4 (its id is derived from its values, so it is named here)
CUSTOM = "custom-on-e5-1650v4"
#: what the custom profile changes: a SLUB constant, the veth base and the clock (all inside bounds)
CUSTOM_CHANGES = {"slub_fast_pair_cycles": 121.25, "veth_base_cycles": 900.0, "ghz": 3.1}

#: profile -> the case it carries
PROFILE_CASES = {
    # measured, kernels 5.11-6.7: before 6.8 (page_pool recycling directly from any context); the root
    # every other profile inherits from, and the default
    "e5-1650v4": "measured, kernel era before 6.8, the root profile",
    # measured, kernels 6.13-6.16: the same silicon in the 6.8+ era, the parent of every derived-* profile
    "e5-1650v4-2025": "measured, kernel era 6.8+, parent of the derivation",
    # measured on 4.2-4.5, the only profile fitting its own SLUB loop call, refill and L1 miss
    "i7-4790k": "measured, oldest kernels (4.x), its own SLUB loop/refill/L1-miss fit",
    # the only measured cpumap hand-off (its own xcpu_line, cpumap and page_slow fit)
    "xeon-platinum-iavf": "measured, its own cpumap hand-off fit",
    # arm64, measured and derived (no rep stos: the zeroing constants are stand-ins)
    "kunpeng-920": "measured arm64",
    "derived-neoverse-n1": "derived arm64",
    # a derived x86 profile (6.16 era; no derived profile is of the era before 6.8: the derivation's
    # parent is the 2025 e5-1650v4)
    "derived-zen4-genoa": "derived x86, kernel era 6.8+",
    CUSTOM: "custom profile on the e5-1650v4",
}

#: profiles drawn from the rest with this seed: a fixed draw, so a failure names a reproducible case
DRAW_SEED = 31


def drawn(n: int = 2, seed: int = DRAW_SEED) -> list[str]:
    """``n`` shipped profiles not in :data:`PROFILE_CASES`, drawn with ``seed`` (sorted, so the ids are stable)."""
    rest = sorted(set(P.available_profiles()) - set(PROFILE_CASES))
    return sorted(random.Random(seed).sample(rest, min(n, len(rest))))


def profile_ids(n_drawn: int = 2) -> list[str]:
    """The chosen cases (:data:`PROFILE_CASES`) and ``n_drawn`` drawn ones."""
    return list(PROFILE_CASES) + drawn(n_drawn)


def load(case: str) -> P.Profile:
    """The profile of a case id (``CUSTOM`` is built; the others are shipped)."""
    if case == CUSTOM:
        return custom.build(P.load_profile("e5-1650v4"), CUSTOM_CHANGES, "custom case")
    return P.load_profile(case)


def scenario(prof: P.Profile, **kw) -> dict:
    """The default scenario on ``prof`` (a custom profile's defaults are its base's, at its own clock)."""
    base = prof.inherits if prof.id.startswith(custom.CUSTOM_PREFIX) else prof.id
    return {**sk_state.scenario(sk_state.defaults(base)), "ghz": prof.ghz, **kw}


#: (A, B) -> (whether A and B are one machine, the branch of the pairing rule the pair exercises).
#: skbmodel.uncertainty.same_quantity: a constant is one quantity only on one machine with one value and sd
PAIR_CASES = {
    ("e5-1650v4", "e5-1650v4"): (True, "one profile: every constant is one quantity"),
    ("e5-1650v4", "e5-1650v4@archived"): (True, "another version of the machine: unchanged constants pair"),
    ("e5-1650v4", CUSTOM): (True, "a custom profile on the machine: pairs but for the constants it changed"),
    ("e5-1650v4", "e5-1650v4-2025"): (False, "the same silicon in another kernel era: another machine id"),
    ("e5-1650v4-2025", "derived-zen4-genoa"): (False, "a derived profile and its parent: inherited stand-ins"),
    ("kunpeng-920", "xeon-platinum-iavf"): (False, "two measured machines, arm64 against x86"),
}


def load_pair_member(case: str) -> P.Profile:
    """A profile of :data:`PAIR_CASES`: ``<id>@archived`` is the oldest archived version of ``<id>``."""
    if case.endswith("@archived"):
        pid = case.split("@", 1)[0]
        return P.load_profile(f"{pid}@{P.archived_versions(pid)[0]}")
    return load(case)
