"""The Calibrate page's steps between the pasted text and the fit (skbmodel/evidence/userinput.py): the mapping
table a user edits, its error paths, runs that cannot be fitted together, and the clock field."""
import dataclasses

import numpy as np
import pytest

from skbmodel.evidence import parsers, userfit, userinput as ui
from skbmodel.machine.profile import load_profile

E5 = load_profile("e5-1650v4")


def _m(line, value, unit="cycles", output="slub.loop_cycles", origin="paste", run=1, **cond):
    return dataclasses.replace(
        parsers.Measurement(origin=origin, line=line, raw="", test=f"t{line}", value=float(value), unit=unit,
                            conditions=cond or {"bulk": 16}, output=output, kind="test"), run=run)


MS = [_m(1, 109.0), _m(2, 64.0, output="slub.bulk_cycles"), _m(3, 30.3, unit="ns")]


def test_the_table_round_trips_unedited():
    rows = ui.mapping_rows(MS)
    assert [r["use"] for r in rows] == [True, True, True]
    want = dict(use=True, where="paste:1", test="t1", value=109.0, unit="cycles", output="slub.loop_cycles",
                conditions="bulk=16", tol_pct=pytest.approx(MS[0].tol * 100), note=MS[0].note)
    assert {k: rows[0][k] for k in want} == want
    edited, problems = ui.apply_mapping(MS, rows)
    assert problems == [] and edited == MS


def test_edits_reach_the_measurements():
    rows = ui.mapping_rows(MS)
    rows[0].update(value="110", tol_pct=2, conditions="bulk=32, zero_bytes=256")
    rows[1].update(use=False)
    rows[2].update(output="slub.bulk_cycles")
    edited, problems = ui.apply_mapping(MS, rows)
    assert problems == []
    assert [m.line for m in edited] == [1, 3]
    assert edited[0].value == 110.0 and edited[0].tol == pytest.approx(0.02)
    assert edited[0].conditions == {"bulk": 32, "zero_bytes": 256}
    assert edited[1].output == "slub.bulk_cycles" and edited[1].unit == "ns"


@pytest.mark.parametrize("edit, problem", [
    (dict(conditions="bulk"), "conditions 'bulk': expected key=value"),
    (dict(conditions="nope=1"), "conditions 'nope=1': expected key=value with key one of bulk,"),
    (dict(conditions="bulk=abc"), "conditions bulk='abc': expected an integer in [1, 256]"),
    (dict(conditions="bulk=999"), "conditions bulk='999': expected an integer in [1, 256]"),
    (dict(value="12 cycles"), "value and tolerance must be numbers"),
    (dict(tol_pct=None), "value and tolerance must be numbers"),
    (dict(output="veth.mpps"), "a value in cycles cannot be compared with veth.mpps (Mpps)"),
])
def test_each_error_path_names_the_row_and_drops_it(edit, problem):
    rows = ui.mapping_rows(MS)
    rows[1].update(edit)
    edited, problems = ui.apply_mapping(MS, rows)
    assert len(problems) == 1 and problems[0].startswith(f"{MS[1].where()}: ") and problem in problems[0], problems
    assert [m.line for m in edited] == [1, 3]


def test_a_ticked_row_without_an_output_is_left_out_silently():
    rows = ui.mapping_rows(MS)
    rows[0]["output"] = ""
    edited, problems = ui.apply_mapping(MS, rows)
    assert problems == [] and [m.line for m in edited] == [2, 3]


def test_conditions_parse_and_print_back():
    cond, problem = ui.parse_conditions(" kfl_bulk=16 , drop_batch=64,")
    assert problem is None and cond == {"kfl_bulk": 16, "drop_batch": 64}
    assert ui.parse_conditions(ui.conditions_text(cond)) == (cond, None)
    assert ui.parse_conditions("") == ({}, None) and ui.parse_conditions(None) == ({}, None)


def test_two_runs_that_measure_the_same_point_conflict():
    a, b = _m(1, 109.0, run=1), _m(7, 111.0, run=2)
    other = _m(8, 64.0, output="slub.bulk_cycles", run=2)
    key, m1, m2 = ui.runs_in_conflict([a, b, other])
    assert (m1, m2) == (a, b) and key == a.key()
    assert ui.runs_in_conflict([a, other]) is None                   # different outputs
    assert ui.runs_in_conflict([a, b], runs={("paste", 1)}) is None  # one run chosen
    assert ui.runs_in_conflict([a, dataclasses.replace(b, run=1)]) is None  # repeats inside one run
    assert ui.of_run([a, b, other], parsers.Run(origin="paste", index=2, first=7, last=8, label="", n_lines=2)) \
        == [b, other]


def test_sources_parse_into_one_set_and_a_new_input_gets_a_new_signature():
    text = "time_bench: Type:kmem bulk_fallback Per elem: 109 cycles(tsc) 30.3 ns (step:16)\n"
    p = ui.parse_sources([("paste", text), ("upload.txt", b"no numbers here\n")])
    assert {m.origin for m in p.measurements} == {"paste"} and 109.0 in [m.value for m in p.measurements]
    assert len(p.errors) == 1 and p.errors[0].startswith("upload.txt")
    assert ui.parse_sources([("paste", text)]).sig != ui.parse_sources([("paste", text + " ")]).sig
    assert ui.signature([("a", "x")]) == ui.signature([("a", b"x")])


def test_the_clock_field():
    inferred = parsers.Clock(ghz=3.59996, pairs=3)
    assert ui.default_ghz(inferred, E5) == 3.6
    assert ui.default_ghz(parsers.Clock(ghz=None, pairs=0), E5) == E5.ghz
    assert ui.default_ghz(parsers.Clock(ghz=100.0, pairs=1), E5) == E5.ghz          # outside a profile's range
    ghz, src = ui.clock_for_fit(inferred, 3.6, E5)
    assert ghz == 3.6 and src == inferred.describe()
    assert ui.clock_for_fit(parsers.Clock(ghz=None, pairs=0), E5.ghz, E5) == (None, "")
    assert ui.clock_for_fit(parsers.Clock(ghz=None, pairs=0), 2.5, E5) == (2.5, "given on the Calibrate page")
    assert ui.clock_for_fit(inferred, 2.5, E5) == (2.5, "given on the Calibrate page")


def test_the_fitted_constants_table():
    ms = [_m(1, 109.0, bulk=16), _m(2, 64.0, output="slub.bulk_cycles", bulk=16)]
    res = userfit.fit(ms, E5, ["slub_fast_pair_cycles"], label="t")
    rows = ui.fitted_constants(res, E5)
    assert [r["constant"] for r in rows] == ["ghz", "slub_fast_pair_cycles"]
    assert np.isnan(rows[0]["stderr"]) and rows[0]["change_pct"] == 0.0
    r = rows[1]
    assert r["value"] == res.profile.value("slub_fast_pair_cycles") and r["stderr"] >= 0
    assert r["change_pct"] == pytest.approx((r["value"] / E5.value("slub_fast_pair_cycles") - 1) * 100)


def test_an_input_over_the_limit_is_refused_whole_its_cpu_line_too():
    """A file over the parsers' limit is refused with the limit named, and its cpuinfo line is not read either
    (the page would otherwise name a CPU from a file it says it did not read)."""
    from skbmodel.evidence import parsers, userinput
    head = b"model name : Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz\n"
    big = userinput.parse_sources([("big.txt", head + b"x" * (parsers.MAX_TEXT_CHARS + 1))])
    assert big.cpu is None and any("the limit is" in e for e in big.errors)
    small = userinput.parse_sources([("small.txt", head)])
    assert small.cpu is not None
