"""Short share links (v=2, skbmodel.links.shortlink): length goals, same numbers as the long form, and the
defaults they leave out recorded per model version."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import skbmodel
from skbmodel import answers
from skbmodel import provenance
from skbmodel import cli, params
from skbmodel.machine import custom
from skbmodel.links import shortlink, state as sk_state
from skbmodel.machine import profile as P
from skbmodel.links.pages import BY_SLUG

BASE = "http://localhost:8501/"
GOLDEN = json.loads((Path(__file__).parent / "data" / "golden_links.json").read_text())
README_DESIGN = "page=design&path=design&d_from=cpumap&d_skb=napi_cache&d_free=napi_cache&b_path=cpumap"


def _link(capsys, query: str, *extra: str) -> tuple[int, str, str]:
    rc = cli.main(["link", query, *extra])
    out, err = capsys.readouterr()
    return rc, out.strip(), err


def _short(state: dict) -> str:
    return shortlink.shorten(answers.share_query(state))


# --------------------------------------------------------------------------- length goals
def test_default_view_link_is_at_most_120_characters(capsys):
    rc, link, err = _link(capsys, BASE + "overview?" + sk_state.encode(sk_state.defaults()))
    assert rc == 0 and err == ""
    assert link == f"{BASE}overview?v=2&mv={skbmodel.__version__}&pv={P.profile_version('e5-1650v4')}&h=3.769" \
                   "&page=overview"
    assert len(link) <= 120


def test_three_changed_parameters_at_most_200_characters(capsys):
    rc, link, _ = _link(capsys, "page=veth&bulk=32&zero=memset&xdp_batch=8", "--base", BASE + "veth")
    assert rc == 0
    q = dict(parse_qsl(link.split("?", 1)[1]))
    assert {k: q[k] for k in ("bulk", "zero", "xdp_batch")} == {"bulk": "32", "zero": "memset", "xdp_batch": "8"}
    assert len(link) <= 200, (len(link), link)


def test_readme_design_example_at_most_250_characters(capsys):
    rc, link, _ = _link(capsys, README_DESIGN, "--base", BASE + "design")
    assert rc == 0
    assert len(link) <= 250, (len(link), link)
    long_state, _ = sk_state.decode(README_DESIGN)
    assert sk_state.decode(link.split("?", 1)[1]) == (long_state, [])


# --------------------------------------------------------------------------- same numbers
@pytest.mark.parametrize("link", GOLDEN["links"], ids=[g["name"] for g in GOLDEN["links"]])
def test_golden_links_short_form_has_the_same_state_and_numbers(link, capsys):
    rc, short, err = _link(capsys, link["query"])
    assert rc == 0 and err == ""
    assert short.startswith("v=2&") and len(short) < len(link["query"]) / 2
    assert _view(sk_state.decode(short)[0]) == _view(sk_state.decode(link["query"])[0])
    assert sk_state.decode(short)[1] == []
    assert _view(sk_state.decode_strict(short)) == _view(sk_state.decode_strict(link["query"]))
    assert provenance.link_numbers(short) == link["expected"][skbmodel.__version__]  # exact


def _view(state: dict) -> tuple:
    """What a link's page shows: A (and the view), and B only on a page that has one (a page without B
    writes none of it, where a full v=1 link wrote B's every key)."""
    a = {k: v for k, v in state.items() if not k.startswith(sk_state.B_PREFIX)}
    return a, (sk_state.scenario(state, "b") if BY_SLUG[state["page"]].has_b else None)


def test_a_long_link_is_read_unchanged():
    q = "v=1&bulk=32&zero=memset"
    assert shortlink.expand(q) is q
    assert shortlink.expand({"bulk": ["3"]}) == {"bulk": ["3"]}
    assert shortlink.shorten("v=2&mv=0.2.0&bulk=3") == "v=2&mv=0.2.0&bulk=3"


_CHANGES = {
    "bulk": hs.integers(1, 256), "zero": hs.sampled_from(("memset", "gfp_zero")),
    "ghz": hs.sampled_from((2.0, 3.6, 3.65, 4.0)), "pp_recycle": hs.sampled_from((0.0, 0.35, 1.0)),
    "path": hs.sampled_from(params.PATHS + ("design",)), "d_from": hs.sampled_from(("veth", "cpumap")),
    "d_skb": hs.sampled_from(("from", "napi_cache")), "cpu": hs.sampled_from(tuple(P.available_profiles())),
    "noise_ns": hs.sampled_from((0.1, 2.0, 7.25)),
}


@hs.composite
def _states(draw):
    st = sk_state.defaults()
    st["page"] = draw(hs.sampled_from(sk_state.PAGES))
    for pre in ("", sk_state.B_PREFIX):
        for k in draw(hs.sets(hs.sampled_from(sorted(_CHANGES)), max_size=4)):
            st[pre + k] = draw(_CHANGES[k])
            if k == "cpu" and draw(hs.booleans()):
                st[pre + "ghz"] = P.load_profile(st[pre + k]).ghz
    return st


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_states())
def test_any_state_survives_shortening(st):
    long_q = sk_state.encode(st)
    short = shortlink.shorten(long_q)
    assert sk_state.decode(short) == sk_state.decode(long_q)
    assert len(short) < len(long_q)


