"""Property tests of the share-link codec (skbmodel.links.state): round trip, never-raise, named warnings."""
from __future__ import annotations

import math
from urllib.parse import parse_qsl, quote, urlencode

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import skbmodel
from skbmodel import answers
from skbmodel import provenance
from skbmodel.links import state as sk_state
from skbmodel.links import versions as VERSIONS
from skbmodel.links.pages import BY_SLUG
from tests.cli_util import skbmodel_cli

#: 100 random states a property: each state holds every parameter at once, so a draw tries all of them
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- strategies
def _value(p: sk_state.Param):
    if p.kind == "choice":
        return st.sampled_from(p.choices)
    if p.kind == "int":
        return st.integers(int(p.lo), int(p.hi))
    return st.floats(p.lo, p.hi, allow_nan=False, allow_infinity=False)


A_KEYS = [k for k in sk_state.PARAMS if not k.startswith(sk_state.B_PREFIX)]
B_KEYS = [k for k in sk_state.PARAMS if k.startswith(sk_state.B_PREFIX)]


@st.composite
def valid_states(draw):
    """Any valid state: every key of A and the view typed and in range, and B as a random set of overrides
    (the codec's form: an override equal to A's value is none)."""
    s = {k: draw(_value(sk_state.PARAMS[k])) for k in A_KEYS}
    for k in draw(st.lists(st.sampled_from(B_KEYS), unique=True, max_size=8)):
        s[k] = draw(_value(sk_state.PARAMS[k]))
    return sk_state.normalised(s)


def _in_range(p: sk_state.Param, v) -> bool:
    if p.kind == "choice":
        return v in p.choices
    if p.kind == "int":
        return type(v) is int and p.lo <= v <= p.hi
    return type(v) is float and math.isfinite(v) and p.lo <= v <= p.hi


# custom-profile keys: present only when a link carries one; version keys: only an archived profile
# version (pv, b_pv) or a link's provenance (mv, h) that differs from today's
_OPTIONAL = set(getattr(sk_state, "PROFILE_KEYS", ())) | set(sk_state.VERSION_KEYS)


def _assert_valid_state(s: dict):
    assert set(A_KEYS) <= set(s) <= set(sk_state.PARAMS) | _OPTIONAL, set(s) ^ set(A_KEYS)
    for k, p in sk_state.PARAMS.items():
        if k in s:
            assert _in_range(p, s[k]), (k, s[k])
    assert sk_state.normalised(s) == s, "a b_ key equal to A's value is no override"


def _bad_value(p: sk_state.Param):
    """A raw value that decode must reject or clamp (and warn about)."""
    garbage = st.sampled_from(["", "abc", "nan", "inf", "-inf", "1e999", "0x10", "[1]", "None", "'; DROP",
                               "\x00", "é", "x" * 300])
    if p.kind == "choice":
        return garbage.filter(lambda s: s.strip() not in p.choices) | st.text(max_size=20).filter(
            lambda s: s.strip() not in p.choices)
    out_of_range = st.one_of(
        st.floats(max_value=p.lo, exclude_max=True, allow_nan=False, allow_infinity=False,
                  min_value=-1e12).map(repr),
        st.floats(min_value=p.hi, exclude_min=True, allow_nan=False, allow_infinity=False,
                  max_value=1e12).map(repr),
    )
    extra = [garbage, out_of_range]
    if p.kind == "int" and p.hi - p.lo >= 1:
        extra.append(st.integers(int(p.lo), int(p.hi) - 1).map(lambda i: f"{i}.5"))
    return st.one_of(*extra)


# ---------------------------------------------------------------- round trip
@SETTINGS
@given(valid_states())
@example({**sk_state.defaults(), "clone_frac": 0.15000000000000002, "ghz": 3.1234567, "b_link_gbps": 123.456789})
@example({**sk_state.defaults(), "b_cpu": "epyc-9684x"})
def test_round_trip_any_valid_state(s):
    q = sk_state.encode(s)
    back, warnings = sk_state.decode(q)
    assert warnings == []
    assert back == s
    assert sk_state.decode_strict(q) == s
    # the link is a deterministic function of the state
    assert sk_state.encode(back) == q


