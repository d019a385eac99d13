#!/usr/bin/env bash
# Idempotent set-up on a fresh Debian 12 / Ubuntu 24.04 machine, as root or as a user with sudo.
#  - Debian packages: python3-venv (when the system python3 cannot make a venv), chromium (kaleido's
#    static export and the browser tests) and fonts-dejavu-core (text in exported images).
#  - A project-local virtual environment, .venv, made with the system python3: Debian marks its
#    interpreter externally managed (PEP 668), so pip may not install into it. The pinned packages of
#    requirements-dev.txt go there; a stamp of the requirements' hash makes a second run a no-op.
# Never downloads a browser through Playwright (`playwright install` is not used).
#
# SKB_NEED_CHROMIUM=1 (set by scripts/test.sh) makes a missing chromium an error; the dashboard
# starts without it (only image export needs it).
# SKB_NEED_NGINX=1 (set by scripts/test.sh) installs Debian's nginx too: the proxy test
# (tests/test_deploy_proxy.py) runs it as a foreground process with its own configuration, and fails
# without it. Installing it does not start it where policy-rc.d forbids (containers); elsewhere
# Debian starts the default site on port 80, which the tests never use.
# Prints the venv's python on its last line of stdout; everything else goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${SKB_VENV:-.venv}"
SYS_PY="${SKB_SYSTEM_PYTHON:-$(command -v python3 || true)}"
export DEBIAN_FRONTEND=noninteractive
say() { echo "setup.sh: $*" >&2; }

if [ -z "$SYS_PY" ]; then
    say "no python3 on PATH; install it with: sudo apt-get install python3 python3-venv"
    exit 1
fi

venv_works() {
    # Debian ships venv without ensurepip unless python3-venv is installed: try it for real.
    local probe
    probe="$(mktemp -d)"
    if "$SYS_PY" -m venv "$probe/v" >/dev/null 2>&1; then rm -rf "$probe"; return 0; fi
    rm -rf "$probe"; return 1
}

# Debian names the browser chromium (/usr/bin/chromium); Ubuntu's chromium-browser brings the snap.
have_chromium() { [ -x /usr/bin/chromium ] || [ -x /snap/bin/chromium ] || [ -x /usr/bin/chromium-browser ]; }
chromium_pkg=chromium
grep -qs '^ID=ubuntu' /etc/os-release && chromium_pkg=chromium-browser

missing=()
if [ ! -x "$VENV/bin/python" ] && ! venv_works; then
    # python3.11-venv on Debian 12, python3.12-venv on Ubuntu 24.04; python3-venv depends on it.
    missing+=(python3-venv "python3.$("$SYS_PY" -c 'import sys; print(sys.version_info[1])')-venv")
fi
have_chromium || missing+=("$chromium_pkg")
dpkg-query -W -f='${Status}' fonts-dejavu-core 2>/dev/null | grep -q "ok installed" || missing+=(fonts-dejavu-core)
have_nginx() { command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; }
if [ "${SKB_NEED_NGINX:-0}" = 1 ] && ! have_nginx; then missing+=(nginx); fi

if [ "${#missing[@]}" -gt 0 ]; then
    # sudo only where it can ask for a password (a terminal) or needs none.
    if [ "$(id -u)" -eq 0 ]; then SUDO=()
    elif command -v sudo >/dev/null 2>&1 && { [ -t 0 ] || sudo -n true 2>/dev/null; }; then SUDO=(sudo)
    else SUDO=(none); fi
    hint="missing Debian packages: ${missing[*]}; install them with: sudo apt-get install -y ${missing[*]}"
    if [ "${SUDO[0]:-}" = none ]; then
        say "$hint"
    else
        say "installing ${missing[*]} with apt-get"
        { "${SUDO[@]}" apt-get update -qq \
          && "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null; } || say "$hint"
    fi
fi

if [ ! -x "$VENV/bin/python" ]; then
    if ! venv_works; then
        say "the system python3 cannot create a virtual environment; install python3-venv: sudo apt-get install -y python3-venv"
        exit 1
    fi
    say "creating the virtual environment $VENV with $SYS_PY"
    "$SYS_PY" -m venv "$VENV"
fi

stamp="$VENV/.requirements.sha256"
want="$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "installing the pinned Python packages into $VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r requirements-dev.txt
    echo "$want" > "$stamp"
fi

if ! have_chromium; then
    if [ "${SKB_NEED_CHROMIUM:-0}" = 1 ]; then
        say "chromium is missing: the browser tests and image export need it (sudo apt-get install -y $chromium_pkg)"
        exit 1
    fi
    say "chromium is missing: the dashboard runs, image export will not (sudo apt-get install -y $chromium_pkg)"
fi
if [ "${SKB_NEED_NGINX:-0}" = 1 ] && ! have_nginx; then
    say "nginx is missing: tests/test_deploy_proxy.py will fail (sudo apt-get install -y nginx)"
fi
echo "$(cd "$VENV" && pwd)/bin/python"
