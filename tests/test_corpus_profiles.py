"""The CPU profiles built from the public corpus: reproducible from it, and honest about each constant."""
import re
from pathlib import Path

import pytest

from skbmodel.evidence import corpus
from skbmodel import model
from skbmodel.machine import description
from skbmodel.evidence.derivation import opcounts
from skbmodel.machine.profile import PROFILE_DIR, load_profile
from tests.cli_util import skbmodel_cli, script_main

ROOT = Path(__file__).resolve().parent.parent
CORPUS_PROFILES = ("i7-4790k", "xeon-gold-6140", "xeon-platinum-8481c", "kunpeng-920", "epyc-9684x", "epyc-7351")
#: what each corpus profile's own data stop at: the rest is derived from its description (source "derived:"
#: or "(description NAME)") or inherited
DERIVED_FROM = {"i7-4790k": "haswell", "kunpeng-920": "kunpeng-920", "xeon-gold-6140": "skylake-sp",
                "xeon-platinum-8481c": "sapphire-rapids", "epyc-9684x": "zen4-genoa", "epyc-7351": "zen1-naples"}


def test_profiles_are_what_the_script_writes_from_the_corpus():
    r = script_main(str(ROOT / "scripts" / "corpus_profiles.py"), "--check")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("pid", CORPUS_PROFILES)
