"""benchmarks/bench_move_profile.py: a move is the samples between its two markers, charged to bundles."""
import pytest

from benchmarks.bench_move_profile import passes, split_moves


def _frame(fid, name, url="", children=()):
    return {"id": fid, "callFrame": {"functionName": name, "url": url, "lineNumber": 0, "columnNumber": 0},
            "children": list(children)}


def _profile(samples, deltas_us):
    nodes = [_frame(1, "(root)", children=[2, 3, 4, 6, 7]),
             _frame(2, "__skbMarkKey", "http://h/app.js"),
             _frame(3, "__skbMarkChart", "http://h/app.js"),
             _frame(4, "draw", "http://h/static/js/PlotlyChart.D9Z0_fxz.js", children=[5]),
             _frame(5, "getBoundingClientRect"),  # native, charged to its caller's bundle
             _frame(6, "(idle)"),
             _frame(7, "render", "http://h/static/js/react-dom.Dzbslgj4.js")]
    return {"nodes": nodes, "startTime": 0, "samples": samples, "timeDeltas": deltas_us}


def test_a_move_is_the_time_between_its_markers_by_bundle():
    # key marker, then 2 ms React, 3 ms of Plotly (1 ms of it native), 1 ms idle, chart marker; then samples
    # after the move that belong to none
    samples = [2, 7, 7, 4, 5, 4, 6, 3, 7, 7]
    deltas = [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]
    (move,) = split_moves(_profile(samples, deltas))
    assert move["react-dom"] == pytest.approx(2.0)
    assert move["PlotlyChart"] == pytest.approx(3.0)
    assert move["(idle)"] == pytest.approx(1.0)
    assert sum(move.values()) == pytest.approx(6.0)


def test_a_key_marker_without_a_chart_marker_is_no_move():
    assert split_moves(_profile([2, 7, 7], [0, 1000, 1000])) == []


def test_passes_are_runs_of_commits_closer_than_the_gap():
    assert passes([]) == 0
    assert passes([10.0, 12.0, 20.0, 60.0, 61.0, 200.0]) == 3
    assert passes([10.0, 26.0], gap_ms=15.0) == 2
