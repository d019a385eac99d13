"""Move skbmodel's flat modules into the wings physics/, machine/, links/, evidence/ and rewrite every import
and every reference to them (code, tests, docs), with no re-export left behind.

    python scripts/wings_move.py move      # git mv into the wings, then rewrite (once, on a clean tree)
    python scripts/wings_move.py rewrite   # rewrite only: a branch written for the flat layout, merged after

Checked on a scratch worktree of main: every module imports and ruff finds only lines made longer by the
longer module names.  Afterwards: tests/test_layers.py names the wings, scripts/mutation_sample.py's FILES
follow, the E501 lines are wrapped by hand.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

WINGS = {
    "physics": ["slub", "zeroing", "page_pool", "page_alloc", "cpumap", "veth", "kfree_skb_list", "napi_cache",
                "budget", "noise", "rest", "units"],
    "machine": ["profile", "custom", "kconfig", "era", "uarch"],
    "links": ["state", "shortlink", "versions", "pages"],
    "evidence": ["corpus", "observations", "validation", "era_validation", "calibration", "userfit", "userinput",
                 "abruns", "outofsample", "parsers"],
}
DOCS = {
    "physics": "The kernel's subsystems, one module each: what a packet's memory lifecycle costs, from a profile's "
               "constants (arrays in, arrays out).",
    "machine": "The machine a scenario runs on: CPU profiles (shipped, derived, custom), their kernel "
               "configuration and era, and the micro-architectures the derivation reads.",
    "links": "The scenario's address: the URL codec, short links, versions of model and profiles, the page "
             "registry the links name.",
    "evidence": "What the model is checked against: the seed and public measurements, their parsers, the fit, "
                "and the validation protocols (in-sample and out-of-sample).",
}
WING_OF = {m: w for w, ms in WINGS.items() for m in ms}
ROOT = Path.cwd()
PKG = ROOT / "skbmodel"


def module_of(path: Path) -> str:
    """Dotted module name of a file under the repo root (``skbmodel.physics.slub``)."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def package_of(path: Path) -> str:
    mod = module_of(path)
    return mod if path.name == "__init__.py" else mod.rpartition(".")[0]


def new_name(dotted: str) -> str:
    """Where a flat-layout module lives now: ``skbmodel.physics.slub`` -> ``skbmodel.physics.slub``."""
    parts = dotted.split(".")
    if len(parts) >= 2 and parts[0] == "skbmodel" and parts[1] in WING_OF:
        return ".".join(["skbmodel", WING_OF[parts[1]], *parts[1:]])
    return dotted


def resolve(node: ast.ImportFrom, pkg: str) -> str:
    if not node.level:
        return node.module or ""
    base = pkg.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def relative(target: str, pkg: str) -> str:
    """``target`` (absolute, in skbmodel) as a relative module from package ``pkg``."""
    t, p = target.split("."), pkg.split(".")
    common = 0
    while common < min(len(t), len(p)) and t[common] == p[common]:
        common += 1
    ups = len(p) - common
    return "." * (ups + 1) + ".".join(t[common:])


def _path_of(mod: str) -> Path | None:
    p = ROOT.joinpath(*mod.split("."))
    if p.with_suffix(".py").is_file():
        return p.with_suffix(".py")
    if (p / "__init__.py").is_file():
        return p / "__init__.py"
    return None