@SETTINGS
@given(valid_states())
def test_encode_carries_every_parameter_and_version_first(s):
    pairs = parse_qsl(answers.share_query(s), keep_blank_values=True)
    assert pairs[0] == ("v", str(sk_state.FORMAT_VERSION))
    keys = [k for k, _ in pairs]
    # then the versions (the validation page has no headline output, so no h)
    shown = s if BY_SLUG[s["page"]].has_b else sk_state.without_b(s)  # a page without B writes none of it
    # b_pv only for a B on a profile of its own
    want = [k for k in sk_state.VERSION_KEYS if (k != "h" or s["page"] in VERSIONS.HEADLINES)
            and (k != "b_pv" or sk_state.own_profile(shown))]
    nv = len(want)
    assert keys[1:1 + nv] == want
    # every parameter; the question grid's only on its page or when not at its default, the open chart tab
    # only when it is not the page's first
    assert keys[1 + nv:] == [k for k in sk_state.PARAMS if k in shown and (
        (k not in sk_state.GRID_KEYS or s["page"] == "grid") and k != "chart" or s[k] != sk_state.PARAMS[k].default)]
    assert len(keys) == len(set(keys))
    got = dict(pairs)
    assert got["mv"] == skbmodel.__version__
    assert got["pv"] == sk_state._profile.profile_version(s["cpu"])
    assert got.get("b_pv") == (sk_state._profile.profile_version(s["b_cpu"]) if sk_state.own_profile(shown) else None)


@SETTINGS
@given(valid_states())
def test_round_trip_through_streamlit_style_mapping(s):
    """st.query_params gives {key: str}; the mapping-of-lists form (get_all) must decode the same."""
    pairs = parse_qsl(sk_state.encode(s))
    assert sk_state.decode({k: v for k, v in pairs}) == (s, [])
    assert sk_state.decode({k: [v] for k, v in pairs}) == (s, [])


@SETTINGS
@given(valid_states(), st.sampled_from([k for k in sk_state.PARAMS if k not in ("ghz", "b_ghz")]))
def test_partial_links_keep_given_keys_and_default_the_rest(s, key):
    value = s.get(key, sk_state.defaults().get(key, sk_state.PARAMS[key].default))
    back, warnings = sk_state.decode(urlencode({key: sk_state.fmt_value(value)}))
    assert warnings == []
    d = sk_state.defaults()
    if key.startswith(sk_state.B_PREFIX):  # B: A (the defaults) plus this override, unless it equals A's value
        assert sk_state.scenario(back, "b")[key[len(sk_state.B_PREFIX):]] == value
        assert (key in back) == (value != d[key[len(sk_state.B_PREFIX):]])
    else:
        assert back[key] == value
    for k in A_KEYS:
        if k != key and k != "ghz":
            assert back[k] == d[k], k


def test_defaults_round_trip_and_ghz_follows_cpu():
    d = sk_state.defaults()
    assert sk_state.decode(sk_state.encode(d)) == (d, [])
    assert sk_state.decode("") == (d, [])
    for cpu in sk_state.PARAMS["cpu"].choices:
        s, w = sk_state.decode(f"cpu={cpu}&b_cpu={cpu}")
        assert w == []
        ghz = sk_state._profile.load_profile(cpu).ghz
        assert s["ghz"] == ghz and sk_state.scenario(s, "b")["ghz"] == ghz and "b_cpu" not in s  # B on A's CPU is A's
        # an explicit clock wins over the profile's, in either order
        s2, w2 = sk_state.decode(f"ghz=2.5&cpu={cpu}")
        assert w2 == [] and s2["ghz"] == 2.5 and s2["cpu"] == cpu
        assert sk_state.decode_strict(f"ghz=2.5&cpu={cpu}")["ghz"] == 2.5


