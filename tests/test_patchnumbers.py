"""The measured before and after a mail states (skbmodel/patchnumbers.py): every measurement of
tests/data/patches/sample/index.csv that its file writes as a before and an after, found with its unit; each unit
on real lines of those files and of the seed threads, converted (a Kpps rate read as Mpps is 1000x off and
fails here); quoted lines; bit rates with the packet size the mail states or an assumption said."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from skbmodel import patchmail as pm
from skbmodel import patchnumbers as pn

DATA = Path(__file__).resolve().parent / "data"
PATCHES = DATA / "patches" / "sample"
SEEDS = DATA / "seeds"
INDEX = list(csv.DictReader((PATCHES / "index.csv").open(encoding="utf-8")))

#: index rows whose numbers are not in their file (the file holds the diff's mails; these numbers are in a
#: lab notebook the commit links, or in a later thread): the reader cannot find them there
NOT_IN_FILE = {"c09": "pktgen rates are in the xdp-project notebook the commit links, not in the mail",
               "c12b": "measured in a later thread by another reviewer, not in the patch's mails"}


def _found(path: Path) -> list[dict]:
    return pn.measured(pm.read_mails(path.read_bytes()))


def _canon(unit: str) -> str:
    return pn._canon(unit.split("/")[0] if unit.startswith("cycles") else unit)[0]


def _has(results, before: float, after: float, unit: str) -> dict | None:
    return next((d for d in results if d["before_value"] == pytest.approx(before) and d["after_value"] ==
                 pytest.approx(after) and _canon(d["unit"]) == _canon(unit)), None)


@pytest.mark.parametrize("row", INDEX, ids=[r["id"] for r in INDEX])
def test_each_index_measurement_is_found_in_its_file(row):
    """Every measurement of index.csv whose file writes it, found with its value and unit (cycles(tsc),
    Mpps, pps)."""
    path = PATCHES / row["diff_file"]
    before, after = float(row["before"]), float(row["after"])
    results = _found(path)
    if row["id"] in NOT_IN_FILE:
        text = path.read_text(encoding="utf-8").replace(",", "")
        assert not re.search(rf"\b{row['before']}\b", text) or not re.search(rf"\b{row['after']}\b", text)
        assert _has(results, before, after, row["unit"]) is None
        return
    d = _has(results, before, after, row["unit"])
    assert d is not None, [(x["before"], x["after"], x["unit"]) for x in results]
    assert not d["quoted"] and d["relative"] == pytest.approx(after / before - 1.0)
    # index.csv's delta_pct is (after/before - 1) * 100, to one decimal
    assert 100 * d["relative"] == pytest.approx(float(row["delta_pct"]), abs=0.06)


def test_what_each_posted_patch_states_first():
    """The best reading of each file (the first result) and its conversion."""
    first = {p.name: _found(p)[0] for p in sorted(PATCHES.glob("*.diff"))}
    napi = first["napi-consume-skb-alien-defer.diff"]
    assert (napi["before"], napi["after"], napi["unit"], napi["how"]) == ("80", "120", "Mpps", "one line")
    assert napi["delta_ns_per_packet"] == pytest.approx(1e3 / 120 - 1e3 / 80) and napi["text"] == "80 -> 120 Mpps"
    pool = first["page-pool-alloc-pages-bulk.diff"]
    assert (pool["before"], pool["after"], pool["unit"]) == ("3,771,046", "4,249,224", "pps")
    assert pool["before_converted"] == pytest.approx(265.18, abs=0.01)   # index.csv: 265.2 -> 235.3 ns/packet
    assert pool["after_converted"] == pytest.approx(235.34, abs=0.01) and pool["stated_pct"] == "+12.68%"
    veth = first["veth-xdp-alloc-skb-bulk.diff"]
    assert (veth["before"], veth["after"], veth["how"]) == ("~3.64", "~3.79", "labelled lines")
    assert veth["delta_ns_per_packet"] == pytest.approx(1e3 / 3.79 - 1e3 / 3.64)
    free = first["slub-bulk-free-detached-freelist.diff"]
    # the table against the current in-kernel bulking comes before the one against the generic fallback
    assert "curr in-kernel" in free["lines"][1] and free["label"] == "bulk 1"
    inline = first["page-alloc-inline-rmqueue-pcplist.diff"]
    assert (inline["before_value"], inline["after_value"], inline["how"]) == (110, 106, "implied")
    assert inline["also"] == [{"unit": "ns", "before": "30.633", "after": "29.595"}]
    assert inline["per"] == "element" and inline["delta_ns_per_packet"] is None


def test_a_kpps_rate_is_kilo_and_an_mpps_rate_mega():
    """One rate in each prefix, on a line of the form a reviewer reported missed and on real lines: ns per packet."""
    (d, *_) = pn.measured(pm.read_mails("It went from 1110 Kpps to 2128 Kpps.\n"))
    assert (d["unit"], d["before_value"], d["after_value"]) == ("Kpps", 1110, 2128)
    assert d["before_converted"] == pytest.approx(1e6 / 1110) and d["after_converted"] == pytest.approx(1e6 / 2128)
    assert d["delta_ns_per_packet"] == pytest.approx(-430.98, abs=0.01)
    seed = pn.measured(pm.read_mails((SEEDS / "000_062ad420d30618bd.txt").read_bytes()))[0]
    assert seed["unit"] == "pps" and seed["delta_ns_per_packet"] == pytest.approx(-14.028, abs=0.001)
    mpps = pn.measured(pm.read_mails((SEEDS / "002_e998980d6ab8325f.txt").read_bytes()))
    assert [(d["before"], d["after"]) for d in mpps if not d["quoted"]] == [("3.737", "3.766"), ("3.79", "3.765")]
    # the seed's own arithmetic: "__GFP_ZERO loosing 0.029Mpps and 2.06 ns slower", "gaining ... 1.75 ns faster"
    assert [round(d["delta_ns_per_packet"], 2) for d in mpps if not d["quoted"]] == [-2.06, 1.75]
    (v,) = [x for x in pn.values("256Kpps being actually sent on wire") if x.unit]
    assert (v.canon, v.factor) == ("Kpps", 1e3)
    assert [pn._canon(u)[:2] for u in ("kpps", "Mpps", "mpps", "pps", "Gbit/s", "Mb/sec", "Mbps", "Krps")] == [
        ("Kpps", "packets"), ("Mpps", "packets"), ("Mpps", "packets"), ("pps", "packets"), ("Gbit/s", "bits"),
        ("Mbit/s", "bits"), ("Mbit/s", "bits"), ("Krps", "requests")]


def test_a_bit_rate_with_the_packet_size_the_mail_states():
    """Seed 000's pktgen lines with their pps figure taken out: the Mb/sec pair, at the 60-byte packets the
    mail states ("(60byte,0frags)"), is the same ns per packet as the pps pair it stood beside."""
    text = (SEEDS / "000_062ad420d30618bd.txt").read_text()
    cut = re.sub(r"(- (?:Unp|P)atched kernel *: )\d+pps ", r"\1", text)
    assert cut.count("kernel: 1150Mb/sec") == 1 and "(60byte,0frags)" in cut
    d = next(x for x in pn.measured(pm.read_mails(cut)) if x["unit"] == "Mb/sec")
    assert d["packet_bytes"] == 60 and d["assumed"] == ""
    assert d["delta_ns_per_packet"] == pytest.approx(1e9 / 2479970 - 1e9 / 2396594, rel=2e-3)


def test_a_bit_rate_without_a_packet_size_assumes_64_bytes_and_says_so():
    (d, *_) = pn.measured(pm.read_mails("Before: 9.41 Gbit/s\nAfter: 9.90 Gbit/s\n"))
    assert d["unit"] == "Gbit/s" and d["packet_bytes"] == 64 and "64-byte packets ASSUMED" in d["assumed"]
    assert d["before_converted"] == pytest.approx(64 * 8 / 9.41) and d["better"] is True
    (d, *_) = pn.measured(pm.read_mails("iperf with 1500 byte packets:\n w/o: 900 Mbit/s\n with: 940 Mbit/s\n"))
    assert d["packet_bytes"] == 1500 and d["assumed"] == ""
    assert d["delta_ns_per_packet"] == pytest.approx(1500 * 8e3 / 940 - 1500 * 8e3 / 900)


def test_cycles_stay_cycles_and_say_per_what():
    free = _found(PATCHES / "kfree-skb-list-free-bulk.diff")
    (d,) = free
    assert (d["before"], d["after"], d["how"]) == ("109", "64", "order")
    assert d["converted_unit"] == "cycles" and d["delta"] == -45 and d["note"] == "cycles kept as cycles, per element"
    alloc = _found(PATCHES / "slub-bulk-alloc-strategy.diff")
    row16 = next(x for x in alloc if x["label"] == "Bulk 16")
    assert (row16["before_value"], row16["after_value"], row16["stated_pct"]) == (45, 32, "28.9%")
    assert row16["also"] == [{"unit": "ns", "before": "11.451", "after": "8.148"}]
    assert len(alloc) == 14 and all(x["how"] == "table columns" for x in alloc)


def test_ns_per_packet_labelled_lines_and_one_line_forms():
    (d, *_) = pn.measured(pm.read_mails("before: 30.633 ns per packet\nafter:  29.595 ns per packet\n"))
    assert d["converted_unit"] == "ns/packet" and d["delta_ns_per_packet"] == pytest.approx(-1.038)
    (d, *_) = pn.measured(pm.read_mails("unpatched/patched: 3.2/3.9 Mpps\n"))
    assert (d["before_value"], d["after_value"], d["unit"]) == (3.2, 3.9, "Mpps")
    (d, *_) = pn.measured(pm.read_mails("Before the patch 2.1 Mpps, after it 2.4 Mpps on one core.\n"))
    assert (d["before_value"], d["after_value"], d["how"]) == (2.1, 2.4, "labelled")
    (d, *_) = pn.measured(pm.read_mails("xdp_redirect w/o patch: 7,100,010 pps\n"
                                        "xdp_redirect with patch: 7,401,112 pps\n"))
    assert (d["before_value"], d["after_value"]) == (7100010, 7401112)
    # a request rate is not a packet rate: converted per request, no ns per packet
    (d, *_) = _found(SEEDS / "001_7275fb263ebb0d7d.txt")
    assert (d["before"], d["after"], d["unit"], d["converted_unit"]) == ("392.2", "396.4", "Krps", "ns/request")
    assert d["delta_ns_per_packet"] is None


def test_row_tables_and_their_diff_row():
    cpumap = _found(PATCHES / "cpumap-napi-skb-cache-get-bulk.diff")
    gro_on = _has(cpumap, 4, 4.7, "Mpps")
    assert gro_on["label"] == "threaded GRO -> thr bulk GRO (GRO on)" and gro_on["stated_pct"] == "+17%"
    assert _has(cpumap, 2.3, 2.4, "Mpps")["stated_pct"] == "+4%"
    assert _has(cpumap, 2.7, 2.4, "Mpps")["better"] is False   # against the pre-series cpumap, GRO off
    assert all(d["mail"] == 2 for d in cpumap) and len(cpumap) == 3   # "N/A" is no number
    pool = _found(PATCHES / "page-pool-alloc-pages-bulk.diff")
    assert [(d["after"], d["stated_pct"]) for d in pool] == [("4,249,224", "+12.68%"), ("3,940,242", "+4.49%")]


def test_percentages_as_relative_changes():
    napi = _found(PATCHES / "napi-consume-skb-alien-defer.diff")
    rel = [d for d in napi if d["kind"] == "relative"]
    assert [(d["stated_pct"], d["relative"], d["better"]) for d in rel] == [("~50%", 0.5, True)]
    # the profiles' shares (98.00%, 31.01% ...) and the bloat-o-meter's "+0.00%" are no measured change
    assert len(napi) == 2 and not [d for d in _found(PATCHES / "page-alloc-inline-rmqueue-pcplist.diff")
                                   if d["kind"] == "relative"]
    (d,) = [x for x in _found(SEEDS / "003_5888f0c7cba9df69.txt") if x["kind"] == "relative"]
    assert d["relative"] == pytest.approx(0.22)


def test_quoted_lines_are_the_quoted_mail_s_measurement_after_the_reply_s_own():
    """Seed 002: the reply quotes the patch's "bpf-next master: ~3.64Mpps / ... ~3.75Mpps"; they are the quoted
    mail's measurement, not the reply's: read, marked quoted, after every pair the mails' own lines state.  A
    reply that is only the quote and its attribution line reads them, marked quoted."""
    thread = _found(SEEDS / "002_e998980d6ab8325f.txt")
    (quote,) = [d for d in thread if d["before"] == "~3.64"]
    assert quote["quoted"] and thread.index(quote) > max(i for i, d in enumerate(thread) if not d["quoted"])
    veth = (PATCHES / "veth-xdp-alloc-skb-bulk.diff").read_text()
    body = veth[veth.index("Split ndo_xdp_xmit"):veth.index("Signed-off-by")]
    reply = "On Fri, 29 Jan 2021, Lorenzo Bianconi wrote:\n" + "".join(f"> {x}\n" for x in body.split("\n"))
    (d,) = pn.measured(pm.read_mails(reply))
    assert (d["before"], d["after"], d["quoted"]) == ("~3.64", "~3.79", True)
    own = reply + "\nI get 3.5 Mpps before and 3.6 Mpps after on my box.\n"
    assert [(d["before"], d["quoted"]) for d in pn.measured(pm.read_mails(own))] == [("3.5", False), ("~3.64", True)]


def test_a_diff_and_a_version_line_are_not_measurements():
    """Numbers in the diff (``#define VETH_XDP_BATCH 16``), the diffstat and git's version line are no
    measurement: only the veth mail's two rates are found."""
    veth = _found(PATCHES / "veth-xdp-alloc-skb-bulk.diff")
    assert [(d["before"], d["after"]) for d in veth] == [("~3.64", "~3.79")]
    assert [v.text for v in pn.values("2.48.1")] == []


def test_before_and_after_blocks_pair_line_by_line():
    """A "before:" block and an "after:" block of time_bench lines (the quoted-printable archive mail of
    tests/data/mail): each benchmark paired with itself by its Type, in both blocks."""
    found = _found(DATA / "mail" / "qp_pipe_quoted_page_pool_stats.eml")
    assert len(found) == 11 and all(d["how"] == "labelled lines" and d["per"] == "element" for d in found)
    by_type = {re.search(r"Type:(\S+)", d["label"]).group(1): (d["before_value"], d["after_value"]) for d in found}
    assert by_type["no-softirq-page_pool01"] == (19, 18) and by_type["tasklet_page_pool03_slow"] == (123, 121)
    assert by_type["tasklet_page_pool02_ptr_ring"] == (45, 43) and by_type["for_loop"] == (1, 1)
    # a heading that names the patch labels the lines under it: the repeated runs on arm64
    first = _found(DATA / "mail" / "repeats_three_setups_page_pool_arm64.txt")[0]
    assert (first["before"], first["after"]) == ("3", "2")
    assert first["label"] == "For tasklet_page_pool01_fast_path before this patchset"
    assert first["also"] == [{"unit": "ns", "before": "31.171", "after": "27.496"}]


def test_a_from_to_pair_a_line_wrap_split_is_read():
    """"could go from 1,872,565 pps" / "to 1,961,009 pps." on two lines (the xsk completion-queue lock split's
    mail, tests/data/patches/xsk-cq-lock-split.diff): one pair, in pps, the rows of both lines."""
    from skbmodel import patchmail, patchnumbers
    text = ("From: A <a@b.c>\nSubject: [PATCH net-next] x\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\n"
            "With this patch, the performance number could go from 1,872,565 pps\nto 1,961,009 pps. It's a "
            "minor rise of around 5%.\n")
    first = patchnumbers.measured(patchmail.read_mails(text))[0]
    assert (first["before"], first["after"], first["unit"]) == ("1,872,565", "1,961,009", "pps")
    assert len(first["lines"]) == 2 and first["delta_ns_per_packet"] < 0


# ---------------------------------------------------------------- the collected mails' formats
COLLECTED = DATA / "patches"
COLLECTED_INDEX = [r for r in csv.DictReader((COLLECTED / "index.csv").open(encoding="utf-8")) if r["before"]]
#: collected measurements the reader does not read from their file, and why
NOT_READ = {
    "alien-skb-defer-xdpsock-2": "prose that says the number 'is around 1,680,000' and, reverted, 'increased to "
                                 "1,850,000': no before/after wording to read",
    "napi-skb-cache-process-udptx": "the mail states only the after (130 Mpps); the before is the earlier series'",
    "napi-skb-cache-process-xdpsock-2": "prose: 'the number is around 1,680,000' ... 'the number was around "
                                        "1,730,000' two sentences apart",
}


@pytest.mark.parametrize("row", COLLECTED_INDEX, ids=[r["id"] for r in COLLECTED_INDEX])
def test_each_collected_measurement_is_read_from_its_file(row):
    """Every before/after of tests/data/patches/index.csv is read from its file with its value, in its unit or,
    where the mail prints none, as written (not converted) -- or named in NOT_READ with the reason."""
    results = _found(COLLECTED / row["file"])
    before, after = float(row["before"]), float(row["after"])
    got = [d for d in results if d["before_value"] == pytest.approx(before) and d["after_value"] ==
           pytest.approx(after)]
    if row["id"] in NOT_READ:
        assert not got
        return
    assert got, [(d["before"], d["after"], d["unit"]) for d in results]
    d = got[0]
    if d["unit"]:  # in the unit the index gives (the index writes a bit rate's unit as the mail does)
        assert _canon(d["unit"]) == _canon(re.sub(r"^Mbits?(?:/sec)?$", "Mbit/s", row["unit"].split(" (")[0]))
    else:  # where the numbers' paragraph prints no unit: read as written, never converted
        assert d["kind"] == "count" and d["delta_ns_per_packet"] is None and d["converted_unit"] is None


def test_a_bare_mbit_under_before_and_after_headings():
    """skb-defer-free-percpu.diff: "Before:" / "Average throughput: 49685 Mbit." ... "After patch:" / "Average
    throughput: 73076 Mbit.": a bit rate written without "/s", paired by the headings, 64-byte packets assumed."""
    (d,) = [x for x in _found(COLLECTED / "skb-defer-free-percpu.diff") if x["kind"] == "rate"]
    assert (d["before"], d["after"], d["how"]) == ("49685", "73076", "labelled lines")
    assert d["packet_bytes"] == 64 and "ASSUMED" in d["assumed"] and d["delta_ns_per_packet"] < 0


def test_from_x_to_y_with_the_unit_after_the_second_number():
    """skb-heads-bulk-reuse-v1.diff: "a nice bump from 910 to 935 Mbits while": the unit of both from the second."""
    (d,) = _found(COLLECTED / "skb-heads-bulk-reuse-v1.diff")
    assert (d["before_value"], d["after_value"], _canon(d["unit"])) == (910, 935, "Mbit/s")
    assert not pn.measured(pm.read_mails("It moved from 2012 to 2015 with no change.\n"))


def test_without_and_with_labels_and_numbers_without_a_unit():
    """veth-page-pool-recycle.diff: "without PP recycle: 1,855,069" / "with PP recycle: 2,033,439" under the
    test's "pktgen -> ..." line; veth-napi-skb-reuse.diff: "without reusing skb:" / "reusing skb:".  No unit is
    printed: the pair is read as written, its relative change kept, nothing converted or judged faster."""
    pp = [d for d in _found(COLLECTED / "veth-page-pool-recycle.diff") if d["kind"] == "count"]
    assert [(d["before"], d["after"]) for d in pp][:2] == [("1,855,069", "2,033,439"), ("1,494,890", "1,585,462")]
    assert pp[0]["label"].startswith("pktgen -> veth1 -> veth0(XDP_TX) -> veth1(XDP_DROP): without PP recycle")
    assert pp[0]["relative"] == pytest.approx(2033439 / 1855069 - 1) and pp[0]["better"] is None
    assert pp[0]["converted_unit"] is None and "no unit" in pp[0]["note"] and "(no unit printed)" in pp[0]["text"]
    reuse = [d for d in _found(COLLECTED / "veth-napi-skb-reuse.diff") if d["kind"] == "count"]
    assert len(reuse) == 5 and reuse[0]["label"].endswith("without reusing skb -> reusing skb")


def test_a_list_with_its_baseline_noted():
    """xsk-batch-xmit.diff: "copy mode: 1,861,347 pps (baseline)" over "batch mode: 2,344,052 pps (+25.9%)", ...:
    the noted baseline is the before of each other row of its block, the row's percentage kept."""
    found = _found(COLLECTED / "xsk-batch-xmit.diff")
    first = found[0]
    assert (first["before"], first["after"], first["unit"]) == ("1,861,347", "2,344,052", "pps")
    assert first["label"] == "copy mode -> batch mode" and first["stated_pct"] == "+25.9%"
    i40e = [d for d in found if d["before"] == "1,813,071"]
    assert [d["label"] for d in i40e] == ["copy mode -> xmit.more", "copy mode -> zc mode", "copy mode -> AF_PACKET"]


def test_iperf_sections_under_negated_headings():
    """fec-page-pool-rx.diff: "--- Non Page Pool implementation on i.MX8 ----" and "--- Page Pool implementation
    on i.MX8 ----", each over iperf's per-second lines: the last line (iperf's total) of the negated section is
    the before, of the other the after; one pair per board."""
    found = _found(COLLECTED / "fec-page-pool-rx.diff")
    assert [(d["before"], d["after"], d["unit"]) for d in found] == [("875", "933", "Mbits/sec"),
                                                                       ("605", "688", "Mbits/sec")]
    assert found[1]["label"].startswith("Non Page Pool implementation on i.MX6SX -> Page Pool")


def test_a_from_to_in_nested_quotes_with_the_unit_named_before():
    """napi-skb-cache-process.diff: a reply quotes (four levels deep) "The pps number goes from" / "1,458,644 to
    1,647,235 by running [2].": read from the quotes, marked quoted, in pps (the word before the numbers); the
    next paragraph's "decrease in af_xdp from 1,980,000 to 1,458,644" names no unit: read as written."""
    found = _found(COLLECTED / "napi-skb-cache-process.diff")
    pps = next(d for d in found if d["before"] == "1,458,644")
    assert pps["quoted"] and pps["unit"] == "pps" and pps["delta_ns_per_packet"] < 0 and len(pps["lines"]) == 2
    bare = next(d for d in found if d["before"] == "1,980,000")
    assert bare["quoted"] and bare["unit"] == "" and bare["kind"] == "count"
