"""Every described CPU has a shipped derived profile: offered in the sidebar, pinned in share links."""
from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from skbmodel import answers
from skbmodel import provenance
from skbmodel.links.pages import BY_SLUG
from skbmodel.machine import custom, description
from skbmodel.evidence.derivation import pp_counts
from skbmodel import model
from skbmodel.links import shortlink
from skbmodel.machine import profile as P
from skbmodel.links import state as sk_state
from tests.cli_util import script_main

ROOT = Path(__file__).resolve().parent.parent

#: made with model 0.2.0 and the derived profiles' first versions; numbers to 9 significant figures
LINKS = {
    "v=2&mv=0.2.0&pv=11089414&b_pv=e016370c&h=2.51267&page=overview&cpu=derived-zen5-turin&b_cpu=e5-1650v4":
        {"path.ns_per_packet": 397.983446615, "headline": 2.51266731947},
    "v=2&mv=0.2.0&pv=77736eb8&b_pv=2bbf4472&h=318.387&page=compare&cpu=derived-neoverse-n1"
    "&b_cpu=derived-granite-rapids":
        {"path.ns_per_packet": 318.386757292, "headline": 318.386757292, "b.path.ns_per_packet": 477.580135937},
}


def _clear():
    P.clear_cache()
    custom.decode_cached.cache_clear()
    answers.clear_caches()


def test_derived_profiles_are_what_the_script_writes():
    r = script_main(str(ROOT / "scripts" / "derived_profiles.py"), "--check")
    assert r.returncode == 0, r.stderr


def test_the_sidebar_offers_every_described_cpu():
    choices = sk_state.PARAMS["cpu"].choices
    for name, d in description.descriptions().items():  # each description's shipped file, as the sidebar lists it
        assert description.derived_id(name) in choices, name
        prof = P.load_profile(description.derived_id(name))
        assert prof.kernels == (pp_counts.LATEST_KERNEL,) * 2 and d.uarch in prof.name
        assert prof.constants["pp_fast_cycles"].source.startswith("derived:")
    assert sk_state.PARAMS["cpu"].default == "e5-1650v4"


@pytest.mark.parametrize("query", list(LINKS))
def test_a_link_to_a_derived_cpu_reproduces_its_numbers(query):
    want = LINKS[query]
    got = provenance.link_numbers(query)
    assert got["path.ns_per_packet"] == pytest.approx(want["path.ns_per_packet"], rel=1e-9)
    assert got["headline"]["value"] == pytest.approx(want["headline"], rel=1e-9)
    if "b.path.ns_per_packet" in want:
        assert got["b.path.ns_per_packet"] == pytest.approx(want["b.path.ns_per_packet"], rel=1e-9)
    st = sk_state.decode_strict(query)
    # the link's numbers are those of the derived profile's version it names, as the model gives them
    # without a link (a re-derivation since then is a new version; the link opens the archived one)
    direct = model.evaluate(sk_state.scenario(st, "a"), P.load_profile(f"{st['cpu']}@{st['pv']}"))
    assert float(direct["path.ns_per_packet"]) == got["path.ns_per_packet"]
    # and the link made now from that state is the same short link, but for the current versions and headline
    # (a re-derivation gives a new profile version; the old one opens archived, as above)
    made = shortlink.shorten(answers.share_query({k: v for k, v in st.items() if k not in sk_state.VERSION_KEYS}))
    has_b = BY_SLUG[st["page"]].has_b  # a page without B links none of B (the old overview link wrote b_cpu)
    want_q = query if has_b else "&".join(kv for kv in query.split("&") if not kv.startswith("b_"))
    assert _unversioned(made) == _unversioned(want_q)
    now = dict(parse_qsl(made))
    assert now["pv"] == P.profile_version(st["cpu"])
    assert now.get("b_pv") == (P.profile_version(st["b_cpu"]) if has_b else None)


def _unversioned(query: str) -> str:
    return "&".join(kv for kv in query.split("&") if kv.split("=")[0] not in ("mv", "pv", "b_pv", "h"))


def test_a_rederived_profile_keeps_the_links_numbers(tmp_path, monkeypatch):
    """A corrected description re-derives a profile (here its clock): the link opens its archived version."""
    shipped = tmp_path / "profiles"
    shipped.mkdir()
    for f in P.PROFILE_DIR.glob("*.toml"):
        shutil.copy(f, shipped)
    f = shipped / "derived-zen5-turin.toml"
    f.write_text(f.read_text().replace("value = 2.4\n", "value = 2.6\n"))
    monkeypatch.setattr(P, "PROFILE_DIR", shipped)
    _clear()
    try:
        query = next(iter(LINKS))
        assert P.profile_version("derived-zen5-turin") != "11089414"
        assert provenance.link_numbers(query)["path.ns_per_packet"] == pytest.approx(LINKS[query]["path.ns_per_packet"],
                                                                            rel=1e-9)
        notice = provenance.link_notice(query, sk_state.decode_strict(query))
        assert notice and notice["profile"] and "derived-zen5-turin version 11089414 (archived)" in notice["text"]
        plain = query.replace("pv=11089414&", "")
        assert provenance.link_numbers(plain)["path.ns_per_packet"] != pytest.approx(LINKS[query]["path.ns_per_packet"],
                                                                             rel=1e-6)
    finally:
        monkeypatch.undo()
        _clear()
