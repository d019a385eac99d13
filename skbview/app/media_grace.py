"""Keep a just-generated download alive until the browser has fetched it, even with several reviewers on one server.

``st.download_button(data=callable)`` runs the callable when the button is clicked and stores the
result as a media file that no session references ("unmapped", so that a second click runs the
callable again); the browser then fetches ``/media/<id>``.  Streamlit sweeps unreferenced media files
after *every* script run of *any* session (mark, then delete on the next sweep).  With several
reviewers on one server, two reruns of other sessions can fall between "export done" and the
browser's GET: the download fails with HTTP 404 (seen by benchmarks/load_test.py: 3 of 37 exports
with 10 sessions; Streamlit 1.67.0).

:func:`install` gives each file produced by a deferred download a grace period of
:data:`GRACE_S` seconds before the sweep may delete it.  Memory stays bounded: the exports are
serialised (skbview.exporter), so at most GRACE_S seconds' worth of exports are held.  Idempotent;
does nothing if Streamlit's internals differ from the version it was written for.
"""
from __future__ import annotations

import threading
import time

from streamlit.runtime.media_file_manager import MediaFileManager

GRACE_S = 30.0
_fresh: dict[str, float] = {}
_lock = threading.Lock()


def install() -> bool:
    if getattr(MediaFileManager, "_skb_grace", False):
        return True
    if not (hasattr(MediaFileManager, "execute_deferred") and hasattr(MediaFileManager, "_get_inactive_file_ids")):
        return False
    orig_execute = MediaFileManager.execute_deferred
    orig_inactive = MediaFileManager._get_inactive_file_ids

    def execute_deferred(self, file_id: str) -> str:
        url = orig_execute(self, file_id)
        if isinstance(url, str):
            fid = url.rsplit("/", 1)[-1].split(".", 1)[0]
            with _lock:
                _fresh[fid] = time.monotonic()
        return url

    def _get_inactive_file_ids(self) -> set[str]:
        ids = orig_inactive(self)
        now = time.monotonic()
        with _lock:
            for fid, t in list(_fresh.items()):
                if now - t > GRACE_S:
                    del _fresh[fid]
            keep = set(_fresh)
        return ids - keep

    MediaFileManager.execute_deferred = execute_deferred
    MediaFileManager._get_inactive_file_ids = _get_inactive_file_ids
    MediaFileManager._skb_grace = True
    return True