def test_b_scenario_independent_of_a():
    s, w = sk_state.decode("bulk=64&b_bulk=4&b_zero=memset&page=compare")
    assert w == []
    assert (s["bulk"], s["b_bulk"], s["b_zero"], s["zero"], s["page"]) == (64, 4, "memset", "gfp_zero", "compare")
    assert sk_state.scenario(s, "a")["bulk"] == 64 and sk_state.scenario(s, "b")["bulk"] == 4
    assert sk_state.scenario(s, "b")["zero"] == "memset"


# ---------------------------------------------------------------- never raises
_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=400)
_query_like = st.lists(
    st.tuples(st.sampled_from(list(sk_state.PARAMS) + ["v", "b_", "B_BULK", "page ", " bulk", "x",
                                                       ""]) | st.text(max_size=12),
              st.text(max_size=24)),
    max_size=30,
).map(lambda kv: "&".join(f"{quote(k)}={quote(v)}" for k, v in kv))


@SETTINGS
@given(st.one_of(_text, _query_like, st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
                 st.sampled_from(["?", "&&&", "=", "==", "%", "%zz", "%00", "a=%ff%fe", "bulk=1&bulk=2",
                                  "?" * 20_000, "bulk=" + "9" * 20_000, "v=2", "v=", ";;;", "\n\r\t",
                                  "page=../../etc/passwd", "__import__('os')=1", "cpu=__init__"])))
def test_any_query_string_decodes_without_exception(q):
    s, warnings = sk_state.decode(q)
    _assert_valid_state(s)
    assert all(isinstance(w, str) and w for w in warnings)
    # whatever came in, the decoded state is valid: re-encoding it gives a clean link
    assert sk_state.decode(sk_state.encode(s)) == (s, [])


@SETTINGS
@given(st.dictionaries(st.text(max_size=10) | st.sampled_from(list(sk_state.PARAMS)),
                       st.text(max_size=20) | st.lists(st.text(max_size=8), max_size=3) | st.integers()
                       | st.floats() | st.none(),
                       max_size=20))
def test_any_mapping_decodes_without_exception(m):
    s, warnings = sk_state.decode(m)
    _assert_valid_state(s)


@pytest.mark.parametrize("q", [None, 0, 1.5, b"bulk=3", object(), ["bulk=3"], ("a", "b")])
def test_non_string_inputs_do_not_raise(q):
    s, _ = sk_state.decode(q)
    _assert_valid_state(s)


# ---------------------------------------------------------------- warnings name each bad key
@st.composite
def state_with_bad_parts(draw):
    s = draw(valid_states())
    bad_keys = draw(st.lists(st.sampled_from(list(sk_state.PARAMS)), min_size=1, max_size=5, unique=True))
    bad = {k: draw(_bad_value(sk_state.PARAMS[k])) for k in bad_keys}
    unknown = draw(st.lists(st.from_regex(r"[a-z_]{1,12}", fullmatch=True).filter(
        lambda k: k not in sk_state.PARAMS and k != "v"), max_size=3, unique=True))
    return s, bad, unknown


def _named(key: str, warnings: list[str]) -> bool:
    return any(w.startswith(key + ":") or w.startswith(repr(key) + ":") for w in warnings)


@SETTINGS
@given(state_with_bad_parts())
def test_every_bad_or_unknown_key_is_named_and_good_keys_survive(case):
    s, bad, unknown = case
    pairs = [(k, sk_state.fmt_value(v)) for k, v in s.items() if k not in bad]
    pairs += list(bad.items()) + [(k, "1") for k in unknown]
    got, warnings = sk_state.decode(urlencode(pairs))
    _assert_valid_state(got)
    for k in list(bad) + unknown:
        assert _named(k, warnings), (k, warnings)
    assert len(warnings) == len(bad) + len(unknown), warnings
    b = sk_state.scenario(got, "b")
    for k, v in s.items():
        if k not in bad and not (k in ("ghz", "b_ghz") and k.replace("ghz", "cpu") in bad):
            # a good key survives: A's as given; B's as B's value (an override equal to A's is no key)
            assert (b[k.removeprefix(sk_state.B_PREFIX)] if k.startswith(sk_state.B_PREFIX) else got[k]) == v, k
    for k, raw in bad.items():
        p = sk_state.PARAMS[k]
        value = b[k.removeprefix(sk_state.B_PREFIX)] if k.startswith(sk_state.B_PREFIX) else got[k]
        if p.kind == "choice":
            assert value in p.choices
        else:
            assert p.lo <= value <= p.hi


