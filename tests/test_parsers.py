"""Parsers of user measurements: real tool output lines, bad input, and fuzzing.

Real text: the seed mails (public; copied to tests/data/seeds, and their key lines below) and public
prototype-kernel / pktgen / xdp-bench output formats in
tests/data/prototype_kernel_formats.txt.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from skbmodel.evidence import parsers
from skbmodel.evidence.observations import SEED_CSV
from skbmodel.evidence.parsers import Measurement, ParseError, ParseResult

DATA = Path(__file__).with_name("data")
SEEDS = DATA / "seeds"
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# seed 004 (and 000): the slab_bulk_test01 lines of the kfree_skb_list patch
SEED_004 = """The module 'slab_bulk_test01' results at bulk 16 element:
 kmem-in-loop Per elem: 109 cycles(tsc) 30.532 ns (step:16)
 kmem-bulk    Per elem: 64 cycles(tsc) 17.905 ns (step:16)
"""
# seed 002: time_bench_memset lines as quoted in the veth thread
SEED_002 = """  - memset_skb_tail Per elem: 37 cycles(tsc) 10.463 ns
  - memset_skb_tail_roundup Per elem: 37 cycles(tsc) 10.468 ns
 - memset_variable_step(256) Per elem: 31 cycles(tsc) 8.803 ns
 - memset_256 Per elem: 41 cycles(tsc) 11.552 ns
 - memset_variable_step(512) Per elem: 35 cycles(tsc) 9.893 ns
