"""One question, one answer: B is A plus its overrides, and every surface renders the same answer.

The rules checked here, each stated in its test: B follows A except where it overrides it; a page
without B writes no ``b_`` key; a signed difference is never clipped; the page that shows a
within-scenario difference and Compare, asked the same pair, give one interval; the text block,
``eval --json``, the report and the chart footer name the same numbers and the same profile.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from skbmodel import provenance
from skbmodel import answers, mailtext, question, schema, uncertainty
from skbmodel.machine import custom
from skbmodel.links import state as sk_state
from skbmodel.links.pages import BY_SLUG, PAGES
from skbmodel.machine.profile import available_profiles, load_profile
from skbview import report
from skbview.charts import base as chart_base
from tests.limits import SUBPROCESS_TIMEOUT_S



def _decode(q: str) -> dict:
    return provenance.with_link_headline(q, sk_state.decode_strict(q))


# ---------------------------------------------------------------- B is A plus overrides
def test_b_follows_a_except_where_it_overrides():
    """A partial link without ``v=``: B is A (its CPU, its clock, its batch) plus the one key it gives."""
    st_ = sk_state.decode_strict("page=compare&cpu=epyc-9684x&xdp_batch=8&b_xdp_batch=32")
    a, b = sk_state.scenario(st_, "a"), sk_state.scenario(st_, "b")
    assert b["cpu"] == a["cpu"] == "epyc-9684x"
    assert b["ghz"] == a["ghz"] == load_profile("epyc-9684x").ghz
    assert (a["xdp_batch"], b["xdp_batch"]) == (8, 32)
    assert {k for k in a if a[k] != b[k]} == {"xdp_batch"}
    assert sk_state.b_overrides(st_) == {"xdp_batch": 32}


def test_the_readme_question_on_another_cpu_is_about_the_batch():
    """batch 8 against 32 on the EPYC: the answer is the batch's (well under 1 ns/packet), not a CPU swap's
    (about 100 ns/packet between the EPYC and the default E5)."""
    res = answers.of_state(_decode("page=compare&cpu=epyc-9684x&xdp_batch=8&b_xdp_batch=32"))
    d = res.differences[0]
    assert d.output == "path.ns_per_packet"
    assert abs(d.value) < 1.0 and d.verdict != "measurable, and the model is sure of the sign"
    assert res.profile_b == res.profile_a


def test_a_full_v1_link_opens_as_it_always_did():
    """A full link writes every B key; those equal to A's are not overrides, the others are."""
    full = sk_state.defaults()
    full.update({"bulk": 32, "page": "compare"})
    old = "&".join([f"{k}={sk_state.fmt_value(v)}" for k, v in full.items() if k in sk_state.PARAMS]
                   + [f"b_{p.key}={sk_state.fmt_value(full[p.key])}" for p in sk_state.MODEL_PARAMS if p.key != "zero"]
                   + ["b_zero=memset"])
    st_ = sk_state.decode_strict("v=1&" + old)
    assert sk_state.b_overrides(st_) == {"zero": "memset"}
    assert sk_state.scenario(st_, "b")["bulk"] == 32


def test_b_on_its_own_cpu_takes_that_cpu_s_clock():
    st_ = sk_state.decode_strict("page=compare&b_cpu=epyc-9684x")
    assert sk_state.scenario(st_, "b")["ghz"] == load_profile("epyc-9684x").ghz
    assert sk_state.scenario(st_, "a")["ghz"] == load_profile(sk_state.defaults()["cpu"]).ghz
    assert sk_state.profile_for(st_, "b").id == "epyc-9684x"


@pytest.mark.parametrize("page", [p.slug for p in PAGES])
def test_a_page_without_b_writes_no_b_key(page):
    """The share link of a page that shows no B never carries a ``b_`` key, whatever the session holds."""
    st_ = {**sk_state.defaults("epyc-9684x"), "page": page, "b_bulk": 4, "b_cpu": "e5-1650v4"}
    query = report.share_query(st_)
    has_b = BY_SLUG[page].has_b
    assert ("b_" in query) == has_b, query


# ---------------------------------------------------------------- differences are not costs
def test_no_signed_difference_is_clipped():
    """For every signed difference the physical interval is the normal one: nothing clipped at 0, on every
    shipped profile's default state (a difference that happens to be positive there included)."""
    diffs = schema.of_kind("difference")
    for pid in available_profiles():
        params = {**sk_state.scenario(sk_state.defaults(pid)), "zero_bytes": 64}
        _, phys = uncertainty.evaluate_with_intervals(params, load_profile(pid), diffs)
        _, raw = uncertainty.evaluate_with_intervals(params, load_profile(pid), diffs, physical=False)
        for o in diffs:
            assert float(phys[o][0]) == float(raw[o][0]), (pid, o)


