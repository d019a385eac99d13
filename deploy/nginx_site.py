"""Write the nginx site that puts N dashboard processes behind one address, under a path.

    python deploy/nginx_site.py [--processes 4] [--first-port 8501] [--path /skbmodel/] [--listen 80]
                                [--server-name _] [--upstream-header] [--out FILE | --check FILE]

Without ``--out`` the site is printed.  ``deploy/nginx/skbmodel.conf`` is this script's output with its
defaults; ``--check deploy/nginx/skbmodel.conf`` exits 1 when it is stale.  The proxy test renders
its own site with this script (its ports, its path) and runs it with Debian's nginx.

Why the site looks as it does:

* Sticky routing by a cookie, not by the client's address: Streamlit keeps a reader's session (and an
  uploaded profile) in one process, and its page talks to it over one WebSocket plus HTTP requests
  (health, uploads, media).  The first response sets ``skb_route`` to nginx's ``$request_id``; every
  later request of that browser hashes the same value to the same process (``hash ... consistent``:
  adding a process moves only its share of readers).  ``ip_hash`` would send a whole office behind
  one NAT to one process.
* When a process is down, nginx passes the request to the next one (``proxy_next_upstream``): the
  reader's page reconnects there and, since the whole view is in its address, shows the same view.
* WebSockets: HTTP/1.1 with ``Upgrade``/``Connection`` passed on, and long read timeouts (a reader may
  look at a chart for an hour without a message; Streamlit pings the socket meanwhile).
* ``Host $http_host`` keeps the port: Streamlit accepts a WebSocket whose ``Origin`` equals the
  ``Host`` it sees, so with CORS protection on, the proxy must not drop the port.
* ``client_max_body_size``: nginx refuses bodies over 1 MB by default, below the upload limit of
  ``.streamlit/config.toml`` (``server.maxUploadSize``, MB); the site allows that limit plus 1 MB of
  multipart framing.
* The path is passed on unchanged (``proxy_pass`` without a URI): the processes serve under it
  themselves (``server.baseUrlPath``), so every address the page builds already has it.
"""
from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "deploy" / "nginx" / "skbmodel.conf"
COOKIE = "skb_route"


def upload_limit_mb() -> int:
    """``server.maxUploadSize`` of the project's Streamlit config (Streamlit's default 200 when unset)."""
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    return int(cfg.get("server", {}).get("maxUploadSize", 200))


def normalised_path(path: str) -> str:
    """``/skbmodel/`` from ``skbmodel``, ``/skbmodel`` or ``/skbmodel/``; ``/`` for none."""
    inner = path.strip().strip("/")
    return f"/{inner}/" if inner else "/"


def site(processes: int = 4, first_port: int = 8501, path: str = "/skbmodel/", listen: str = "80",
         server_name: str = "_", upstream_header: bool = False, backend_host: str = "127.0.0.1") -> str:
    """The site's text (one ``server`` with its ``upstream`` and ``map`` blocks, for ``sites-available/``)."""
    if processes < 1:
        raise ValueError("processes must be >= 1")
    loc = normalised_path(path)
    args = f"--processes {processes} --first-port {first_port} --path {loc} --listen {listen}"
    if server_name != "_":
        args += f" --server-name {server_name}"
    if upstream_header:
        args += " --upstream-header"
    servers = "\n".join(f"    server {backend_host}:{first_port + i} max_fails=1 fail_timeout=5s;"
                        for i in range(processes))
    redirect = "" if loc == "/" else f"""
    # the path without its slash: Streamlit's page needs the slash to find its own files
    location = {loc.rstrip("/")} {{
        absolute_redirect off;
        return 301 {loc};
    }}
"""
    debug = ("\n        # which process served the request (for the proxy test; leave it out in production)\n"
             "        add_header X-Skb-Upstream $upstream_addr always;") if upstream_header else ""
    return f"""\
# skbmodel dashboard behind nginx: {processes} Streamlit processes, sticky per browser, under {loc}
# Written by: python deploy/nginx_site.py {args}
# (regenerate instead of editing; docs/deploy.md says why each setting is there)

map $http_upgrade $skb_connection {{
    default upgrade;
    ''      close;
}}

# the browser's routing key: its cookie, else a new one for this first request
map $cookie_{COOKIE} $skb_route {{
    ""      $request_id;
    default $cookie_{COOKIE};
}}

upstream skbmodel_dashboards {{
    hash $skb_route consistent;
{servers}
}}

server {{
    listen {listen};
    server_name {server_name};
{redirect}
    location {loc} {{
        proxy_pass http://skbmodel_dashboards;
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $skb_connection;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_read_timeout 3600s;
        proxy_send_timeout 3600s;
        proxy_buffering off;
        proxy_next_upstream error timeout http_502 http_503;
        proxy_connect_timeout 5s;
        client_max_body_size {upload_limit_mb() + 1}m;
        add_header Set-Cookie "{COOKIE}=$skb_route; Path={loc}; HttpOnly; SameSite=Lax" always;{debug}
    }}
}}
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--processes", type=int, default=4)
    ap.add_argument("--first-port", type=int, default=8501)
    ap.add_argument("--path", default="/skbmodel/", help="the path readers open (Streamlit's server.baseUrlPath)")
    ap.add_argument("--listen", default="80", help="nginx's listen argument, e.g. 80, 127.0.0.1:8080")
    ap.add_argument("--server-name", default="_")
    ap.add_argument("--upstream-header", action="store_true",
                    help="add X-Skb-Upstream (which process answered) to every response")
    out = ap.add_mutually_exclusive_group()
    out.add_argument("--out", type=Path, help="write the site there")
    out.add_argument("--check", type=Path, help="exit 1 when this file is not what the script writes")
    a = ap.parse_args(argv)
    if a.processes < 1:
        ap.error("--processes must be >= 1")
    text = site(a.processes, a.first_port, a.path, a.listen, a.server_name, a.upstream_header)
    if a.check:
        if not a.check.is_file() or a.check.read_text(encoding="utf-8") != text:
            print(f"{a.check}: stale; regenerate it with: python deploy/nginx_site.py --out {a.check}",
                  file=sys.stderr)
            return 1
        return 0
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
