#!/usr/bin/env bash
# Install what is missing (scripts/setup.sh: Debian packages, nginx included, the project's .venv), lint
# (ruff, config in ruff.toml), then run the whole test suite with the venv's python. Extra arguments go to pytest.
# A lint finding fails the run before any test.
# Exits with pytest's exit code, except that "no tests collected" (pytest exit 5) is a failure.
# The tests run on SKB_TEST_WORKERS pytest-xdist workers (default 2, the machine's cores); each module runs
# whole on one worker (groups: tests/conftest.py). `-n 0` among the arguments runs them in this one process.
set -uo pipefail
cd "$(dirname "$0")/.."
# SKB_NEED_NGINX=1 also tells the proxy test that a missing nginx is a failure, not a skip
export SKB_NEED_NGINX=1
PY="$(SKB_NEED_CHROMIUM=1 bash scripts/setup.sh | tail -n 1)"
if [ -z "$PY" ] || [ ! -x "$PY" ]; then
    echo "test.sh: FAILED: scripts/setup.sh did not finish (see above)" >&2
    exit 1
fi
"$PY" -m ruff check . || { echo "test.sh: FAILED: ruff check found problems (see above)" >&2; exit 1; }
"$PY" -m pytest -q tests -n "${SKB_TEST_WORKERS:-2}" --dist loadgroup "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "test.sh: FAILED: pytest collected no tests (exit 5) -- an empty test selection is an error" >&2
    exit 5
fi
exit "$rc"
