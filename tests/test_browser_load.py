"""Concurrent reviewers on one server, a short sample of benchmarks/load_test.py: 3 headless Chromium
sessions against one real dashboard server, each with its own slider values, each making a fixed number
of moves of the SLUB page's bulk slider, switching pages through the sidebar every third move and
exporting the chart (PNG + SVG) every second move. The work is counted, not timed: no errors, and no
session ever sees another session's values, chart, file name or image."""
from __future__ import annotations

import asyncio
import sys
from argparse import Namespace
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
pytest.importorskip("playwright.async_api")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import load_test  # noqa: E402 - after the sys.path set-up above

#: three moves carry every kind of work a session does: a move each time, a page switch after the third, an
#: export after the second (the benchmark, benchmarks/load_test.py, runs the long sample)
MOVES = 3


def test_three_sessions_three_moves_each_no_errors_no_leaks():
    args = Namespace(sessions=3, duration=0.0, single=0.0, export_every=2, moves=MOVES)
    res = asyncio.run(load_test.main_async(args))
    many = res["many"]
    assert len(many) == 3
    errors = [(s.index, e) for s in many for e in s.errors]
    leaks = [(s.index, e) for s in many for e in s.leaks]
    assert not errors, errors
    assert not leaks, leaks
    # every session did all of its work: its moves, a page switch after every third, an export after every second
    assert [s.moves for s in many] == [MOVES] * 3
    assert [s.page_switches for s in many] == [MOVES // 3] * 3
    assert [s.exports for s in many] == [MOVES // 2] * 3
    assert [len(s.latencies_ms) for s in many] == [MOVES] * 3
    assert load_test.summarize(res, args) == 0
