"""xdp-bench (xdp-tools) summaries: ``Summary  <n> rx/s  <n> err,drop/s`` and redirect-cpu blocks
(``receive total`` / ``enqueue to cpu N`` / ``kthread total`` lines, ``pkt/s`` and ``drop/s``); the older
samples/bpf ``xdp_redirect_cpu`` table (``XDP-RX total``, ``cpumap-enqueue sum:N``, ``cpumap_kthread
total``); and the ``src cpu Rx  drops  dst cpu Rx`` summary with ``Mpps`` values (cpumap mails)."""
from __future__ import annotations

import re

from .common import LineFormat, Measurement, _intnum, _short

#: ``(pattern, test name, model output)`` of the redirect-cpu lines (the drop lines: their second number)
_REDIRECT_CPU = (
    (r"^receive total\s+([\d,]+)\s+pkt/s\s+([\d,]+)\s+drop/s", "xdp-bench receive total", "cpumap.src_mpps"),
    (r"^enqueue to cpu\s+\d+\s+([\d,]+)\s+pkt/s\s+([\d,]+)\s+drop/s", "xdp-bench enqueue drops",
     "cpumap.drop_mpps"),
    (r"^kthread total\s+([\d,]+)\s+pkt/s\s+([\d,]+)\s+drop/s", "xdp-bench kthread total", "cpumap.dst_mpps"),
    (r"^xdp-rx\s+total\s+([\d,]+)\s+([\d,]+)", "xdp_redirect_cpu XDP-RX total", "cpumap.src_mpps"),
    (r"^cpumap-enqueue\s+sum:\d+\s+([\d,]+)\s+([\d,]+)", "xdp_redirect_cpu cpumap-enqueue drops",
     "cpumap.drop_mpps"),
    (r"^cpumap[_-]kthread\s+total\s+([\d,]+)\s+([\d,]+)", "xdp_redirect_cpu cpumap_kthread total",
     "cpumap.dst_mpps"),
)
_TRIPLE_HEAD = r"src cpu rx\s+drops\s+dst cpu rx"
#: rows of a "src cpu Rx  drops  dst cpu Rx" summary are read this many lines after its header
TRIPLE_LINES = 30


class XdpBench(LineFormat):
    def __init__(self, res, origin):
        super().__init__(res, origin)
        self.triple_hdr = 0  # line of the last "src cpu Rx  drops  dst cpu Rx" header

    def feed(self, i: int, raw: str, s: str) -> bool:
        low = s.lower()
        if low.startswith("summary") and "rx/s" in low:
            mm = re.match(r"^summary\s+([\d,]+)\s+rx/s\s+([\d,]+)\s+(err,drop|err)/s", low)
            if not mm:
                self.err(i, "xdp-bench summary: expected 'Summary <n> rx/s <n> err,drop/s'", raw)
                return True
            self.add(Measurement(self.origin, i, _short(raw), "xdp-bench summary rx", _intnum(mm.group(1)), "pps",
                                 {}, None, "xdp", 0.03, "which XDP program (pass, drop, tx)? map it by hand, "
                                                        "e.g. xdp_pass.mpps for 'xdp-bench pass'"))
            return True
        for pat, test, out in _REDIRECT_CPU:
            xm = re.match(pat, low)
            if xm:
                col = 2 if out == "cpumap.drop_mpps" else 1
                self.add(Measurement(self.origin, i, _short(raw), test, _intnum(xm.group(col)), "pps", {}, out,
                                     "xdp", 0.03, "cpumap redirect: set pp_recycle and place for your run"))
                return True
        if re.match(r"^(receive total|enqueue to cpu|kthread total|xdp-rx|cpumap-enqueue|cpumap[_-]kthread)\b", low) \
                and re.search(r"\d", low) and not re.match(r"^(xdp-rx|cpumap[_-]kthread)\s+\d", low) \
                and not re.match(r"^cpumap-enqueue\s+\d+:\d+", low):
            self.err(i, "xdp-bench line: expected '<name> <n> pkt/s <n> drop/s ...'", raw)
            return True
        if re.search(_TRIPLE_HEAD, low):
            self.triple_hdr = i
        if self.triple_hdr and i - self.triple_hdr <= TRIPLE_LINES:
            self._triple(i, raw, low)
            return True
        return False

    def _triple(self, i: int, raw: str, low: str) -> None:
        """The Mpps triples of a "src cpu Rx  drops  dst cpu Rx" summary (header line included)."""
        start = re.search(_TRIPLE_HEAD, low).end() if i == self.triple_hdr else 0
        for tm in re.finditer(r"(\d+(?:\.\d+)?)\s*mpps\s+(n/a|\d+(?:\.\d+)?\s*mpps)\s+(\d+(?:\.\d+)?)\s*mpps",
                              low[start:]):
            src, drop, dst = float(tm.group(1)), tm.group(2), float(tm.group(3))
            if drop == "n/a":
                for v, what in ((src, "src cpu Rx"), (dst, "dst cpu Rx")):
                    self.add(Measurement(self.origin, i, _short(raw), f"{what} (drops N/A: one CPU, XDP_PASS)", v,
                                         "Mpps", {}, "xdp_pass.mpps", "xdp", 0.03,
                                         "no cpumap: one CPU does everything"))
                continue
            dv = float(drop.replace("mpps", "").strip())
            if abs(src - dv - dst) > 0.05 * max(src, 1e-9) + 0.05:
                self.err(i, f"src {src:g} Mpps - drops {dv:g} Mpps should equal dst {dst:g} Mpps "
                            "(every packet is received or dropped)", raw)
                continue
            for v, what, out in ((src, "src cpu Rx", "cpumap.src_mpps"), (dv, "drops", "cpumap.drop_mpps"),
                                 (dst, "dst cpu Rx", "cpumap.dst_mpps")):
                self.add(Measurement(self.origin, i, _short(raw), f"cpumap {what}", v, "Mpps", {}, out, "xdp", 0.03,
                                     "cpumap redirect: set pp_recycle and place for your run"))
