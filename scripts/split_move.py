"""Rewrite every reference to the split ``skbmodel.machine.uarch`` to the module that now holds each name.

    python scripts/split_move.py rewrite   # code, tests, scripts, docs and shipped profile sources; idempotent

``uarch`` became four modules, each one job: the machine descriptions and their reader
(``skbmodel.machine.description``), the user's CPU read from pasted text (``skbmodel.machine.cpuinfo``), the
profiles derived from the descriptions (``skbmodel.evidence.derive``: it reads the corpus) and the leave one
CPU / instruction set out studies (``skbmodel.evidence.leave_one_out``).  There is no re-export: a branch
written against ``uarch`` is rewritten by this script after it is merged (``from ..machine import uarch`` and
every ``uarch.NAME`` become imports and references of the module that defines ``NAME``; the dotted
``skbmodel.machine.uarch.NAME`` of docstrings, docs and profile sources likewise).  Afterwards
``ruff check .`` finds the lines made longer; ``scripts/derived_profiles.py --check`` and
``scripts/corpus_profiles.py --check`` confirm the profile sources match what the derivation writes.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the modules ``uarch`` was split into, by wing
TARGETS = {"description": "machine", "cpuinfo": "machine", "derive": "evidence", "leave_one_out": "evidence"}
#: names made public by the split (they are shared between two of the new modules)
RENAMED = {"_row_uarch": "row_uarch", "_since_split": "since_split", "_untranslated": "untranslated"}
CODE_DIRS = ("skbmodel", "skbview", "pages", "scripts", "tests", "benchmarks")
TEXT_GLOBS = ("docs/*.md", "README.md", "skbmodel/profiles/*.toml", "skbmodel/data/uarch/*.toml")
_REF = re.compile(r"(?<![\w.])uarch\.([A-Za-z_]\w*)")
_DOTTED = re.compile(r"skbmodel\.machine\.uarch\.([A-Za-z_]\w*)")
_BARE = re.compile(r"skbmodel\.machine\.uarch\b(?!\.\w)")


def home_of() -> dict[str, str]:
    """``{name: module}`` of every top-level name the four modules define."""
    out = {}
    for mod, wing in TARGETS.items():
        tree = ast.parse((ROOT / "skbmodel" / wing / f"{mod}.py").read_text(encoding="utf-8"))
        for node in tree.body:
            names = []
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            out.update(dict.fromkeys(names, mod))
    return out


HOME = home_of()


def _target(name: str) -> tuple[str, str] | None:
    """``(module, name)`` where an old ``uarch`` name lives now (None: not a name of uarch)."""
    new = RENAMED.get(name, name)
    return (HOME[new], new) if new in HOME else None


def _package(path: Path) -> list[str]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return parts if parts[-1] == "__init__" else parts[:-1]


def _import_of(node: ast.ImportFrom, path: Path) -> str:
    """The absolute package a ``from ... import`` reads."""
    if not node.level:
        return node.module or ""
    base = _package(path)
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _spelled(package: str, path: Path, relative: bool) -> str:
    """``package`` as the file spells its imports: relative inside skbmodel when the file's own import was."""
    if not relative:
        return package
    here, there = _package(path), package.split(".")
    common = 0
    while common < min(len(here), len(there)) and here[common] == there[common]:
        common += 1
    return "." * (len(here) - common + 1) + ".".join(there[common:])


def rewrite_code(path: Path) -> bool:
    src = path.read_text(encoding="utf-8")
    if "uarch" not in src:
        return False
    tree = ast.parse(src)
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
               and _import_of(n, path) == "skbmodel.machine" and any(a.name == "uarch" for a in n.names)]
    used = {}
    for name in _REF.findall(src):
        t = _target(name)
        if t:
            used[t[0]] = True
    lines = src.split("\n")
    for node in sorted(imports, key=lambda n: n.lineno, reverse=True):
        indent = lines[node.lineno - 1][: node.col_offset]
        rel = bool(node.level)
        keep = [a.name + (f" as {a.asname}" if a.asname else "") for a in node.names if a.name != "uarch"]
        machine = sorted(keep + [m for m in used if TARGETS[m] == "machine"])
        evidence = sorted(m for m in used if TARGETS[m] == "evidence")
        new = []
        if machine:
            new.append(f"{indent}from {_spelled('skbmodel.machine', path, rel)} import {', '.join(machine)}")
        if evidence:
            new.append(f"{indent}from {_spelled('skbmodel.evidence', path, rel)} import {', '.join(evidence)}")
        comment = re.search(r"\s+#.*$", lines[node.end_lineno - 1])
        if comment:  # a noqa or a reason for the import's place holds for each line it becomes
            new = [line + comment.group(0) for line in new]
        lines[node.lineno - 1: node.end_lineno] = new
    out = "\n".join(lines)
    out = _REF.sub(lambda m: "{}.{}".format(*_target(m.group(1))) if _target(m.group(1)) else m.group(0), out)
    out = rewrite_dotted(out)
    if out != src:
        path.write_text(out, encoding="utf-8")
        return True
    return False


def rewrite_dotted(text: str) -> str:
    def sub(m):
        t = _target(m.group(1))
        return f"skbmodel.{TARGETS[t[0]]}.{t[0]}.{t[1]}" if t else m.group(0)
    # the module itself, named in prose: the derivation is what a text naming ``uarch`` speaks of
    return _BARE.sub("skbmodel.evidence.derive", _DOTTED.sub(sub, text))


def rewrite_text(path: Path) -> bool:
    src = path.read_text(encoding="utf-8")
    out = rewrite_dotted(src)
    out = _REF.sub(lambda m: "{}.{}".format(*_target(m.group(1))) if _target(m.group(1)) else m.group(0), out)
    if out != src:
        path.write_text(out, encoding="utf-8")
        return True
    return False


def main(argv: list[str]) -> int:
    if argv[1:] != ["rewrite"]:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    changed = []
    for d in CODE_DIRS:
        for p in sorted((ROOT / d).rglob("*.py")):
            if p.resolve() != Path(__file__).resolve() and rewrite_code(p):
                changed.append(p)
    for p in [ROOT / "dashboard.py"]:
        if p.is_file() and rewrite_code(p):
            changed.append(p)
    for g in TEXT_GLOBS:
        for p in sorted(ROOT.glob(g)):
            if rewrite_text(p):
                changed.append(p)
    for p in changed:
        print(p.relative_to(ROOT))
    left = [f"{p.relative_to(ROOT)}:{i}" for d in CODE_DIRS for p in (ROOT / d).rglob("*.py")
            if p.resolve() != Path(__file__).resolve()
            for i, line in enumerate(p.read_text(encoding="utf-8").split("\n"), 1)
            if re.search(r"\bmachine\.uarch\b|import uarch\b|, uarch\b(?!=)", line)]
    if left:
        print("still naming uarch (rewrite by hand):", *left, sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
