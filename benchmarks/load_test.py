"""Load test: concurrent reviewers on one dashboard server must not see each other's values.

    python benchmarks/load_test.py [--sessions 10] [--duration 60] [--single 20] [--export-every 4] [--moves N]
                                   [--hold N]

Starts one ``streamlit run dashboard.py`` on 127.0.0.1 and drives it with headless Debian Chromium
(Playwright, /usr/bin/chromium; one browser, one context = one Streamlit session each).

1. Baseline: one session alone for ``--single`` seconds.
2. Load: ``--sessions`` sessions at once for ``--duration`` seconds.

With ``--moves N`` every session instead stops after N slider moves (``--single 0`` still skips the
baseline): the same work on a fast or a slow machine, which is what a test needs.

Every session has its own values: its bulk slider lives in [20 i + 1, 20 i + 19] and its
VETH_XDP_BATCH is i + 1 (session i), so a value from another session is recognisable.  Each session
loops: press ArrowLeft/Right on the SLUB page's bulk slider and measure keydown -> chart data
changed (in the page's clock); then check the slider, the URL and the chart's "current bulk" marker
(against skbmodel evaluated for *this* session's state); every third step switch to the veth page
through the sidebar navigation and back, checking the controls there; every ``--export-every``-th
step download the chart's PNG (2x) and SVG through the page's download buttons and check the file
names (page, chart, key parameters and scenario hash of *this* session) and the contents (a PNG; the
SVG's legend and caption name this session's bulk size and no other).

Printed: errors (timeouts, error boxes, JavaScript errors, failed downloads) -- goal 0; leaks (any
value, URL, chart, file name or image content that is not this session's) -- goal 0; p50/p95
slider -> chart latency alone vs under load; exports done; server RSS (the Streamlit process, and
with its kaleido Chromium children) at start and end.  Exit status 1 if errors or leaks.
What one process holds (docs/deploy.md): the moves per second all sessions made together, the
server's CPU time per move (its user + system time over the load phase, divided by the moves: a
process runs its sessions' scripts under one interpreter lock, so 1 s over this is its ceiling of
moves per second), and the memory per session (the server's peak RSS during the load phase above
its RSS before it, divided by the sessions).  ``--hold N`` then opens N more sessions on the SLUB page
one after the other and keeps them all open: the server's RSS with them above its RSS before,
divided by N, is the memory a reader's open session holds (sessions opened one at a time, so a
machine whose browsers are slow still gets there).
"""
from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_latency import _PROBE_JS  # noqa: E402 - after the sys.path set-up above; keydown -> chart y changed, in the page's clock
from skbmodel import model  # noqa: E402 - after the sys.path set-up above
from skbmodel.links import state as sk_state  # noqa: E402 - after the sys.path set-up above
from skbmodel.machine.profile import load_profile  # noqa: E402 - after the sys.path set-up above
from skbview import report  # noqa: E402 - after the sys.path set-up above
from tests.browser_util import _APP_IDLE_JS, CHROMIUM, CHROMIUM_ARGS, NAV_LINK, slider_selector, streamlit_server  # noqa: E402 - after the sys.path set-up above

ERROR_SELECTOR = '[data-testid="stException"], [data-testid="stAlertContentError"]'
CHART = "per_object"  # slub page, chart 0; trace 0 = the "current bulk = N" marker [loop, bulk] cycles


# ----------------------------------------------------------------------------- server memory
def _server_pid(port: int) -> int | None:
    """The `streamlit run` process serving ``port`` (its command line names the port)."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(cmd) and f"--server.port={port}".encode() in cmd:
            return int(d.name)
    return None


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far (its threads included)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _peak_rss_kb(pid: int, stop: asyncio.Event, every_s: float = 0.25) -> int:
    """The highest RSS of ``pid`` seen until ``stop`` is set."""
    peak = _rss_kb(pid)
    while not stop.is_set():
        peak = max(peak, _rss_kb(pid))
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except asyncio.TimeoutError:
            pass
    return max(peak, _rss_kb(pid))


def _tree_rss_kb(pid: int) -> int:
    """RSS of ``pid`` and all its descendants (the kaleido Chromium the exporter starts)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += _rss_kb(p)
        todo += children.get(p, [])
    return total


