"""skbmodel dashboard: ``streamlit run dashboard.py``.

Entry point only: page config, the once-per-process GC freeze, navigation (one thin page per page of
``skbmodel.links.pages``; skbview.app.nav draws its sidebar links) and the shared sidebar
(skbview.app.appstate), whose link box writes the URL back.
"""
import streamlit as st

from skbmodel.links import pages
from skbview.app import appstate, nav, ui

st.set_page_config(page_title="skbmodel — SKB memory lifecycle", page_icon=":material/memory:", layout="wide")


ui.freeze_gc_once()


PAGES = {p.slug: nav.nav_page(p) for p in pages.PAGES}
TOOLS = [nav.nav_page(p) for p in pages.TOOLS]  # not scenario pages: no charts to export, no page= in their links

appstate.init()
appstate.begin_full_run()
pg = nav.navigation([*PAGES.values(), *TOOLS])
slug = next((s for s, p in PAGES.items() if p.url_path == pg.url_path), pages.DEFAULT_PAGE)
appstate.begin_page(pg.url_path)
wanted = appstate.link_page_to_open(slug)
if wanted in PAGES:
    appstate.set_page(wanted)
    st.switch_page(PAGES[wanted])
appstate.set_page(slug)
appstate.show_link_warnings()
appstate.show_version_notice()  # a link made with an archived profile version or another model version
nav.sidebar_links([*PAGES.values(), *TOOLS])  # before the page: its first chart comes with the navigation
pg.run()  # the page records its own slug (appstate.page_state) and draws
# After the page: the share link carries the page's state; sidebar placement is unaffected.  The sidebar's
# link box (share link, report downloads, URL write-back) is a view fragment like the page's live area.
appstate.render_sidebar()
appstate.render_link_box()
