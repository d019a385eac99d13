"""Streamlit download controls: per-chart PNG (2x) / SVG, and the whole-scenario report (HTML, PNG zip).

Every export runs only when its button is clicked (``st.download_button(data=callable)``; Streamlit
runs the callable on a separate thread, and :mod:`skbview.exporter` serialises the kaleido calls).
Buttons use ``on_click="ignore"``: a download does not rerun the page.
"""
from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from skbmodel.links import shortlink
from skbmodel.links.pages import DEFAULT_PAGE

from skbview import report
from skbview.app import media_grace

media_grace.install()  # a download must survive other sessions' media sweeps until it is fetched

__all__ = ["download_buttons", "report_buttons", "camera_config"]

camera_config = report.camera_config


def _page(state: Mapping) -> str:
    return str(state.get("page") or DEFAULT_PAGE)


def download_buttons(fig, name: str, state: Mapping) -> None:
    """PNG (2x) and SVG download buttons for one chart, side by side under it.

    File names: ``<page>_<name>_<key params>_<scenario hash>.png|.svg`` (see :func:`report.file_stem`).
    """
    page = _page(state)
    stem = report.file_stem(page, name, state)
    c1, c2, _ = st.columns([1, 1, 4], gap="small")
    with c1:
        st.download_button(
            "PNG (2×)", data=lambda: report.figure_png(fig), file_name=stem + ".png", mime="image/png",
            key=f"dl_png_{page}_{name}", on_click="ignore", icon=":material/image:",
            help=f"{stem}.png — rendered server-side at 2× scale",
        )
    with c2:
        st.download_button(
            "SVG", data=lambda: report.figure_svg(fig), file_name=stem + ".svg", mime="image/svg+xml",
            key=f"dl_svg_{page}_{name}", on_click="ignore", icon=":material/draw:",
            help=f"{stem}.svg — vector image for reports",
        )


def _base_url(state: Mapping) -> str:
    """The address this page's links start with (:func:`skbmodel.links.shortlink.page_address`): the public
    address when one is set, else the page's URL as the browser shows it (``st.context.url``)."""
    try:
        url = st.context.url
    except Exception:  # noqa: BLE001 - AppTest / older runtimes
        url = None
    return shortlink.page_address(_page(state), url)


def page_share_link(state: Mapping, with_page: bool = True) -> str:
    """The share link of ``state`` at this page's address (the public one when it is set); ``with_page=False``:
    the link of the Calibrate page, which opens that page (:func:`report.share_link`)."""
    base = _base_url(state) if with_page else _base_url({"page": "calibrate"})
    return report.share_link(state, base, with_page)


def report_buttons(state: Mapping, warnings=()) -> None:
    """"Download report" (one self-contained interactive HTML file) and "PNG zip" (every chart, 2x)."""
    base = _base_url(state)
    st.download_button(
        "Download report (HTML)",
        data=lambda: report.build_html_report(state, base_url=base, warnings=tuple(warnings)).encode("utf-8"),
        file_name=report.report_file_name(state, "html"), mime="text/html", key="dl_report_html",
        on_click="ignore", icon=":material/description:", width="stretch",
        help="Every chart of every page for this scenario (interactive, works offline), the parameters, "
             "the share link and the validation summary, in one file.",
    )
    st.download_button(
        "Download light report (HTML, < 1 MB)",
        data=lambda: report.build_html_report(state, base_url=base, warnings=tuple(warnings),
                                              light=True).encode("utf-8"),
        file_name=report.report_file_name(state, "html", light=True), mime="text/html", key="dl_report_light",
        on_click="ignore", icon=":material/attach_email:", width="stretch",
        help="The same report with static images and no script: small enough to attach to a mail.",
    )
    st.download_button(
        "Download all charts (PNG zip)",
        data=lambda: report.build_png_zip(state, base_url=base),
        file_name=report.report_file_name(state, "zip"), mime="application/zip", key="dl_report_zip",
        on_click="ignore", icon=":material/folder_zip:", width="stretch",
        help="One 2× PNG per chart of every page, named by page, chart and key parameters.",
    )
