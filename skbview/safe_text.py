"""Text that came from a user (a share link, an uploaded file name or file, a pasted line) shown
inside Streamlit markdown (``st.warning``/``st.error``/``st.markdown``...) must stay plain text.

Streamlit never renders raw HTML there (no ``unsafe_allow_html``), but it does render markdown: a
link key such as ``![x](http://host/t.png)`` would make every reviewer's browser fetch that URL and
``[text](url)`` would put a clickable link in the app's own warning box.
:func:`md_escape` backslash-escapes every ASCII punctuation character that means something in
(GitHub-flavoured, Streamlit) markdown -- CommonMark allows escaping any of them -- so links, images,
emphasis, code, headings, tables, HTML entities, LaTeX (``$``), Streamlit's ``:color[]`` directives and
URL/e-mail autolinks all come out as the literal text; line breaks become spaces.  Quotes, commas,
semicolons, ``=``, ``?`` and ``%`` mean nothing there and are left alone (so ``'foo'`` stays readable
in the markdown source, e.g. for AppTest).
"""
from __future__ import annotations

import re

_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$:@^&/])")


def md_escape(text: object) -> str:
    """``text`` as markdown that renders as exactly that text (on one line)."""
    s = str(text).replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    return _PUNCT.sub(r"\\\1", s)
