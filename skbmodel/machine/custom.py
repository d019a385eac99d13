"""Custom (user-fitted) CPU profiles: compact share-link codec and TOML files.

A custom profile is a shipped profile (its *base*) with some constant values replaced.  The share
link carries only what differs, in one query value (key ``prof``, see :mod:`skbmodel.links.state`)::

    1~e5-1650v4~ghz:3.57,slub_fast_pair_cycles:121.5~my-lab

``1`` is the format version, then the base profile id, the changed constants as ``name:value``
(shortest round-trip decimal), and an optional label (``[A-Za-z0-9._-]``, at most 40 characters).
Decoding is strict: whitelisted constant names of the base profile, finite numbers in the
constant's bounds, bounded length; nothing is evaluated or unpickled.  Any problem raises
:class:`ProfileLinkError` whose message names the part and what was expected.

The downloadable TOML file is a normal profile file with ``inherits = "<base>"`` that lists only
the constants that differ from the base (each with its ``source``, e.g. ``fitted from: lab.txt,
line 35``); :func:`load_profile_text` reads it back with the same checks.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import re

from .profile import (DEFAULT_PROFILE, Profile, ProfileError, available_profiles, load_profile, parse_profile,
                      profile_version)

LINK_VERSION = "1"
MAX_LINK_CHARS = 1_500
MAX_TOML_BYTES = 200_000
MAX_VALUE = 1e7
_LABEL = re.compile(r"^[A-Za-z0-9._-]{1,40}$")
_NUMBER = re.compile(r"^[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]{1,3})?$")
GHZ_RANGE = (0.5, 6.0)


class ProfileLinkError(ValueError):
    """An unusable custom profile (link text or file); the message names the part."""


def sanitize_label(text: str) -> str:
    """A link-safe label from free text (empty if nothing is left)."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", str(text or "")).strip("-.")
    return s[:40]


def check_value(name: str, value: float, base: Profile, bounds=None) -> None:
    """Raise :class:`ProfileLinkError` unless ``value`` is allowed for constant ``name``."""
    if name not in base.constants:
        raise ProfileLinkError(f"{name!r} is not a constant of profile {base.id}")
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ProfileLinkError(f"{name}: {value!r} is not a finite number")
    lo, hi = (0.0, MAX_VALUE)
    if name == "ghz":
        lo, hi = GHZ_RANGE
    b = bounds or base.constants[name].bounds
    if b is not None:
        lo, hi = max(lo, float(b[0])), min(hi, float(b[1]))
    if not lo <= value <= hi:
        raise ProfileLinkError(f"{name}: {value:g} outside the allowed range [{lo:g}, {hi:g}] "
                               f"{base.constants[name].unit}")


#: constants that size things (bytes); a custom value below 1 makes divisions by zero in the model/charts
SIZE_CONSTANTS = ("slub_object_bytes", "slub_slab_bytes", "cacheline_bytes")


def check_structure(base: Profile, changes: dict[str, float]) -> None:
    """Raise :class:`ProfileLinkError` unless sizes are >= 1 byte and a slab holds at least one object."""
    val = {k: float(changes.get(k, base.constants[k].value)) for k in SIZE_CONSTANTS if k in base.constants}
    for k in SIZE_CONSTANTS:
        if k in changes and val[k] < 1:
            raise ProfileLinkError(f"{k}: {val[k]:g} is below 1 byte")
    if {"slub_object_bytes", "slub_slab_bytes"} <= set(val) and val["slub_slab_bytes"] < val["slub_object_bytes"]:
        raise ProfileLinkError(f"slub_slab_bytes: {val['slub_slab_bytes']:g} holds no object of slub_object_bytes "
                               f"{val['slub_object_bytes']:g}")


def base_of(profile: Profile) -> Profile:
    """The shipped profile a custom profile is based on (``inherits``; a shipped profile is its own base).

    A custom profile built on an archived version (``inherits = "<id>@<version>"``) has that version as base.
    """
    if profile.id in available_profiles():
        return load_profile(profile.id)
    if profile.inherits and profile.inherits in available_profiles():
        return load_profile(profile.inherits)
    if profile.inherits and profile.inherits.split("@", 1)[0] in available_profiles():
        try:
            return load_profile(profile.inherits)
        except ProfileError:
            return load_profile(profile.inherits.split("@", 1)[0])
    return load_profile(DEFAULT_PROFILE)


def diff(profile: Profile, base: Profile | None = None) -> dict[str, float]:
    """``{name: value}`` of the constants whose value differs from the base profile."""
    base = base or base_of(profile)
    return {k: c.value for k, c in profile.constants.items()
            if k not in base.constants or base.constants[k].value != c.value}