def test_b_with_its_own_profile_and_a_custom_profile_for_a():
    prof = custom.encode_profile(P.load_profile("i7-4790k").with_values({"slub_fast_pair_cycles": 50.0}))
    for q in (f"prof={prof}&bulk=8", f"prof={prof}&b_cpu=e5-1650v4", f"b_prof={prof}&b_bulk=4",
              "cpu=i7-4790k&b_cpu=e5-1650v4&b_ghz=3.0", f"prof={prof}&b_prof={prof}&b_ghz=4.1"):
        st, w = sk_state.decode(q + "&page=compare")
        assert w == []
        short = _short(st)
        assert sk_state.decode(short) == (st, []), (q, short)


def test_archived_profile_version_gives_the_clock_of_that_version(tmp_path, monkeypatch):
    for f in P.ARCHIVE_DIR.glob("*.toml"):
        shutil.copy(f, tmp_path)
    old = P.load_profile("e5-1650v4").with_values({"ghz": 3.2, "veth_base_cycles": 850.0})
    ver = P.profile_version(old)
    (tmp_path / f"e5-1650v4@{ver}.toml").write_text(P.archive_toml(old))
    monkeypatch.setattr(P, "ARCHIVE_DIR", tmp_path)
    P.clear_cache()
    answers.clear_caches()
    try:
        q = f"v=2&mv={skbmodel.__version__}&pv={ver}&page=veth"
        st, w = sk_state.decode(q)
        assert w == [] and st["pv"] == ver and st["ghz"] == 3.2
        # B is A: on A's profile in A's version, at its clock
        assert sk_state.scenario(st, "b")["ghz"] == 3.2 and "b_pv" not in st
        assert P.profile_version(sk_state.profile_for(st, "b")) == ver
        assert "ghz" not in dict(parse_qsl(_short(st)))
        assert sk_state.decode(_short(st)) == (st, [])
    finally:
        P.clear_cache()
        answers.clear_caches()


# --------------------------------------------------------------------------- defaults per model version
def test_today_s_defaults_are_recorded_for_today_s_model_version():
    table = shortlink.recorded_defaults()
    assert skbmodel.__version__ in table, (
        "skbmodel/data/link-defaults.json has no entry for this model version: add one (a copy of "
        "shortlink.current_defaults()); short links of earlier versions keep theirs")
    recorded, now = table[skbmodel.__version__], shortlink.current_defaults()
    changed = sorted(k for k in recorded.keys() & now.keys() if recorded[k] != now[k])
    assert not changed, (
        f"a default changed ({', '.join(changed)}): bump the model version and record the new defaults under it "
        "in skbmodel/data/link-defaults.json (never change a value an entry records: old short links mean it)")
    assert recorded.keys() == now.keys(), (
        "a parameter was added or removed: add its key with its default to this version's entry of "
        "skbmodel/data/link-defaults.json (older links take a key's first recorded default), or drop the removed "
        f"one: {sorted(recorded.keys() ^ now.keys())}")


def test_a_later_default_change_keeps_the_meaning_of_old_short_links(monkeypatch):
    table = {"0.2.0": {**shortlink.current_defaults()}, "0.3.0": {**shortlink.current_defaults(), "bulk": "32"}}
    monkeypatch.setattr(shortlink, "recorded_defaults", lambda: table)
    old, _ = sk_state.decode("v=2&mv=0.2.0&page=slub")
    new, _ = sk_state.decode("v=2&mv=0.3.0&page=slub")
    assert old["bulk"] == 16 and new["bulk"] == 32
    assert sk_state.scenario(old, "b")["bulk"] == 16 and sk_state.scenario(new,
                                                                           "b")["bulk"] == 32 and "b_bulk" not in new
    assert shortlink.defaults_for("0.2.5")["bulk"] == "16" and shortlink.defaults_for("1.0.0")["bulk"] == "32"
    assert shortlink.defaults_for("0.0.1")["bulk"] == "16"  # older than every entry: the first one


# --------------------------------------------------------------------------- bad input
def test_a_link_that_cannot_be_shortened_gets_the_warnings_it_gets_when_opened(capsys):
    bad = "v=2&bulk=999&foo=1&zero=nope&xdp_batch=8"
    _, warnings = sk_state.decode(bad)
    rc, short, err = _link(capsys, bad)
    assert rc == 1
    assert err.splitlines() == [f"warning: {w}" for w in warnings] and len(warnings) == 3
    assert sk_state.decode(short) == (sk_state.decode(bad)[0], [])  # the link of the view that opens
    _, long_warnings = sk_state.decode("v=1&bulk=999&foo=1&zero=nope&xdp_batch=8")
    assert warnings == long_warnings  # a short link's problems read like a long link's


def test_short_link_strict_decode_names_the_key():
    with pytest.raises(sk_state.StateError) as ei:
        sk_state.decode_strict("v=2&bulk=0")
    assert ei.value.key == "bulk"


def test_short_form_of_fuzzed_links_names_every_bad_parameter():
    """The fuzzer's links read as short links (v=2): every bad key is still named, nothing raises, and the
    short link of what opens opens without a warning."""
    from tests.fuzz_inputs import fuzz_query, named_in

    for seed in range(400):
        q = fuzz_query(seed)
        pairs = [("v", "2")] + [(k, v) for k, v in q.pairs if k.strip() != "v"]
        mapping: dict[str, list[str]] = {}
        for k, v in pairs:
            mapping.setdefault(k, []).append(v)
        state, warnings = sk_state.decode(mapping)
        if warnings and warnings[0].startswith("link ignored"):  # too long: dropped whole, as in the long form
            assert state == sk_state.defaults()
            continue
        missing = [k for k in q.bad - {"v"} if not named_in(k, warnings)]
        assert not missing, (seed, missing, warnings)
        back, w = sk_state.decode(_short(state))
        assert w == [] and _view(back) == _view(state), seed
