"""The plain-text summary for a mail (skbmodel.mailtext): the CLI's eval --text and the page's "Copy as text"
give the same block; ASCII, 70 columns (72 quoted), the link alone on its line; the README example is current."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from skbmodel import answers
from skbmodel import provenance
from skbmodel.links.pages import BY_SLUG
from skbmodel import cli, uncertainty
from skbmodel.physics import noise
from skbmodel.links import shortlink, state as sk_state
from tests.cli_util import skbmodel_cli

ROOT = Path(__file__).resolve().parents[1]
README_QUERY = "page=compare&b_xdp_batch=4"
QUERIES = ["", "page=veth&xdp_batch=8&zero=memset&b_zero=gfp_zero", README_QUERY, "page=slub&bulk=32&ghz=3",
           "page=design&path=design&d_from=cpumap&d_skb=napi_cache&d_free=napi_cache&b_path=cpumap",
           "page=kfree&kfl_bulk=1&cpu=i7-4790k", "page=validation",
           "page=compare&path=kfree_skb_list&kfl_bulk=1&b_kfl_bulk=16&phash=df607ab40919&patch=%5BPATCH+net-next+V2+2%2F2"
           "%5D+net%3A+kfree_skb_list+use+kmem_cache_free_bulk+%E2%80%94+a+subject+long+enough+to+wrap"]


def _text(capsys, query: str, *extra: str) -> str:
    assert cli.main(["eval", query, "--text", *extra]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("query", QUERIES)
def test_block_is_ascii_70_columns_and_ends_with_the_link_alone(capsys, query):
    text = _text(capsys, query)
    assert text.isascii() and text.endswith("\n")
    lines = text.splitlines()
    link = lines[-1]
    assert lines[-2] == "Link:" and link.startswith("http://localhost:8501/") and " " not in link
    st, warnings = sk_state.decode(query)
    if not BY_SLUG[st["page"]].has_b:  # a page without B: its link carries none of B
        st = sk_state.without_b(st)
    assert sk_state.decode(link.split("?", 1)[1]) == (st, [])  # the link opens this view
    for line in lines[:-1]:
        assert len(line) <= 70, line
        assert len("> " + line) <= 72
    quoted = "\n".join("> " + line for line in lines)
    assert quoted.count("\n") == len(lines) - 1  # quoting adds no line: nothing wraps in the mail


def test_default_view_says_defaults_and_quotes_the_headline_with_its_interval(capsys):
    text = _text(capsys, "")
    assert "Scenario: the defaults" in text
    st, _ = sk_state.decode("")
    val, iv = uncertainty.evaluate_with_intervals(sk_state.scenario(st), sk_state.profile_for(st), ["path.mpps"])
    v, (lo, hi) = float(val["path.mpps"]), (float(x) for x in iv["path.mpps"])
    assert f"  Throughput: {v:.3f} Mpps (90 %: {lo:.3f} to {hi:.3f})" in text
    assert "B - A" not in text
    assert re.search(r"^Model \d+\.\d+\.\d+, profile e5-1650v4 version [0-9a-f]{8} \(kernels", text, re.M)


def test_only_what_differs_and_b_minus_a_with_its_verdict(capsys):
    text = _text(capsys, "page=compare&bulk=32&xdp_batch=8&b_bulk=32&b_xdp_batch=16")
    scen = text.split("CPU profile")[0]
    assert "kmem_cache bulk size (objects) = 32" in scen and "VETH_XDP_BATCH (skbs) = 8" in scen
    assert "Zeroing" not in scen and "noise" not in scen  # defaults are not listed
    assert "B: VETH_XDP_BATCH (skbs) = 16\n" in text
    st, _ = sk_state.decode("page=compare&bulk=32&xdp_batch=8&b_bulk=32&b_xdp_batch=16")
    from skbmodel import uncertainty as U
    d, div = U.delta_intervals(sk_state.scenario(st), sk_state.scenario(st, "b"), sk_state.profile_for(st),
                               sk_state.profile_for(st, "b"),
                               ["path.ns_per_packet"])
    d = float(np.asarray(d["path.ns_per_packet"]))
    lo, hi = (float(x) for x in div["path.ns_per_packet"])
    verdict = noise.verdict(d, 2.0, lo, hi)
    flat = " ".join(text.split())
    assert abs(d) < 1  # four significant digits: four decimals
    assert f"B - A: {d:+.4f} ns/packet (90 %: {lo:+.4f} to {hi:+.4f}): {verdict}" in flat


def test_b_is_not_quoted_on_a_page_that_does_not_show_it(capsys):
    text = _text(capsys, "page=veth&b_zero=memset")
    assert "B - A" not in text and "B:" not in text


def test_the_readme_example_is_what_eval_text_prints(capsys):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- text-example:begin -->\n```text\n(.*?)```\n<!-- text-example:end -->", readme, re.S)
    assert block, "README.md lost its text example markers"
    want = _text(capsys, README_QUERY)
    assert block.group(1) == want, (
        f"the README's example is stale: replace it with the output of "
        f"python -m skbmodel eval '{README_QUERY}' --text\n{want}")
    assert f'eval "{README_QUERY}" --text' in readme


def test_the_readme_walk_through_states_the_model_s_verdict():
    """The five steps' third (reading the verdict) quotes the Compare page's answer for the same query, as the
    page shows it (the same digits and interval), and a verdict that follows from it by the stated rule."""
    from skbmodel import answers, uncertainty as U

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    st = provenance.with_link_headline(README_QUERY, sk_state.decode_strict(README_QUERY))
    h = answers.of_state(st).differences[0]
    lo, hi = U.delta_interval(sk_state.scenario(st), sk_state.scenario(st, "b"), sk_state.profile_for(st),
                              sk_state.profile_for(st, "b"))
    assert (h.lo, h.hi) == pytest.approx((float(lo), float(hi)), rel=1e-9)  # the paired interval of B - A
    rule = noise.VERDICT_NOISE if abs(h.value) < st["noise_ns"] else (
        noise.VERDICT_SURE if (h.lo > 0 or h.hi < 0) else noise.VERDICT_UNSURE)
    assert h.verdict == rule
    flat = " ".join(readme.split())
    assert (f"**Δ B − A** {h.value_text()} ns/packet ({h.interval_text()}), **Verdict** "
            f"*{noise.VERDICT_SHORT[h.verdict]}*") in flat
    assert f"the noise floor is {st['noise_ns']:g} ns per run" in flat
    assert f"from {sk_state.defaults()['xdp_batch']} to {st['b_xdp_batch']}" in flat


def test_cli_text_prints_what_the_module_builds():
    r = skbmodel_cli("eval", "page=slub&bulk=32", "--text", "--base", "https://skb.example.org/slub", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "https://skb.example.org/slub?" + shortlink.shorten(
        answers.share_query(sk_state.decode("page=slub&bulk=32")[0]))


@pytest.mark.parametrize("query", ["page=veth&xdp_batch=8&zero=memset", README_QUERY,
                                   "page=design&path=design&d_from=cpumap&d_skb=napi_cache&b_path=cpumap"])
def test_the_page_s_copy_as_text_is_the_cli_block(capsys, query):
    from urllib.parse import parse_qsl

    from tests.test_app_pages import _app, _navigation_mode, copied  # noqa: F401 - the fixture applies here too

    at = _app(dict(parse_qsl(query)))
    at.toggle(key="copy_as_text").set_value(True).run()
    assert not at.exception, at.exception
    link, block = copied(at.sidebar)
    assert block.splitlines()[-1] == link
    assert block.rstrip("\n") == _text(capsys, query, "--base", link.split("?", 1)[0]).rstrip("\n")


def test_a_and_b_on_the_compare_line_have_four_significant_digits(capsys):
    """Every number of the block has four significant digits, A's value on the Compare line as well as B's:
    a value x in [10^k, 10^(k+1)) is printed with 3 - k decimals (265.7 ns, not 265.66 or 266)."""
    q = "page=compare&bulk=32&xdp_batch=8&b_bulk=32&b_xdp_batch=16"
    flat = " ".join(_text(capsys, q).split())
    st, _ = sk_state.decode(q)
    import math
    from skbmodel import model
    a = float(model.evaluate(sk_state.scenario(st), sk_state.profile_for(st))["path.ns_per_packet"])
    b = float(model.evaluate(sk_state.scenario(st, "b"), sk_state.profile_for(st, "b"))["path.ns_per_packet"])
    four = {x: f"{x:.{3 - math.floor(math.log10(abs(x)))}f}" for x in (a, b)}
    assert f"(ns/packet): A {four[a]}, B {four[b]} ns/packet" in flat, flat


def test_a_compare_block_starts_with_its_question_s_number_not_the_overview_path_s(capsys):
    """A change of the kfree_skb_list path on the Compare page, A on the veth path: the first number of the
    block is A's cost on the kfree_skb_list path (the verdict's output), then the page's own Overview number."""
    query = "page=compare&b_kfl_bulk=1"
    numbers = _text(capsys, query).split("Numbers (90 % prediction interval):\n", 1)[1].splitlines()
    st, _ = sk_state.decode(query)
    val, iv = uncertainty.evaluate_with_intervals(sk_state.scenario(st), sk_state.profile_for(st),
                                                  ["kfree_skb_list.ns_per_packet", "path.ns_per_packet"])
    kfl, (lo, hi) = float(val["kfree_skb_list.ns_per_packet"]), (float(x) for x in iv["kfree_skb_list.ns_per_packet"])
    first = " ".join(s.strip() for s in numbers[:2])  # one answer, wrapped over two lines
    assert first == f"kfree_skb_list drop path (ns/packet), A: {kfl:.1f} ns/packet (90 %: {lo:.1f} to {hi:.1f})"
    assert numbers[2].startswith(f"  Overview path, A: {float(val['path.ns_per_packet']):.1f} ns/packet")
    assert abs(kfl - float(val["path.ns_per_packet"])) > 100  # two different numbers: the order matters
    # the question is of the page's own number: it is not said twice
    readme = _text(capsys, README_QUERY).split("Numbers (90 % prediction interval):\n", 1)[1]
    assert readme.startswith("  Overview path, A: ") and readme.count(", A: ") == 1


def test_the_readme_compare_example_is_the_model_s_answer():
    """The README's Compare example (recycling with the destination on the other socket) quotes the Compare
    answer of its link, digits and interval as the page shows them, and the assumed constants it names lead
    the drivers; the same placement on the one-socket default CPU is refused."""
    from skbmodel import answers
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    query = "page=compare&cpu=xeon-platinum-iavf&b_pp_recycle=0.5&b_place=other_socket"
    assert f"`?{query}`" in readme
    res = answers.of_state(provenance.with_link_headline(query, sk_state.decode_strict(query)))
    h = res.differences[0]
    lo, hi = h.interval_text().removeprefix("90 %: ").split(" to ")
    assert f"({h.value_text().split()[0]} ns, 90 %: {lo} to {hi}, measurable and sure of the sign)" in readme
    assert h.verdict == noise.VERDICT_SURE
    names = [r["name"] for r in h.drivers["rows"] if r["kind"] == "assumed"][:2]
    assert names == ["cpumap_xfer_lines", "line_other_socket_ns"] and all(f"`{n}`" in readme for n in names)
    refused = answers.of_state(sk_state.decode_strict(query.replace("cpu=xeon-platinum-iavf&", "")))
    assert refused.problem and "no other socket" in refused.problem
