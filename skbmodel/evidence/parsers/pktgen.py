"""pktgen results: ``Result: OK: <usec>(c..+d..) usec, <count> (<size>byte,<frags>frags)`` followed by
``<pps>pps <Mb>Mb/sec (<bps>bps) errors: <n>`` (the bps must equal pps x size x 8)."""
from __future__ import annotations

import re

from .common import LineFormat, Measurement, _short


class Pktgen(LineFormat):
    def __init__(self, res, origin):
        super().__init__(res, origin)
        self.pkt: dict | None = None  # the pending "Result: OK:" line: its line, count and packet size

    def feed(self, i: int, raw: str, s: str) -> bool:
        if s.startswith("Result:") or re.search(r"\(\d+byte,\d+frags\)", s):
            m = re.search(r"(\d+)\s*\((\d+)byte,(\d+)frags\)", s)
            if s.startswith("Result:") and not s.startswith("Result: OK:"):
                self.err(i, f"pktgen did not finish OK: {_short(s, 80)!r}", raw)
                self.pkt = None
                return True
            if m:
                self.pkt = dict(line=i, count=int(m.group(1)), size=int(m.group(2)))
            elif s.startswith("Result: OK:"):
                self.err(i, "pktgen 'Result: OK:' line: expected '<usec>(c..+d..) usec, <count> "
                            "(<size>byte,<n>frags)'", raw)
                self.pkt = None
            if "pps" not in s:
                return True
        pkt = self.pkt
        pm = re.search(r"(\d+)pps\s+(\d+)Mb/sec\s+\((\d+)bps\)\s+errors:\s*(\d+)", s)
        if pm:
            pps, mb, bps, errors = (float(g) for g in pm.groups())
            label = s[: pm.start()].strip(" :-") or "result"
            if pkt and i - pkt["line"] <= 3:
                want = pps * pkt["size"] * 8
                if abs(bps - want) > max(1.0, 1e-6 * want):
                    self.err(i, f"{bps:.0f}bps is not {pps:.0f}pps x {pkt['size']} bytes x 8 = {want:.0f}bps: "
                                "the numbers do not belong together", raw)
                    return True
            if pps <= 0 or abs(bps / 1e6 - mb) > 1.0 + 1e-3 * mb:
                self.err(i, f"{mb:.0f}Mb/sec does not match ({bps:.0f}bps); expected Mb/sec = bps / 1e6", raw)
                return True
            note = "pktgen into a qdisc that drops: set kfl_bulk (1 = before bulk free), drop_batch, clone_frac"
            if pkt and i - pkt["line"] <= 3:
                note += f"; {pkt['size']}-byte packets, count {pkt['count']}"
            self.add(Measurement(self.origin, i, _short(raw), f"pktgen: {_short(label, 60)}", pps, "pps", {},
                                 "kfree_skb_list.mpps", "pktgen", 0.03, note))
            return True
        if re.search(r"\d\s*pps\b", s) and re.search(r"Mb/sec|bps\)", s):
            self.err(i, "pktgen result: expected '<n>pps <n>Mb/sec (<n>bps) errors: <n>'", raw)
            return True
        return False
