#!/usr/bin/env bash
# Run the dashboard as N Streamlit processes on consecutive ports, for a reverse proxy with sticky
# routing in front (deploy/nginx/skbmodel.conf). Streamlit keeps a reader's session in one process, so
# more readers need more processes, not threads.
#
#   deploy/serve.sh start N [FIRST_PORT]   N processes on FIRST_PORT.. (default 8501), in the foreground;
#                                          a process that dies is started again; SIGTERM/SIGINT stop all
#   deploy/serve.sh one PORT               one process, exec'd (what skbmodel@PORT.service runs)
#   deploy/serve.sh health N [FIRST_PORT]  exit 0 when every process answers "ok" on
#                                          /<base path>/_stcore/health (the container's HEALTHCHECK)
#
# Settings, from the environment (systemd: /etc/default/skbmodel; container: ENV / --env):
#   SKB_PUBLIC_URL   the address readers open, path included (https://perf.example.org/skbmodel/):
#                    every link the dashboard writes starts with it (skbmodel.links.shortlink.public_base_url)
#   SKB_BASE_PATH    the path the proxy serves the dashboard under, without slashes (default: the path of
#                    SKB_PUBLIC_URL, else none); Streamlit's server.baseUrlPath
#   SKB_ADDRESS      the address the processes listen on (default 127.0.0.1: only the proxy reaches them)
#   SKB_PYTHON       the interpreter (default: the project's .venv/bin/python)
#   SKB_RUN_DIR      pid and log files, one per port (default: run/ in the project)
# Everything else (XSRF, upload limit, CORS, GC) comes from the project's .streamlit/config.toml.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${SKB_PYTHON:-.venv/bin/python}"
ADDRESS="${SKB_ADDRESS:-127.0.0.1}"
RUN_DIR="${SKB_RUN_DIR:-run}"
say() { echo "serve.sh: $*" >&2; }

base_path() {
    # SKB_BASE_PATH, else the path of SKB_PUBLIC_URL: the proxy passes the path on unchanged
    local p="${SKB_BASE_PATH-}"
    if [ -z "${SKB_BASE_PATH+x}" ] && [ -n "${SKB_PUBLIC_URL:-}" ]; then
        p="$(printf '%s' "$SKB_PUBLIC_URL" | sed -E 's#^[a-zA-Z]+://[^/]*##; s#[?].*$##')"
    fi
    p="${p#/}"; p="${p%/}"
    printf '%s' "$p"
}

port_arg() {
    case "$1" in ''|*[!0-9]*) say "not a port number: '$1'"; exit 2 ;; esac
    if [ "$1" -lt 1 ] || [ "$1" -gt 65535 ]; then say "not a port number: '$1'"; exit 2; fi
}

streamlit_cmd() {  # the one command line every process runs
    printf '%s\0' "$PY" -m streamlit run dashboard.py \
        --server.headless=true \
        --server.address="$ADDRESS" \
        --server.port="$1" \
        --server.baseUrlPath="$(base_path)" \
        --browser.gatherUsageStats=false
}

health_one() {
    local bp url
    bp="$(base_path)"
    url="http://127.0.0.1:$1/${bp:+$bp/}_stcore/health"
    "$PY" - "$url" <<'EOF'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
        sys.exit(0 if r.read().strip() == b"ok" else 1)
except OSError:
    sys.exit(1)
EOF
}

cmd="${1:-}"; shift || true
case "$cmd" in
one)
    port_arg "${1:-}"
    mapfile -d '' argv < <(streamlit_cmd "$1")
    exec "${argv[@]}"
    ;;
health)
    n="${1:-1}"; first="${2:-8501}"; port_arg "$first"
    rc=0
    for ((i = 0; i < n; i++)); do
        if ! health_one $((first + i)); then say "port $((first + i)): not healthy"; rc=1; fi
    done
    exit "$rc"
    ;;
start)
    n="${1:-}"; first="${2:-8501}"
    case "$n" in ''|*[!0-9]*|0) say "start N [FIRST_PORT]: N must be a number of processes >= 1"; exit 2 ;; esac
    port_arg "$first"
    mkdir -p "$RUN_DIR"
    declare -A pid
    start_one() {
        local argv
        mapfile -d '' argv < <(streamlit_cmd "$1")
        "${argv[@]}" </dev/null >>"$RUN_DIR/skbmodel-$1.log" 2>&1 &
        pid[$1]=$!
        echo "${pid[$1]}" >"$RUN_DIR/skbmodel-$1.pid"
        say "port $1: pid ${pid[$1]} (log $RUN_DIR/skbmodel-$1.log)"
    }
    stopping=0
    stop_all() {
        stopping=1
        for p in "${pid[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        wait || true
        for ((i = 0; i < n; i++)); do rm -f "$RUN_DIR/skbmodel-$((first + i)).pid"; done
        exit 0
    }
    trap stop_all TERM INT
    for ((i = 0; i < n; i++)); do start_one $((first + i)); done
    say "$n processes under /$(base_path) on ports $first..$((first + n - 1))"
    while :; do
        wait -n || true  # returns when a process ends (or a signal arrives: the trap runs)
        [ "$stopping" = 1 ] && break
        for port in "${!pid[@]}"; do
            if ! kill -0 "${pid[$port]}" 2>/dev/null; then
                say "port $port: pid ${pid[$port]} ended; starting it again"
                sleep 1
                start_one "$port"
            fi
        done
    done
    ;;
*)
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
