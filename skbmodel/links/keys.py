"""How a link names scenario B: A's key with a prefix (``b_bulk`` is B's ``bulk``).  The codec
(:mod:`skbmodel.links.state`) alone reads and writes the prefix; everything else asks :func:`key_of` and
:func:`side_of`, or works on the overrides without it (:func:`skbmodel.links.state.b_overrides`)."""
from __future__ import annotations

B_PREFIX = "b_"


def key_of(key: str, which: str = "a") -> str:
    """The state's (and the link's) key of scenario ``which``'s ``key``: B's override of it, or A's own."""
    return key if which == "a" else B_PREFIX + key


def side_of(key: str) -> tuple[str, str]:
    """``("b", base key)`` for a key of scenario B's overrides, else ``("a", key)``."""
    return ("b", key[len(B_PREFIX):]) if key.startswith(B_PREFIX) else ("a", key)
