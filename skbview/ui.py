"""Small Streamlit helpers shared by the pages: charts (with export config), headline metrics."""
from __future__ import annotations

import re
from collections.abc import Mapping

import plotly.graph_objects as go
import streamlit as st

#: State keys that go into an exported file name, per page.
FILENAME_KEYS = {
    "overview": ("path", "link_gbps", "frame_bytes"), "slub": ("bulk",), "zeroing": ("zero", "zero_bytes"),
    "veth": ("xdp_batch", "zero"), "cpumap": ("pp_recycle", "numa"), "kfree": ("kfl_bulk", "drop_batch"),
    "compare": ("path", "b_path"), "validation": (),
}


def _slug(x) -> str:
    s = f"{x:g}" if isinstance(x, float) else str(x)
    return re.sub(r"[^A-Za-z0-9.]+", "-", s).strip("-")


def export_filename(name: str, state: Mapping) -> str:
    """``<page>_<chart>_<cpu>_<key params>`` (no extension), safe for any file system."""
    page = state.get("page", "overview")
    parts = [page, name, _slug(state.get("cpu", ""))]
    parts += [f"{k}{_slug(state[k])}" for k in FILENAME_KEYS.get(page, ()) if k in state]
    return "_".join(p for p in parts if p)


def show_chart(fig: go.Figure, name: str, state: Mapping) -> None:
    """Draw ``fig`` exactly as exported (theme=None) and, if available, its PNG/SVG download buttons."""
    page = state.get("page", "overview")
    st.plotly_chart(
        fig, theme=None, key=f"chart_{page}_{name}",
        config={"toImageButtonOptions": {"format": "png", "scale": 2, "filename": export_filename(name, state)},
                "displaylogo": False},
    )
    try:
        from skbview.downloads import download_buttons
    except ImportError:
        return
    download_buttons(fig, name, state)


def show_charts(figures, state: Mapping) -> None:
    for name, fig in figures:
        show_chart(fig, name, state)


def metrics(items) -> None:
    """A row of headline numbers: ``[(label, value text, help or None), ...]``."""
    cols = st.columns(len(items))
    for col, (label, value, help_) in zip(cols, items):
        col.metric(label, value, help=help_)


def fmt(x: float, digits: int = 3) -> str:
    return f"{float(x):.{digits}g}"
