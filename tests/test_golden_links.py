"""Golden share links keep their numbers (tests/data/golden_links.json, scripts/golden_links.py).

* Every golden link evaluates to the numbers recorded for the current model version, to 9 significant
  figures: a change of the model moves far more, while the last digits of a float differ between
  numpy builds (vectorised exp/log) and must not fail a test.
* A recalibration cannot move them: the links carry their profile version and open with the archived
  profile (every shipped profile's current version must be archived; simulated recalibration below).
* A model change must bump the model version and record the new numbers with a reason; the link then
  shows the notice naming both model versions (simulated model bump below).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

import skbmodel
from skbmodel import answers
from skbmodel import provenance
from skbmodel.machine import custom, profile as P
from skbmodel.links import state as sk_state, versions as V

GOLDEN_FILE = Path(__file__).resolve().parent / "data" / "golden_links.json"
GOLDEN = json.loads(GOLDEN_FILE.read_text())
LINKS = GOLDEN["links"]
IDS = [link["name"] for link in LINKS]


def _clear_caches():
    P.clear_cache()
    custom.decode_cached.cache_clear()
    answers.clear_caches()


def golden_problems(data: dict, model_version: str) -> list[str]:
    """Why the golden file does not cover ``model_version`` (empty: it does)."""
    out = []
    reason = data["model_versions"].get(model_version, "")
    if not reason.strip():
        out.append(f"model version {model_version} has no reason in golden_links.json: record why the numbers "
                   f"changed (scripts/golden_links.py --record --reason '...')")
    out += [f"{link['name']}: no numbers recorded for model version {model_version}"
            for link in data["links"] if model_version not in link["expected"]]
    return out


def test_the_golden_file_covers_today_s_model_version():
    assert golden_problems(GOLDEN, skbmodel.__version__) == []


def test_golden_links_cover_every_page_ab_and_a_custom_profile():
    pages = {link["page"] for link in LINKS}
    assert pages == set(sk_state.PAGES)
    assert any("prof=" in link["query"] for link in LINKS)
    assert sum(link["page"] == "compare" for link in LINKS) >= 1
    for link in LINKS:
        keys = [k for k, _ in parse_qsl(link["query"])]
        assert keys[:4] == ["v", "mv", "pv", "b_pv"], keys
        assert ("h" in keys) == (link["page"] in V.HEADLINES)


#: the golden numbers hold to 9 significant figures (not to the last bit of a float)
GOLDEN_REL = 1e-9


def _flat(numbers: dict) -> dict:
    """``{"headline.value": ..., "headline.output": ...}``: one level, for ``pytest.approx``."""
    out = {}
    for k, v in numbers.items():
        if isinstance(v, dict):
            out.update({f"{k}.{kk}": vv for kk, vv in v.items()})
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("link", LINKS, ids=IDS)
def test_golden_link_evaluates_to_its_numbers(link):
    mv = skbmodel.__version__
    assert mv in link["expected"], golden_problems(GOLDEN, mv)
    got = provenance.link_numbers(link["query"])
    assert _flat(got) == pytest.approx(_flat(link["expected"][mv]), rel=GOLDEN_REL, abs=1e-12), (
        f"{link['name']}: the numbers moved under model version {mv} ({got} != {link['expected'][mv]}). If a model "
        f"formula changed, bump the minor version in skbmodel/__init__.py and record the new numbers with "
        f"scripts/golden_links.py --record --reason '...'; a refitted profile cannot move them (archived versions).")


@pytest.mark.parametrize("link", LINKS, ids=IDS)
def test_golden_link_notice_matches_its_versions(link):
    q = link["query"]
    st = sk_state.decode_strict(q)
    lenient, warnings = sk_state.decode(q)
    assert warnings == [] and lenient == st
    notice = provenance.link_notice(q, st)
    made = link["made_with"]
    h = dict(parse_qsl(q)).get("h")
    if h is not None:  # the link's h is the headline of the version it was made with (6 significant digits)
        assert float(h) == float(format(link["expected"][made["mv"]]["headline"]["value"], ".6g"))
    if made["mv"] == skbmodel.__version__:
        assert notice is None or notice["model"] is None, notice
    else:  # the model changed since: the page shows today's numbers and says how far the headline moved
        m = notice["model"]
        assert m["link_version"] == made["mv"] and m["current_version"] == skbmodel.__version__
        assert made["mv"] in notice["text"] and skbmodel.__version__ in notice["text"]
        if h is not None:
            assert m["at_link"] == float(h)
            assert m["now"] == pytest.approx(link["expected"][skbmodel.__version__]["headline"]["value"],
                                             rel=GOLDEN_REL)
    for which, key in (("a", "pv"), ("b", "b_pv")):
        cpu = sk_state.scenario(st, which)["cpu"]
        assert P.is_archived(cpu, made[key]), f"{link['name']}: profile {cpu} version {made[key]} is not archived"


def test_every_shipped_profile_version_is_archived():
    """A recalibration without scripts/archive_profiles.py fails here."""
    for pid in P.available_profiles():  # every shipped profile's version must be archived
        v = P.profile_version(pid)
        assert P.is_archived(pid, v), (f"profile {pid} version {v} is not in {P.ARCHIVE_DIR}: "
                                       f"run scripts/archive_profiles.py")
        assert P.load_profile(f"{pid}@{v}").values() == P.load_profile(pid).values()


def test_archive_files_are_self_contained_and_hash_to_their_names():
    files = sorted(P.ARCHIVE_DIR.glob("*.toml"))
    assert files
    for f in files:
        text = f.read_text()
        assert "\ninherits" not in text, f
        prof = P.load_profile(f.stem)  # refuses values that do not hash to the name
        assert prof.id == f.stem and P.profile_version(prof) == f.stem.split("@")[1]


def test_archive_script_is_idempotent(tmp_path, monkeypatch, capsys):
    import importlib.util
    spec = importlib.util.spec_from_file_location("archive_profiles", Path(__file__).resolve().parents[1]
                                                  / "scripts" / "archive_profiles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(P, "ARCHIVE_DIR", tmp_path)
    assert mod.main(["--check"]) == 1
    assert mod.main([]) == 0
    first = {f.name: f.read_text() for f in tmp_path.iterdir()}
    assert len(first) == len(P.available_profiles())
    assert mod.main([]) == 0 and mod.main(["--check"]) == 0
    assert {f.name: f.read_text() for f in tmp_path.iterdir()} == first
    _clear_caches()


@pytest.fixture
def recalibrated(tmp_path, monkeypatch):
    """Shipped profiles refitted (new values) after today's versions were archived."""
    shipped = tmp_path / "profiles"
    shipped.mkdir()
    for f in P.PROFILE_DIR.glob("*.toml"):
        shutil.copy(f, shipped)
    e5 = shipped / "e5-1650v4.toml"
    # the values of the profiles before and after the 0.2.0 recalibration: a link made with either moves
    text = e5.read_text().replace("value = 109.439", "value = 112.5").replace("value = 891.9927", "value = 870.0")
    e5.write_text(text.replace("value = 108.6265", "value = 112.5").replace("value = 892.0301", "value = 870.0"))
    monkeypatch.setattr(P, "PROFILE_DIR", shipped)  # ARCHIVE_DIR stays the real archive
    _clear_caches()
    yield
    monkeypatch.undo()
    _clear_caches()


