#!/usr/bin/env bash
# Install what is missing (scripts/setup.sh: Debian packages, the project's .venv), then serve the
# Streamlit dashboard with the venv's python.
# It listens on 127.0.0.1 only (this machine's browser); ADDRESS=0.0.0.0 serves every interface (readers on
# other machines: for a team, see docs/deploy.md). PORT (default 8501) can be overridden the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="$(bash scripts/setup.sh | tail -n 1)"
exec "$PY" -m streamlit run dashboard.py \
    --server.headless=true \
    --server.address="${ADDRESS:-127.0.0.1}" \
    --server.port="${PORT:-8501}" \
    --browser.gatherUsageStats=false
