"""Time limits of the tests that wait on something slower than a function call, in one place.

Generous on purpose: a limit is there to end a run that hangs, not to measure speed, and the suite runs
on shared 2-core machines where a cold Streamlit script run or a Python start-up with the model's imports
can take many times what it takes on an idle one."""

#: one AppTest script run of the dashboard (a cold first run imports Plotly and evaluates every chart)
APPTEST_TIMEOUT_S = 180
#: one `python -m skbmodel ...` or `scripts/*.py` subprocess (a regeneration evaluates every profile)
SUBPROCESS_TIMEOUT_S = 900
#: a `streamlit run` until its /_stcore/health answers (tests/browser_util.py)
SERVER_START_TIMEOUT_S = 180
#: one wait in a browser for what a run draws or writes (a chart, a metric row, the URL): the end of a hung run,
#: never a measure; a cold run of the page plus a first load of the chart's code on a loaded 2-core machine
BROWSER_WAIT_S = 180