@SETTINGS
@given(state_with_bad_parts())
def test_decode_strict_error_names_a_bad_key(case):
    s, bad, unknown = case
    pairs = [(k, sk_state.fmt_value(v)) for k, v in s.items() if k not in bad]
    pairs += list(bad.items()) + [(k, "1") for k in unknown]
    with pytest.raises(sk_state.StateError) as ei:
        sk_state.decode_strict(urlencode(pairs))
    err = ei.value
    assert err.key in set(bad) | set(unknown)
    assert str(err).startswith(err.key + ":")
    assert "\n" not in str(err)


@pytest.mark.parametrize("q,key,clamped_to", [
    ("bulk=0", "bulk", 1), ("bulk=100000", "bulk", 256), ("clone_frac=-1", "clone_frac", 0.0),
    ("b_frame_bytes=10", "b_frame_bytes", 64), ("ghz=99", "ghz", 6.0), ("bulk=16.5", "bulk", 16),
])
def test_clamped_values_are_named(q, key, clamped_to):
    s, w = sk_state.decode(q)
    which = "b" if key.startswith(sk_state.B_PREFIX) else "a"
    assert sk_state.scenario(s, which)[key.removeprefix(sk_state.B_PREFIX)] == clamped_to
    assert len(w) == 1 and w[0].startswith(key + ":"), w


def test_repeated_key_first_wins_and_is_named():
    s, w = sk_state.decode("bulk=8&bulk=32")
    assert s["bulk"] == 8
    assert len(w) == 1 and "bulk" in w[0] and "repeated" in w[0]
    with pytest.raises(sk_state.StateError) as ei:
        sk_state.decode_strict("bulk=8&bulk=32")
    assert ei.value.key == "bulk"


def test_wrong_version_is_warned_and_strict_rejects():
    s, w = sk_state.decode("v=3&bulk=8")
    assert s["bulk"] == 8 and len(w) == 1 and w[0].startswith("v:")
    with pytest.raises(sk_state.StateError) as ei:
        sk_state.decode_strict("v=3&bulk=8")
    assert ei.value.key == "v"


def test_too_long_query_gives_defaults_and_a_warning():
    s, w = sk_state.decode("bulk=8&" + "x" * (sk_state.MAX_QUERY_CHARS + 1))
    assert s == sk_state.defaults() and len(w) == 1 and "query" in w[0]


def test_no_eval_no_pickle_in_codec_source():
    import ast
    import inspect
    tree = ast.parse(inspect.getsource(sk_state))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    imports = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
               for a in n.names} | {(n.module or "").split(".")[0] for n in ast.walk(tree)
                                     if isinstance(n, ast.ImportFrom)}
    assert not names & {"eval", "exec", "compile", "literal_eval", "__import__", "loads", "getattr"}
    assert not imports & {"pickle", "marshal", "shelve", "ast", "json", "yaml"}


@SETTINGS
@given(valid_states(), st.data())
def test_encode_of_partial_state_fills_like_a_partial_link(s, data):
    """Regression: encode({'cpu': X}) used to give B the CPU X too, and encode({'b_cpu': X})
    gave B the clock of A's CPU, while the same partial link decodes with B's own defaults."""
    keys = data.draw(st.lists(st.sampled_from([k for k in sk_state.PARAMS if k in s]), unique=True, max_size=6))
    part = {k: s[k] for k in keys}
    via_link, w = sk_state.decode(urlencode({k: sk_state.fmt_value(v) for k, v in part.items()}))
    assert w == []
    assert sk_state.encode(part) == sk_state.encode(via_link)


