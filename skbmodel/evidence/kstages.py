"""Kernel symbols by stage: which stage of a packet path a function runs in.

The map is data (``skbmodel/data/kernel-symbols.toml``): each ``[[stage]]`` names a stage and the model
component whose cost it is; each ``[[symbols]]`` row maps exact names and patterns to a stage, with the kernel
versions the names hold for and the kernel source file that defines them.  :func:`stage_of` answers for one
symbol as ``perf report`` prints it or as a patch names a function; the perf reader (:mod:`.perfprofile`) and
the patch reader use the same answer.

Matching: the compiler's suffixes (``.isra.0``, ``.constprop.0``, ``.part.0``, ``.cold``, ``.llvm.N``) and
perf's `` (inlined)`` are dropped first; an exact name wins over every pattern, and between patterns the longest
one wins (the most literal text).  Two stages tying on one symbol is an error of the data (:func:`ambiguous`).
"""
from __future__ import annotations

import dataclasses
import re
import tomllib
from functools import lru_cache

from .. import folders
from ..schema import COMPONENTS

TABLE = folders.DATA_DIR / "kernel-symbols.toml"

#: what a compiler or perf appends to a function's name: not part of the function
_SUFFIX = re.compile(r"(?:\s*\(inlined\))|(?:\.(?:isra|constprop|part|cold|llvm|lto_priv|localalias)(?:\.\d+)*)+$")


@dataclasses.dataclass(frozen=True)
class Stage:
    id: str
    name: str
    what: str
    component: str      # the model's breakdown component (skbmodel.schema.COMPONENTS) this stage's cost is


@dataclasses.dataclass(frozen=True)
class SymbolRow:
    stage: str
    names: frozenset[str]
    patterns: tuple[re.Pattern, ...]
    kernels: str
    source: str


@dataclasses.dataclass(frozen=True)
class SymbolMap:
    stages: dict[str, Stage]
    rows: tuple[SymbolRow, ...]

    def row_of(self, symbol: str) -> SymbolRow | None:
        """The row that decides ``symbol``'s stage (see the module's matching rules), or ``None``."""
        name = clean(symbol)
        if not name:
            return None
        for row in self.rows:
            if name in row.names:
                return row
        best, best_len = None, -1
        for row in self.rows:
            for p in row.patterns:
                if p.match(name) and len(p.pattern) > best_len:
                    best, best_len = row, len(p.pattern)
        return best


def clean(symbol: str) -> str:
    """A symbol as a function name: without perf's ``[k]``/``[.]`` marker, `` (inlined)`` and the compiler's
    suffixes; an unresolved address (``0xffffffff81a0``) or an empty name gives ``""``."""
    s = symbol.strip()
    if s.startswith(("[k]", "[.]", "[g]", "[u]")):
        s = s[3:].strip()
    s = _SUFFIX.sub("", s).strip()
    if not s or re.fullmatch(r"(?:0x)?[0-9a-fA-F]{6,}", s):
        return ""
    return s


@lru_cache(maxsize=1)
def load() -> SymbolMap:
    """The shipped map, read once."""
    doc = tomllib.loads(TABLE.read_text(encoding="utf-8"))
    stages = {s["id"]: Stage(s["id"], s["name"], s["what"], s["component"]) for s in doc["stage"]}
    bad = {s.id: s.component for s in stages.values() if s.component not in COMPONENTS}
    if bad:
        raise ValueError(f"{TABLE.name}: stage components not in the model's breakdown: {bad}")
    rows = []
    for r in doc["symbols"]:
        if r["stage"] not in stages:
            raise ValueError(f"{TABLE.name}: a [[symbols]] row names the unknown stage {r['stage']!r}")
        rows.append(SymbolRow(r["stage"], frozenset(r.get("names", ())),
                              tuple(re.compile(p) for p in r.get("patterns", ())), r["kernels"], r["source"]))
    return SymbolMap(stages, tuple(rows))


def stage_of(symbol: str) -> str | None:
    """The stage id of a kernel ``symbol`` (a ``perf report`` symbol or a function a patch changes), or
    ``None`` when the map does not place it."""
    row = load().row_of(symbol)
    return row.stage if row else None


def stage_name(stage: str | None) -> str:
    """The stage's display name (``"unmapped"`` for ``None``)."""
    return load().stages[stage].name if stage else "unmapped"


def component_of(stage: str | None) -> str:
    """The model component whose cost ``stage`` is; an unmapped symbol is in the rest of the path."""
    return load().stages[stage].component if stage else "rest of path"


def ambiguous(symbol: str) -> list[str]:
    """The stages whose longest matching patterns tie on ``symbol`` when no exact name decides it: more than
    one is an error of the data."""
    m, name = load(), clean(symbol)
    if not name or any(name in r.names for r in m.rows):
        return []
    hits = [(len(p.pattern), r.stage) for r in m.rows for p in r.patterns if p.match(name)]
    if not hits:
        return []
    top = max(n for n, _ in hits)
    return sorted({s for n, s in hits if n == top})
