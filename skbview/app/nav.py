"""The dashboard's page navigation: ``st.navigation`` decides the page, the sidebar's links are drawn here.

``pages/`` beside ``dashboard.py`` puts a fresh Streamlit server in its legacy multipage mode: the first
run of the server sends that mode's own page list (the file names: dashboard, calibrate, compare, ...)
to the browser before ``dashboard.py`` gets to call ``st.navigation``, and the browser keeps showing it
for the seconds that first run takes.  ``client.showSidebarNavigation = false`` (.streamlit/config.toml)
hides every page list Streamlit draws itself, that one and ``st.navigation``'s, so the list a visitor
sees is the one :func:`sidebar_links` draws, from the first run on.
"""
from __future__ import annotations

import streamlit as st

from skbmodel.links import pages


def nav_page(page: pages.Page) -> st.Page:
    """The ``st.Page`` of one page of :mod:`skbmodel.links.pages` (its script is ``pages/<slug>.py``)."""
    return st.Page(f"pages/{page.slug}.py", title=page.title, icon=page.icon, url_path=page.slug,
                   default=page.slug == pages.DEFAULT_PAGE)


def navigation(nav_pages: list[st.Page]) -> st.Page:
    """``st.navigation`` over ``nav_pages`` with Streamlit's own list hidden (:func:`sidebar_links` draws it)."""
    return st.navigation(nav_pages, position="hidden")


def sidebar_links(nav_pages: list[st.Page]) -> None:
    """One link per page at the top of the sidebar (the current page's in bold), then a rule."""
    with st.sidebar.container(key="page_nav"):
        for page in nav_pages:
            st.page_link(page)
        st.divider()
