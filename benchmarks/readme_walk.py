"""The README's five steps, followed in a clone by a script, each step timed: from `run_dashboard.sh` to a
pasted answer (headless Chromium; what the clipboard holds is compared with the README's block).

    git clone . /tmp/fresh && ln -s "$PWD/.venv" /tmp/fresh/.venv   # or let run_dashboard.sh set it up
    python benchmarks/readme_walk.py /tmp/fresh

A person reads between the steps; this measures only what the machine takes.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402 - after the sys.path set-up above

from tests.browser_util import NAV_LINK, free_port, launch_chromium, slider_selector, wait_for_app  # noqa: E402


def _health(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.read().strip() == b"ok"
    except OSError:
        return False


def _readme_block(clone: Path) -> str:
    text = (clone / "README.md").read_text(encoding="utf-8")
    return re.search(r"<!-- text-example:begin -->\n```text\n(.*?)```", text, re.S).group(1)


def walk(clone: Path) -> tuple[dict[str, float], str]:
    port = free_port()
    times: dict[str, float] = {}
    t0 = time.monotonic()
    server = subprocess.Popen(["bash", "scripts/run_dashboard.sh"], cwd=clone,
                              env={**os.environ, "PORT": str(port), "ADDRESS": "127.0.0.1"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while not _health(port):
            if server.poll() is not None or time.monotonic() - t0 > 600:
                raise RuntimeError("run_dashboard.sh did not serve the dashboard")
            time.sleep(0.2)
        times["bash scripts/run_dashboard.sh, until it serves"] = time.monotonic() - t0
        url = f"http://127.0.0.1:{port}"
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
            ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
            page = ctx.new_page()

            def step(name: str, action) -> None:
                start = time.monotonic()
                action()
                times[name] = time.monotonic() - start

            compare = page.locator(NAV_LINK, has_text="Compare A/B")
            slider = page.locator(slider_selector("b_xdp_batch")).first
            step("open the address, the navigation drawn",
                 lambda: (page.goto(url), compare.wait_for(timeout=300_000)))
            add = page.locator(".st-key-add_difference")
            step("1. open Compare A/B",
                 lambda: (compare.click(), add.wait_for(timeout=300_000), wait_for_app(page, timeout=300)))

            def move() -> None:
                # "Add a difference…": pick VETH_XDP_BATCH, then its slider
                add.locator("input[role='combobox']").click()
                page.keyboard.type("VETH_XDP_BATCH")
                page.locator("[role='option']", has_text="VETH_XDP_BATCH").first.click()
                slider.wait_for(timeout=300_000)
                wait_for_app(page, timeout=300)
                slider.focus()
                for _ in range(12):
                    page.keyboard.press("ArrowLeft")
                page.wait_for_function("() => location.search.includes('b_xdp_batch=4')", timeout=300_000)
                wait_for_app(page, timeout=300)
            step("2. add VETH_XDP_BATCH to B, move it from 16 to 4 (12 key presses)", move)
            verdict: list[str] = []
            step("3. read the verdict", lambda: verdict.append(page.locator(".st-key-ab_verdict").inner_text()))
            assert "below noise" in verdict[0], verdict[0]

            def copy() -> None:
                page.locator(".st-key-copy_as_text label").first.click()
                page.locator(".st-key-copy_text").get_by_role("button", name="Copy").click()
            step("4. Copy as text, its Copy button", copy)
            pasted: list[str] = []
            step("5. paste", lambda: pasted.append(page.evaluate("navigator.clipboard.readText()")))
            browser.close()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
    return times, pasted[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clone", type=Path, help="a clone of the repository (its README is followed)")
    args = ap.parse_args()
    times, pasted = walk(args.clone.resolve())
    for name, s in times.items():
        print(f"{s:7.1f} s  {name}")
    print(f"{sum(times.values()):7.1f} s  in all")
    same = re.sub(r"http://127\.0\.0\.1:\d+", "http://localhost:8501", pasted).rstrip() == _readme_block(
        args.clone.resolve()).rstrip()
    print("pasted block = the README's (but for the address):", same)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