# ----------------------------------------------------------------------------- one session
@dataclass
class Session:
    index: int
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    moves: int = 0
    page_switches: int = 0
    exports: int = 0

    def error(self, msg: str) -> None:
        self.errors.append(msg)
        print(f"  ! session {self.index} error: {msg}", file=sys.stderr, flush=True)

    def leak(self, msg: str) -> None:
        self.leaks.append(msg)
        print(f"  ! session {self.index} LEAK: {msg}", file=sys.stderr, flush=True)

    @property
    def lo(self) -> int:
        return 20 * (self.index % 12) + 1

    @property
    def hi(self) -> int:
        return self.lo + 18

    @property
    def xdp_batch(self) -> int:
        return self.index % 64 + 1

    def state(self, bulk: int, page: str = "slub") -> dict:
        return {**sk_state.defaults(), "bulk": bulk, "xdp_batch": self.xdp_batch, "page": page}


def expected_marker(bulk: int) -> list[float]:
    out = model.evaluate({**model.default_params(), "bulk": bulk},
                         load_profile(sk_state.defaults()["cpu"]))
    return [float(out["slub.loop_cycles"]), float(out["slub.bulk_cycles"])]


async def wait_idle(page, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        await page.wait_for_function(_APP_IDLE_JS, timeout=max(1.0, (deadline - time.monotonic()) * 1000))
        await page.wait_for_timeout(150)
        if await page.evaluate(_APP_IDLE_JS):
            return
        if time.monotonic() > deadline:
            raise TimeoutError("app did not become idle")


async def slider_value(page, key: str) -> float:
    return float(await page.evaluate(
        """(sel) => { const el = document.querySelector(sel);
                      return el.value !== undefined && el.value !== ''
                             ? el.value : el.getAttribute('aria-valuenow'); }""",
        slider_selector(key)))


async def marker_y(page) -> list | None:
    return await page.evaluate("""() => { const gd = document.querySelectorAll('.js-plotly-plot')[0];
        return gd && gd._fullData && gd._fullData[0] ? Array.from(gd._fullData[0].y) : null; }""")


async def open_slub(page, base: str, s: Session, bulk: int) -> None:
    await page.goto(f"{base}/slub?v=1&bulk={bulk}&xdp_batch={s.xdp_batch}", timeout=90_000)
    await page.locator(slider_selector("bulk")).first.wait_for(state="attached", timeout=90_000)
    await wait_idle(page)
    await page.wait_for_function("() => { const gd = document.querySelectorAll('.js-plotly-plot')[0];"
                                 " return !!(gd && gd._fullData && gd._fullData.length); }", timeout=60_000)
    await page.evaluate(_PROBE_JS, [0, 0])


async def check_view(page, s: Session, bulk: int, where: str, chart: bool = True) -> None:
    """Slider, URL and chart must be this session's."""
    if not await page.locator(slider_selector("bulk")).count():
        s.error(f"{where}: no bulk slider on the page ({page.url[-80:]})")
        return
    got = await slider_value(page, "bulk")
    if got != bulk:
        s.leak(f"{where}: bulk slider {got} (expected {bulk})")
    if await page.locator(slider_selector("xdp_batch")).count():
        xb = await slider_value(page, "xdp_batch")
        if xb != s.xdp_batch:
            s.leak(f"{where}: xdp_batch slider {xb} (expected {s.xdp_batch})")
    url = page.url
    # read the link as the app does: a short link leaves out a value equal to the default (bulk 16)
    linked, _ = sk_state.decode(urlsplit(url).query)
    if linked["bulk"] != bulk or linked["xdp_batch"] != s.xdp_batch:
        s.leak(f"{where}: URL {url[-200:]} (expected bulk={bulk}, xdp_batch={s.xdp_batch})")
    if chart:
        y = await marker_y(page)
        want = expected_marker(bulk)
        if not y or len(y) != 2 or any(not math.isclose(a, b, rel_tol=1e-9) for a, b in zip(y, want)):
            s.leak(f"{where}: chart marker {y} (expected {want} for bulk {bulk})")
    if await page.locator(ERROR_SELECTOR).count():
        s.error(f"{where}: error box on the page")


async def export_chart(page, s: Session, bulk: int, tmp: Path) -> None:
    state = s.state(bulk)
    stem = report.file_stem("slub", CHART, state)
    for fmt in ("png", "svg"):
        btn = page.locator(f".st-key-dl_{fmt}_slub_{CHART} button").first
        async with page.expect_download(timeout=90_000) as info:
            await btn.click()
        dl = await info.value
        name = dl.suggested_filename
        path = tmp / f"s{s.index}_{s.exports}_{name}"
        await dl.save_as(path)
        data = path.read_bytes()
        path.unlink(missing_ok=True)
        if name != f"{stem}.{fmt}":
            s.leak(f"export {fmt}: file name {name} (expected {stem}.{fmt})")
        if fmt == "png":
            if not data.startswith(b"\x89PNG\r\n\x1a\n") or len(data) < 10_000:
                s.error(f"export png: not a PNG ({len(data)} bytes)")
        else:
            text = data.decode("utf-8", "replace")
            if "<svg" not in text:
                s.error(f"export svg: not an SVG ({len(data)} bytes)")
            seen = {int(x) for x in re.findall(r"current bulk = (\d+)", text)}
            seen |= {int(x) for x in re.findall(r"bulk=(\d+)", text)}
            if seen != {bulk}:
                s.leak(f"export svg: bulk values {sorted(seen)} in the image (expected {bulk})")
    s.exports += 1


_DIAG_JS = """() => ({path: location.pathname,
    state: document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state'),
    stale: document.querySelectorAll('[data-stale="true"]').length,
    charts: document.querySelectorAll('.js-plotly-plot').length,
    status: (document.querySelector('[data-testid="stStatusWidget"]') || {}).innerText || ''})"""


async def _wait(page, what: str, coro) -> None:
    """Await a Playwright wait; on timeout say which one and what the page looked like."""
    try:
        await coro
    except Exception as e:  # noqa: BLE001 - any failed wait becomes one TimeoutError with diagnostics
        try:
            diag = await page.evaluate(_DIAG_JS)
        except Exception:  # noqa: BLE001 - diagnostics are best effort
            diag = "?"
        raise TimeoutError(f"{what}: {type(e).__name__}; page {diag}") from None


async def switch_page(page, s: Session, bulk: int) -> None:
    """To veth through the sidebar navigation (same session), check, and back to slub."""
    for slug in ("veth", "slub"):
        await page.locator(f'{NAV_LINK}[href="{slug}"]').first.click()
        await _wait(page, f"path /{slug}", page.wait_for_function(
            f"() => location.pathname.endsWith('/{slug}')", timeout=60_000))
        await _wait(page, f"idle on /{slug}", wait_idle(page))
        await _wait(page, f"charts on /{slug}", page.wait_for_function(
            "() => { const gd = document.querySelectorAll('.js-plotly-plot')[0];"
            " return !!(gd && gd._fullData && gd._fullData.length); }", timeout=60_000))
        if f"page={slug}" not in page.url:
            s.error(f"switch to {slug}: URL {page.url[-120:]}")
        if slug == "veth":
            await check_view(page, s, bulk, "veth page", chart=False)
    await page.evaluate(_PROBE_JS, [0, 0])
    s.page_switches += 1


async def run_session(browser, base: str, s: Session, duration: float, export_every: int, tmp: Path,
                      moves: int = 0) -> None:
    """Drive one session for ``duration`` seconds or, if ``moves`` > 0, for exactly ``moves`` slider moves."""
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = await ctx.new_page()
    page.on("pageerror", lambda e: s.error(f"javascript: {e}"[:300]))
    # (the frontend first probes <page>/_stcore/health and gets 404s by design; downloads come from /media/)
    page.on("response", lambda r: s.error(f"HTTP {r.status} for {r.url[-80:]}")
            if r.status >= 400 and "/media/" in r.url else None)
    bulk = (s.lo + s.hi) // 2
    direction = 1
    step = 0
    try:
        await open_slub(page, base, s, bulk)
        await check_view(page, s, bulk, "first load")
        deadline = time.monotonic() + duration
        while (step < moves) if moves > 0 else (time.monotonic() < deadline):
            step += 1
            if bulk + direction > s.hi or bulk + direction < s.lo:
                direction = -direction
            await page.locator(slider_selector("bulk")).first.focus()
            await page.evaluate("() => window.__skbBench.arm()")
            await page.keyboard.press("ArrowRight" if direction > 0 else "ArrowLeft")
            bulk += direction
            try:
                await page.wait_for_function("() => window.__skbBench.t1 !== null", timeout=30_000, polling="raf")
                s.latencies_ms.append(float(await page.evaluate("() => window.__skbBench.t1 - window.__skbBench.t0")))
            except Exception:  # noqa: BLE001 - playwright timeout
                s.error(f"step {step}: chart did not change within 30 s")
            await _wait(page, "idle after the move", wait_idle(page))
            s.moves += 1
            await check_view(page, s, bulk, f"step {step}")
            if step % 3 == 0:
                await switch_page(page, s, bulk)
            if export_every and step % export_every == 0:
                await export_chart(page, s, bulk, tmp)
    except Exception as e:  # noqa: BLE001 - counted
        s.error(f"step {step}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    finally:
        await ctx.close()


async def run_phase(browser, base: str, n: int, duration: float, export_every: int, tmp: Path,
                    first_index: int = 0, moves: int = 0) -> list[Session]:
    sessions = [Session(first_index + i) for i in range(n)]
    await asyncio.gather(*(run_session(browser, base, s, duration, export_every, tmp, moves) for s in sessions))
    return sessions


async def hold_sessions(browser, base: str, n: int, pid: int | None) -> tuple[int, int, int] | None:
    """Open ``n`` sessions on the SLUB page one after the other and keep them open:
    ``(sessions opened, server RSS before, server RSS with them open)`` in KiB, None for ``n`` = 0."""
    if n <= 0 or not pid:
        return None
    before = _rss_kb(pid)
    contexts = []
    try:
        for i in range(n):
            ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
            contexts.append(ctx)
            page = await ctx.new_page()
            try:
                await open_slub(page, base, Session(i), 20 * (i % 12) + 10)
            except Exception as e:  # noqa: BLE001 - counted: fewer sessions held
                print(f"  ! held session {i}: {type(e).__name__}: {str(e).splitlines()[0][:160]}", file=sys.stderr)
                await ctx.close()
                contexts.pop()
        await asyncio.sleep(2.0)  # let the last runs finish and their memory settle
        return len(contexts), before, _rss_kb(pid)
    finally:
        for ctx in contexts:
            await ctx.close()


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


async def main_async(args) -> dict:
    from playwright.async_api import async_playwright

    moves = getattr(args, "moves", 0) or 0
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"skb_load_{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    with streamlit_server("dashboard.py") as base:
        port = int(base.rsplit(":", 1)[1])
        pid = _server_pid(port)
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS), headless=True)
            try:
                # warm the server (first page load imports plotly etc.) before measuring memory
                warm = await browser.new_page()
                await warm.goto(base + "/slub", timeout=90_000)
                await wait_idle(warm)
                await warm.close()
                rss0 = (_rss_kb(pid), _tree_rss_kb(pid)) if pid else (0, 0)
                single = await run_phase(browser, base, 1, args.single, args.export_every, tmp, first_index=0,
                                         moves=moves) if args.single > 0 else []
                rss1 = (_rss_kb(pid), _tree_rss_kb(pid)) if pid else (0, 0)
                stop = asyncio.Event()
                sampler = asyncio.create_task(_peak_rss_kb(pid, stop)) if pid else None
                cpu0 = _cpu_s(pid) if pid else float("nan")
                t0 = time.perf_counter()
                many = await run_phase(browser, base, args.sessions, args.duration, args.export_every, tmp,
                                       moves=moves)
                wall = time.perf_counter() - t0
                cpu = (_cpu_s(pid) if pid else float("nan")) - cpu0
                stop.set()
                peak = await sampler if sampler else 0
                rss2 = (_rss_kb(pid), _tree_rss_kb(pid)) if pid else (0, 0)
                held = await hold_sessions(browser, base, getattr(args, "hold", 0) or 0, pid)
            finally:
                await browser.close()
    return dict(single=single, many=many, rss=(rss0, rss1, rss2), wall=wall, pid=pid, cpu_s=cpu, peak_rss_kb=peak,
                held=held)


