#!/usr/bin/env bash
# Install what is missing, then serve the Streamlit dashboard.
# ADDRESS (default 0.0.0.0) and PORT (default 8501) can be overridden from the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PYTHON="${PYTHON:-$(command -v python || command -v python3)}"
exec "$PYTHON" -m streamlit run dashboard.py \
    --server.headless=true \
    --server.address="${ADDRESS:-0.0.0.0}" \
    --server.port="${PORT:-8501}" \
    --browser.gatherUsageStats=false