@pytest.mark.parametrize("q", [" bulk=3", "bulk =3", "%20bulk%20=3"])
def test_strict_and_lenient_agree_on_padded_keys(q):
    """Regression: decode() stripped whitespace around keys, decode_strict() called them unknown."""
    assert sk_state.decode(q) == ({**sk_state.defaults(), "bulk": 3}, [])
    assert sk_state.decode_strict(q)["bulk"] == 3


CUSTOM = "1~e5-1650v4~ghz:3.57,slub_fast_pair_cycles:121.5~my-lab"


@pytest.mark.skipif(not _OPTIONAL, reason="no custom-profile keys in this codec")
@SETTINGS
@given(valid_states(), st.sampled_from([("prof",), ("b_prof",), ("prof", "b_prof")]))
def test_round_trip_with_custom_profile(s, keys):
    for k in keys:
        s = {**s, k: CUSTOM, k.replace("prof", "cpu"): "e5-1650v4"}
    s = sk_state.normalised(s)  # B on the same custom profile as A is on A's
    q = sk_state.encode(s)
    assert sk_state.decode(q) == (s, [])
    assert sk_state.decode_strict(q) == s


def test_clamp_warning_quotes_the_link_text():
    """Regression: the warning quoted the parsed number ('-5.0', '1000000000'), not what the link said."""
    _, w = sk_state.decode("clone_frac=-5&b_bulk=1e9")
    assert w[0].startswith("clone_frac: '-5' outside") and w[1].startswith("b_bulk: '1e9' outside"), w


# ---------------------------------------------------------------- versions: mv, pv, b_pv, h

from skbmodel.machine import profile as P  # noqa: E402

CUR = P.profile_version("e5-1650v4")


def test_profile_version_is_a_hash_of_the_values_only():
    e5 = P.load_profile("e5-1650v4")
    assert P.is_version(CUR) and CUR == P.values_version(e5.values())
    # sources, notes and bounds do not make a version; any value does
    import dataclasses
    resourced = dataclasses.replace(e5, notes="x", constants={k: dataclasses.replace(c, source="y")
                                                              for k, c in e5.constants.items()})
    assert P.profile_version(resourced) == CUR
    assert P.profile_version(e5.with_values({"slub_fast_pair_cycles": 109.4390001})) != CUR
    assert P.profile_version("xeon-platinum-iavf") != CUR


def test_link_carries_versions_and_headline():
    q = answers.share_query({**sk_state.defaults(), "page": "slub", "bulk": 32})
    got = dict(parse_qsl(q))
    assert q.startswith(f"v=1&mv={skbmodel.__version__}&pv={CUR}&h=")  # no B on the SLUB page: no b_pv
    from skbmodel import model
    want = float(model.evaluate({"bulk": 32}, P.load_profile("e5-1650v4"))["slub.loop_cycles"])
    assert float(got["h"]) == float(format(want, ".6g"))
    # no headline on the validation page
    assert "h" not in dict(parse_qsl(answers.share_query({**sk_state.defaults(), "page": "validation"})))
    # the codec itself never evaluates the model: it writes the h a state has, and a state made here has none
    assert "h" not in dict(parse_qsl(sk_state.encode({**sk_state.defaults(), "page": "slub", "bulk": 32})))
    # keys= selects version keys like any other
    assert sk_state.encode(sk_state.defaults(), keys=["bulk"]) == "v=1&bulk=16"
    assert sk_state.encode(sk_state.defaults(), keys=["pv", "bulk"]) == f"v=1&pv={CUR}&bulk=16"


def test_links_without_versions_read_as_made_before_versions_were_recorded():
    s, w = sk_state.decode("bulk=8&page=slub")
    assert w == [] and not set(sk_state.VERSION_KEYS) & set(s)
    n = provenance.link_notice("bulk=8&page=slub", s)
    assert n["unversioned"] and n["profile"] == [] and n["model"] is None
    assert n["text"] == (f"This link carries no model or profile version (made before versions were recorded): it "
                         f"is shown with model {skbmodel.__version__} and profile e5-1650v4 version {CUR}.")
    assert provenance.link_notice("", sk_state.defaults()) is None  # no link at all
    assert provenance.link_notice(sk_state.encode(s), s) is None     # a link made today