(but don't use rep-stos for const 512 it is 72 cycles(tsc) 20.069 ns.)
> >   - memset_skb_tail Per elem: 37 cycles(tsc) 10.463 ns
"""
# seed 000: the pktgen result lines
SEED_000 = """Result line from pktgen script: count 100000000 (60byte,0frags)
  - Unpatched kernel: 2396594pps 1150Mb/sec (1150365120bps) errors: 1417469
  - Patched kernel  : 2479970pps 1190Mb/sec (1190385600bps) errors: 1422753
"""
# seed 003: the cpumap summary (one long quoted line in the seed file)
SEED_003 = ("> Plain %XDP_PASS on baseline, Page Pool driver: > > src cpu Rx drops dst cpu Rx > 2.1 Mpps N/A "
            "2.1 Mpps > > cpumap redirect (w/o leaving its node) on baseline: > > 6.8 Mpps 5.0 Mpps 1.8 Mpps > > "
            "cpumap redirect with skb PP recycling: > > 7.9 Mpps 5.7 Mpps 2.2 Mpps > +22% (from cpumap redir)")


def by(res: ParseResult, unit: str) -> list[Measurement]:
    return [m for m in res.measurements if m.unit == unit]


# ------------------------------------------------------------------------- real lines
def test_seed_004_time_bench_lines():
    res = parsers.parse_text(SEED_004, "004.txt")
    assert res.errors == []
    cyc = by(res, "cycles")
    assert [(m.test, m.value, m.conditions, m.output, m.line) for m in cyc] == [
        ("kmem-in-loop", 109.0, {"bulk": 16}, "slub.loop_cycles", 2),
        ("kmem-bulk", 64.0, {"bulk": 16}, "slub.bulk_cycles", 3)]
    assert [m.value for m in by(res, "ns")] == [30.532, 17.905]
    assert all(m.origin == "004.txt" and "Per elem" in m.raw for m in res.measurements)


def test_seed_002_memset_lines_mapped_to_zeroing_with_sizes():
    res = parsers.parse_text(SEED_002, "002.txt")
    assert res.errors == []
    got = {(m.test, m.output, m.conditions["zero_bytes"], m.value) for m in by(res, "cycles")}
    assert got == {("memset_skb_tail", "zero.memset_cycles", 184, 37.0),
                   ("memset_skb_tail_roundup", "zero.memset_cycles", 192, 37.0),
                   ("memset_variable_step(256)", "zero.erms_cycles", 256, 31.0),
                   ("memset_256", "zero.memset_cycles", 256, 41.0),
                   ("memset_variable_step(512)", "zero.erms_cycles", 512, 35.0),
                   ("but don't use rep-stos for const 512 it is", "zero.memset_cycles", 512, 72.0)}
    # the quoted repeat is kept once and reported
    assert any("repeated on line(s) 7" in n for n in res.notes)


def test_seed_000_pktgen_results():
    res = parsers.parse_text(SEED_000, "000.txt")
    assert res.errors == []
    assert [(m.value, m.unit, m.output, m.line) for m in res.measurements] == [
        (2396594.0, "pps", "kfree_skb_list.mpps", 2), (2479970.0, "pps", "kfree_skb_list.mpps", 3)]
    assert "Unpatched" in res.measurements[0].test
    assert "60-byte" in res.measurements[0].note


def test_seed_003_cpumap_summary():
    res = parsers.parse_text(SEED_003, "003.txt")
    assert res.errors == []
    got = [(m.output, m.value) for m in res.measurements]
    assert got == [("xdp_pass.mpps", 2.1), ("xdp_pass.mpps", 2.1),
                   ("cpumap.src_mpps", 6.8), ("cpumap.drop_mpps", 5.0), ("cpumap.dst_mpps", 1.8),
                   ("cpumap.src_mpps", 7.9), ("cpumap.drop_mpps", 5.7), ("cpumap.dst_mpps", 2.2)]
    assert all(m.unit == "Mpps" for m in res.measurements)


@pytest.mark.parametrize("name,n_mapped", [("004_5b5bcd2261c19f35.txt", 4), ("002_e998980d6ab8325f.txt", 12),
                                           ("000_062ad420d30618bd.txt", 6), ("003_5888f0c7cba9df69.txt", 8)])
def test_seed_files_parse_without_errors(name, n_mapped):
    res = parsers.parse_bytes((SEEDS / name).read_bytes(), name)
    assert res.errors == []
    assert len([m for m in res.measurements if m.output]) == n_mapped


def test_seed_without_measurements_says_what_was_expected():
    res = parsers.parse_bytes((SEEDS / "001_7275fb263ebb0d7d.txt").read_bytes(), "001.txt")
    assert res.measurements == []
    assert "no measurement lines found" in str(res.errors[0]) and "time_bench" in str(res.errors[0])


def test_public_prototype_kernel_formats():
    res = parsers.parse_text((DATA / "prototype_kernel_formats.txt").read_text(), "pk.txt")
    assert res.errors == []
    cyc = {(m.test, m.conditions.get("bulk")): (m.value, m.output) for m in by(res, "cycles")}
    # full dmesg time_bench lines (time_bench_loop format, with the measurement period tail)
    assert cyc[("tasklet_page_pool01_fast_path", None)] == (19.0, "page_pool.fast_cycles")
    assert cyc[("tasklet_page_pool02_ptr_ring", None)] == (57.0, "page_pool.ring_cycles")
    assert cyc[("tasklet_page_pool03_slow", None)] == (284.0, "page_pool.slow_cycles")
    # the process-context tests (the only ones of the upstream selftest benchmark) map too
    assert cyc[("no-softirq-page_pool01", None)] == (19.0, "page_pool.nosoftirq01_cycles")
    assert cyc[("for_loop", None)] == (0.0, None)
    assert cyc[("kmem fastpath reuse", 1)] == (184.0, "slub.loop_cycles")
    assert cyc[("kmem bulk_fallback", 1)] == (206.0, "slub.loop_cycles")
    assert cyc[("kmem bulk_quick_reuse", 1)] == (187.0, "slub.bulk_cycles")
    # bulk tables: one line per bulk size, two columns, both header styles
    assert cyc[("bulk table: Fallback bulking", 250)] == (104.0, "slub.loop_cycles")
    assert cyc[("bulk table: fastpath-bulking", 16)] == (17.0, "slub.bulk_cycles")
    assert cyc[("bulk table: Bulk API", 16)] == (19.0, "slub.bulk_cycles")
    assert cyc[("bulk table: Fallback", 1)] == (64.0, "slub.loop_cycles")
    pps = {m.test: (m.value, m.output) for m in by(res, "pps")}
    assert pps["pktgen: result"] == (2920481.0, "kfree_skb_list.mpps")
    assert pps["xdp-bench receive total"] == (9427705.0, "cpumap.src_mpps")
    assert pps["xdp-bench kthread total"] == (9427710.0, "cpumap.dst_mpps")
    assert pps["xdp_redirect_cpu XDP-RX total"] == (667952.0, "cpumap.src_mpps")
    assert pps["xdp_redirect_cpu cpumap-enqueue drops"] == (550150.0, "cpumap.drop_mpps")
    assert pps["xdp_redirect_cpu cpumap_kthread total"] == (117821.0, "cpumap.dst_mpps")
    assert pps["xdp-bench summary rx"] == (208552.0, None)


def test_seed_csv_maps_known_rows():
    csv = SEED_CSV.read_text()
    res = parsers.parse_text(csv, "seed.csv")
    assert res.errors == []
    m = next(m for m in res.measurements if m.raw.startswith("kfl-01,"))
    assert (m.output, m.value, m.unit, m.conditions, m.line) == ("slub.loop_cycles", 109.0, "cycles", {"bulk": 16}, 2)
    v = next(m for m in res.measurements if m.raw.startswith("veth-03,"))
    assert v.output == "veth.mpps" and v.conditions == {"xdp_batch": 8, "zero": "gfp_zero"}
    # every data row of the CSV is one measurement, on the row's own line
    rows = [ln for ln in csv.splitlines()[1:] if ln.strip()]
    assert sorted(m.line for m in res.measurements) == list(range(2, len(rows) + 2))


# ------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("text,line,needle", [
    ("kmem-in-loop Per elem: 109 cycles(tsc) 30.532 us (step:16)", 1, "expected 'Per elem: <int> cycles(tsc)"),
    ("x\nkmem-bulk Per elem: 64 cycles(tsc) 17905 ns (step:16)", 2, "GHz clock"),
    ("2396594pps 1150Mb/sec (9999bps) errors: 3", 1, "Mb/sec does not match"),
    ("Result: OK: 1(c1+d0) usec, 10 (60byte,0frags)\n  2396594pps 1226Mb/sec (1227056128bps) errors: 0", 2,
     "is not 2396594pps x 60 bytes x 8"),
    ("Result: Idle", 1, "did not finish OK"),
    ("foo 72 cycles(tsc) 20.069 us", 1, "not us"),
    ("Bulk - Fallback - fastpath-bulking\n  16 - 44 cycles(tsc) 11.221 ns", 2, "has 1 columns"),
    ("src cpu Rx drops dst cpu Rx\n6.8 Mpps 1.0 Mpps 1.8 Mpps", 2, "should equal dst"),
    ("Summary  lots rx/s", 1, "expected 'Summary <n> rx/s"),
    ("id,system,quantity,value,unit,condition,cpu,seed\nx,slub,q,abc,cycles,,,", 2, "is not a number"),
    ("id,system,quantity,value,unit,condition,cpu,seed\nx,slub,q,12,parsecs,,,", 2, "unit 'parsecs'"),
    ("id,system,quantity,value,unit,condition,cpu,seed\nkfl-01,slub,q,12,Mpps,,,", 2, "cannot be compared"),
    ("id,value\n1,2", 1, "lacks column"),
])
def test_bad_lines_name_the_line_and_what_was_expected(text, line, needle):
    res = parsers.parse_text(text, "lab.txt")
    assert res.errors, res
    e = res.errors[0]
    assert isinstance(e, ParseError) and e.line == line and needle in e.message, str(e)
    assert f"lab.txt, line {line}" in str(e)


def test_empty_binary_huge_and_non_utf8_input():
    assert "empty" in str(parsers.parse_bytes(b"", "a.txt").errors[0])
    assert "empty" in str(parsers.parse_text("  \n\n", "a.txt").errors[0])
    assert "binary" in str(parsers.parse_bytes(b"\x7fELF\x02\x01\x00\x00" * 100, "a.out").errors[0])
    assert "not UTF-8" in str(parsers.parse_bytes(b"caf\xe9 109 cycles", "l1.txt").errors[0])
    big = "kmem-in-loop Per elem: 109 cycles(tsc) 30.532 ns (step:16)\n" * (50 * 1024 * 1024 // 60)
    res = parsers.parse_text(big, "paste")
    assert res.measurements == [] and "MB; the limit is 2 MB" in str(res.errors[0])
    many = "x\n" * (parsers.MAX_LINES + 1)
    assert "lines; the limit is" in str(parsers.parse_text(many, "p").errors[0])
    ctrl = "".join(chr(i % 31 + 1) for i in range(5000))
    assert "binary" in str(parsers.parse_text(ctrl, "p").errors[0])


def test_out_of_model_range_condition_is_left_unmapped():
    res = parsers.parse_text("Type:memset_variable_step Per elem: 300 cycles(tsc) 83.3 ns (step:8192)", "m")
    m = by(res, "cycles")[0]
    assert m.output is None and "outside the model's range" in m.note


# ------------------------------------------------------------------------- fuzzing
def _check_result(res):
    assert isinstance(res, ParseResult)
    assert res.measurements or res.errors  # a result or a clear error, never silence
    for m in res.measurements:
        assert isinstance(m, Measurement) and m.line >= 1 and m.unit in parsers.UNITS
        assert m.value == m.value and m.value >= 0  # finite, non-negative
        assert m.output is None or m.output in parsers.MAPPABLE_OUTPUTS
        assert set(m.conditions) <= set(parsers.CONDITION_KEYS)
    for e in res.errors:
        assert isinstance(e, ParseError) and str(e) and e.line >= 0


LINES = [SEED_004, SEED_002, SEED_000, SEED_003, (DATA / "prototype_kernel_formats.txt").read_text()]
TOKENS = ["Per elem:", "cycles(tsc)", " ns", "(step:", ")", "Type:", "time_bench:", "pps", "Mb/sec", "bps)",
          "errors:", "Result: OK:", "(60byte,0frags)", "Bulk - Fallback - fastpath-bulking", " - ", "Mpps", "N/A",
          "src cpu Rx drops dst cpu Rx", "receive total", "pkt/s", "drop/s", "Summary", "rx/s", "err,drop/s",
          "memset_variable_step(", "kmem-in-loop", "\n", "> ", "|", "[  12.345] ", "9,427,705", "1e309", "-1",
          "id,system,quantity,value,unit,condition,cpu,seed\n", ",", "\x00", "\ufeff", "µs", "nan", "inf"]


@FUZZ
@given(st.text(max_size=2000))
@example("")
@example("\x00\x01\x02")
@example("id,system,quantity,value,unit,condition,cpu,seed\n\"unterminated")
def test_fuzz_any_text(text):
    _check_result(parsers.parse_text(text, "fuzz"))


@FUZZ
@given(st.lists(st.one_of(st.sampled_from(TOKENS), st.integers(0, 10**12).map(str),
                          st.floats(allow_nan=True, allow_infinity=True).map(str), st.text(max_size=8)),
                max_size=80))
def test_fuzz_token_soup(tokens):
    _check_result(parsers.parse_text("".join(tokens), "fuzz"))


@FUZZ
@given(st.sampled_from(LINES), st.integers(0, 10**6), st.text(max_size=20), st.integers(0, 10**6))
def test_fuzz_mutated_real_text(text, pos, insert, cut):
    pos %= len(text) + 1
    mutated = text[:pos] + insert + text[pos + cut % 50:]
    _check_result(parsers.parse_text(mutated, "fuzz"))


@FUZZ
@given(st.binary(max_size=3000))
def test_fuzz_any_bytes(data):
    _check_result(parsers.parse_bytes(data, "fuzz.bin"))


# ------------------------------------------------------------------------- clock and runs
# SYNTHETIC: the model's own slab_bulk_test01 curve (bulk 1..250, TSC 3.9978 GHz) printed as a dmesg log;
# a parser input, never a measurement
CURVE = (DATA / "slab_bulk_curve_4ghz_synthetic.txt").read_text()
PP_ORG = (DATA / "page_pool_two_kernels.org").read_text()     # two kernels under org headings, TSC 2.9941 GHz
KFL_MD = (DATA / "kfree_skb_list_bulk.md").read_text()        # two pktgen results under markdown headings


def _strip_tails(text: str) -> str:
    """The short form of time_bench lines (no measurement-period tail with the raw intervals)."""
    import re
    return re.sub(r" - \(measurement period.*", "", text)


def test_clock_inferred_from_the_cycles_ns_pairs_of_a_slab_curve():
    res = parsers.parse_text(CURVE, "curve.txt")
    assert res.errors == [] and len(res.measurements) == 58
    clock = parsers.infer_clock(res.measurements)
    # the full dmesg lines carry tsc_interval and time_interval: the clock to the digit
    assert clock.pairs == 29 and clock.ghz == pytest.approx(3.9978, rel=1e-6) and clock.warning == ""
    assert clock.describe() == "inferred from 29 cycles/ns pairs"
    # the short form has only whole cycles and ns: the median of (cycles + 0.5) / ns is within 0.5 %
    short = parsers.infer_clock(parsers.parse_text(_strip_tails(CURVE), "curve.txt").measurements)
    assert short.pairs == 29 and short.ghz == pytest.approx(3.9978, rel=0.005) and short.warning == ""
    assert abs(short.ghz / 4.0 - 1) < 0.005


def test_clock_of_seed_004_and_no_pairs():
    assert parsers.infer_clock(parsers.parse_text(SEED_004, "004.txt").measurements).ghz == \
        pytest.approx((109.5 / 30.532 + 64.5 / 17.905) / 2)
    none = parsers.infer_clock(parsers.parse_text(SEED_000, "000.txt").measurements)
    assert none.ghz is None and none.pairs == 0 and none.describe() == "no cycles/ns pairs"


def test_clock_pairs_that_disagree_by_more_than_2_percent_are_named():
    text = _strip_tails(CURVE) + "\n" + " kmem-in-loop Per elem: 109 cycles(tsc) 30.532 ns (step:16)\n" \
        " kmem-bulk    Per elem: 64 cycles(tsc) 17.905 ns (step:16)\n"
    clock = parsers.infer_clock(parsers.parse_text(text, "mix.txt").measurements)
    assert clock.ghz == pytest.approx(3.99, rel=0.005)
    assert "the cycles/ns pairs disagree: 2 of 31 differ from the median clock" in clock.warning
    assert "mix.txt, line 33 (3.586 GHz)" in clock.warning and "more than 2 %" in clock.warning


def test_runs_of_an_org_notebook_with_two_kernels():
    res = parsers.parse_text(PP_ORG, "pp.org")
    assert res.errors == []
    assert [(r.index, r.first, r.last, r.label, r.n_lines) for r in res.runs] == [
        (1, 7, 20, "baseline 6.15.0", 9), (2, 24, 37, "patched 6.15.0-pp-refill+", 9)]
    assert res.runs[0].describe() == 'run 1: lines 7-20 "baseline 6.15.0"'
    fast = {m.run: (m.line, m.value) for m in res.measurements
            if m.test == "tasklet_page_pool01_fast_path" and m.unit == "cycles"}
    assert fast == {1: (17, 19.0), 2: (34, 24.0)}
    # identical values in the two runs (for_loop, atomic_inc) are not quoted repeats: each run keeps its own
    assert sorted(m.run for m in res.measurements if m.test == "for_loop" and m.unit == "ns") == [1, 2]
    assert res.notes == []
    clocks = [parsers.infer_clock([m for m in res.measurements if m.run == k]) for k in (1, 2)]
    assert clocks[0].ghz == pytest.approx(2.9941, rel=1e-6)  # full lines
    assert clocks[1].ghz == pytest.approx(2.9941, rel=0.005) and clocks[1].pairs == 8  # short lines, >= 10 cycles


def test_runs_under_markdown_headings_drop_the_shared_title():
    res = parsers.parse_text(KFL_MD, "kfl.md")
    assert [(r.first, r.last, r.label) for r in res.runs] == [
        (6, 12, "unpatched 6.16.0 (KFREE_SKB_BULK_SIZE 1)"),
        (14, 20, "patched 6.16.0-kfl-bulk+ (bulk free, KFREE_SKB_BULK_SIZE 16)")]
    assert [(m.line, m.run) for m in res.measurements] == [(11, 1), (19, 2)]


def test_runs_split_at_headings_captions_and_other_modules_repeats_stay_together():
    a = " tasklet_page_pool01_fast_path Per elem: 19 cycles(tsc) 6.486 ns (step:0)"
    b = " tasklet_page_pool01_fast_path Per elem: 24 cycles(tsc) 8.139 ns (step:0)"
    c = " kmem-in-loop Per elem: 109 cycles(tsc) 30.532 ns (step:16)"

    def runs(text, name="t"):
        return [(r.first, r.last) for r in parsers.parse_text(text, name).runs]
    # the same module loaded again (dmesg, insmod, a root prompt, its name again) is a repeat: one run
    assert runs("\n".join(["[ 10.0] bench_page_pool_simple: Loaded", "[ 10.5]" + a,
                           "[ 99.0] bench_page_pool_simple: Loaded", "[ 99.5]" + b])) == [(1, 4)]
    assert runs("\n".join(["$ sudo insmod ./bench_page_pool_simple.ko", a, "$ sudo rmmod bench_page_pool_simple",
                           "$ sudo insmod ./bench_page_pool_simple.ko loop=1000", b])) == [(1, 5)]
    assert runs("\n".join(["bench_page_pool_simple: Loaded", a, "again with bench_page_pool_simple:", b])) == [(1, 4)]
    # another module starts a run
    assert runs("\n".join(["$ sudo insmod ./bench_page_pool_simple.ko", a,
                           "$ sudo modprobe slab_bulk_test01", c])) == [(1, 2), (3, 4)]
    # the module's own log lines are no load
    text = "\n".join(["[ 1.0] bench_page_pool_simple: Loaded", "[ 1.1]" + a,
                      "[ 1.2] bench_page_pool_simple: time_bench_page_pool02_ptr_ring(): Cannot use page_pool"
                      " fast-path",
                      "[ 1.3]" + c])
    assert runs(text) == [(1, 4)]
    # a root prompt is no markdown heading
    text = "\n".join(["## kernel A", "# modprobe bench_page_pool_simple", a, "# modprobe bench_page_pool_simple", b])
    res = parsers.parse_text(text, "r")
    assert [(r.first, r.last, r.label) for r in res.runs] == [(1, 5, "kernel A")]
    # prose that mentions modprobe is no module load (and "of" is no module name)
    assert runs("\n".join([a, "after one modprobe of the module the rest of it was idle", a])) == [(1, 3)]
    assert parsers._module_load("root@lab:~# sudo /sbin/modprobe slab_bulk_test01 step=16", set()) == "slab_bulk_test01"
    assert parsers._module_load("$ sudo modprobe -r slab_bulk_test01", set()) is None
    # blocks that measure the same test again: repeats without a caption, a new run under a caption of its own
    assert runs("\n".join([a, "", b, "", " memset_256 Per elem: 41 cycles(tsc) 11.552 ns"])) == [(1, 5)]
    text = "\n".join(["Before this patchset:", a, "", "After this patchset:", b])
    res = parsers.parse_text(text, "c")
    assert [(r.first, r.last, r.label) for r in res.runs] == [(1, 2, "Before this patchset"),
                                                               (4, 5, "After this patchset")]
    # a quoted copy of a line (the same values) stays in its run and is kept once
    res = parsers.parse_text("\n".join([a, "", "> " + a]), "q")
    assert [(r.first, r.last) for r in res.runs] == [(1, 3)] and len(res.measurements) == 2
    assert any("repeated on line(s) 3" in n for n in res.notes)


@pytest.mark.parametrize("name", ["000_062ad420d30618bd.txt", "002_e998980d6ab8325f.txt",
                                  "003_5888f0c7cba9df69.txt", "004_5b5bcd2261c19f35.txt"])
def test_each_seed_mail_is_one_run(name):
    res = parsers.parse_bytes((SEEDS / name).read_bytes(), name)
    assert len(res.runs) == 1 and {m.run for m in res.measurements} == {1}


# ------------------------------------------------------------------------- mail archives, repeats
MAIL = DATA / "mail"
PP07 = (MAIL / "page_pool07_bench_DMA_fix.org").read_text()                  # real: three kernels, one block each
WRAPPED = (MAIL / "wrapped_thunderbird_page_pool_dma_fix.txt").read_text()  # real: Thunderbird wrapped at 72 columns
QP_MAIL = (MAIL / "qp_pipe_quoted_page_pool_stats.eml").read_text()        # real: quoted-printable with '| ' quotes
REPEATS = (MAIL / "repeats_three_setups_page_pool_arm64.txt").read_text()  # real: three setups x three repeats


def _values(res, run=None):
    return [(m.test, m.unit, m.value, m.conditions, m.output) for m in res.measurements if run in (None, m.run)]


def test_the_three_kernel_notebook_lists_three_runs():
    res = parsers.parse_text(PP07, "pp07.org")
    assert res.errors == [] and res.repairs == []
    assert [(r.first, r.last, r.label, r.n_lines) for r in res.runs] == [
        (31, 61, "Bench-A on E5-1650: bench_page_pool_simple / baseline: Before patchset", 9),
        (63, 95, "Bench-A on E5-1650: bench_page_pool_simple / pp01-DMA-fix-v7", 9),
        (135, 170, "Bench-B: patchset 1-5 / E5-1650: pp01-DMA-fix-v7-p1-5+", 6)]
    fast = {m.run: m.value for m in res.measurements
            if m.test == "tasklet_page_pool01_fast_path" and m.unit == "cycles"}
    assert fast == {1: 19.0, 2: 24.0, 3: 19.0}


def test_repeats_in_a_real_mail_are_one_run_each_with_their_spread():
    res = parsers.parse_text(REPEATS, "arm64.txt")
    assert [(r.first, r.last, r.label) for r in res.runs][3:] == [
        (50, 104, "1. raw performance data before this patchset"),
        (108, 163, "2. raw performance data after this patchset"),
        (165, 221, "3. raw performance data for frag API after this patchset")]
    # the three summaries above the raw data are runs of their own (unlabelled numbers under a caption)
    assert [r.label for r in res.runs][:3] == ["For tasklet_page_pool01_fast_path before this patchset",
                                               "For tasklet_page_pool01_fast_path after this patchset",
                                               "a whole page for tasklet_page_pool01_fast_path"]
    fast = {m.run: (m.value, m.repeats, m.repeat_lines, m.typical) for m in res.measurements
            if m.test == "tasklet_page_pool01_fast_path" and m.unit == "ns"}
    assert fast == {4: (31.171, (31.172, 31.171, 31.171), (62, 81, 100), "minimum"),
                    5: (27.484, (27.496, 27.484, 27.514), (121, 140, 159), "minimum"),
                    6: (71.179, (71.179, 75.987, 75.795), (179, 198, 217), "minimum")}
    # the chosen line is kept whole: its cycles value is from the same line as its ns value
    cyc = next(m for m in res.measurements if m.run == 5 and m.test == "tasklet_page_pool01_fast_path"
               and m.unit == "cycles")
    assert (cyc.line, cyc.value) == (140, 2.0)
    assert [m.repeats_text() for m in res.measurements if m.run == 6 and m.test == "tasklet_page_pool01_fast_path"
            and m.unit == "ns"] == ["minimum of 3 repeats (71.179, 75.987, 75.795)"]
    # every test of a raw run repeated three times; their pooled spread in ns, to 3 significant digits
    assert "arm64.txt, run 5: 7 tests repeated 3 times" in " ".join(res.notes)
    noise = {k: parsers.noise([m for m in res.measurements if m.run == k]) for k in (4, 5, 6)}
    assert {k: (n.ns, n.tests, n.values) for k, n in noise.items()} == {
        4: (0.0755, 7, 21), 5: (0.804, 7, 21), 6: (1.36, 4, 12)}
    assert noise[5].describe() == ("0.804 ns: pooled standard deviation of 21 repeated values of 7 tests "
                                   "(arm64.txt, run 5)")


def test_quoted_printable_real_archive_text_is_decoded_and_said_so():
    import quopri
    res = parsers.parse_text(QP_MAIL, "v2.eml")
    assert res.errors == []
    assert res.repairs == ["v2.eml: quoted-printable undone (25 soft line breaks joined, 6 =XX codes decoded); "
                           "quote prefixes '|' stripped"]
    # the same as the text decoded by the standard library and unquoted by hand
    clean = quopri.decodestring(QP_MAIL.encode()).decode()
    clean = "\n".join(ln[2:] if ln.startswith("| ") else ln.lstrip("|") for ln in clean.splitlines())
    ref = parsers.parse_text(clean, "v2.eml")
    assert ref.repairs == [] and _values(res) == _values(ref)
    assert "loops=600000000" in clean  # decoded once: the header that stays in the decoded text is no reason again
    got = {(m.run, m.test): m.value for m in res.measurements if m.unit == "ns" and m.test.startswith("no-softirq")}
    assert got == {(1, "no-softirq-page_pool01"): 9.526, (1, "no-softirq-page_pool02"): 23.501,
                   (1, "no-softirq-page_pool03"): 60.697, (2, "no-softirq-page_pool01"): 9.028,
                   (2, "no-softirq-page_pool02"): 22.714, (2, "no-softirq-page_pool03"): 60.428}
    assert [r.label for r in res.runs] == ["For bench_page_pool_simple.ko loops=600000000 I neded up with, before",
                                           "after"]


def test_wrapped_real_archive_text_is_rejoined_and_reads_like_the_notebook():
    res = parsers.parse_text(WRAPPED, "wrapped.txt")
    assert res.errors == []
    assert res.repairs == ["wrapped.txt: 18 time_bench records that a mailer wrapped rejoined"]
    assert [(r.label, r.n_lines) for r in res.runs] == [("Before this patchset", 9), ("After this patchset", 9)]
    nb = parsers.parse_text(PP07, "pp07.org")
    for k in (1, 2):
        assert _values(res, k) == _values(nb, k)
    # a measurement names the first line of its record as given; the clock is exact (the tsc tail survived)
    m = next(m for m in res.measurements if m.test == "tasklet_page_pool01_fast_path" and m.run == 1)
    assert m.line == 49 and m.raw.endswith("tsc_interval:1943679246)")
    assert parsers.infer_clock([m for m in res.measurements if m.run == 1]).ghz == pytest.approx(3.6, abs=0.001)


def _qp(text: str) -> str:
    """What a mailer sends as quoted-printable (RFC 2045: soft breaks at 76 columns, =3D, =20)."""
    import quopri
    return quopri.encodestring(text.encode()).decode()


def _hard_wrap(text: str, width: int) -> str:
    """What a mailer without format=flowed does to long lines: break at the last space before ``width``."""
    import textwrap
    return "\n".join(w for ln in text.splitlines()
                     for w in (textwrap.wrap(ln, width, break_long_words=False, break_on_hyphens=False) or [""]))


@pytest.mark.parametrize("steps", [("qp",), ("wrap72",), ("wrap78",), (">",), (">", ">"), ("|",),
                                   ("qp", ">"), (">", "qp"), ("wrap72", ">", ">"), ("|", "wrap78"),
                                   ("wrap78", "qp", ">")], ids="-".join)
def test_every_mail_form_of_a_real_block_reads_like_the_clean_text(steps):
    """Each form made from a real block by doing what a mailer does, in the order given: ``qp`` encodes
    quoted-printable (76 columns), ``wrapN`` hard-wraps at N columns, ``>`` / ``|`` quote every line."""
    # the raw baseline block of the three-kernel notebook (real dmesg lines, 200+ characters each)
    block = PP07.split("#+begin_example\n")[1].split("#+end_example")[0]
    clean = parsers.parse_text(block, "b")
    text = block
    for step in steps:
        if step == "qp":
            text = _qp(text)
        elif step.startswith("wrap"):
            text = _hard_wrap(text, int(step[4:]))
        else:
            text = "\n".join(f"{step} {ln}" if ln else step for ln in text.splitlines())
    res = parsers.parse_text(text, "b")
    assert res.errors == [] and len(clean.measurements) == 18
    assert _values(res) == _values(clean)
    said = {"qp": "quoted-printable undone", "wrap72": "that a mailer wrapped rejoined",
            "wrap78": "that a mailer wrapped rejoined", ">": "quote prefixes", "|": "quote prefixes"}
    assert len(res.repairs) == 1 and all(said[s] in res.repairs[0] for s in steps)


def test_the_forms_quoted_in_the_issue_a_soft_break_and_a_record_cut_after_per_elem():
    # one soft break in a quoted line, and a quoted record that a mailer cut after "Per elem:" (the numbers
    # of Mina Almasry's v5 run as Toke's reply quotes them)
    text = ("> time_bench: Type:no-softirq-page_pool01 Per elem:\n"
            "> 11 cycles(tsc) 4.177 ns (step:0) - (measurement period\n"
            "> time:0.041777 sec time_interval:41777) - (invoke count:10000 tsc_interval:112799)\n"
            "> time_bench: Type:no-softirq-page_pool02 Per elem: 51 cycles(tsc) 19.117 ns=\n"
            " (step:0)\n")
    res = parsers.parse_text(text, "x")
    assert res.errors == []
    assert [(m.test, m.value, m.unit, m.line) for m in res.measurements] == [
        ("no-softirq-page_pool01", 11.0, "cycles", 1), ("no-softirq-page_pool01", 4.177, "ns", 1),
        ("no-softirq-page_pool02", 51.0, "cycles", 4), ("no-softirq-page_pool02", 19.117, "ns", 4)]
    assert res.repairs == ["x: quoted-printable undone (1 soft line break joined); 1 time_bench record that a "
                           "mailer wrapped rejoined; quote prefixes '>' stripped"]
    # text that merely ends a line in "=" is left alone
    plain = parsers.parse_text("VETH_XDP_BATCH=\n kmem-bulk Per elem: 64 cycles(tsc) 17.905 ns (step:16)\n", "p")
    assert plain.repairs == [] and len(plain.measurements) == 2
