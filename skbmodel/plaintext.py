"""Plain text for a mailing list: the width of a line and the characters a plain-text mail carries.

Every line a reviewer pastes (the view's summary, :mod:`skbmodel.mailtext`; a patch's prediction,
:mod:`skbmodel.patchin`) is ASCII and at most :data:`WIDTH` = 70 columns, so that quoted once ("> ")
it still fits the 72 columns of a plain-text mail.
"""
from __future__ import annotations

WIDTH = 70
_ASCII = str.maketrans({"\u2212": "-", "\u00d7": "x", "\u2013": "-", "\u2014": "-", "\u2192": "->", "\u00b1": "+/-",
                        "\u0394": "d", "\u00b5": "u"})


def ascii_text(text: str) -> str:
    """``text`` in plain ASCII (the few typographic signs the labels use spelt out, anything else '?')."""
    return str(text).translate(_ASCII).encode("ascii", "replace").decode("ascii")