@pytest.mark.parametrize("key,raw,needle", [
    ("mv", "1", "not a model version"), ("mv", "0.1", "not a model version"), ("mv", "0.1.0.0", "not a model version"),
    ("mv", "v0.1.0", "not a model version"), ("mv", "", "not a model version"), ("mv", "١.٢.٣", "not a model version"),
    ("pv", "xyz", "not a profile version"), ("pv", "8896FC54", "not a profile version"),
    ("pv", "8896fc5", "not a profile version"), ("pv", "../../x", "not a profile version"),
    ("b_pv", "8896fc54a", "not a profile version"), ("pv", "deadbeef", "unknown"), ("b_pv", "00000000", "unknown"),
    ("h", "abc", "not a headline value"), ("h", "nan", "not a headline value"), ("h", "inf", "not a headline value"),
    ("h", "1e999", "not a headline value"), ("h", "0x10", "not a headline value"), ("h", "1" * 40, "not a headline"),
])
def test_bad_version_values_are_named_and_the_rest_survives(key, raw, needle):
    q = urlencode([("v", "1"), ("mv", skbmodel.__version__), (key, raw), ("bulk", "32"), ("page", "slub")]) \
        if key != "mv" else urlencode([("v", "1"), ("mv", raw), ("bulk", "32"), ("page", "slub")])
    s, w = sk_state.decode(q)
    assert s["bulk"] == 32 and s["page"] == "slub" and not set(sk_state.VERSION_KEYS) & set(s)
    assert len(w) == 1 and w[0].startswith(key + ":") and needle in w[0], w
    with pytest.raises(sk_state.StateError) as ei:
        sk_state.decode_strict(q)
    assert ei.value.key == key and needle in str(ei.value) and "\n" not in str(ei.value)


def test_unknown_profile_version_names_current_and_archived():
    s, w = sk_state.decode("pv=deadbeef&bulk=8")
    assert s["bulk"] == 8 and "pv" not in s
    archived = ", ".join(P.archived_versions("e5-1650v4"))
    assert CUR in archived
    assert w == [f"pv: profile e5-1650v4 version deadbeef is unknown: not the current version {CUR} and not "
                 f"archived (archived: {archived}); using the current version {CUR}"]


def test_headline_without_model_version_is_ignored():
    s, w = sk_state.decode("h=3.5&bulk=8")
    assert "h" not in s and len(w) == 1 and w[0].startswith("h:")
    with pytest.raises(sk_state.StateError, match="^h: given without a model version"):
        sk_state.decode_strict("h=3.5&bulk=8")


def test_archived_profile_version_is_used_and_round_trips(old_e5_version):
    ver, old = old_e5_version
    assert ver != CUR
    q = answers.share_query({**sk_state.defaults(), "page": "veth",
                              "pv": ver})  # a link made while version ver was current
    s, w = sk_state.decode(q)
    assert w == [] and s["pv"] == ver and "b_pv" not in s
    assert sk_state.decode_strict(q) == s
    prof = sk_state.profile_for(s)
    assert prof.id == f"e5-1650v4@{ver}" and prof.values() == old.values()
    assert sk_state.profile_for(s, "b").id == f"e5-1650v4@{ver}"  # B is A: on A's profile in A's version
    assert q.startswith(f"v=1&mv={skbmodel.__version__}&pv={ver}&h=")
    assert answers.share_query(s) == q
    assert "mv" not in s and "h" not in s  # its h is the archived profile's number: nothing moved
    n = provenance.link_notice(q, s)
    (p,) = n["profile"]
    assert (p["version"], p["current_version"], p["archived"]) == (ver, CUR, True)
    assert p["value"] > p["current_value"]  # the old profile's veth was faster (fewer cycles)
    assert float(dict(parse_qsl(q))["h"]) == float(format(p["value"], ".6g"))
    assert n["text"] == (
        f"This link was made with profile e5-1650v4 version {ver} (archived); current version {CUR} gives "
        f"veth throughput (Mpps) = {p['current_value']:.4g} instead of {p['value']:.4g} ({p['change_pct']:+.1f} %).")
    assert p["change_pct"] < 0


