"""Helpers for browser tests and latency benchmarks (importable; not tests).

Playwright always drives the system Chromium (skbview.exporter.chromium_path()); never run
`playwright install`.

    from tests.browser_util import streamlit_server, launch_chromium, wait_for_app, plotly_y
    with streamlit_server("benchmarks/bare_app.py") as url, sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page()
        page.goto(url)
        wait_for_app(page)
        print(plotly_y(page, 0))
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator, Mapping

from skbview.exporter import chromium_path
from tests.limits import BROWSER_WAIT_S, SERVER_START_TIMEOUT_S

REPO_ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = chromium_path()
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
#: the limit of one wait for what the page draws or writes, in ms (Playwright's unit)
WAIT_MS = BROWSER_WAIT_S * 1000
#: A link of the dashboard's sidebar navigation (skbview/app/nav.py draws them with st.page_link)
NAV_LINK = '.st-key-page_nav [data-testid="stPageLink-NavLink"]'


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _health_ok(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.status == 200 and r.read().strip() == b"ok"
    except (urllib.error.URLError, OSError, ConnectionError):
        return False


def _stop_group(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    if proc.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)  # the server was started in its own session/group
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=timeout)
            return
        except subprocess.TimeoutExpired:
            continue


def _start_streamlit(script: Path, port: int, env: Mapping[str, str] | None, timeout: float):
    """``(process, log)`` of `streamlit run script` on ``port`` once /_stcore/health says ok; RuntimeError
    (with the server's log) if it exits or ``timeout`` s pass first."""
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(script),
        "--server.headless=true",
        "--server.address=127.0.0.1",
        f"--server.port={port}",
        "--browser.gatherUsageStats=false",
    ]
    full_env = dict(os.environ)
    full_env.update(env or {})
    log = tempfile.TemporaryFile(mode="w+b")
    proc = subprocess.Popen(
        cmd,
        cwd=REPO_ROOT,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    while not _health_ok(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop_group(proc)
            log.seek(0)
            output = log.read().decode(errors="replace")[-4000:]
            log.close()
            state = f"exited with {proc.returncode}" if proc.poll() is not None else "timed out"
            raise RuntimeError(
                f"streamlit server for {script} {state} before /_stcore/health said ok "
                f"(port {port}). Output:\n{output}"
            )
        time.sleep(0.1)
    if proc.poll() is not None:  # the health answer came from another process's server on that port
        log.close()
        raise RuntimeError(f"streamlit server for {script} exited with {proc.returncode}: Port {port} is not available")
    return proc, log


#: tries of a server start on a port found free that another process took first (parallel test workers)
PORT_TRIES = 3


@contextlib.contextmanager
def streamlit_server(
    script_path: str | os.PathLike,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = SERVER_START_TIMEOUT_S,
) -> Iterator[str]:
    """Run `streamlit run script_path` from the repo root; yield its base URL.

    Waits until /_stcore/health answers "ok" (RuntimeError after `timeout` s,
    with the server's log), and terminates the whole process group on exit.
    Without a ``port``, a free one; if another process took it before the server bound it, another.
    """
    script = Path(script_path)
    if not script.is_absolute():
        script = REPO_ROOT / script
    for attempt in range(1 if port else PORT_TRIES):
        chosen = port or free_port()
        try:
            proc, log = _start_streamlit(script, chosen, env, timeout)
            break
        except RuntimeError as e:
            if port or attempt == PORT_TRIES - 1 or f"Port {chosen} is not available" not in str(e):
                raise
    try:
        yield f"http://127.0.0.1:{chosen}"
    finally:
        _stop_group(proc)
        log.close()


#: script -> (the context that stops its server, URL): the servers one test process shares
_SHARED: dict[str, tuple[contextlib.ExitStack, str]] = {}


def shared_server(script: str = "dashboard.py") -> str:
    """The URL of one `streamlit run script` for the whole test process (each xdist worker has its own),
    started on first use and stopped by :func:`stop_shared_servers` (tests/conftest.py, at the end of the
    session). Every browser session on it is a new Streamlit session with its own state; what they share
    is what a real server's visitors share (the process, its caches). A server that stopped answering is
    started again."""
    if script in _SHARED:
        stack, url = _SHARED[script]
        if _health_ok(int(url.rsplit(":", 1)[1])):
            return url
        stack.close()
        del _SHARED[script]
    stack = contextlib.ExitStack()
    url = stack.enter_context(streamlit_server(script))
    _SHARED[script] = (stack, url)
    return url


def stop_shared_servers() -> None:
    """Stop every server :func:`shared_server` started."""
    while _SHARED:
        _, (stack, _) = _SHARED.popitem()
        stack.close()


atexit.register(stop_shared_servers)  # also when the session ends without the fixture's teardown


def launch_chromium(playwright, **kwargs):
    """Launch headless system Chromium through Playwright (never a downloaded browser)."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM, args=list(CHROMIUM_ARGS), headless=True, **kwargs
    )


# True once the app view exists, nothing is running and no element is stale.
_APP_IDLE_JS = """() => {
    const app = document.querySelector('[data-testid="stAppViewContainer"], [data-testid="stApp"]');
    if (!app) return false;
    // ScriptRunState: initial | running | rerunRequested | stopRequested | notRunning | compilationError
    const stApp = document.querySelector('[data-testid="stApp"]');
    const state = stApp && stApp.getAttribute('data-test-script-state');
    if (state && state !== 'notRunning' && state !== 'compilationError') return false;
    const status = document.querySelector('[data-testid="stStatusWidget"]');
    if (status && /running|stop/i.test(status.innerText || '')) return false;
    if (document.querySelector('[data-stale="true"]')) return false;
    // the main area's block, not the first in document order (an app whose sidebar holds only the
    // navigation has an empty block there)
    const block = document.querySelector('[data-testid="stMainBlockContainer"]')
        || document.querySelector('[data-testid="stVerticalBlock"]');
    return !!block && block.children.length > 0;
}"""


def wait_for_app(page, timeout: float = BROWSER_WAIT_S, settle_ms: int = 150) -> None:
    """Wait until Streamlit has finished running the script and rendered the app view.

    Requires the "idle" state to hold twice, `settle_ms` apart, so that a rerun that
    starts right after a widget change is not mistaken for the finished state.  On a loaded
    machine a rerun can start later than that: a test that reads what a change draws waits for
    that itself (:func:`eventually`, :func:`wait_for_metrics`, a ``wait_for_function`` on the
    chart or the URL), and uses this only to know that no run is going on.
    """
    deadline = time.monotonic() + timeout
    while True:
        remaining_ms = max(1.0, (deadline - time.monotonic()) * 1000)
        page.wait_for_function(_APP_IDLE_JS, timeout=remaining_ms)
        page.wait_for_timeout(settle_ms)
        if page.evaluate(_APP_IDLE_JS):
            return
        if time.monotonic() > deadline:
            raise TimeoutError("Streamlit app did not become idle")


_PLOTLY_Y_JS = """([chartIndex, traceIndex]) => {
    const gd = document.querySelectorAll('.js-plotly-plot')[chartIndex];
    if (!gd || !gd._fullData || !gd._fullData[traceIndex]) return null;
    return Array.from(gd._fullData[traceIndex].y || []);
}"""


def plotly_y(page, chart_index: int = 0, trace_index: int = 0) -> list | None:
    """`gd._fullData[trace_index].y` of the chart_index-th `.js-plotly-plot`, as a list
    (None if the chart or trace is not rendered)."""
    return page.evaluate(_PLOTLY_Y_JS, [chart_index, trace_index])


def slider_selector(key: str) -> str:
    """CSS selector of the focusable thumb of the st.slider with `key`.

    In Streamlit 1.67 the thumb is a visually hidden `input[type=range]` (implicit ARIA
    role "slider", no role attribute); older versions used a `[role="slider"]` div.
    """
    return f'.st-key-{key} input[type="range"], .st-key-{key} [role="slider"]'


def slider_value(page, key: str) -> float:
    """Current value of the st.slider with `key` (from the thumb's value/aria-valuenow), once it is drawn (a
    full rerun redraws the sidebar)."""
    page.wait_for_selector(slider_selector(key), state="attached", timeout=WAIT_MS)
    return float(page.evaluate(
        """(sel) => { const el = document.querySelector(sel);
                      return el.value !== undefined && el.value !== '' ? el.value
                             : el.getAttribute('aria-valuenow'); }""",
        slider_selector(key),
    ))


def focus_slider(page, key: str) -> None:
    """Give keyboard focus to the slider thumb so ArrowLeft/ArrowRight move it."""
    page.locator(slider_selector(key)).first.focus()


def wait_for_plotly(page, chart_index: int = 0, timeout: float = BROWSER_WAIT_S) -> None:
    """Wait until the chart_index-th Plotly chart has data."""
    page.wait_for_function(
        """(i) => { const gd = document.querySelectorAll('.js-plotly-plot')[i];
                    return !!(gd && gd._fullData && gd._fullData.length); }""",
        arg=chart_index,
        timeout=timeout * 1000,
    )


_METRIC_TEXTS_JS = """(sel) => Array.from(document.querySelectorAll(sel + ' [data-testid="stMetricValue"]'))
    .filter(e => !e.closest('[data-stale="true"]')).map(e => e.innerText.trim())"""


def metric_texts(page, container: str = "[data-testid='stMain']") -> list[str]:
    """The values of the metrics drawn in ``container`` (a CSS selector), in order, stale ones left out."""
    return page.evaluate(_METRIC_TEXTS_JS, container)


def wait_for_metrics(page, want: list[str], container: str = "[data-testid='stMain']",
                     timeout: float = BROWSER_WAIT_S) -> None:
    """Wait until the metrics in ``container`` show exactly ``want`` (their value texts, in order)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(f"(a) => JSON.stringify(({_METRIC_TEXTS_JS})(a[0])) === JSON.stringify(a[1])",
                               arg=[container, list(want)], timeout=timeout * 1000)
    except PlaywrightTimeout as e:  # say what was shown instead
        raise AssertionError(f"metrics {metric_texts(page, container)} never became {want}") from e


@contextlib.contextmanager
def app_and_browser(script: str = "dashboard.py", fresh: bool = False):
    """A Streamlit server for ``script`` and one headless system Chromium: yields ``(url, browser)``.
    The server is the test process's shared one (:func:`shared_server`), or with ``fresh`` one of its own
    (for what a server does on its first request), stopped on exit."""
    from playwright.sync_api import sync_playwright

    with contextlib.ExitStack() as stack:
        url = stack.enter_context(streamlit_server(script)) if fresh else shared_server(script)
        p = stack.enter_context(sync_playwright())
        browser = launch_chromium(p)
        try:
            yield url, browser
        finally:
            browser.close()


def eventually(check, timeout: float = BROWSER_WAIT_S):
    """Retry an assertion until it holds (a link's page switch or URL write-back takes a rerun): the condition
    is what the page shows; ``timeout`` only ends a run that never shows it."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
            # a comparison handed in as the check (``lambda: a == b``) fails by returning False, not raising
            assert result is not False, "the check returned False"
            return result
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)


def page_with_errors(browser, width: int = 1400, height: int = 1100):
    """``(context, page, errors)``: a fresh browser context's page whose uncaught JS errors go to ``errors``."""
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    page.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    return ctx, page, errors


# ---------------------------------------------------------------- the page's live control (skbview.app.live)
class LiveControl:
    """A live control drawn in the page (``st.components.v2``: a shadow root inside ``.st-key-live_<slug>``)."""

    def __init__(self, page, key: str):
        self.page, self.key = page, key
        self.range = page.locator(f".st-key-{key} input[type=range]").first  # CSS locators pierce shadow roots

    def state(self) -> dict | None:
        """What the control reports of itself: its scenario id, whether it holds that scenario's payload
        (``has``), the scenario it last asked a payload for (``asked``) and the value of its last render."""
        return self.page.evaluate("(k) => (window.__liveState || {})[k] || null", self.key)

    def error(self) -> str | None:
        """The error its last render raised, if any."""
        return self.page.evaluate("() => window.__liveError || null")

    def payload_bytes(self) -> int:
        return int(self.page.evaluate("(k) => new TextEncoder().encode((window.__livePayload || {})[k] || '').length",
                                      self.key))

    def bound(self, name: str) -> float:
        """The range input's ``min`` or ``max``."""
        return float(self.range.evaluate(f"(r) => Number(r.{name})"))

    def has_focus(self) -> bool:
        return bool(self.range.evaluate("(r) => r.getRootNode().activeElement === r"))


_LIVE_READY_JS = """(k) => !!(window.__liveState && window.__liveState[k] && window.__liveState[k].has
                                && window.Plotly)"""


def live_control(page, slug: str, timeout: float = BROWSER_WAIT_S) -> LiveControl:
    """``slug``'s live control once it holds its payload and the page's plotly.js has loaded."""
    key = f"live_{slug}"
    page.wait_for_function(_LIVE_READY_JS, arg=key, timeout=timeout * 1000)
    return LiveControl(page, key)


def live_value(control: LiveControl) -> float:
    """The live control's value (its range input)."""
    return float(control.range.input_value())


def live_thumb_x(control: LiveControl, value: float) -> tuple[float, float]:
    """Page coordinates of the thumb's centre at ``value`` (the range input's track less the thumb's width)."""
    r = control.range.bounding_box()
    lo, hi = control.bound("min"), control.bound("max")
    thumb = 14.0
    x = r["x"] + thumb / 2 + (r["width"] - thumb) * (value - lo) / (hi - lo)
    return x, r["y"] + r["height"] / 2


def plotly_trace_in(page, container_key: str, trace_index: int = 0) -> dict | None:
    """``{x, y}`` of ``gd._fullData[trace_index]`` of the Plotly chart inside ``.st-key-<container_key>``."""
    return page.evaluate(
        """([key, t]) => { const gd = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
             if (!gd || !gd._fullData || !gd._fullData[t]) return null;
             return {x: Array.from(gd._fullData[t].x || []), y: Array.from(gd._fullData[t].y || [])}; }""",
        [container_key, trace_index])


@contextlib.contextmanager
def one_tab(script: str = "dashboard.py", width: int = 1400, height: int = 1000, timeout_ms: int = WAIT_MS):
    """One server, one browser and one tab for a module's walk: yields ``(url, page, errors)``; actions wait
    ``timeout_ms`` for the app (a loaded 2-core machine)."""
    with app_and_browser(script) as (url, browser):
        ctx, page, errors = page_with_errors(browser, width, height)
        page.set_default_timeout(timeout_ms)
        try:
            yield url, page, errors
        finally:
            ctx.close()
