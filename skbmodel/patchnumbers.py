"""What a patch mail measured: the before and after it states, converted to ns per packet where they are rates
of packets."""
from __future__ import annotations

import re

_RATE = r"~?\s*([\d][\d,.]*)\s*(Mpps|Kpps|pps|ns)\b"
_NOT_QUOTED = r"^(?!\s*>).*?\b"
_BEFORE = re.compile(_NOT_QUOTED + r"(?:unpatched|before|baseline|without(?: the)? patch)\b[^\n\d]*?" + _RATE,
                     re.I | re.M)
_AFTER = re.compile(_NOT_QUOTED + r"(?:patched|after|with(?: the)? patch)\b[^\n\d]*?" + _RATE, re.I | re.M)


def _ns_per_packet(value: str, unit: str) -> float:
    x = float(value.replace(",", ""))
    return {"Mpps": 1e3 / x, "Kpps": 1e6 / x, "pps": 1e9 / x, "ns": x}[unit]


def measured(mails) -> list[dict]:
    """Each before/after a mail's own (unquoted) lines state, a line naming a before (unpatched, baseline,
    without the patch) and another an after (patched, with the patch) in pps or ns per packet."""
    out = []
    for mail in mails:
        b = next((m for m in _BEFORE.finditer(mail.body) if not re.search(r"\bpatched\b", m.group(0), re.I)
                  or re.search(r"\bunpatched\b", m.group(0), re.I)), None)
        a = next((m for m in _AFTER.finditer(mail.body) if not re.search(r"\bunpatched\b", m.group(0), re.I)), None)
        if b and a and b.group(2) == a.group(2):
            nb, na = _ns_per_packet(b.group(1), b.group(2)), _ns_per_packet(a.group(1), a.group(2))
            out.append(dict(before=b.group(1), after=a.group(1), unit=b.group(2), delta_ns_per_packet=na - nb,
                            line=f"{b.group(0).strip()} / {a.group(0).strip()}", mail=mail.index))
    return out