def test_the_veth_page_and_compare_agree_on_memset_against_gfp_zero():
    """``veth.zero_delta_ns`` (memset - __GFP_ZERO in one scenario) and Compare's B - A with B = A on
    __GFP_ZERO are one difference of one function: one value and one interval, mirrored."""
    q = "cpu=epyc-9684x&xdp_batch=32&zero=memset&path=veth"
    veth = answers.of_state(_decode("page=veth&" + q)).value("veth.zero_delta_ns")
    cmp = answers.of_state(_decode("page=compare&b_zero=gfp_zero&" + q)).differences[0]
    assert cmp.output == "path.ns_per_packet"
    assert veth.lo < 0 < veth.hi  # the EPYC's zeroing difference is within the model's uncertainty
    assert cmp.value == pytest.approx(-veth.value, rel=1e-9)
    assert (cmp.lo, cmp.hi) == pytest.approx((-veth.hi, -veth.lo), rel=1e-6)


def test_verdict_boundary_at_the_noise_floor():
    """|delta| == noise_ns is measurable (the floor itself is seen); just below it is not."""
    from skbmodel.physics import noise
    assert noise.verdict(2.0, 2.0, 1.0, 3.0) == noise.VERDICT_SURE
    assert noise.verdict(-2.0, 2.0, -3.0, -1.0) == noise.VERDICT_SURE
    assert noise.verdict(np.nextafter(2.0, 0.0), 2.0, 1.0, 3.0) == noise.VERDICT_NOISE


# ---------------------------------------------------------------- one answer, every surface
def _custom_link() -> str:
    base = load_profile("epyc-9684x")
    prof = custom.build(base, {"pp_fast_cycles": base.value("pp_fast_cycles") * 3.0}, label="stock-srso-fit")
    return custom.encode_profile(prof)


def _surfaces(st_: dict) -> dict:
    """What each surface prints for the state's question: the numbers and the profile it names."""
    res = answers.of_state(st_)
    link = "http://localhost:8501/x?" + report.share_query(st_)
    text = mailtext.summary_text(st_, link)
    html = report._numbers_html(answers.of_state(st_, drivers=True))
    footer = chart_base.caption(question.Question.of_state(st_))
    return dict(res=res, text=text, html=html, footer=footer)


def _profile_files() -> list[str]:
    """Profile files as ``--profile`` and the upload read them: a derivation (``profile derive --out``) and a
    configuration (``profile configure --out``), written once per session."""
    from skbmodel.evidence.derivation import derive
    from skbmodel.machine import kconfig
    out = Path(tempfile.mkdtemp(prefix="skb-profiles-"))
    files = {"derived-zen1.toml": derive.derive("zen1-naples").to_toml(),
             "configured-srso.toml": kconfig.with_config(load_profile("epyc-9684x"),
                                                         {"return_thunk": "srso-safe-ret"}).to_toml()}
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    return [str(out / n) for n in files]


_FILES = _profile_files()
_PAGES_WITH_NUMBERS = [p.slug for p in PAGES if p.slug != "validation"]
_PROFILES = sorted(available_profiles())


@st.composite
def _questions(draw):
    page = draw(st.sampled_from(_PAGES_WITH_NUMBERS))
    cpu = draw(st.sampled_from(_PROFILES))
    st_ = sk_state.defaults(cpu)
    st_["page"] = page
    for p in draw(st.lists(st.sampled_from([p for p in sk_state.MODEL_PARAMS if p.key not in ("cpu", "ghz", "path")]),
                           max_size=2, unique_by=lambda p: p.key)):
        st_[p.key] = draw(st.sampled_from(p.choices)) if p.kind == "choice" else \
            type(p.default)(draw(st.sampled_from([p.lo, p.default, p.hi])))
    if draw(st.booleans()):
        k = draw(st.sampled_from(["xdp_batch", "zero", "bulk", "pp_recycle", "cpu", "kfl_bulk"]))
        st_["b_" + k] = draw(st.sampled_from(sk_state.PARAMS[k].choices)) if sk_state.PARAMS[k].kind == "choice" else \
            type(sk_state.PARAMS[k].default)(sk_state.PARAMS[k].lo)
    kind = draw(st.integers(0, 9))
    if kind == 0:  # a fitted profile among them (a custom profile on a shipped base)
        st_["prof"] = _custom_link()
        st_["cpu"] = "epyc-9684x"
    elif kind == 1:  # a profile file, as --profile and the upload take it (a derivation or a configuration)
        st_ = question.with_profile_file(st_, draw(st.sampled_from(_FILES)))
    return sk_state.decode(sk_state.encode(st_))[0]


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_questions())
def test_every_surface_gives_the_same_answer(st_):
    """200 questions (every page, every shipped profile, derived ones included, a fitted profile and profile
    files among them): the text block, the report's
    numbers and ``eval --json``'s answers show each value as the answer's text (same digits, same interval,
    same verdict), and the text block and the footer name the answer's profile."""
    s = _surfaces(st_)
    res = s["res"]
    for v in res.values:
        shown = v.text(v.unit_text)
        assert shown in mailtext.ascii_text(s["text"]).replace("\n    ", " "), (v.output, shown)
        assert shown in s["html"], (v.output, shown)
        if v.verdict:
            assert v.verdict in s["text"].replace("\n    ", " ")
    for i, d in enumerate(res.differences):
        if i == 0:  # the text block quotes the verdict's difference; the report every one
            assert d.text(d.unit_text) in s["text"].replace("\n    ", " ")
        assert d.text(d.unit_text) in s["html"]
    ident = res.profile_a.text()
    assert ident in s["text"].replace("\n  ", " "), ident
    assert ident in s["footer"]
    again = json.loads(json.dumps(res.to_json()))
    assert [a["value_text"] for a in again["values"]] == [v.value_text() for v in res.values]


