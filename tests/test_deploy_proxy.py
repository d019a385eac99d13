"""The dashboard as deployed (deploy/): two processes started by deploy/serve.sh behind Debian's nginx with
the site deploy/nginx_site.py writes, under /skbmodel/, driven by headless Chromium through the proxy.

nginx runs in the foreground with its own configuration, pid and logs in a temporary directory (the
machine's /etc/nginx is never read).  scripts/test.sh installs nginx (scripts/setup.sh, SKB_NEED_NGINX=1)
and tells this test so: there a missing nginx fails the test; a developer's run without it skips it.
"""
from __future__ import annotations

import base64
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from skbmodel import answers
from skbmodel.links import shortlink, state as sk_state
from tests.browser_util import (REPO_ROOT, _stop_group, eventually, focus_slider, free_port, launch_chromium,
                                slider_value, wait_for_app, wait_for_plotly)

sys.path.insert(0, str(REPO_ROOT / "deploy"))
import nginx_site  # noqa: E402 - deploy/ is not a package

PATH = "/skbmodel/"
UNIT = REPO_ROOT / "deploy" / "systemd" / "skbmodel@.service"
SERVE = REPO_ROOT / "deploy" / "serve.sh"
START_TIMEOUT_S = 120.0


def _nginx() -> str:
    """Debian's nginx, or the test's verdict on its absence."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if found:
        return found
    why = ("nginx is not installed: the proxy test needs Debian's nginx "
           "(bash scripts/setup.sh with SKB_NEED_NGINX=1 installs it, as root or with sudo: apt-get install -y nginx)")
    if os.environ.get("SKB_NEED_NGINX") == "1" or os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


def _main_conf(tmp: Path, site: Path) -> str:
    """nginx's main configuration around ``site``: foreground, everything it writes inside ``tmp``."""
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers read the temporary directory
    return f"""{user}daemon off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log info;
events {{ worker_connections 256; }}
http {{
    log_format route '$cookie_{nginx_site.COOKIE} $upstream_addr $status "$request_uri"';
    access_log {tmp}/access.log route;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    include {site};
}}
"""


