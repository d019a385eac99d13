"""Custom profile in the share link (key ``prof``): compact, strict, round trip through state/model/CLI."""
from __future__ import annotations

from urllib.parse import parse_qs

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skbmodel.machine import custom
from skbmodel import model
from skbmodel.links import state as sk_state
from skbmodel.scenario import Scenario
from skbmodel.machine.profile import load_profile

E5 = load_profile("e5-1650v4")
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def fitted():
    return custom.build(E5, {"slub_fast_pair_cycles": 121.25, "ghz": 3.1}, "lab-A",
                        sources={"slub_fast_pair_cycles": "fitted from: lab.txt, line 3"})


def test_link_text_is_compact_and_round_trips():
    p = fitted()
    text = custom.encode_profile(p)
    assert text == "1~e5-1650v4~ghz:3.1,slub_fast_pair_cycles:121.25~lab-A"
    q = custom.decode_profile(text)
    assert q.id == p.id and q.values() == p.values() and q.inherits == "e5-1650v4" and q.name == "lab-A"


def test_state_encode_decode_carry_the_profile_and_model_uses_it():
    p = fitted()
    s, w = sk_state.decode("bulk=32&prof=" + custom.encode_profile(p))
    assert w == [] and s["prof"] == custom.encode_profile(p) and s["cpu"] == "e5-1650v4" and s["ghz"] == 3.1
    q = sk_state.encode(s)
    assert "prof=1~e5-1650v4~ghz:3.1,slub_fast_pair_cycles:121.25~lab-A" in q
    s2, w2 = sk_state.decode(q)
    assert w2 == [] and s2 == s
    assert sk_state.profile_for(s2).values() == p.values()
    out = Scenario.from_params(sk_state.scenario(s2)).evaluate()
    with pytest.raises(ValueError, match="custom profile"):  # the model never prices a custom profile's base
        model.evaluate(sk_state.scenario(s2))
    assert float(out["slub.loop_cycles"]) == pytest.approx(float(model.evaluate({"bulk": 32}, p)["slub.loop_cycles"]))
    assert sk_state.decode_strict(q) == s


def test_links_without_prof_are_unchanged():
    s, _ = sk_state.decode("bulk=8")
    assert "prof" not in s and "prof" not in sk_state.encode(s)
    assert sk_state.profile_for(s).id == "e5-1650v4"


@pytest.mark.parametrize("bad,needle", [
    ("2~e5-1650v4~ghz:3", "format version"),
    ("1~nope~ghz:3", "base profile"),
    ("1~e5-1650v4~__import__:1", "is not a constant"),
    ("1~e5-1650v4~ghz:nan", "not a plain"),
    ("1~e5-1650v4~ghz:1e400", "not a finite number"),
    ("1~e5-1650v4~ghz:99", "outside the allowed range"),
    ("1~e5-1650v4~slub_fast_pair_cycles:5", "outside the allowed range"),
    ("1~e5-1650v4~ghz:3,ghz:3", "more than once"),
    ("1~e5-1650v4~ghz", "expected name:value"),
    ("1~e5-1650v4~ghz:3~bad label!", "label"),
    ("x" * 5000, "limit"),
    ("1~e5-1650v4", "expected '1~<base profile>"),
])
def test_bad_profile_text_is_refused_with_a_named_reason(bad, needle):
    with pytest.raises(custom.ProfileLinkError, match=None) as ei:
        custom.decode_profile(bad)
    assert needle in str(ei.value)
    s, w = sk_state.decode({"prof": bad, "bulk": "8"})
    assert "prof" not in s and s["bulk"] == 8 and s["cpu"] == "e5-1650v4"
    assert len(w) == 1 and w[0].startswith("prof: custom profile ignored")
    with pytest.raises(sk_state.StateError, match="^prof: custom profile"):
        sk_state.decode_strict({"prof": bad})