def summarize(res: dict, args) -> int:
    single, many = res["single"], res["many"]
    lat1 = [x for s in single for x in s.latencies_ms]
    latn = [x for s in many for x in s.latencies_ms]
    errors = [f"[single] {e}" for s in single for e in s.errors] + [f"[s{s.index}] {e}" for s in many for e in s.errors]
    leaks = [f"[single] {e}" for s in single for e in s.leaks] + [f"[s{s.index}] {e}" for s in many for e in s.leaks]
    (r0, t0), (r1, _), (r2, t2) = res["rss"]
    moves = getattr(args, "moves", 0) or 0
    single_len, many_len = ((f"{moves} moves", f"{moves} moves") if moves > 0
                            else (f"{args.single:.0f} s", f"{args.duration:.0f} s"))
    print(f"load_test: 1 session x {single_len}, then {args.sessions} sessions x {many_len} "
          f"(wall {res['wall']:.0f} s) on one server (pid {res['pid']})")
    print(f"  single : moves {sum(s.moves for s in single)}, page switches {sum(s.page_switches for s in single)}, "
          f"exports {sum(s.exports for s in single)}, slider->chart p50 {pct(lat1, 50):.0f} ms, "
          f"p95 {pct(lat1, 95):.0f} ms")
    print(f"  {args.sessions:>2} sess: moves {sum(s.moves for s in many)}, page switches "
          f"{sum(s.page_switches for s in many)}, exports {sum(s.exports for s in many)} (PNG+SVG each), "
          f"slider->chart p50 {pct(latn, 50):.0f} ms, p95 {pct(latn, 95):.0f} ms")
    for s in many:
        print(f"    session {s.index}: bulk {s.lo}..{s.hi}, xdp_batch {s.xdp_batch}: moves {s.moves}, "
              f"switches {s.page_switches}, exports {s.exports}, p50 {pct(s.latencies_ms, 50):.0f} ms, "
              f"errors {len(s.errors)}, leaks {len(s.leaks)}")
    print(f"  server RSS: start {r0 / 1024:.0f} MiB, end {r2 / 1024:.0f} MiB "
          f"(with kaleido Chromium children: {t0 / 1024:.0f} -> {t2 / 1024:.0f} MiB)")
    n_moves = sum(s.moves for s in many)
    per_move_ms = 1000 * res["cpu_s"] / n_moves if n_moves else float("nan")
    ceiling = 1000 / per_move_ms if per_move_ms > 0 else float("nan")
    print(f"  one process: {n_moves / res['wall']:.2f} moves/s from {args.sessions} sessions; server CPU "
          f"{per_move_ms:.0f} ms per move (ceiling {ceiling:.0f} moves/s); peak RSS "
          f"{res['peak_rss_kb'] / 1024:.0f} MiB, {(res['peak_rss_kb'] - r1) / 1024 / args.sessions:.1f} MiB "
          "per session above the idle server")
    if res.get("held"):
        opened, before, after = res["held"]
        print(f"  held open: {opened} sessions on /slub, server RSS {before / 1024:.0f} -> {after / 1024:.0f} MiB, "
              f"{(after - before) / 1024 / max(opened, 1):.1f} MiB per session")
    print(f"  errors: {len(errors)}   cross-session leaks: {len(leaks)}")
    for e in (errors + leaks)[:30]:
        print("   ", e)
    return 0 if not errors and not leaks else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of concurrent load")
    ap.add_argument("--single", type=float, default=20.0, help="seconds of the one-session baseline")
    ap.add_argument("--export-every", type=int, default=4, help="export PNG+SVG every N steps (0 = never)")
    ap.add_argument("--hold", type=int, default=0,
                    help="afterwards open N sessions one at a time and keep them open (memory per session)")
    ap.add_argument("--moves", type=int, default=0,
                    help="each session makes exactly N slider moves instead of running for --single/--duration")
    args = ap.parse_args(argv)
    if not 1 <= args.sessions <= 12:
        ap.error("--sessions must be 1..12 (each session owns a bulk range of 19 values in 1..256)")
    res = asyncio.run(main_async(args))
    return summarize(res, args)


if __name__ == "__main__":
    sys.exit(main())
