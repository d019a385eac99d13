"""Parsers of user measurements: real tool output lines, bad input, and fuzzing.

Real text: the seed mails in /work/shared/seeds (copied lines below so the tests also run without
that folder) and public prototype-kernel / pktgen / xdp-bench output formats in
tests/data/prototype_kernel_formats.txt.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from skbmodel import parsers
from skbmodel.parsers import Measurement, ParseError, ParseResult

DATA = Path(__file__).with_name("data")
SEEDS = Path("/work/shared/seeds")
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


@pytest.mark.skipif(not SEEDS.is_dir(), reason="shared seed folder not present")
@pytest.mark.parametrize("name,n_mapped", [("004_5b5bcd2261c19f35.txt", 4), ("002_e998980d6ab8325f.txt", 12),
                                           ("000_062ad420d30618bd.txt", 6), ("003_5888f0c7cba9df69.txt", 8)])
def test_seed_files_parse_without_errors(name, n_mapped):
    res = parsers.parse_bytes((SEEDS / name).read_bytes(), name)
    assert res.errors == []
    assert len([m for m in res.measurements if m.output]) == n_mapped


@pytest.mark.skipif(not SEEDS.is_dir(), reason="shared seed folder not present")
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
    assert cyc[("no-softirq-page_pool01", None)][1] is None
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
    csv = Path(parsers.__file__).with_name("data").joinpath("seed-measurements.csv").read_text()
    res = parsers.parse_text(csv, "seed.csv")
    assert res.errors == []
    got = {m.test[:20]: m for m in res.measurements}
    m = next(m for m in res.measurements if m.raw.startswith("kfl-01,"))
    assert (m.output, m.value, m.unit, m.conditions, m.line) == ("slub.loop_cycles", 109.0, "cycles", {"bulk": 16}, 2)
    v = next(m for m in res.measurements if m.raw.startswith("veth-03,"))
    assert v.output == "veth.mpps" and v.conditions == {"xdp_batch": 8, "zero": "gfp_zero"}
    assert got  # every row parsed


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
