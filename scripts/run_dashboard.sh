#!/usr/bin/env bash
# Install what is missing (scripts/setup.sh: Debian packages, the project's .venv), then serve the
# Streamlit dashboard with the venv's python.
# ADDRESS (default 0.0.0.0) and PORT (default 8501) can be overridden from the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="$(bash scripts/setup.sh | tail -n 1)"
exec "$PY" -m streamlit run dashboard.py \
    --server.headless=true \
    --server.address="${ADDRESS:-0.0.0.0}" \
    --server.port="${PORT:-8501}" \
    --browser.gatherUsageStats=false