def _consecutive_free_ports(n: int) -> int:
    """The first of ``n`` consecutive ports that are free on 127.0.0.1 right now."""
    for _ in range(200):
        first = free_port()
        if first + n > 65535:
            continue
        socks = []
        try:
            for p in range(first, first + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return first
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free ports")


def _get(url: str, cookie: str | None = None) -> tuple[int, dict, bytes]:
    req = urllib.request.Request(url, headers={"Cookie": f"{nginx_site.COOKIE}={cookie}"} if cookie else {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, b""


def _wait(check, what: str, proc: subprocess.Popen, log: Path, timeout: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if proc.poll() is not None or time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise RuntimeError(f"{what}: {'exited' if proc.poll() is not None else 'timed out'}\n{tail}")
        time.sleep(0.2)


class Deployment:
    def __init__(self, tmp: Path, nginx: str):
        self.tmp = tmp
        self.first = _consecutive_free_ports(2)
        self.ports = (self.first, self.first + 1)
        self.proxy_port = free_port()
        self.proxy = f"http://127.0.0.1:{self.proxy_port}{PATH}"  # where the browser opens the dashboard
        # the public address differs from the browser's (localhost vs 127.0.0.1): a link that carries it
        # was written from the setting, not copied from the address bar
        self.public = f"http://localhost:{self.proxy_port}{PATH}"
        self.run_dir = tmp / "run"
        env = {**os.environ, "SKB_PUBLIC_URL": self.public, "SKB_RUN_DIR": str(self.run_dir),
               "SKB_PYTHON": sys.executable}
        env.pop("SKB_BASE_PATH", None)  # serve.sh takes the path from SKB_PUBLIC_URL
        self.env = env
        self.serve_log = tmp / "serve.log"
        with self.serve_log.open("wb") as log:
            self.serve = subprocess.Popen(["bash", str(SERVE), "start", "2", str(self.first)], cwd=REPO_ROOT,
                                          env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True)
        self.nginx_proc = None
        try:
            _wait(self.healthy, "deploy/serve.sh start 2", self.serve, self.serve_log)
            site = tmp / "skbmodel.conf"
            site.write_text(nginx_site.site(processes=2, first_port=self.first, path=PATH,
                                            listen=f"127.0.0.1:{self.proxy_port}", upstream_header=True))
            conf = tmp / "nginx.conf"
            conf.write_text(_main_conf(tmp, site))
            self.access_log = tmp / "access.log"
            cmd = [nginx, "-e", str(tmp / "error.log"), "-p", str(tmp), "-c", str(conf)]
            t = subprocess.run([*cmd, "-t"], capture_output=True, text=True)
            assert t.returncode == 0, t.stderr
            self.nginx_proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                               stderr=subprocess.STDOUT, start_new_session=True)
            _wait(lambda: self._proxy_ok(), "nginx", self.nginx_proc, tmp / "error.log", timeout=30)
        except BaseException:
            self.close()
            raise

    def healthy(self) -> bool:
        """``deploy/serve.sh health`` (the container's HEALTHCHECK) says every process answers."""
        return subprocess.run(["bash", str(SERVE), "health", "2", str(self.first)],
                              cwd=REPO_ROOT, env=self.env, capture_output=True).returncode == 0

    def _proxy_ok(self) -> bool:
        try:
            return _get(self.proxy + "_stcore/health")[2].strip() == b"ok"
        except OSError:
            return False

    def upstream(self, cookie: str) -> int:
        """The port of the process that answers a browser with routing cookie ``cookie``."""
        status, headers, body = _get(self.proxy + "_stcore/health", cookie)
        assert status == 200 and body.strip() == b"ok", (status, body)
        return int(headers["x-skb-upstream"].rsplit(":", 1)[1])

    def cookie_for(self, port: int) -> str:
        """A routing cookie value that nginx sends to the process on ``port``."""
        for k in range(500):
            if self.upstream(f"reader{k}") == port:
                return f"reader{k}"
        raise AssertionError(f"no routing cookie reaches port {port}")

    def pid(self, port: int) -> int:
        return int((self.run_dir / f"skbmodel-{port}.pid").read_text())

    def streams(self) -> list[tuple[str, int]]:
        """``(cookie, port)`` of every WebSocket (``_stcore/stream``) nginx logged: written when it closes."""
        out = []
        for line in self.access_log.read_text().splitlines():
            # $upstream_addr lists every process tried ("a:1, a:2"); the last one answered
            m = re.fullmatch(r'(\S+) (.+) (\d{3}) "(.*)"', line)
            if m and "/_stcore/stream" in m[4] and m[2] != "-":
                out.append((m[1], int(m[2].rsplit(":", 1)[1])))
        return out

    def close(self) -> None:
        if self.nginx_proc is not None and self.nginx_proc.poll() is None:
            self.nginx_proc.send_signal(signal.SIGQUIT)  # graceful: closes the WebSockets, writes the log
            try:
                self.nginx_proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                _stop_group(self.nginx_proc)
        _stop_group(self.serve)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    nginx = _nginx()
    d = Deployment(tmp_path_factory.mktemp("deploy"), nginx)
    try:
        yield d
    finally:
        d.close()


def _open(browser, url: str, cookie: str, host_url: str):
    """A fresh browser context (own cookies = own session) routed by ``cookie``, at ``url``."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000},
                              permissions=["clipboard-read", "clipboard-write"])
    ctx.add_cookies([{"name": nginx_site.COOKIE, "value": cookie, "url": host_url}])
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    response = page.goto(url)
    _settle(page)
    return ctx, page, response, errors


def _settle(page) -> None:
    """Wait for the page, its first chart and its share link (generous: the machine may be busy)."""
    wait_for_app(page, timeout=120)
    wait_for_plotly(page, 0, timeout=90)
    page.locator(".st-key-share_link code").first.wait_for(timeout=90_000)
    wait_for_app(page, timeout=120)


def _link(page) -> str:
    return page.locator(".st-key-share_link code").first.inner_text().strip()


def _copy_link(page) -> str:
    """The share link as the reader copies it: the link box's Copy button, then the clipboard."""
    box = page.locator(".st-key-share_link")
    box.hover()
    box.get_by_role("button").first.click()
    return page.evaluate("() => navigator.clipboard.readText()").strip()


def _no_error(page) -> None:
    assert page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]').count() == 0


def test_the_shipped_site_is_what_the_script_writes():
    r = subprocess.run([sys.executable, str(REPO_ROOT / "deploy" / "nginx_site.py"), "--check",
                        str(nginx_site.SITE)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = nginx_site.SITE.read_text()
    assert f"client_max_body_size {nginx_site.upload_limit_mb() + 1}m;" in text
    assert text.count("server 127.0.0.1:85") == 4


def test_a_missing_nginx_fails_where_test_sh_runs_and_is_skipped_elsewhere(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("SKB_NEED_NGINX", "1")
    with pytest.raises(pytest.fail.Exception, match="apt-get install -y nginx"):
        _nginx()
    monkeypatch.delenv("SKB_NEED_NGINX")
    with pytest.raises(pytest.skip.Exception, match="nginx is not installed"):
        _nginx()


def test_the_unit_template_is_valid_for_systemd(tmp_path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    # the unit as installed, with the project where it is checked out here
    (tmp_path / UNIT.name).write_text(UNIT.read_text().replace("/opt/skbmodel", str(REPO_ROOT)))
    r = subprocess.run([analyze, "verify", "--man=no", str(tmp_path / "skbmodel@8501.service")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    assert "ExecStart=/opt/skbmodel/deploy/serve.sh one %i" in UNIT.read_text()


def _handshake(d: Deployment, origin: str) -> int:
    """The HTTP status of a WebSocket handshake on the dashboard's stream through the proxy."""
    with socket.create_connection(("127.0.0.1", d.proxy_port), timeout=10) as s:
        s.sendall((f"GET {PATH}_stcore/stream HTTP/1.1\r\nHost: 127.0.0.1:{d.proxy_port}\r\n"
                   "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                   f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
                   f"Origin: {origin}\r\n\r\n").encode())
        head = s.recv(4096).decode("latin-1")
    return int(head.split(" ", 2)[1])


@pytest.mark.browser
def test_websockets_pass_the_proxy_and_other_origins_stay_refused(deployment):
    d = deployment
    # the proxy keeps the Host's port: the page's own origin is the same origin to Streamlit
    assert _handshake(d, f"http://127.0.0.1:{d.proxy_port}") == 101
    # CORS protection still holds behind the proxy: a page of another site cannot open a session
    assert _handshake(d, "https://elsewhere.example.org") == 403


@pytest.mark.browser
def test_a_link_through_the_proxy_survives_its_process(deployment):
    from playwright.sync_api import sync_playwright

    d = deployment
    p1, p2 = d.ports
    c1, c2 = d.cookie_for(p1), d.cookie_for(p2)
    opened = "page=slub&bulk=40&zero=memset"
    short = shortlink.shorten(answers.share_query(sk_state.decode(opened)[0]))
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            # reader A, on process 1, opens a short link through the proxy and moves a control
            ctx_a, a, resp, errors_a = _open(browser, f"{d.proxy}slub?{short}", c1, d.proxy)
            assert resp.headers["x-skb-upstream"].endswith(f":{p1}")
            assert urlsplit(a.url).path == f"{PATH}slub"
            assert slider_value(a, "bulk") == 40
            focus_slider(a, "bulk")
            a.keyboard.press("ArrowRight")
            a.wait_for_function("() => new URL(location.href).searchParams.get('bulk') === '41'", timeout=90_000)
            wait_for_app(a, timeout=120)
            link = _copy_link(a)
            assert link == _link(a)
            # the public address and its path, not the address the browser shows
            assert link.startswith(f"{d.public}slub?v=2&"), link
            view = sk_state.decode(urlsplit(link).query)[0]
            assert view["bulk"] == 41 and view["zero"] == "memset"

            # reader B, on process 2, opens the copied link in a fresh context: the same view
            ctx_b, b, resp, errors_b = _open(browser, link, c2, d.public)
            assert resp.headers["x-skb-upstream"].endswith(f":{p2}")
            assert slider_value(b, "bulk") == 41 and _link(b) == link

            # process 1 dies; A reloads its page: the proxy sends it to process 2, the address gives the view
            os.kill(d.pid(p1), signal.SIGKILL)
            resp = a.reload()
            assert resp.headers["x-skb-upstream"].endswith(f":{p2}")
            _settle(a)
            assert slider_value(a, "bulk") == 41 and _link(a) == link
            _no_error(a)

            # B was never touched: its session goes on where it was
            assert slider_value(b, "bulk") == 41
            focus_slider(b, "bulk")
            b.keyboard.press("ArrowLeft")
            b.wait_for_function("() => new URL(location.href).searchParams.get('bulk') === '40'", timeout=90_000)
            wait_for_app(b, timeout=120)
            assert sk_state.decode(urlsplit(_link(b)).query)[0]["bulk"] == 40
            _no_error(b)

            # serve.sh starts process 1 again; once nginx routes to it, the link opens the same view there
            eventually(lambda: _assert(d.healthy()), timeout=START_TIMEOUT_S)
            eventually(lambda: _assert(d.upstream(c1) == p1), timeout=30)
            ctx_c, c, resp, errors_c = _open(browser, link, c1, d.public)
            assert resp.headers["x-skb-upstream"].endswith(f":{p1}")
            assert slider_value(c, "bulk") == 41 and _link(c) == link
            for page in (a, b, c):
                _no_error(page)
            assert not errors_a + errors_b + errors_c
            for ctx in (ctx_a, ctx_b, ctx_c):
                ctx.close()
        finally:
            browser.close()
    d.close()  # nginx writes a WebSocket's log line when it closes
    streams = d.streams()
    # every WebSocket went where its browser's cookie sends it; B's one socket lived through it all
    assert [port for cookie, port in streams if cookie == c2] == [p2], streams
    assert (c1, p1) in streams and (c1, p2) in streams, streams
    assert re.search(r"port \d+: pid \d+ ended; starting it again", d.serve_log.read_text())


def _assert(ok: bool) -> None:
    assert ok