def _valid(base: str, names: list[str]) -> bool:
    """Whether ``from base import names`` imports something that exists in the tree as it is now."""
    f = _path_of(base)
    if f is None:
        return False
    if f.name != "__init__.py":
        return True
    defined = set()
    for node in ast.parse(f.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return all(_path_of(f"{base}.{n}") is not None or n in defined for n in names)


def _flat_pkg(pkg: str) -> str:
    parts = pkg.split(".")
    if len(parts) >= 2 and parts[0] == "skbmodel" and parts[1] in WINGS:
        return ".".join([parts[0], *parts[2:]])
    return pkg


def rewrite_imports(path: Path) -> bool:
    """Rewrite the ImportFrom statements of one file to the wings (a statement that already imports what
    exists is kept; one written for the flat layout is resolved against the file's flat package)."""
    src = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return False
    pkg = package_of(path)
    lines = src.split("\n")
    edits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        names = [a.name for a in node.names]
        base = resolve(node, pkg)
        if not (base == "skbmodel" or base.startswith("skbmodel.")):
            continue
        flat_names_moved = base == "skbmodel" and any(n in WING_OF for n in names)
        if _valid(base, names) and not flat_names_moved:
            continue
        if not _valid(base, names) and node.level:
            base = resolve(node, FLAT_PKG.get(path, _flat_pkg(pkg)))
        groups: dict[str, list[str]] = {}
        for a in node.names:
            text = a.name + (f" as {a.asname}" if a.asname else "")
            if base == "skbmodel" and a.name in WING_OF:
                target = f"skbmodel.{WING_OF[a.name]}"
            else:
                target = new_name(base)
            groups.setdefault(target, []).append(text)
        out = []
        for target, grp in groups.items():
            mod = relative(target, pkg) if node.level else target
            out.append(f"from {mod} import {', '.join(grp)}")
        first, last = node.lineno - 1, node.end_lineno - 1
        comment = ""
        for ln in lines[first:last + 1]:  # a noqa on any line of the statement applies to all of it
            m = re.search(r"(#.*)$", ln)
            if m:
                comment = "  " + m.group(1)
                break
        indent = re.match(r"\s*", lines[first]).group(0)
        new = []
        for o in out:  # each statement keeps the line's comment (a noqa applies to each)
            stmt = _wrap([indent + o], indent)
            if comment and len(stmt) > 1:  # ruff reads a wrapped statement's noqa on its first line
                stmt[0] += comment
            elif comment:
                stmt[-1] += comment
            new += stmt
        if new != lines[first:last + 1]:
            edits.append((first, last, new))
    if not edits:
        return False
    for first, last, new in sorted(edits, reverse=True):
        lines[first:last + 1] = new
    path.write_text("\n".join(lines), encoding="utf-8")
    return True


def _wrap(stmts: list[str], indent: str, width: int = 110) -> list[str]:
    out = []
    for s in stmts:
        if len(s) <= width:
            out.append(s)
            continue
        head, _, names = s.partition(" import ")
        parts = names.split(", ")
        cur = f"{head} import ("
        lines = []
        for p in parts:
            if len(cur) + len(p) + 2 > width:
                lines.append(cur.rstrip())
                cur = indent + "    "
            cur += p + ", "
        lines.append(cur.rstrip(", ") + ")")
        out += lines
    return out


TEXT_RE = re.compile(r"\bskbmodel([./])(" + "|".join(sorted(WING_OF, key=len, reverse=True)) + r")\b")


def rewrite_text(path: Path) -> bool:
    src = path.read_text(encoding="utf-8")

    def sub(m):
        return f"skbmodel{m.group(1)}{WING_OF[m.group(2)]}{m.group(1)}{m.group(2)}"
    new = TEXT_RE.sub(sub, src)
    if new != src:
        path.write_text(new, encoding="utf-8")
        return True
    return False


FLAT_PKG: dict[Path, str] = {}


def files(exts=(".py",)) -> list[Path]:
    out = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / f for f in out if f.endswith(exts) and (ROOT / f).is_file()]


def move() -> None:
    for wing, mods in WINGS.items():
        (PKG / wing).mkdir(exist_ok=True)
        init = PKG / wing / "__init__.py"
        init.write_text(f'"""{DOCS[wing]}"""\n', encoding="utf-8")
        subprocess.run(["git", "add", str(init)], check=True)
        for m in mods:
            src = PKG / (m + ".py") if (PKG / (m + ".py")).exists() else PKG / m
            dst = PKG / wing / src.name
            subprocess.run(["git", "mv", str(src), str(dst)], check=True)
            if dst.is_dir():
                for f in dst.rglob("*.py"):
                    FLAT_PKG[f] = package_of(f).replace(f"skbmodel.{wing}.", "skbmodel.", 1)
            else:
                FLAT_PKG[dst] = "skbmodel"


def rewrite() -> None:
    for f in files((".py",)):
        rewrite_imports(f)
    for f in files((".py", ".md", ".toml", ".sh", ".cfg", ".ini", ".txt", ".json", ".yml", ".yaml")):
        if "data/" in str(f.relative_to(ROOT)) and f.suffix == ".json":
            continue
        rewrite_text(f)


if __name__ == "__main__":
    if sys.argv[1] == "move":
        move()
    rewrite()
