"""Move or rename skbmodel modules and rewrite every import of and reference to them, with no re-export left.

    python scripts/module_move.py move derivation   # git mv the modules of MOVES["derivation"], then rewrite
    python scripts/module_move.py rewrite composer  # rewrite only: a branch written before the move, merged after

A move is a table ``{old dotted name: new dotted name}`` (:data:`MOVES`).  ``rewrite`` resolves every
``from X import Y`` of every tracked ``.py`` file against the file's package before the move (a moved
module's relative imports were written for its old folder), maps a moved module to its new name and writes
the import again, relative where it was relative.  Where a module's own name changes (a rename, not only a
new folder), the name it is bound to follows, and so does every ``old.NAME`` of a file that imported it
(``NAME``: a top-level name the module defines).  Text (docstrings, docs, profile sources, the tests' data):
the dotted ``skbmodel.old`` and the path ``skbmodel/old.py``; where the name changes also ``old.NAME``
(between backticks or in code) and ``old.py`` after ``skbmodel/``.  Archived profiles keep their text
(they are records), and so does this script's table.  Afterwards ``ruff check .`` finds the lines made longer.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.wings_move import relative, resolve  # noqa: E402  (after the path set-up)

MOVES: dict[str, dict[str, str]] = {
    # the derivation of a profile from a machine description, its counted and carried halves and its study
    "derivation": {f"skbmodel.evidence.{m}": f"skbmodel.evidence.derivation.{m}"
                   for m in ("derive", "pp_counts", "opcounts", "carry", "leave_one_out")},
    # the module that puts a path's stages together is named for that job
    "composer": {"skbmodel.design": "skbmodel.composer"},
}
PACKAGE_DOCS = {
    "skbmodel.evidence.derivation": "A CPU profile derived from its machine description and the measured CPUs' "
                                    "data: the counted and carried halves, and how well it predicts a CPU it "
                                    "never saw.",
}
TEXT_SUFFIXES = (".py", ".md", ".toml", ".json", ".sh", ".txt")


def _file_of(mod: str) -> Path:
    return ROOT.joinpath(*mod.split(".")).with_suffix(".py")


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _tracked(suffixes=(".py",)) -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / f for f in out if f.endswith(suffixes) and (ROOT / f).is_file()]


def _defined(path: Path) -> set[str]:
    """Top-level names a module defines (functions, classes, assignments) and imports."""
    out = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            out |= {a.asname or a.name for a in node.names}
    return out


def move(moves: dict[str, str]) -> None:
    for old, new in moves.items():
        dst = _file_of(new)
        if not dst.parent.is_dir():
            dst.parent.mkdir(parents=True)
            pkg = _module_of(dst.parent / "__init__.py")
            (dst.parent / "__init__.py").write_text(f'"""{PACKAGE_DOCS[pkg]}"""\n', encoding="utf-8")
            subprocess.run(["git", "add", str(dst.parent / "__init__.py")], cwd=ROOT, check=True)
        subprocess.run(["git", "mv", str(_file_of(old)), str(dst)], cwd=ROOT, check=True)


def _rewrite_imports(path: Path, moves: dict[str, str], renamed: dict[str, set[str]]) -> None:
    """The file's ImportFrom statements to the moved modules; ``old.NAME`` of a renamed module bound to its
    old name becomes ``new.NAME``."""
    src = path.read_text(encoding="utf-8")
    tree = ast.parse(src)
    mod = _module_of(path)
    back = {v: k for k, v in moves.items()}
    is_pkg = path.name == "__init__.py"
    pkg_now = mod if is_pkg else mod.rpartition(".")[0]
    was = back.get(mod, mod)
    pkg_was = was if is_pkg else was.rpartition(".")[0]
    lines = src.split("\n")
    edits, rebound = [], {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = resolve(node, pkg_was)
        groups: dict[str, list[str]] = {}
        for a in node.names:
            full = f"{base}.{a.name}"
            if full in moves:  # from pkg import module
                target, name = moves[full].rpartition(".")[::2]
                if a.asname is None and name != a.name:
                    rebound[a.name] = name
            else:
                target, name = moves.get(base, base), a.name
            groups.setdefault(target, []).append(name + (f" as {a.asname}" if a.asname else ""))
        out = [f"from {relative(t, pkg_now) if node.level else t} import {', '.join(g)}" for t, g in groups.items()]
        first, last = node.lineno - 1, node.end_lineno - 1
        old_text = "\n".join(lines[first:last + 1])
        if len(out) == 1 and resolve(node, pkg_now) == next(iter(groups)) and all(
                f"{base}.{a.name}" not in moves for a in node.names):
            continue  # unchanged: same module, same names
        indent = re.match(r"\s*", lines[first]).group(0)
        comment = re.search(r"(  #.*)$", old_text.split("\n")[0])
        new = [indent + o for o in out]
        if comment:
            new[0] += comment.group(1)
        edits.append((first, last, new))
    for first, last, new in sorted(edits, reverse=True):
        lines[first:last + 1] = new
    text = "\n".join(lines)
    for old_name, new_name in rebound.items():
        names = renamed[old_name]
        text = re.sub(rf"(?<![\w.]){old_name}\.({'|'.join(sorted(names, key=len, reverse=True))})\b",
                      rf"{new_name}.\1", text)
    if text != src:
        path.write_text(text, encoding="utf-8")


def _rewrite_text(path: Path, moves: dict[str, str], renamed: dict[str, set[str]], short: dict[str, str]) -> None:
    src = path.read_text(encoding="utf-8")
    text = src
    for old, new in sorted(moves.items(), key=lambda kv: -len(kv[0])):
        text = re.sub(rf"\b{re.escape(old)}\b", new, text)
        text = text.replace(old.replace(".", "/") + ".py", new.replace(".", "/") + ".py")
        rel_old, rel_new = (m.partition(".")[2].replace(".", "/") + ".py" for m in (old, new))
        if "/" in rel_old:  # a wing's module named by its path inside the package (``evidence/derivation/carry.py``)
            text = re.sub(rf"(?<![\w/]){re.escape(rel_old)}", rel_new, text)
    for old_name, names in renamed.items():  # `old.NAME` of a renamed module, in prose and docstrings
        if names:
            text = re.sub(rf"(?<![\w./]){old_name}\.({'|'.join(sorted(names, key=len, reverse=True))})\b",
                          rf"{short[old_name]}.\1", text)
    if text != src:
        path.write_text(text, encoding="utf-8")


def rewrite(moves: dict[str, str]) -> None:
    renamed = {o.rpartition(".")[2]: _defined(_file_of(n)) for o, n in moves.items()
               if o.rpartition(".")[2] != n.rpartition(".")[2]}
    short = {o.rpartition(".")[2]: n.rpartition(".")[2] for o, n in moves.items()}
    for f in _tracked((".py",)):
        _rewrite_imports(f, moves, renamed)
    for f in _tracked(TEXT_SUFFIXES):
        if "profiles/archive/" not in f.as_posix() and f != Path(__file__).resolve():  # records; this table
            _rewrite_text(f, moves, renamed, short)


if __name__ == "__main__":
    what, which = sys.argv[1], sys.argv[2]
    if what == "move":
        move(MOVES[which])
    rewrite(MOVES[which])