def test_archived_version_with_a_custom_profile(old_e5_version):
    ver, old = old_e5_version
    text = "1~e5-1650v4~ghz:3.1,stos_line_cycles:3.5~lab"
    s, w = sk_state.decode({"prof": text, "pv": ver, "page": "slub"})
    assert w == [] and s["pv"] == ver and s["cpu"] == "e5-1650v4"
    prof = sk_state.profile_for(s)
    assert prof.value("slub_fast_pair_cycles") == 100.0 and prof.value("stos_line_cycles") == 3.5
    assert prof.ghz == 3.1 and prof.inherits == f"e5-1650v4@{ver}"
    assert sk_state.decode(sk_state.encode(s)) == (s, [])


def test_pv_of_another_profile_is_refused(old_e5_version):
    ver, _ = old_e5_version
    s, w = sk_state.decode({"cpu": "xeon-platinum-iavf", "pv": ver})
    assert "pv" not in s and len(w) == 1 and w[0].startswith("pv: profile xeon-platinum-iavf version")
    with pytest.raises(sk_state.StateError) as ei:
        sk_state.decode_strict({"cpu": "xeon-platinum-iavf", "pv": ver})
    assert ei.value.key == "pv"


def test_older_model_version_is_kept_as_provenance_and_written_back():
    q = answers.share_query({**sk_state.defaults(), "page": "kfree"}).replace(
        f"mv={skbmodel.__version__}", "mv=0.0.1")
    s, w = sk_state.decode(q)
    assert w == [] and s["mv"] == "0.0.1" and isinstance(s["h"], float)
    assert sk_state.encode(s) == q and sk_state.decode_strict(q) == s
    n = provenance.link_notice(q, s)
    assert n["model"]["link_version"] == "0.0.1" and "unchanged" in n["text"]
    # h of another number under today's model version: the link was cut or edited; the author's number is named
    q2 = answers.share_query({**sk_state.defaults(), "page": "kfree"}).replace("&h=", "&h=1")
    s2, _ = provenance.read_link(q2)
    n2 = provenance.link_notice(q2, s2)
    assert "mv" not in s2 and n2["edited"] and len(n2["messages"]) == 1  # no mv in a state: this model version
    assert dict(parse_qsl(answers.share_query(s2)))["h"] == format(s2["h"], ".6g")  # the author's number travels on
    assert n2["text"].startswith(f"This link appears truncated or edited; the author saw "
                                 f"{VERSIONS.headline('kfree')['label']} = {provenance._num(s2['h'])}")


@SETTINGS
@given(valid_states(), st.sampled_from(["mv", "pv", "b_pv", "h"]), st.text(max_size=30))
def test_any_version_value_never_raises_and_keeps_the_state(s, key, raw):
    pairs = [(k, v) for k, v in parse_qsl(sk_state.encode(s)) if k != key] + [(key, raw)]
    got, w = sk_state.decode(urlencode(pairs))
    _assert_valid_state(got)
    assert {k: got[k] for k in A_KEYS} == {k: s[k] for k in A_KEYS}
    assert sk_state.scenario(got, "b") == sk_state.scenario(s,
                                                            "b")  # a version names a profile version, never a parameter
    assert sk_state.decode(sk_state.encode(got)) == (got, [])


def test_eval_cli_prints_the_notice_and_fails_on_unknown_versions():
    import json as _json
    q = sk_state.encode({**sk_state.defaults(), "page": "slub"}).replace(f"mv={skbmodel.__version__}", "mv=0.0.1")
    r = skbmodel_cli("eval", q, "--json")
    assert r.returncode == 0, r.stderr
    doc = _json.loads(r.stdout)
    assert doc["version_notice"]["model"]["link_version"] == "0.0.1"
    assert doc["profile_version"] == CUR and doc["model_version"] == skbmodel.__version__
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("notice: This link was made with model 0.0.1")
    r = skbmodel_cli("eval", sk_state.encode(sk_state.defaults()), "--json")
    assert r.returncode == 0 and r.stderr == "" and _json.loads(r.stdout)["version_notice"] is None
    for bad, key in (("pv=deadbeef&bulk=8", "pv"), ("mv=x&bulk=8", "mv"), ("b_pv=12&bulk=8", "b_pv")):
        r = skbmodel_cli("eval", bad)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith(f"error: {key}:"), r.stderr


