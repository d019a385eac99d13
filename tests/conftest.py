"""Fixtures shared by several test modules, and an opt-in random test order.

``SKB_TEST_ORDER_SEED=<int>`` runs the collected tests in an order drawn from that seed: the modules
shuffled, then the tests inside each module (so a module's fixtures are still set up once). With
``SKB_TEST_ORDER=items`` as well, every test is shuffled among all the others, across modules. The seed
is printed in the session header, so an order that fails can be run again.

Under pytest-xdist (``scripts/test.sh`` runs ``-n 2 --dist loadgroup``) every test is put in a group that
one worker runs whole: its module (so a module's server, browser and fixtures are set up once, as in one
process), except that the modules reading ``oos_report`` form one group (the report is computed once, not
once per worker), and the browser tests form two groups (``BROWSER_SECOND``), one a worker. With
``SKB_TEST_ORDER=items`` no group is set, so the shuffled tests are spread over the workers one by one."""
import os
import random
import shutil

import pytest

from skbmodel import answers
from skbmodel.machine import profile as P

ORDER_SEED = os.environ.get("SKB_TEST_ORDER_SEED", "").strip()
ORDER_MODE = os.environ.get("SKB_TEST_ORDER", "modules").strip() or "modules"
ORDER_LINE = f"test order: shuffled, SKB_TEST_ORDER_SEED={ORDER_SEED} SKB_TEST_ORDER={ORDER_MODE}"


def pytest_report_header(config):
    if ORDER_SEED:
        return [ORDER_LINE]
    return []


def pytest_terminal_summary(terminalreporter):
    if ORDER_SEED:  # the header is not shown under -q; the summary is
        terminalreporter.write_line(ORDER_LINE)


#: the session fixtures whose modules one worker runs together (each is computed once per process)
SHARED_SESSION_FIXTURES = ("oos_report",)
#: the groups of the tests marked ``browser``: the modules of ``BROWSER_SECOND`` form one, the rest the other
BROWSER_GROUP = "browser"
#: about half the browser tests' CPU (walks, drags and the load test stay in the first group): in one group
#: the browser tests were the run's longest stretch on one worker, and the other core sat idle 15 % of the
#: run after its modules were done (docs/benchmarks.md, "Test suite speed")
BROWSER_SECOND = ("tests/test_browser_share_link.py", "tests/test_browser_fresh_server.py",
                  "tests/test_deploy_proxy.py", "tests/test_exports.py", "tests/test_browser_harness.py",
                  "tests/test_browser_answers.py", "tests/test_browser_design.py", "tests/test_browser_calibrate.py")


def _xdist_groups(items) -> None:
    """Mark each test with the ``xdist_group`` its worker is chosen by (see the module's docstring)."""
    shared = {}
    for item in items:
        for name in SHARED_SESSION_FIXTURES:
            if name in getattr(item, "fixturenames", ()):
                shared.setdefault(item.nodeid.split("::", 1)[0], name)
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        # browser tests in two groups, not one per module: the worker of a group starts one shared Streamlit
        # server for it (tests/browser_util.py shared_server) and keeps it.  Two Chromiums side by side under
        # a heavy load from other sessions (load average 10-22) once made waits time out; with the two cores
        # to itself the suite passed with every test shuffled among the others (SKB_TEST_ORDER=items).
        if item.get_closest_marker("browser"):
            group = f"{BROWSER_GROUP}-{2 if module in BROWSER_SECOND else 1}"
        else:
            group = shared.get(module, module)
        item.add_marker(pytest.mark.xdist_group(group))


class _Groups:
    """A plugin of its own: a module has one ``pytest_collection_modifyitems``, and the shuffle below must
    run last while this runs first."""

    @pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups
    def pytest_collection_modifyitems(self, session, config, items):
        if not (ORDER_SEED and ORDER_MODE == "items"):
            _xdist_groups(items)


def pytest_configure(config):
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_Groups(), "skb-xdist-groups")


@pytest.hookimpl(trylast=True)  # after pytest's own reordering by fixture, which would regroup
def pytest_collection_modifyitems(session, config, items):
    if not ORDER_SEED:
        return
    if ORDER_MODE not in ("modules", "items"):
        raise pytest.UsageError(f"SKB_TEST_ORDER must be 'modules' or 'items', not {ORDER_MODE!r}")
    rng = random.Random(int(ORDER_SEED))
    if ORDER_MODE == "items":
        rng.shuffle(items)
        return
    modules: dict[str, list] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    order = list(modules)
    rng.shuffle(order)
    shuffled = []
    for name in order:
        group = modules[name]
        rng.shuffle(group)
        shuffled.extend(group)
    items[:] = shuffled


@pytest.fixture(scope="session", autouse=True)
def _stop_shared_servers():
    """At the end of the session, stop the Streamlit servers the browser tests shared
    (tests/browser_util.py ``shared_server``; none if no browser test ran)."""
    yield
    import sys
    browser_util = sys.modules.get("tests.browser_util")
    if browser_util is not None:
        browser_util.stop_shared_servers()


@pytest.fixture
def old_e5_version(tmp_path, monkeypatch):
    """The archive plus an older e5-1650v4 version (as if the profile had been recalibrated since):
    ``(version, profile)``."""
    for f in P.ARCHIVE_DIR.glob("*.toml"):
        shutil.copy(f, tmp_path)
    old = P.load_profile("e5-1650v4").with_values({"slub_fast_pair_cycles": 100.0, "veth_base_cycles": 850.0})
    ver = P.profile_version(old)
    (tmp_path / f"e5-1650v4@{ver}.toml").write_text(P.archive_toml(old))
    monkeypatch.setattr(P, "ARCHIVE_DIR", tmp_path)
    P.clear_cache()
    answers.clear_caches()
    yield ver, old
    monkeypatch.undo()
    P.clear_cache()
    answers.clear_caches()


@pytest.fixture(scope="session")
def oos_report():
    """The out-of-sample report (``skbmodel.evidence.outofsample.report`` of the corpus), computed once per session:
    it refits every curve and derives every described CPU, the slowest computation the tests read; the
    regenerate-and-compare check, the CLI's JSON and the protocols' own tests all read this one."""
    from skbmodel.evidence import corpus, outofsample, protocols
    return outofsample.report(corpus.load_corpus(), protocols.PROTOCOLS)
