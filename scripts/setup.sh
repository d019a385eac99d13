#!/usr/bin/env bash
# Idempotent setup for a fresh Debian machine (run as root).
#  - Python dependencies from requirements-dev.txt (quiet; a no-op when already satisfied)
#  - Debian's chromium (used by kaleido for static export and by Playwright for browser tests)
#  - a basic font package so text in exported PNG/SVG renders
# Never downloads a browser through Playwright (`playwright install` is not used).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-$(command -v python || command -v python3)}"
export DEBIAN_FRONTEND=noninteractive

"$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    -r requirements-dev.txt

apt_pkgs=()
if [ ! -x /usr/bin/chromium ]; then
    apt_pkgs+=(chromium)
fi
# chromium -> libfontconfig1 -> fontconfig-config normally pulls fonts-dejavu-core in,
# but make sure at least one font is there for exported text.
if ! dpkg-query -W -f='${Status}' fonts-dejavu-core 2>/dev/null | grep -q "ok installed"; then
    apt_pkgs+=(fonts-dejavu-core)
fi
if [ "${#apt_pkgs[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup.sh: need root to apt-get install ${apt_pkgs[*]}" >&2
        exit 1
    fi
    echo "setup.sh: installing ${apt_pkgs[*]} with apt-get" >&2
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}" </dev/null
fi
if [ ! -x /usr/bin/chromium ]; then
    echo "setup.sh: /usr/bin/chromium still missing after apt-get install" >&2
    exit 1
fi
