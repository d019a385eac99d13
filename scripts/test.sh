#!/usr/bin/env bash
# Install what is missing, lint (ruff, config in ruff.toml), then run the test suite. Extra arguments go to pytest.
# A lint finding fails the run before any test.
# Exits with pytest's exit code, except that "no tests collected" (pytest exit 5) is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || { echo "test.sh: setup.sh failed" >&2; exit 1; }
PYTHON="${PYTHON:-$(command -v python || command -v python3)}"
"$PYTHON" -m ruff check . || { echo "test.sh: FAILED: ruff check found problems (see above)" >&2; exit 1; }
"$PYTHON" -m pytest -q tests "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "test.sh: FAILED: pytest collected no tests (exit 5) -- an empty test selection is an error" >&2
    exit 5
fi
exit "$rc"
