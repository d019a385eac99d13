"""Rewrite every reference to the split ``skbmodel.machine.uarch`` to the module that now holds each name.

    python scripts/split_move.py rewrite   # from the repository root; code, tests, scripts, docs, profile sources

``uarch`` became four modules, each one job: the machine descriptions and their reader
(``skbmodel.machine.description``), the user's CPU read from pasted text (``skbmodel.machine.cpuinfo``), the
profiles derived from the descriptions (``skbmodel.evidence.derivation.derive``: it reads the corpus) and the leave one
CPU / instruction set out studies (``skbmodel.evidence.derivation.leave_one_out``).  There is no re-export: a branch
written against ``uarch`` is rewritten by this script after it is merged (``from ..machine import uarch`` and
every ``uarch.NAME`` become imports and references of the module that defines ``NAME``; the dotted
``skbmodel.machine.uarch.NAME`` of docstrings, docs and profile sources likewise).  Afterwards
``ruff check .`` finds the lines made longer; ``scripts/derived_profiles.py --check`` and
``scripts/corpus_profiles.py --check`` confirm the profile sources match what the derivation writes.

``skbmodel.evidence.outofsample`` kept the combined report; each protocol moved to a module of
``skbmodel.evidence.protocols``: ``outofsample.NAME`` of a name that moved (under any alias of the import)
becomes ``protocols.<module>.NAME``, with ``protocols`` imported beside ``outofsample`` (which is dropped
from the import when nothing of it is left), and ``skbmodel.evidence.outofsample.NAME`` likewise.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.wings_move import package_of, relative, resolve  # noqa: E402  (after the path set-up)
#: the modules ``uarch`` was split into, by wing
TARGETS = {"description": "machine", "cpuinfo": "machine", "derive": "evidence", "leave_one_out": "evidence"}
#: names made public by the split (they are shared between two of the new modules)
RENAMED = {"_row_uarch": "row_uarch", "_since_split": "since_split", "_untranslated": "untranslated"}
CODE_DIRS = ("skbmodel", "skbview", "pages", "scripts", "tests", "benchmarks")
TEXT_GLOBS = ("docs/*.md", "README.md", "skbmodel/profiles/*.toml", "skbmodel/data/uarch/*.toml")
_REF = re.compile(r"(?<![\w.])uarch\.([A-Za-z_]\w*)")
_DOTTED = re.compile(r"skbmodel\.machine\.uarch\.([A-Za-z_]\w*)")
_BARE = re.compile(r"skbmodel\.machine\.uarch\b(?!\.\w)")


def _defined(path: Path, imported: bool = True) -> set[str]:
    """Top-level names of a module: its functions, classes and assignments, and (``imported``) its imports."""
    out = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif imported and isinstance(node, ast.ImportFrom):
            out |= {a.asname or a.name for a in node.names}
    return out


def home_of() -> dict[str, str]:
    """``{name: module}`` of every top-level name the four modules define."""
    return {n: mod for mod, wing in TARGETS.items()
            for n in _defined(ROOT / "skbmodel" / wing / f"{mod}.py", imported=False)}


HOME = home_of()


#: names of outofsample made public by the split (shared by several protocols)
OOS_RENAMED = {"_pct": "pct", "_num": "num", "_unit_of": "unit_of", "_curve_dict": "curve_dict"}


OOS_KEPT = _defined(ROOT / "skbmodel" / "evidence" / "outofsample.py")
#: ``{name: protocol module}`` of every name a protocol module defines itself (the first module wins)
OOS_HOME = {}
for _p in sorted((ROOT / "skbmodel" / "evidence" / "protocols").glob("*.py")):
    if _p.stem != "__init__":
        for _n in sorted(_defined(_p) - {"NAME", "TITLE", "run", "format", "add_arguments"}):
            OOS_HOME.setdefault(_n, _p.stem)
OOS_HOME.update({n: "base" for n in ("SIG_FIGS", "pct", "num", "unit_of", "subsystem_of")})
OOS_HOME.update(curve_dict="curves", fit_points="curves", curve_profile="curves")
_OOS_DOTTED = re.compile(r"skbmodel\.evidence\.outofsample\.([A-Za-z_]\w*)")


def _oos_target(name: str) -> str | None:
    """``module.NAME`` under ``protocols`` where a moved outofsample name lives (None: it stayed or is unknown)."""
    new = OOS_RENAMED.get(name, name)
    if name in OOS_KEPT or new not in OOS_HOME:
        return None
    return f"{OOS_HOME[new]}.{new}"


def rewrite_outofsample(src: str, path: Path) -> str:
    """``outofsample.NAME`` (any alias) of a moved name -> ``protocols.<module>.NAME``, imports adjusted."""
    dotted = _OOS_DOTTED.sub(lambda m: f"skbmodel.evidence.protocols.{_oos_target(m.group(1))}"
                             if _oos_target(m.group(1)) else m.group(0), src)
    if path.suffix != ".py" or "outofsample" not in dotted:
        return dotted
    tree = ast.parse(dotted)
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and _import_of(n, path) == "skbmodel.evidence"
             and any(a.name == "outofsample" for a in n.names)]
    if not nodes:
        return dotted
    aliases = {a.asname or a.name for n in nodes for a in n.names if a.name == "outofsample"}
    out = dotted
    for alias in aliases:
        out = re.sub(rf"(?<![\w.]){re.escape(alias)}\.([A-Za-z_]\w*)",
                     lambda m: f"protocols.{_oos_target(m.group(1))}" if _oos_target(m.group(1)) else m.group(0), out)
    if out == dotted:
        return out
    lines = out.split("\n")
    for node in sorted(nodes, key=lambda n: n.lineno, reverse=True):
        still = any(re.search(rf"(?<![\w.]){re.escape(a.asname or a.name)}\.", out) for a in node.names
                    if a.name == "outofsample")
        names = [a.name + (f" as {a.asname}" if a.asname else "") for a in node.names
                 if a.name != "outofsample" or still]
        if "protocols" not in [a.name for a in node.names]:
            names.append("protocols")
        head = lines[node.lineno - 1][: node.col_offset]
        mod = "." * node.level + (node.module or "")
        comment = re.search(r"\s+#.*$", lines[node.end_lineno - 1])
        lines[node.lineno - 1: node.end_lineno] = [f"{head}from {mod} import {', '.join(sorted(names))}"
                                                   + (comment.group(0) if comment else "")]
    return "\n".join(lines)


def _target(name: str) -> tuple[str, str] | None:
    """``(module, name)`` where an old ``uarch`` name lives now (None: not a name of uarch)."""
    new = RENAMED.get(name, name)
    return (HOME[new], new) if new in HOME else None


def _package(path: Path) -> str:
    """The package a file's relative imports start from (``scripts.wings_move.package_of``: run from the root)."""
    return package_of(path)


def _import_of(node: ast.ImportFrom, path: Path) -> str:
    """The absolute package a ``from ... import`` reads."""
    return resolve(node, _package(path))


def _spelled(package: str, path: Path, rel: bool) -> str:
    """``package`` as the file spells its imports: relative inside skbmodel when the file's own import was."""
    return relative(package, _package(path)) if rel else package


def rewrite_code(path: Path) -> bool:
    src = path.read_text(encoding="utf-8")
    moved = rewrite_outofsample(src, path)
    if moved != src:
        path.write_text(moved, encoding="utf-8")
    if "uarch" not in moved:
        return moved != src
    src0, src = src, moved
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
    return out != src0


def rewrite_dotted(text: str) -> str:
    def sub(m):
        t = _target(m.group(1))
        return f"skbmodel.{TARGETS[t[0]]}.{t[0]}.{t[1]}" if t else m.group(0)
    # the module itself, named in prose: the derivation is what a text naming ``uarch`` speaks of
    return _BARE.sub("skbmodel.evidence.derivation.derive", _DOTTED.sub(sub, text))


def rewrite_text(path: Path) -> bool:
    src = path.read_text(encoding="utf-8")
    out = rewrite_outofsample(rewrite_dotted(src), path)
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
