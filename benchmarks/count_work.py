"""How often one question is worked out: resolves of a state and model evaluations, counted, not timed.

A *question* is one resolution of a state into its page, A and B (:meth:`skbmodel.question.Question.of_state`
when its cache misses); a *scenario read* is one reading of a scenario from a state's flat keys
(:func:`skbmodel.question.scenario_of`: A, or B as A plus its overrides); a *flat-key read* is one call of
``links.state.scenario`` or ``links.state.profile_for`` (a scenario read makes two); an *evaluation* is one call of
:func:`skbmodel.model.evaluate` (one vectorised pass, however many states it holds) outside the
*relevance probe*, the evaluation that finds which constants move which outputs, once per profile and
process (:func:`skbmodel.constant_sets.relevance`, counted apart); a *propagation* is one
:func:`skbmodel.uncertainty.linearise`.
Counted for a cold Compare table (:func:`skbview.tables.compare_rows`, every cache empty) and for one cold
run of each page in Streamlit's AppTest (a new session; the model caches emptied first).

    python benchmarks/count_work.py [--pages compare,veth,...]

Counts do not depend on the machine: the figures in docs/benchmarks.md are exact.
"""
from __future__ import annotations

import argparse
import collections
import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skbmodel import answers, constant_sets, model, question, uncertainty  # noqa: E402 - after the sys.path line
from skbmodel.links import state as sk_state  # noqa: E402
from skbmodel.question import Question  # noqa: E402
from skbmodel.links.pages import SLUGS  # noqa: E402

COUNTED = ((Question, "_resolve", "question"), (question, "scenario_of", "resolve"), (sk_state, "scenario", "flat"),
           (sk_state, "profile_for", "flat"),
           (model, "evaluate", "evaluation"), (uncertainty, "linearise", "propagation"))
COUNTS: collections.Counter = collections.Counter()
_PROBING = [False]


def _install() -> None:
    for mod, name, kind in COUNTED:
        fn = getattr(mod, name)

        @functools.wraps(fn)
        def counted(*a, _fn=fn, _kind=kind, **k):
            COUNTS["probe" if _kind == "evaluation" and _PROBING[0] else _kind] += 1
            return _fn(*a, **k)
        setattr(mod, name, counted)
    probe = constant_sets.relevance

    @functools.wraps(probe)
    def probing(*a, **k):
        _PROBING[0] = True
        try:
            return probe(*a, **k)
        finally:
            _PROBING[0] = False
    constant_sets.relevance = probing


def _memoised():
    """Every ``functools`` cache of a loaded ``skbmodel`` or ``skbview`` module (a link's headline value, the
    profiles, the slab geometry, ...): found, not listed, so that a cache added later is emptied too."""
    for name, mod in list(sys.modules.items()):
        if name.partition(".")[0] in ("skbmodel", "skbview"):
            for v in list(vars(mod).values()):
                if callable(getattr(v, "cache_clear", None)) and getattr(v, "__module__", None) == name:
                    yield v


def _clear_caches() -> None:
    answers.clear_caches()
    constant_sets.clear_cache()  # the relevance probe counted too, in every row alike
    for fn in _memoised():
        fn.cache_clear()


def compare_table(query: str) -> dict:
    from skbview import tables
    state, _ = sk_state.decode(query)
    _clear_caches()
    COUNTS.clear()
    tables.compare_rows(Question.of_state({**state, "page": "compare"}))
    return dict(COUNTS)


def page_run(slug: str) -> dict:
    from streamlit.testing.v1 import AppTest
    _clear_caches()
    at = AppTest.from_file(str(ROOT / "dashboard.py"), default_timeout=120)
    at.query_params["page"] = slug
    COUNTS.clear()
    at.run()
    if at.exception:
        raise SystemExit(f"{slug}: {at.exception}")
    return dict(COUNTS)


def _row(c: dict) -> str:
    return " | ".join(str(c.get(k, 0)) for k in ("question", "resolve", "flat", "evaluation", "probe", "propagation"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", default=",".join(SLUGS), help="pages to run cold (default: every page)")
    args = ap.parse_args(argv)
    _install()
    print("| what | questions | scenario reads | flat-key reads | evaluations | relevance probes | propagations |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for q in ("b_xdp_batch=4", "cpu=epyc-9684x&b_cpu=e5-1650v4"):
        c = compare_table(q)
        print(f"| Compare table, cold, `{q}` | {_row(c)} |")
    for slug in args.pages.split(","):
        c = page_run(slug)
        print(f"| page `{slug}`, cold run | {_row(c)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