def _payload(base_id: str, changes: dict[str, float]) -> str:
    pairs = ",".join(f"{k}:{float(v)!r}" for k, v in sorted(changes.items()))
    return f"{LINK_VERSION}~{base_id}~{pairs}"


#: the id of every custom profile starts with this (:func:`custom_id`)
CUSTOM_PREFIX = "custom-"


def custom_id(base_id: str, changes: dict[str, float]) -> str:
    """Deterministic id of a custom profile (same values -> same id on every machine)."""
    return CUSTOM_PREFIX + hashlib.sha1(_payload(base_id, changes).encode()).hexdigest()[:8]


def encode_profile(profile: Profile) -> str:
    """The compact link text of ``profile`` (only the constants that differ from its base)."""
    base = base_of(profile)
    changes = diff(profile, base)
    for k, v in changes.items():
        check_value(k, v, base, profile.constants[k].bounds)
    text = _payload(base.id, changes)
    label = sanitize_label(profile.name) if profile.id not in available_profiles() else ""
    if label:
        text += "~" + label
    if len(text) > MAX_LINK_CHARS:
        raise ProfileLinkError(f"the profile needs {len(text)} characters in a link; the limit is {MAX_LINK_CHARS}")
    return text


def decode_profile(text: str, base_version: str | None = None) -> Profile:
    """Strictly decode link text into a :class:`Profile`; raises :class:`ProfileLinkError`.

    ``base_version``: apply the link's changes to that archived version of the base profile
    (``<base>@<version>``, see :func:`skbmodel.machine.profile.load_archived`) instead of the current one.
    """
    if not isinstance(text, str):
        raise ProfileLinkError("expected text")
    text = text.strip()
    if len(text) > MAX_LINK_CHARS:
        raise ProfileLinkError(f"{len(text)} characters; the limit is {MAX_LINK_CHARS}")
    parts = text.split("~")
    if len(parts) not in (3, 4):
        raise ProfileLinkError("expected '1~<base profile>~name:value,...[~label]'")
    version, base_id, pairs = parts[:3]
    if version != LINK_VERSION:
        raise ProfileLinkError(f"format version {version[:10]!r} is not supported; expected {LINK_VERSION}")
    if base_id not in available_profiles():
        raise ProfileLinkError(f"base profile {base_id[:40]!r} is unknown; "
                               f"available: {', '.join(available_profiles())}")
    base = load_profile(base_id)
    if base_version and base_version != profile_version(base):
        try:
            base = load_profile(f"{base_id}@{base_version}")
        except ProfileError as e:
            raise ProfileLinkError(str(e)) from None
    label = ""
    if len(parts) == 4:
        label = parts[3]
        if not _LABEL.match(label):
            raise ProfileLinkError("label: expected 1-40 characters of A-Z a-z 0-9 . _ -")
    changes: dict[str, float] = {}
    for item in filter(None, pairs.split(",")):
        name, sep, raw = item.partition(":")
        if not sep:
            raise ProfileLinkError(f"{item[:40]!r}: expected name:value")
        if name not in base.constants:
            raise ProfileLinkError(f"{name[:40]!r} is not a constant of profile {base_id}")
        if name in changes:
            raise ProfileLinkError(f"{name}: given more than once")
        if not _NUMBER.match(raw) or len(raw) > 32:
            raise ProfileLinkError(f"{name}: {raw[:40]!r} is not a plain non-negative decimal number")
        value = float(raw)
        check_value(name, value, base)
        changes[name] = value
    check_structure(base, changes)
    return build(base, changes, label, source="value from a share link")


@functools.lru_cache(maxsize=64)
def decode_cached(text: str, base_version: str | None = None) -> Profile:
    """:func:`decode_profile` with a small cache (the dashboard decodes the same link every rerun)."""
    return decode_profile(text, base_version)


