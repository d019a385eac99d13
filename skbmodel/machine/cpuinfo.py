"""The user's own CPU: which machine description pasted measurements were taken on, and the profile a fit
of them starts from.

Reads the lines of /proc/cpuinfo (``model name``; on arm64 ``CPU implementer`` and ``CPU part``), of
``lscpu`` (``Model name:``) and a notebook's or a mail's own ``CPU:`` line, matched against each
description's ``match`` patterns and ``cpu_parts`` (:mod:`skbmodel.machine.description`); and what the
text says of the kernel it ran (its release and the SRSO return thunk, :func:`boot_setup`), which picks
among one machine's profiles (:func:`start_profile`).  The SRSO mitigation exists since v6.5 (2023-08;
its default on Zen 1-4 is safe-RET, Documentation/admin-guide/hw-vuln/srso.rst).
"""
from __future__ import annotations

import dataclasses
import re

from . import era
from .description import ASSUMED_MEASURED_ON, Description, UarchError, derived_id, descriptions, measured_on
from .profile import available_profiles, load_profile

# ---- the user's own CPU ----------------------------------------------------------------------

_MODEL_NAME = re.compile(r"^\s*model name\s*:\s*(\S.*?)\s*$", re.I | re.M)
#: a notebook's or a mail's own line naming the machine: ``CPU: AMD EPYC 9684X 96-Core Processor (CF Gen 12)``
_CPU_LINE = re.compile(r"^\s*CPU\s*:\s*(\S.*?)\s*$", re.M)
#: ``Kernel: 6.13.0-rc6+``, ``Same kernel: ...``, ``Linux version 6.13.7 (...)``, ``uname -r``-style ``6.13.0-...``
_KERNEL_LINE = re.compile(r"^\s*(?:[A-Za-z ]*kernel\s*:|Linux version)\s*v?(\d+\.\d+)", re.I | re.M)
#: what a text says of the SRSO mitigation: the boot option, or the vulnerabilities file's line
_SRSO_TEXT = (("srso-ibpb", re.compile(r"spec_rstack_overflow=ibpb|Mitigation:\s*IBPB", re.I)),
              ("none", re.compile(r"spec_rstack_overflow=off|\bmitigations=off", re.I)),
              ("srso-safe-ret", re.compile(r"spec_rstack_overflow=safe-ret|Mitigation:\s*Safe RET", re.I)))
#: the first kernel with the SRSO mitigation (v6.5, 2023-08; its default on Zen 1-4 is safe-RET)
SRSO_SINCE = "6.5"
_LSCPU_NAME = re.compile(r"^\s*Model name:\s*(\S.*?)\s*$", re.I | re.M)
_IMPLEMENTER = re.compile(r"^\s*CPU implementer\s*:\s*(0x[0-9a-f]+)\s*$", re.I | re.M)
_PART = re.compile(r"^\s*CPU part\s*:\s*(0x[0-9a-f]+)\s*$", re.I | re.M)


@dataclasses.dataclass(frozen=True)
class CpuMatch:
    """A user's CPU as read (``text``: a model name, ``CPU part 0x41:0xd0c`` or a typed name) and the
    description it matches (None: unknown)."""
    text: str
    description: Description | None
    #: the profile chosen for the run's kernel configuration, and why (:func:`start_profile`)
    start: str | None = None
    start_why: str = ""

    @property
    def profile(self) -> str | None:
        """The shipped profile a fit starts from: the CPU's own measured profile where the corpus has
        one (its data, derived where it has none), else the profile derived from its description."""
        d = self.description
        if d is None:
            return None
        return d.profiles[0] if d.profiles else derived_id(d.name)

    def line(self, default: str) -> str:
        """One line saying which profile the fit starts from and why."""
        if self.description is None:
            return (f"unknown CPU {self.text[:80]!r}: no machine description matches it, so the fit starts from "
                    f"the default {default} (python -m skbmodel profile list-uarch lists the described CPUs)")
        d = self.description
        why = f" ({self.start_why})" if self.start_why else ""
        return (f"CPU {self.text[:80]!r} is {d.uarch} (description {d.name}): the fit starts from "
                f"{self.start or self.profile}{why}")


def cpuinfo_text(text: str) -> str | None:
    """What identifies the CPU in pasted /proc/cpuinfo or lscpu output: the first ``model name``, or
    on arm64 (no model name) ``CPU implementer:CPU part`` (``"0x41:0xd0c"``); None when neither is there."""
    s = str(text or "")
    m = _MODEL_NAME.search(s) or _LSCPU_NAME.search(s) or _CPU_LINE.search(s)
    if m:
        return m.group(1)
    imp, part = _IMPLEMENTER.search(s), _PART.search(s)
    if imp and part:
        return f"{imp.group(1).lower()}:{part.group(1).lower()}"
    return None


def match_cpu(name: str) -> CpuMatch:
    """The description of a CPU named by the user: a description name, a shipped profile measured on or
    derived from a description, a cpuinfo model name, an lscpu name or an arm64 ``implementer:part``."""
    text = " ".join(str(name or "").split())
    key = text.lower()
    part = re.fullmatch(r"(?:cpu part\s*)?(0x[0-9a-f]+):(0x[0-9a-f]+)", key)
    for d in descriptions().values():
        if key in (d.name, derived_id(d.name)) or key in d.profiles:
            return CpuMatch(text, d)
        if part and f"{part.group(1)}:{part.group(2)}" in d.cpu_parts:
            return CpuMatch(f"CPU part {part.group(1)}:{part.group(2)}", d)
    for d in descriptions().values():
        if any(re.search(rx, text, re.I) for rx in d.match):
            return CpuMatch(text, d)
    return CpuMatch(f"CPU part {key}" if part else text, None)


