"""One warm, thread-safe kaleido exporter for Plotly figures (system Chromium).

Without a running server every ``fig.to_image`` launches a fresh Chromium (~2 s).
This module starts kaleido's shared sync server lazily, once, and afterwards a
PNG export takes ~150-200 ms.

kaleido's shared sync server is *not* thread-safe (a known kaleido limitation): two
concurrent callers can receive each other's images. Every export therefore goes
through ``_LOCK``. Code that exports figures must use :func:`figure_to_png` /
:func:`figure_to_svg` (or :func:`export`) and never call ``fig.to_image`` /
``pio.to_image`` directly while the server is running.

kaleido's server thread also dies silently if Chromium cannot be started, after
which a plain ``calc_fig_sync`` would block forever. Calls are therefore made
from a helper thread and watched: if the server thread dies or the call exceeds
``timeout`` seconds, :class:`ExportError` is raised and the server is reset.

Chromium is looked up in ``$BROWSER_PATH`` (kaleido's own override) and then
``/usr/bin/chromium``.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
import time
from typing import Any

import plotly.io as pio

__all__ = [
    "ExportError",
    "chromium_path",
    "export",
    "figure_to_png",
    "figure_to_svg",
    "is_running",
    "shutdown",
]

# Debian's package installs /usr/bin/chromium; Ubuntu's chromium-browser installs the snap.
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/snap/bin/chromium", "/usr/bin/chromium-browser")
DEFAULT_CHROMIUM = CHROMIUM_CANDIDATES[0]
DEFAULT_WIDTH = 900
DEFAULT_HEIGHT = 500
# kaleido's own per-render timeout is 90 s; the watchdog sits above it.
_KALEIDO_RENDER_TIMEOUT = 60.0
_CALL_TIMEOUT = 120.0

_LOCK = threading.Lock()
_started = False
_atexit_registered = False


class ExportError(RuntimeError):
    """Static export of a figure failed (Chromium missing, crashed or timed out)."""


def chromium_path() -> str:
    """Path of the Chromium binary the exporter will use."""
    if os.environ.get("BROWSER_PATH"):
        return os.environ["BROWSER_PATH"]
    return next((p for p in CHROMIUM_CANDIDATES if os.access(p, os.X_OK)), DEFAULT_CHROMIUM)


def _missing_chromium_message(path: str) -> str:
    return (
        f"Static image export needs Chromium, but no executable was found at {path!r}. "
        "Install it with `bash scripts/setup.sh` (installs Debian's chromium, through sudo when you are not root) "
        "or point $BROWSER_PATH at a Chromium/Chrome binary."
    )


def _server():
    import kaleido  # kaleido costs ~65 ms to import: only when a chart is exported, never at start-up

    return kaleido._global_server  # noqa: SLF001 - only used to watch the thread's health


def _server_thread_alive() -> bool:
    thread = getattr(_server(), "_thread", None)
    return thread is not None and thread.is_alive()


_PENDING_RELOADS: set = set()


def _defer_tab_reload() -> None:
    """Take kaleido's per-render tab reload off the caller's critical path.

    kaleido 1.5 reloads its tab (re-parsing the ~4.6 MB plotly.js) after *every* render, in a
    ``finally`` that runs before the image is handed back: 100-150 ms of each ~200-300 ms export on
    a 2-vCPU machine.  Here the image is returned first and the tab reloads in the background; the
    next export waits for it only if it arrives sooner (so a zip of many charts is no faster, but a
    click on a download button is).  The reload still happens before every reuse of the tab.
    Set ``SKBVIEW_KALEIDO_SYNC_RELOAD=1`` to keep kaleido's own behaviour.
    """
    from kaleido.kaleido import Kaleido  # kaleido costs ~65 ms to import: only when a chart is exported

    if os.environ.get("SKBVIEW_KALEIDO_SYNC_RELOAD") == "1":
        return
    if getattr(Kaleido, "_skbview_deferred_reload", False) or not hasattr(Kaleido, "_return_kaleido_tab"):
        return

    async def _return_kaleido_tab(self, tab) -> None:
        async def reload_then_return() -> None:
            try:
                await tab.reload()
            except Exception:  # noqa: BLE001 - a broken tab fails the next render, which is reported
                pass
            finally:
                await self.tabs_ready.put(tab)

        task = asyncio.ensure_future(reload_then_return())
        _PENDING_RELOADS.add(task)
        task.add_done_callback(_PENDING_RELOADS.discard)

    Kaleido._return_kaleido_tab = _return_kaleido_tab  # noqa: SLF001 - pinned kaleido==1.5.0
    Kaleido._skbview_deferred_reload = True


def _ensure_started() -> None:
    """Start kaleido's shared sync server once. Caller holds _LOCK."""
    global _started, _atexit_registered
    if _started and _server_thread_alive():
        return
    if _started:  # the server thread died: reset before restarting
        _stop_locked()

    path = chromium_path()
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ExportError(_missing_chromium_message(path))

    import kaleido  # kaleido costs ~65 ms to import: only when a chart is exported, never at start-up

    # With the server running, plotly passes `kopts` (containing the headers) to
    # every call and kaleido warns "kopts is ignored" each time. Give the headers
    # to the server instead and clear plotly's default.
    headers = dict(pio.defaults.headers or {})
    pio.defaults.headers = {}

    _defer_tab_reload()
    kaleido.start_sync_server(
        mathjax=False,
        headers=headers or None,
        timeout=_KALEIDO_RENDER_TIMEOUT,
        path=path,
        silence_warnings=True,
    )
    _started = True
    if not _atexit_registered:
        atexit.register(shutdown)
        _atexit_registered = True