def test_recalibration_keeps_every_golden_link_s_numbers(recalibrated):
    assert P.profile_version("e5-1650v4") != LINKS[0]["made_with"]["pv"]
    mv = skbmodel.__version__
    moved = 0
    for link in LINKS:
        assert provenance.link_numbers(link["query"]) == link["expected"][mv], link["name"]
        st = sk_state.decode_strict(link["query"])
        notice = provenance.link_notice(link["query"], st)
        # xeon-platinum-iavf inherits e5-1650v4's SLUB constants: its resolved values, so its version, moved too
        assert P.profile_version(st["cpu"]) != link["made_with"]["pv"]
        # the page says the current profile version gives other numbers
        assert notice and notice["profile"], link["name"]
        # a link made with an older model also names the model change (never silently)
        assert (notice["model"] is None) == (link["made_with"]["mv"] == skbmodel.__version__), link["name"]
        assert "(archived)" in notice["text"] and P.profile_version(st["cpu"]) in notice["text"]
        moved += any(p.get("change_pct") for p in notice["profile"])
    assert moved >= 3
    # the same query without its pv shows the recalibrated numbers (the link would silently change)
    plain = "&".join(f"{k}={v}" for k, v in parse_qsl(LINKS[0]["query"]) if k not in ("pv", "b_pv"))
    assert provenance.link_numbers(plain) != LINKS[0]["expected"][mv]