def test_cpu_conflicting_with_the_profile_base_is_reported():
    text = custom.encode_profile(fitted())
    s, w = sk_state.decode({"cpu": "xeon-platinum-iavf", "prof": text})
    assert s["cpu"] == "e5-1650v4" and any(x.startswith("cpu: xeon-platinum-iavf replaced by e5-1650v4") for x in w)
    with pytest.raises(sk_state.StateError, match="^cpu:"):
        sk_state.decode_strict({"cpu": "xeon-platinum-iavf", "prof": text})


def test_b_scenario_can_carry_its_own_profile():
    text = custom.encode_profile(fitted())
    s, w = sk_state.decode({"b_prof": text})
    assert w == [] and "prof" not in s and s["b_prof"] == text and sk_state.scenario(s, "b")["ghz"] == 3.1
    assert sk_state.profile_for(s, "b").id == fitted().id and sk_state.profile_for(s, "a").id == "e5-1650v4"
    assert parse_qs(sk_state.encode(s))["b_prof"] == [text]


def test_toml_download_upload_round_trip_keeps_sources():
    p = fitted()
    text = custom.profile_toml(p)
    assert 'inherits = "e5-1650v4"' in text and "[constants.stos_setup_cycles]" not in text
    q = custom.load_profile_text(text.encode(), "lab.toml")
    assert q.id == p.id and q.values() == p.values()
    assert q.constants["slub_fast_pair_cycles"].source == "fitted from: lab.txt, line 3"


@pytest.mark.parametrize("data,needle", [
    (b"", "empty"), (b"\x00\x00", "binary"), (b"\xff\xfe", "UTF-8"), (b"x = [", "not valid TOML"),
    (b'format_version = 1\nid = "a"\nname = "b"\ninherits = "nope"\n', "not a shipped profile"),
    (b'format_version = 1\nid = "a"\nname = "b"\ninherits = "e5-1650v4"\n[constants.ghz]\nvalue = 40.0\n'
     b'unit = "GHz"\nkind = "fitted"\nsource = "x"\n', "outside the allowed range"),
])
def test_bad_profile_files_are_refused(data, needle):
    with pytest.raises(custom.ProfileLinkError) as ei:
        custom.load_profile_text(data, "up.toml")
    assert needle in str(ei.value)


_NAMES = sorted(k for k, c in E5.constants.items() if c.bounds)


@st.composite
def _links(draw):
    """Link texts of the profile grammar (``1~<base>~<name>:<value>,...~<label>``), mostly in bounds, with a
    piece that may be wrong: random characters alone almost never make a valid profile, and both branches
    of the fuzz test below must run."""
    pairs = []
    for k in draw(st.lists(st.sampled_from(_NAMES), max_size=4, unique=True)):
        lo, hi = E5.constants[k].bounds
        pairs.append(f"{k}:{lo + draw(st.floats(0, 1)) * (hi - lo):g}")
    parts = ["1", "e5-1650v4", ",".join(pairs), draw(st.from_regex(r"[a-z0-9 -]{0,12}", fullmatch=True))]
    if draw(st.booleans()):  # one piece wrong
        parts[draw(st.integers(0, 3))] = draw(st.sampled_from(["2", "nope", "ghz:1e999", "x:1", "", "~"]))
    return "~".join(parts)


@FUZZ
@given(st.one_of(st.text(max_size=300), _links()))
def test_fuzz_decode_never_crashes(text):
    try:
        p = custom.decode_profile(text)
    except custom.ProfileLinkError:
        return
    assert p.inherits in ("e5-1650v4", "xeon-platinum-iavf")
    s, _ = sk_state.decode({"prof": text})
    assert sk_state.profile_for(s).values() == p.values()


@FUZZ
@given(st.dictionaries(st.sampled_from(sorted(k for k, c in E5.constants.items() if c.bounds)),
                       st.floats(0, 1), max_size=6))
def test_fuzz_any_in_bounds_values_round_trip(fracs):
    changes = {k: E5.constants[k].bounds[0] + f * (E5.constants[k].bounds[1] - E5.constants[k].bounds[0])
               for k, f in fracs.items()}
    p = custom.build(E5, changes, "fz")
    q = custom.decode_profile(custom.encode_profile(p))
    assert q.values() == p.values() and q.id == p.id
