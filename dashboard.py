"""skbmodel dashboard: ``streamlit run dashboard.py``.

Entry point only: page config, the once-per-process GC freeze, navigation (one thin page per slug of
``skbmodel.state.PAGES``) and the shared sidebar (skbview.appstate), whose link box writes the URL back.
"""
import streamlit as st

from skbview import appstate, ui

st.set_page_config(page_title="skbmodel — SKB memory lifecycle", page_icon=":material/memory:", layout="wide")


ui.freeze_gc_once()

PAGES = {
    "overview": st.Page("pages/overview.py", title="Overview", icon=":material/dashboard:", url_path="overview",
                        default=True),
    "slub": st.Page("pages/slub.py", title="SLUB bulk", icon=":material/view_module:", url_path="slub"),
    "zeroing": st.Page("pages/zeroing.py", title="Zeroing", icon=":material/format_color_reset:", url_path="zeroing"),
    "veth": st.Page("pages/veth.py", title="veth XDP_BATCH", icon=":material/sync_alt:", url_path="veth"),
    "cpumap": st.Page("pages/cpumap.py", title="page_pool + cpumap", icon=":material/call_split:", url_path="cpumap"),
    "kfree": st.Page("pages/kfree.py", title="kfree_skb_list", icon=":material/delete_sweep:", url_path="kfree"),
    "compare": st.Page("pages/compare.py", title="Compare A/B", icon=":material/compare:", url_path="compare"),
    "validation": st.Page("pages/validation.py", title="Validation", icon=":material/fact_check:",
                          url_path="validation"),
    "design": st.Page("pages/design.py", title="Design", icon=":material/account_tree:", url_path="design"),
}

# Bring-your-own-measurements page (not a slug of state.PAGES: it has no charts to export;
# its share link opens /calibrate and carries the custom profile as ``prof``).
CALIBRATE = st.Page("pages/calibrate.py", title="Calibrate", icon=":material/tune:", url_path="calibrate")

appstate.init()
appstate.begin_full_run()
pg = st.navigation([*PAGES.values(), CALIBRATE])
slug = next((s for s, p in PAGES.items() if p.url_path == pg.url_path), "overview")
wanted = appstate.link_page_to_open(slug)
if wanted in PAGES:
    appstate.set_page(wanted)
    st.switch_page(PAGES[wanted])
appstate.set_page(slug)
appstate.show_link_warnings()
appstate.show_version_notice()  # a link made with an archived profile version or another model version
pg.run()  # the page records its own slug (appstate.page_state) and draws
# After the page: the share link carries the page's state; sidebar placement is unaffected.  The sidebar's
# link box (share link, report downloads, URL write-back) is a view fragment like the page's live area.
appstate.render_sidebar()
