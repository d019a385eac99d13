"""Calibrate: bring your own measurements, fit a CPU profile, share it.

Paste or upload time_bench / pktgen / xdp-bench output (or a seed-format CSV), pick the run when the
input holds several (kernels, repeats), check the mapping of each measurement to a model output in
the editable table, check the clock (inferred from the lines that give cycles and ns), choose the
constants to fit, fit.  The
fitted profile becomes the one in use (sidebar), can be downloaded (TOML), uploaded again, and
travels in the share link.  Until a fit succeeds the model in use stays as it was.  Last, a perf report
pasted as a reviewer has it, its shares per kernel stage beside the model's (``python -m skbmodel perf``).
The sections are drawn by :mod:`skbview.app.calibrate_view`; the steps between them are
:mod:`skbmodel.evidence.userinput`.
"""
from __future__ import annotations

import streamlit as st

from skbmodel.evidence import userinput
from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbview.app import calibrate_view as view
from skbview.app import custom_profile

try:  # inside the dashboard (st.navigation); the page also runs on its own
    from skbview.app import appstate
except Exception:  # noqa: BLE001 - any failure means the page runs on its own, without the dashboard
    appstate = None

st.title(PAGE_BY_SLUG["calibrate"].heading)
if appstate is not None:
    # a first request to /calibrate on a fresh server must go through dashboard.py's st.navigation
    appstate.ensure_navigation()
state = appstate.get_state() if appstate else dict(custom_profile.session_store())
custom_profile.adopt_link_profile()

view.in_use(state)
parsed = view.measurement_input()
measurements, run_pick = view.run_choice(parsed)
edited_ms, row_errors = view.mapping(measurements, parsed.sig, run_pick)
view.fit_controls(measurements, edited_ms, row_errors, parsed.sig, run_pick, cpu=parsed.cpu,
                  setup=userinput.setup_of(parsed, run_pick))
view.fit_report(state)
view.share_download_upload(appstate.get_state() if appstate else None)
view.perf_profile(appstate.get_state() if appstate else state)