def build(base: Profile, changes: dict[str, float], label: str = "", source: str | None = None,
          sources: dict[str, str] | None = None) -> Profile:
    """A custom profile: ``base`` with ``changes``; id from the values, ``inherits`` = base."""
    sources = sources or {}
    consts = dict(base.constants)
    for k, v in changes.items():
        c = consts[k]
        src = sources.get(k) or (source or "custom value").format(base=base.id, old=f"{c.value:g}")
        # the user's value, not one carried from another CPU: its sd is an addend again (linear scale)
        consts[k] = dataclasses.replace(c, value=float(v), kind="fitted", source=src,
                                        bounds=c.bounds or default_bounds(k, c.value), scale="linear", origin="")
    name = label or f"custom fit on {base.id}"
    parent = base.id
    if base.id not in available_profiles() and base.inherits:
        # built on a profile file (a derivation, an earlier fit): it inherits that file's shipped base and holds
        # every constant either changed, so its link and its TOML need no file beside them
        shipped, parent = base_of(base), base.inherits
        moved = {k: c.value for k, c in consts.items()
                 if k not in shipped.constants or shipped.constants[k].value != c.value}
        cid = custom_id(parent, moved)
    else:
        cid = custom_id(base.id, {k: v for k, v in changes.items() if base.constants[k].value != v})
    # the base's correlations stay: the unchanged constants are the same quantities; so do its kernels and
    # their configuration (the mitigation the base was chosen for), which a profile file inheriting it states
    return Profile(id=cid, name=name, constants=consts, inherits=parent,
                   notes=f"custom profile based on {base.id}", fit_names=base.fit_names,
                   fit_correlation=base.fit_correlation, kernels=base.kernels, config=dict(base.config))


#: the profile constant that holds the benchmark noise of one run [ns]; a fit stores the spread of
#: the user's repeats in it (:func:`skbmodel.evidence.userfit.fit`)
NOISE_CONSTANT = "noise_floor_ns"


def measured_noise_ns(profile: Profile) -> float | None:
    """The noise a custom profile measured (its ``noise_floor_ns`` differs from its base's) [ns], else None:
    the A/B verdicts use it as their noise floor while the profile is in use."""
    if profile is None or NOISE_CONSTANT not in profile.constants or profile.id in available_profiles():
        return None
    base = base_of(profile)
    value = profile.value(NOISE_CONSTANT)
    return value if NOISE_CONSTANT in base.constants and base.value(NOISE_CONSTANT) != value else None


def default_bounds(name: str, value: float) -> tuple[float, float]:
    if name == "ghz":
        return GHZ_RANGE
    return (0.0, min(MAX_VALUE, max(10.0 * abs(value), 1.0)))


def profile_toml(profile: Profile) -> str:
    """TOML text of a custom profile: ``inherits`` its base and lists only what differs."""
    base = base_of(profile)
    own = {k: c for k, c in profile.constants.items()
           if k not in base.constants or base.constants[k] != c}
    out = dataclasses.replace(profile, constants=own, inherits=base.id if profile.id != base.id else profile.inherits)
    return out.to_toml()


def load_profile_text(text: str, origin: str = "uploaded profile") -> Profile:
    """Read an uploaded profile TOML (custom or full); strict checks, raises :class:`ProfileLinkError`."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > MAX_TOML_BYTES:
            raise ProfileLinkError(f"{origin}: {len(text)} bytes; a profile file is at most {MAX_TOML_BYTES}")
        if b"\x00" in text[:8192]:
            raise ProfileLinkError(f"{origin}: binary data; expected a TOML profile")
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ProfileLinkError(f"{origin}: not UTF-8 text; expected a TOML profile") from None
    if not text.strip():
        raise ProfileLinkError(f"{origin}: empty file; expected a TOML profile")
    if len(text) > MAX_TOML_BYTES:
        raise ProfileLinkError(f"{origin}: {len(text)} characters; a profile file is at most {MAX_TOML_BYTES}")

    def parent(pid):
        if pid not in available_profiles():
            raise ProfileError(f"{origin}: inherits {pid!r}, which is not a shipped profile "
                               f"({', '.join(available_profiles())})")
        return load_profile(pid)
    try:
        prof = parse_profile(text, origin=origin, resolve_parent=parent)
    except ProfileError as e:
        raise ProfileLinkError(str(e)) from None
    except (ValueError, TypeError, OverflowError) as e:  # OverflowError: value = 1111...1 (500 digits)
        raise ProfileLinkError(f"{origin}: {e}") from None
    except RecursionError:  # tomllib recurses per nesting level: "a = [[[[...]]]]" must not crash the page
        raise ProfileLinkError(f"{origin}: not valid TOML (nested too deeply)") from None
    base = load_profile(prof.inherits) if prof.inherits in available_profiles() else \
        (load_profile(prof.id) if prof.id in available_profiles() else load_profile(DEFAULT_PROFILE))
    changes = {}
    for k, c in prof.constants.items():
        try:
            check_value(k, c.value, base, c.bounds)
        except ProfileLinkError as e:
            raise ProfileLinkError(f"{origin}: constants.{e}") from None
        if base.constants[k].value != c.value:
            changes[k] = c.value
    try:
        check_structure(base, changes)
    except ProfileLinkError as e:
        raise ProfileLinkError(f"{origin}: constants.{e}") from None
    label = sanitize_label(prof.name)
    sources = {k: prof.constants[k].source for k in changes}
    return build(base, changes, label, sources=sources)
