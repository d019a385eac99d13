"""The mutation sample stays runnable: every mutation finds its text once, and nothing is run.

A move or an edit of the model that loses a mutation's text (or makes it ambiguous) fails here, not
months later when somebody runs the sample and it refuses to start.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _sample():
    spec = importlib.util.spec_from_file_location("mutation_sample", ROOT / "scripts" / "mutation_sample.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclass looks its module up there
    spec.loader.exec_module(mod)
    return mod


def test_every_mutation_of_the_sample_applies_exactly_once_to_the_current_tree():
    ms = _sample()
    texts = ms.sources()
    assert len(ms.MUTATIONS) >= 50
    assert ms.check(ms.MUTATIONS, texts) == []
    for m in ms.MUTATIONS:
        (rel,) = ms.where(m, texts)
        mutated = texts[rel].replace(m.old, m.new, 1)
        assert mutated != texts[rel], m.why


def test_a_lost_or_doubled_text_is_reported():
    ms = _sample()
    texts = {"skbmodel/a.py": "x = 1\ny = 2\n", "skbmodel/b.py": "y = 2\n"}
    lost = ms.Mutation("a", "z = 3", "z = 4", ("tests/test_rules.py",), "lost")
    doubled = ms.Mutation("a", "y = 2", "y = 3", ("tests/test_rules.py",), "doubled")
    broken = ms.Mutation("a", "x = 1", "x = (1", ("tests/test_rules.py",), "does not parse")
    moved = ms.Mutation("a", "x = 1", "x = 2", ("tests/test_rules.py",), "found in its new module")
    bad = ms.check([lost, doubled, broken, moved], texts)
    assert [b.split(" ", 1)[0] for b in bad] == ["#0", "#1", "#2"]
    assert "occurs 0 times" in bad[0] and "occurs 2 times" in bad[1] and "does not parse" in bad[2]
    assert ms.where(moved, texts) == ["skbmodel/a.py"]
