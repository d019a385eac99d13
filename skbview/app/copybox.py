"""A block of text to copy (a share link, a mail's plain-text summary) with a Copy button.

``st.code`` shows the same, but its first use on a page makes the browser load and run Streamlit's syntax
highlighter, a 1.5 MB script, before the page's first chart is drawn, although these blocks are never
highlighted (docs/benchmarks.md: the first chart of a new visitor).  This is an ``st.components.v2``
component instead: no iframe, a few hundred bytes of script, the text set as text (never as HTML).

The Copy button writes the clipboard through ``navigator.clipboard`` where the page is a secure context
(https, localhost), and otherwise selects the text in a hidden text area and copies it with the browser's
copy command (a team server reached over plain http).
"""
from __future__ import annotations

import streamlit as st

_HTML = '<div class="box"><pre><code></code></pre><button type="button" title="Copy to clipboard">Copy</button></div>'

_CSS = """
.box { position: relative; font-family: var(--st-code-font, "Source Code Pro", monospace); }
pre { margin: 0; padding: 0.6rem 4.2rem 0.6rem 0.75rem; overflow-x: auto; border-radius: 0.5rem;
      background: var(--st-secondary-background-color, #f0f2f6); color: var(--st-text-color, #31333f);
      font-size: 0.8rem; line-height: 1.5; }
.wrap pre { white-space: pre-wrap; overflow-wrap: anywhere; }
code { font-family: inherit; }
button { position: absolute; top: 0.3rem; right: 0.3rem; font: inherit; font-size: 0.75rem; cursor: pointer;
         padding: 0.15rem 0.5rem; border-radius: 0.4rem; border: 1px solid rgba(49, 51, 63, 0.2);
         background: var(--st-background-color, #fff); color: var(--st-text-color, #31333f); }
button:hover { border-color: var(--st-primary-color, #ff4b4b); color: var(--st-primary-color, #ff4b4b); }
"""

_JS = """
export default function (component) {
  const root = component.parentElement;
  const { text, wrap } = component.data;
  root.querySelector(".box").classList.toggle("wrap", !!wrap);
  root.querySelector("code").textContent = text;
  const button = root.querySelector("button");
  const done = (label) => { button.textContent = label; setTimeout(() => { button.textContent = "Copy"; }, 1500); };
  const fallback = () => {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    root.appendChild(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    done(ok ? "Copied" : "Select and copy");
  };
  button.onclick = () => {
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(() => done("Copied"), fallback);
    } else {
      fallback();
    }
  };
}
"""

_BLOCK = st.components.v2.component("skbmodel_copy_text", html=_HTML, css=_CSS, js=_JS)


def copy_block(text: str, *, key: str, wrap: bool = False) -> None:
    """``text`` in a monospaced block with a Copy button; ``wrap``: long lines wrap on the screen instead of
    scrolling sideways, so that a block wider than its place (a 70-column summary in the sidebar) is seen
    whole; the Copy button copies ``text`` as it is, its lines unbroken."""
    _BLOCK(data={"text": text, "wrap": wrap}, key=key)

