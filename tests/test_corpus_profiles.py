"""The CPU profiles built from the public corpus: reproducible from it, and honest about each constant."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from skbmodel import corpus, model, uarch
from skbmodel.profile import PROFILE_DIR, load_profile

ROOT = Path(__file__).resolve().parent.parent
CORPUS_PROFILES = ("i7-4790k", "xeon-gold-6140", "xeon-platinum-8481c", "kunpeng-920")
#: what each corpus profile's own data stop at: the rest is derived from its description (source "derived:"
#: or "(description NAME)") or inherited
DERIVED_FROM = {"i7-4790k": "haswell", "kunpeng-920": "kunpeng-920", "xeon-gold-6140": "skylake-sp",
                "xeon-platinum-8481c": "sapphire-rapids"}


def test_profiles_are_what_the_script_writes_from_the_corpus():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "corpus_profiles.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("pid", CORPUS_PROFILES)
def test_every_own_constant_names_corpus_rows_that_exist(pid):
    df = corpus.load_corpus()
    known = set(df["id"]) | set(df["series"])
    text = (PROFILE_DIR / f"{pid}.toml").read_text()
    prof = load_profile(pid)
    own = re.findall(r"^\[constants\.(\w+)\]", text, re.M)
    assert own and prof.inherits in prof.notes and f"inherited from {prof.inherits}" in prof.notes
    derived = set()
    for name in own:
        c = prof.constants[name]
        if c.source.startswith("derived:") or f"(description {DERIVED_FROM.get(pid)})" in c.source:
            derived.add(name)
            assert c.kind == "assumed" and c.stderr > 0 if c.source.startswith("derived:") else c.kind == "published"
            continue
        assert c.kind in ("fitted", "published"), (name, c.kind)
        if name not in ("l1d_bytes", "l2_bytes"):
            cited = set(re.findall(r"[a-z0-9][a-z0-9.-]+", c.source)) & known
            assert cited, (pid, name, c.source)
        if c.kind == "fitted":
            assert c.stderr > 0
    # what a CPU's own data do not give is derived: the i7's page_pool costs and zeroing (its SLUB and page
    # allocator are its own), every SLUB, zeroing and page-allocator cost of the page_pool-only CPUs
    costs = set(uarch.COST_MODEL) - set(uarch.MEASURES.get(pid, ()))
    zeroing = {k for k in costs if uarch.COST_MODEL[k][0] == "zeroing"}
    assert derived == {"i7-4790k": {"pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles", "l1d_bytes", "l2_bytes",
                                    "l2_miss_cycles", "store_buffer_bytes"} | zeroing,
                       "kunpeng-920": {"ghz", "l1d_bytes", "l2_bytes"} | costs - {"l2_miss_cycles"},
                       "xeon-gold-6140": costs | {"store_buffer_bytes", "l1d_bytes"},
                       }.get(pid, costs | {"store_buffer_bytes"})


def test_i7_profile_reproduces_its_curves():
    """Fitted to two whole curves (28 points, 6 constants): every point within 10 %."""
    df = corpus.load_corpus()
    prof = load_profile("i7-4790k")
    for s in ("slub-i7-4790k-2016-01-kfree-bulk-loop", "slub-i7-4790k-2016-01-kfree-bulk-bulk"):
        g = df[df["series"] == s]
        out = model.evaluate({"bulk": g["x_value"].to_numpy(float)}, prof)[g["output"].iloc[0]]
        assert max(abs(out / g["value"].to_numpy(float) - 1)) < 0.10, s


def test_the_check_tolerates_last_digits_and_catches_a_change():
    import importlib.util
    import tomllib
    spec = importlib.util.spec_from_file_location("corpus_profiles", ROOT / "scripts" / "corpus_profiles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    committed = tomllib.loads((PROFILE_DIR / "i7-4790k.toml").read_text())
    fresh = tomllib.loads((PROFILE_DIR / "i7-4790k.toml").read_text())
    c = fresh["constants"]["slub_fast_pair_cycles"]
    c["value"] += 1e-4  # the 4th decimal of a refit on another numpy/BLAS build
    assert mod.same_profile(committed, fresh)
    c["value"] += 0.01  # a real change of the fit
    assert not mod.same_profile(committed, fresh)
    fresh = tomllib.loads((PROFILE_DIR / "i7-4790k.toml").read_text())
    fresh["constants"]["slub_fast_pair_cycles"]["source"] += " (edited)"
    assert not mod.same_profile(committed, fresh)