def test_every_own_constant_names_corpus_rows_that_exist(pid):
    df = corpus.load_corpus()
    known = set(df["id"]) | set(df["series"])
    text = (PROFILE_DIR / f"{pid}.toml").read_text()
    prof = load_profile(pid)
    own = re.findall(r"^\[constants\.(\w+)\]", text, re.M)
    assert own and prof.inherits in prof.notes and (f"inherited from {prof.inherits}" in prof.notes
                                                     or f"carried from {prof.inherits}'s CPU" in prof.notes)
    derived = set()
    for name in own:
        c = prof.constants[name]
        if c.source.startswith("derived:") or f"(description {DERIVED_FROM.get(pid)})" in c.source:
            derived.add(name)
            assert c.kind == "assumed" and c.stderr > 0 if c.source.startswith("derived:") else c.kind == "published"
            continue
        if c.source.startswith(f"carried from {prof.inherits}"):  # the base CPU's cost, converted (test_clocks)
            assert c.kind == "assumed" and c.stderr > 0
            continue
        assert c.kind in ("fitted", "published"), (name, c.kind)
        if name not in ("l1d_bytes", "l2_bytes"):
            cited = set(re.findall(r"[a-z0-9][a-z0-9.-]+", c.source)) & known
            assert cited, (pid, name, c.source)
        if c.kind == "fitted":
            assert c.stderr > 0
    # what a CPU's own data do not give is derived: the i7's page_pool costs and zeroing (its SLUB and page
    # allocator are its own), every SLUB, zeroing and page-allocator cost of the page_pool-only CPUs
    costs = set(opcounts.COST_MODEL) - set(opcounts.MEASURES.get(pid, ()))
    zeroing = {k for k in costs if opcounts.COST_MODEL[k][0] == "zeroing"}
    assert derived == {"i7-4790k": {"pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles", "l1d_bytes", "l2_bytes",
                                    "l2_miss_cycles", "store_buffer_bytes"} | zeroing,
                       "kunpeng-920": {"ghz", "l1d_bytes", "l2_bytes"} | costs - {"l2_miss_cycles"},
                       "xeon-gold-6140": costs | {"store_buffer_bytes", "l1d_bytes"},
                       "epyc-9684x": costs | {"store_buffer_bytes", "l1d_bytes", "l2_bytes"},
                       "epyc-7351": costs | {"pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles",
                                             "store_buffer_bytes", "l1d_bytes", "l2_bytes"},
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


EPYC_RUN = "pp-epyc9684x-2025-02-v613-ibpb"


def test_epyc_9684x_own_constants_are_its_v613_ibpb_rows_and_the_rest_is_derived():
    """The EPYC 9684X: clock and page_pool costs from the v6.13 ibpb tasklet run, the single-page
    allocator from the same boot's time_bench_sample loop; SLUB, zeroing and the rest of the page allocator
    derived from zen4-genoa; the return thunk it was measured under stated; no DMA-fix or safe-RET row used."""
    df = corpus.load_corpus().set_index("id")
    prof = load_profile("epyc-9684x")
    own = {"pp_fast_cycles": "tasklet-fast", "pp_ring_cycles": "tasklet-ring", "page_slow_cycles": "tasklet-slow",
           "page_single_cycles": "sample-page-alloc-put"}
    assert (prof.value("pp_fast_cycles"), prof.value("pp_ring_cycles"), prof.value("page_slow_cycles"),
            prof.value("page_single_cycles")) == (9, 26, 78, 116)
    for name, suffix in own.items():
        c = prof.constants[name]
        assert c.value == df.loc[f"{EPYC_RUN}-{suffix}", "value"] and c.kind == "published"
        assert f"corpus row {EPYC_RUN}-{suffix}" in c.source and c.stderr > 0
    assert prof.ghz == df.loc[f"{EPYC_RUN}-tasklet-fast", "ghz"] == 2.546
    assert prof.kernels == ("6.13", "6.13") and prof.inherits == "e5-1650v4"
    text = (PROFILE_DIR / "epyc-9684x.toml").read_text()
    assert "dmafix" not in text and "-srso-" not in text
    listed = set(re.findall(r"^\[constants\.(\w+)\]", text, re.M))
    for name in listed - set(own) - {"ghz", "l1d_bytes", "l2_bytes", "store_buffer_bytes"}:
        c = prof.constants[name]
        assert c.source.startswith(("derived:", "carried from ")) and c.kind == "assumed" and c.stderr > 0, name
    assert {"page_bulk_page_cycles", "page_bulk_call_cycles", "page_buddy_extra_cycles"} <= listed
    assert prof.config["return_thunk"] == "srso-ibpb" and prof.config["machine"] == "bare metal"
    assert "epyc-9684x" in description.load("zen4-genoa").profiles
    assert opcounts.MEASURES["epyc-9684x"] == {"page_single_cycles": "6.13"}


def test_epyc_9684x_evaluates_from_the_cli():
    import json
    r = skbmodel_cli("eval", "cpu=epyc-9684x", "--json", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "epyc-9684x" in r.stdout and doc


ZEN1_ROWS = {"stos_setup_cycles": ("zero-epyc7351-2020-const-256", "stos_line_cycles"),
             "erms_setup_cycles": ("zero-epyc7351-2020-erms-256", "erms_line_cycles")}


def test_epyc_7351_start_ups_are_its_rows_less_four_derived_lines():
    """The EPYC 7351: two memsets of 256 B (104 cycles inline rep stosq, 108 the out-of-line memset, rep stosq
    on Zen 1) fix start-up + 4 lines each, not the split: the per-line cost is derived, each start-up what
    its row leaves, and the profile reproduces both rows to the rows' own precision."""
    df = corpus.load_corpus().set_index("id")
    prof = load_profile("epyc-7351")
    assert prof.ghz == df.loc["zero-epyc7351-2020-const-256", "ghz"] == 2.394
    assert prof.kernels == ("5.8", "5.8") and prof.inherits == "e5-1650v4"
    for setup, (rid, line) in ZEN1_ROWS.items():
        c, ln = prof.constants[setup], prof.constants[line]
        assert c.kind == "published" and f"corpus row {rid}" in c.source and c.stderr > 0
        assert ln.source.startswith("derived:") and ln.kind == "assumed" and ln.stderr > 0
        assert c.value == pytest.approx(df.loc[rid, "value"] - 4 * ln.value, abs=1e-3)
    assert (df.loc["zero-epyc7351-2020-const-256", "value"],
            df.loc["zero-epyc7351-2020-erms-256", "value"]) == (104, 108)
    out = model.evaluate({"zero_bytes": 256.0}, prof)
    assert float(out["zero.memset_cycles"]) == pytest.approx(104, abs=1e-2)
    assert float(out["zero.erms_cycles"]) == pytest.approx(108, abs=1e-2)
    # setup = row - 4 line: the two are anti-correlated, so the 256 B prediction keeps the row's precision
    corr = prof.correlation(["stos_setup_cycles", "stos_line_cycles"])[0, 1]
    sd256 = (prof.stderr("stos_setup_cycles") ** 2 + 16 * prof.stderr("stos_line_cycles") ** 2
             + 8 * corr * prof.stderr("stos_setup_cycles") * prof.stderr("stos_line_cycles")) ** 0.5
    assert sd256 == pytest.approx(float((0.29 ** 2 + 1.04 ** 2) ** 0.5), rel=1e-2)
    listed = set(re.findall(r"^\[constants\.(\w+)\]", (PROFILE_DIR / "epyc-7351.toml").read_text(), re.M))
    for name in listed - set(ZEN1_ROWS) - {"ghz", "l1d_bytes", "l2_bytes", "store_buffer_bytes"}:
        c = prof.constants[name]
        assert c.source.startswith(("derived:", "carried from ")) and c.kind == "assumed" and c.stderr > 0, name
    assert description.load("zen1-naples").profiles == ("epyc-7351",)
    assert opcounts.MEASURES["epyc-7351"] == {"stos_setup_cycles": "5.8", "erms_setup_cycles": "5.8"}


def test_epyc_7351_evaluates_from_the_cli():
    import json
    r = skbmodel_cli("eval", "cpu=epyc-7351", "--json", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "epyc-7351" in r.stdout and json.loads(r.stdout)
