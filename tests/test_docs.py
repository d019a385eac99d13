"""Documentation stays true: the generated constants tables, links between the docs, no issue numbers."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from tests.cli_util import script_main

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "constants_table.py"


def _script():
    spec = importlib.util.spec_from_file_location("constants_table", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_constants_table_in_model_doc_is_up_to_date():
    r = script_main(SCRIPT, "--check")
    assert r.returncode == 0, r.stderr


def test_constants_check_fails_on_a_stale_table_and_the_script_repairs_it(tmp_path, monkeypatch, capsys):
    mod = _script()
    doc = tmp_path / "model.md"
    good = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    stale = good.replace("| `ghz` | 3.6 |", "| `ghz` | 3.7 |", 1)
    assert stale != good
    doc.write_text(stale, encoding="utf-8")
    monkeypatch.setattr(mod, "DOC", doc)
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    assert mod.main(["--check"]) == 1
    assert mod.main([]) == 0
    assert doc.read_text(encoding="utf-8") == good
    assert mod.main(["--check"]) == 0


def test_every_constant_of_every_profile_is_in_the_table():
    from skbmodel.machine.profile import available_profiles, load_profile

    text = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    block = text.split("<!-- constants:begin -->")[1].split("<!-- constants:end -->")[0]
    for pid in available_profiles():  # the table lists every shipped profile
        section = block.split(f"#### `{pid}`")[1].split("#### ")[0]
        for name in load_profile(pid).constants:
            assert f"| `{name}` |" in section, (pid, name)


def test_links_and_paths_in_the_docs_exist():
    for doc in ("README.md", "docs/model.md", "docs/benchmarks.md", "docs/development.md", "docs/deploy.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)\)", text):
            if "://" not in target:
                assert (ROOT / doc).parent.joinpath(target).resolve().exists(), (doc, target)
        for path in re.findall(r"\b((?:scripts|benchmarks)/[\w.-]+\.(?:py|sh))\b", text):
            assert (ROOT / path).is_file(), (doc, path)


ISSUE_REF = re.compile(r"(?i)\bissues? #\d+|\(#\d+\)|[\w-]+/[\w-]+#\d+")


def test_no_issue_numbers_in_code_or_docs():
    found = []
    for path in [*ROOT.glob("*.md"), *ROOT.glob("*.py"), *ROOT.glob("*.toml")]:
        found += [f"{path.name}: {m.group(0)}" for m in ISSUE_REF.finditer(path.read_text(encoding="utf-8"))]
    for folder in ("skbmodel", "skbview", "pages", "tests", "benchmarks", "scripts", "docs", "deploy"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".md", ".toml", ".sh"}:
                text = path.read_text(encoding="utf-8")
                found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in ISSUE_REF.finditer(text)]
    assert not found, "say why in words instead of citing an issue number: " + "; ".join(found)


def test_the_patch_table_is_up_to_date():
    r = script_main(ROOT / "scripts" / "patch_validation.py", "--check")
    assert r.returncode == 0, r.stderr
