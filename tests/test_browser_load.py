"""Concurrent reviewers on one server, a short sample of benchmarks/load_test.py: 3 headless Chromium
sessions for 10 s against one real dashboard server, each with its own slider values, moving the
SLUB page's bulk slider, switching pages through the sidebar and exporting the chart (PNG + SVG).
No errors, and no session ever sees another session's values, chart, file name or image."""
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


def test_three_sessions_for_ten_seconds_no_errors_no_leaks():
    args = Namespace(sessions=3, duration=10.0, single=0.0, export_every=2)
    res = asyncio.run(load_test.main_async(args))
    many = res["many"]
    assert len(many) == 3
    errors = [(s.index, e) for s in many for e in s.errors]
    leaks = [(s.index, e) for s in many for e in s.leaks]
    assert not errors, errors
    assert not leaks, leaks
    assert all(s.moves >= 1 for s in many), [s.moves for s in many]
    assert sum(s.exports for s in many) >= 1
    assert all(s.latencies_ms for s in many)
    assert load_test.summarize(res, args) == 0