def test_the_text_block_and_the_footer_name_a_custom_profile():
    st_ = sk_state.decode("page=veth&prof=" + _custom_link())[0]
    res = answers.of_state(st_)
    assert res.profile_a.custom and res.profile_a.id.startswith(custom.CUSTOM_PREFIX)
    text = mailtext.summary_text(st_, "http://x/veth?" + report.share_query(st_)).replace("\n  ", " ")
    assert res.profile_a.id in text and res.profile_a.id in chart_base.caption(question.Question.of_state(st_))
    assert "profile epyc-9684x version" not in text  # the stock profile is not what was used


def test_eval_text_and_json_print_the_same_answer():
    """The CLI contract: ``eval --text`` and ``eval --json`` of one query print one answer (a real process: the
    entry point ``python -m skbmodel`` and its exit status 0 are part of what is tested)."""
    q = "page=compare&cpu=epyc-9684x&xdp_batch=8&b_xdp_batch=32"
    run = [sys.executable, "-m", "skbmodel", "eval", q]
    text = subprocess.run(run + ["--text"], capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S,
                          check=True).stdout
    out = json.loads(subprocess.run(run + ["--json"], capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S,
                                    check=True).stdout)
    d = out["answers"]["differences"][0]
    assert out["b_overrides"] == {"xdp_batch": 32}
    assert re.search(rf"B - A: {re.escape(d['value_text'])} ns/packet \(90 %: {re.escape(d['interval_text'][6:])}\)",
                     text.replace("\n    ", " ")), text


def test_a_scenario_keys_its_caches():
    """Two scenarios of the same parameters on the same profile are one key; another value is another."""
    a = question.scenario_of(sk_state.defaults())
    assert a.key == question.scenario_of(sk_state.defaults()).key
    assert a.key != a.replace(bulk=64).key
    assert hash(a.key)


def test_counts_of_runs_read_as_a_reviewer_would_quote_them():
    """A count of runs whose difference may be 0 has no finite upper bound: it reads "N or more", never
    "to 1000000"; one run is "1 run"."""
    from skbmodel import answers
    from skbmodel.links import state as sk_state
    from skbmodel.physics import noise
    res = answers.of_state(sk_state.decode_strict("page=veth&zero_bytes=40"))
    runs = next(v for v in res.values if v.output == "veth.zero_delta_runs")
    assert runs.hi >= noise.MAX_RUNS and "or more" in runs.text() and str(noise.MAX_RUNS) not in runs.text()
    one = answers.Difference("path.ns_per_packet", "x", "ns", "difference", 5.0, 4.0, 6.0, runs=1)
    assert one.runs_text() == "; 1 run per variant"
    assert answers.Difference("path.ns_per_packet", "x", "ns", "difference", 5.0, 4.0, 6.0, runs=3).runs_text() \
        == "; 3 runs per variant"


def test_a_fraction_whose_interval_reaches_both_ends_says_so():
    """The kthread's sleep fraction with an XDP_DROP destination on the default CPU: its interval reaches 0 and
    1, read as "anywhere from 0 to 1" rather than "0.000 to 1.000"."""
    from skbmodel import answers
    from skbmodel.links import state as sk_state
    res = answers.of_state(sk_state.decode_strict("page=cpumap&cpumap_prog=drop"))
    sleep = next(v for v in res.values if v.output == "cpumap.sleep_fraction")
    assert sleep.lo <= 0 and sleep.hi >= 1 and sleep.interval_text() == "90 %: anywhere from 0 to 1"