def test_recalibration_notice_text(recalibrated):
    link = next(lk for lk in LINKS if lk["name"] == "overview-veth-default")
    st = sk_state.decode_strict(link["query"])
    text = provenance.link_notice(link["query"], st)["text"]
    old, new = link["made_with"]["pv"], P.profile_version("e5-1650v4")
    assert text.startswith(f"This link was made with profile e5-1650v4 version {old} (archived); current version "
                           f"{new} gives Throughput (Mpps) = "), text
    assert " instead of 3.769" in text and " %)." in text


def test_a_model_bump_needs_a_recorded_reason_and_shows_the_notice(monkeypatch):
    """Simulated model change: version bumped, one formula scaled.  The golden file no longer covers the
    version (so CI fails until the numbers are recorded with a reason) and each link shows the notice."""
    from skbmodel import model
    new = "0.99.0"
    monkeypatch.setattr(sk_state, "MODEL_VERSION", new)
    monkeypatch.setattr(V, "MODEL_VERSION", new)
    real = model.evaluate

    def changed(*args, **kwargs):  # as every caller calls it (the answer's propagation names its outputs)
        res = dict(real(*args, **kwargs))
        if "path.mpps" in res:
            res["path.mpps"] = res["path.mpps"] * 1.1
        return res
    monkeypatch.setattr(model, "evaluate", changed)
    answers.clear_caches()
    try:
        problems = golden_problems(GOLDEN, new)
        assert problems and "no reason" in problems[0]
        link = next(lk for lk in LINKS if lk["name"] == "overview-veth-default")
        st, w = sk_state.decode(link["query"])
        assert w == [] and st["mv"] == "0.1.0" and st["h"] == 3.76915
        notice = provenance.link_notice(link["query"], st)
        assert notice["model"]["link_version"] == "0.1.0" and notice["model"]["current_version"] == new
        assert notice["model"]["change_pct"] == pytest.approx(10.0, abs=1e-3)
        assert notice["text"].endswith(f"This link was made with model 0.1.0; this is model {new}: Throughput (Mpps) "
                                       f"is 4.146 now, 3.769 when the link was made (+10.0 %).")
        # the link keeps its provenance when re-encoded unchanged (a reload shows the notice again)
        # (parameters added since write their defaults, so compare what the links say, not their text)
        assert sk_state.decode(answers.share_query(st))[0] == st and {"mv": "0.1.0", "h": "3.76915"}.items() <= \
            dict(parse_qsl(answers.share_query(st))).items()
        # a link made with the same version whose headline moved: to its reader, a link cut or edited
        monkeypatch.setattr(sk_state, "MODEL_VERSION", "0.1.0")
        monkeypatch.setattr(V, "MODEL_VERSION", "0.1.0")
        st2, _ = provenance.read_link(link["query"])
        assert "mv" not in st2 and st2["h"] == 3.76915  # this model version, the author's number kept
        assert "appears truncated or edited; the author saw Throughput (Mpps) = 3.769" in \
            provenance.link_notice(link["query"], st2)["text"]
    finally:
        monkeypatch.undo()
        answers.clear_caches()