# ---------------------------------------------------------------- the patch a link names
@SETTINGS
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=300),
       st.from_regex(r"[0-9a-fA-F]{12}", fullmatch=True))
def test_a_patch_subject_and_hash_travel_as_the_codec_keeps_them(subject, digest):
    """Any subject decodes to its printable text (spaces folded, at most 200 characters), and a link
    written from the decoded state decodes to the same state with no warning."""
    kept, problem = sk_state.parse_patch("patch", subject)
    s, warnings = sk_state.decode({"page": ["compare"], "patch": [subject], "phash": [digest]})
    assert s.get("patch") == kept and s["phash"] == digest.lower()
    assert (problem is None) == (warnings == [])
    if kept is not None:
        assert len(kept) <= sk_state.PATCH_SUBJECT_MAX and kept.isprintable() and "  " not in kept
    assert sk_state.decode(sk_state.encode(s)) == (s, [])


def test_a_patch_hash_that_is_not_12_hex_digits_is_dropped_with_a_warning():
    s, warnings = sk_state.decode("page=compare&patch=x&phash=0123")
    assert "phash" not in s and s["patch"] == "x"
    assert warnings == ["phash: '0123' is not 12 hex digits; ignored"]


# ---------------------------------------------------------------- a retired key (numa -> place)
@pytest.mark.parametrize("cpu,cross", [("xeon-platinum-iavf", "other_socket"), ("derived-kunpeng-920", "other_l3"),
                                       ("epyc-9684x", "other_l3_far"), ("e5-1650v4", "other_socket")])
def test_an_old_link_s_numa_reads_as_the_machine_s_placement(cpu, cross):
    """numa=same is the same L3 (the calibration's placement: the old numbers); numa=cross the machine's nearest
    level on another node (another socket; another SCCL die; a line homed away on a one-socket EPYC of unstated
    NPS); on a one-node machine, another socket, which the question refuses as it refused numa=cross."""
    from skbmodel import model
    from skbmodel.machine.profile import load_profile
    st, warnings = sk_state.decode(f"v=1&mv=0.5.0&cpu={cpu}&numa=cross&b_numa=same&page=compare")
    assert warnings == [] and st["place"] == cross and st.get("b_place") == "same_l3"
    assert model.cross_node_placement(load_profile(cpu)) == (None if cpu == "e5-1650v4" else cross)
    same = sk_state.decode(f"cpu={cpu}&numa=same")[0]
    assert same["place"] == "same_l3" and "b_place" not in same


def test_a_retired_key_beside_its_successor_or_from_a_later_model_is_named():
    st, warnings = sk_state.decode("cpu=xeon-platinum-iavf&numa=cross&place=same_l3")
    assert st["place"] == "same_l3" and any(w.startswith("numa: ignored") for w in warnings)
    st, warnings = sk_state.decode("mv=0.7.0&cpu=xeon-platinum-iavf&numa=cross")
    assert st["place"] == "same_l3" and warnings == ["numa: replaced by place after model 0.6.0; ignored"]
    with pytest.raises(sk_state.StateError):
        sk_state.decode_strict("mv=0.7.0&numa=cross")
    st, _ = sk_state.decode("page=grid&g1=numa")
    assert st["g1"] == "place"


def test_a_short_link_with_numa_keeps_b_on_a_s_placement():
    """A short (v=2) link of model 0.6.0 that set numa=cross: B follows A, and no place default overrides it."""
    st, warnings = sk_state.decode("v=2&mv=0.6.0&page=compare&cpu=xeon-platinum-iavf&numa=cross&b_pp_recycle=0.5")
    assert warnings == [] and st["place"] == "other_socket" and "b_place" not in st