def user_cpu(text: str) -> CpuMatch | None:
    """The CPU of pasted measurements (their cpuinfo/lscpu lines), or None when they name none."""
    found = cpuinfo_text(text)
    return match_cpu(found) if found else None


def named_cpu(text: str) -> CpuMatch | None:
    """The CPU a prose text names (a mail's commit message, a cover letter, a reply): its cpuinfo, lscpu or
    ``CPU:`` line when it has one (:func:`user_cpu`), else the described CPU whose ``match`` pattern occurs first
    in it (a board or SoC name such as "macchiatobin"); None when it names none that a description knows."""
    found = user_cpu(text)
    if found is not None and found.description is not None:
        return found
    s = str(text or "")
    hits = []
    for d in descriptions().values():
        for rx in d.match:
            m = re.search(rx, s, re.I)
            if m:
                hits.append((m.start(), m.group(0), d.name))
    if not hits:
        return found
    _, said, name = min(hits)
    return CpuMatch(said, descriptions()[name])


def boot_setup(texts) -> dict[str, str]:
    """What pasted text says of the kernel it ran: ``{"kernel": "6.13", "return_thunk": ...}``, each key only
    when read.  The SRSO mode comes from a boot option or the vulnerabilities file's line; a text that names
    a kernel since :data:`SRSO_SINCE` and no mode ran the default, ``default-srso`` (safe-RET on Zen 1-4)."""
    text = "\n".join(str(t or "") for t in texts)
    out = {}
    k = _KERNEL_LINE.search(text)
    if k:
        out["kernel"] = k.group(1)
    # the mode the text names first (a notes file of two boots names the one its first run is under first)
    named = sorted((found.start(), m) for m, rx in _SRSO_TEXT for found in [rx.search(text)] if found)
    mode = named[0][1] if named else None
    if mode is None and "kernel" in out and era.version_key(out["kernel"]) >= era.version_key(SRSO_SINCE):
        mode = "default-srso"
    if mode:
        out["return_thunk"] = mode
    return out


def same_machine_profiles(profile_id: str) -> list[str]:
    """The shipped profiles of the machine ``profile_id`` was measured on (itself first): one per kernel
    configuration (the EPYC 9684X's IBPB and safe-RET boots)."""
    try:
        d = measured_on(profile_id)[0] if profile_id in available_profiles() else None
    except UarchError:  # a derived profile: one configuration
        d = None
    if d is None:
        return [profile_id]
    names = [profile_id] + [p for p, (n, _w) in ASSUMED_MEASURED_ON.items() if n == d.name and p != profile_id]
    return [p for p in names if p in available_profiles() and load_profile(p).name.split(" (")[0]
            == load_profile(profile_id).name.split(" (")[0]]


def _by_setup(profile_id: str, setup: dict) -> str:
    """Of the same machine's profiles, the one whose return thunk the run's text names (the stock default on
    an AMD core: safe-RET where a profile has it)."""
    want = setup.get("return_thunk")
    if not want:
        return profile_id
    cands = same_machine_profiles(profile_id)
    thunk = {p: load_profile(p).config.get("return_thunk") for p in cands}
    if want == "default-srso":
        want = "srso-safe-ret" if "srso-safe-ret" in thunk.values() else None
    return next((p for p in cands if want and thunk[p] == want), profile_id)


def start_profile(cpu: str | None, texts=(), default: str = "e5-1650v4",
                  setup: dict | None = None) -> tuple[str, CpuMatch | None]:
    """The shipped profile a fit of the user's measurements starts from, and the CPU match behind it.

    ``cpu``: the CPU as the user names it (wins); otherwise the first cpuinfo/lscpu/``CPU:`` lines in
    ``texts`` (the pasted or uploaded measurements).  Of that CPU's profiles the one of the kernel
    configuration the texts name (:func:`boot_setup`: a stock Zen 4 kernel runs SRSO safe-RET).  No CPU
    named: ``default`` and None; an unknown CPU: ``default`` and its match (:meth:`CpuMatch.line` says so).
    ``setup``: :func:`boot_setup` of the texts, when the caller has it already.
    """
    if cpu is not None and str(cpu).strip():
        m = match_cpu(cpu)
    else:
        m = next((found for found in map(user_cpu, texts) if found is not None), None)
    if m is None:
        return default, None
    if m.profile not in available_profiles():
        return default, m
    setup = boot_setup(texts) if setup is None else setup
    pid = _by_setup(m.profile, setup)
    if pid != m.profile or setup.get("return_thunk"):
        mode = setup.get("return_thunk", "")
        said = ("no SRSO mode named on a kernel since " + SRSO_SINCE + ": the default, safe-RET"
                if mode == "default-srso" else f"the text names {mode}")
        m = dataclasses.replace(m, start=pid, start_why=f"{load_profile(pid).configuration_label}: {said}")
    return pid, m