def _stop_locked() -> None:
    global _started
    if not _started:
        return
    import kaleido  # kaleido costs ~65 ms to import: only when a chart is exported, never at start-up

    try:
        kaleido.stop_sync_server(silence_warnings=True)
    finally:
        _started = False


def _call_watched(fn, timeout: float) -> Any:
    """Run fn() in a helper thread; fail fast if kaleido's server thread dies."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box["error"] = exc

    worker = threading.Thread(target=run, name="skbview-export", daemon=True)
    worker.start()
    deadline = time.monotonic() + timeout
    while True:
        worker.join(0.05)
        if not worker.is_alive():
            break
        if not _server_thread_alive():
            worker.join(0.2)  # it may just have finished
            if worker.is_alive():
                raise ExportError(
                    "kaleido's Chromium process stopped during export "
                    f"(Chromium: {chromium_path()!r}). Check that it starts: "
                    f"`{chromium_path()} --headless --no-sandbox --dump-dom about:blank`."
                )
            break
        if time.monotonic() > deadline:
            raise ExportError(f"static export did not finish within {timeout:.0f} s")
    if "error" in box:
        err = box["error"]
        if isinstance(err, ExportError):
            raise err
        raise ExportError(f"static export failed: {type(err).__name__}: {err}") from err
    return box["result"]


def export(
    fig,
    fmt: str,
    width: int = DEFAULT_WIDTH,
    height: int = DEFAULT_HEIGHT,
    scale: float = 1,
    timeout: float = _CALL_TIMEOUT,
) -> bytes:
    """Export ``fig`` (a ``go.Figure`` or figure dict) to ``fmt`` ("png", "svg", "pdf", ...)."""
    with _LOCK:
        _ensure_started()
        try:
            return _call_watched(
                lambda: pio.to_image(
                    fig, format=fmt, width=int(width), height=int(height), scale=scale
                ),
                timeout,
            )
        except ExportError:
            # Leave a clean state behind: the next call starts a fresh server.
            if not _server_thread_alive():
                try:
                    _stop_locked()
                except Exception:  # noqa: BLE001 - best effort: the original error is re-raised below
                    pass
            raise


def figure_to_png(
    fig, width: int = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT, scale: float = 2
) -> bytes:
    """PNG bytes of ``fig``; the image is ``width*scale`` x ``height*scale`` pixels."""
    return export(fig, "png", width=width, height=height, scale=scale)


def figure_to_svg(fig, width: int = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT) -> bytes:
    """SVG bytes (UTF-8) of ``fig`` at ``width`` x ``height`` CSS pixels."""
    return export(fig, "svg", width=width, height=height, scale=1)


def is_running() -> bool:
    """True if the warm kaleido server is up."""
    return _started and _server_thread_alive()


def shutdown() -> None:
    """Stop the kaleido server and its Chromium (registered with atexit; safe to call twice)."""
    with _LOCK:
        _stop_locked()
