"""``benchmarks/count_work.py`` counts cold work: before each row it empties every cache of the model."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from skbmodel import answers, question
from skbmodel.links import state as sk_state

ROOT = Path(__file__).resolve().parents[1]


def _count_work():
    spec = importlib.util.spec_from_file_location("count_work", ROOT / "benchmarks" / "count_work.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_a_cold_row_starts_with_every_functools_cache_of_the_model_empty():
    cw = _count_work()
    state, _ = sk_state.decode("page=compare&b_xdp_batch=4")
    assert answers.headline_value(state) > 0  # the link's headline: the answer's, which a warm cache would hide
    assert answers._CACHE and question._CACHE
    caches = list(cw._memoised())
    assert any(f.cache_info().currsize for f in caches)
    cw._clear_caches()
    assert not answers._CACHE and not question._CACHE
    assert {f.__qualname__: f.cache_info().currsize for f in cw._memoised()} == {
        f.__qualname__: 0 for f in cw._memoised()}
