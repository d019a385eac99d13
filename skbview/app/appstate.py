"""The scenario state between the URL and the Streamlit session, and the sidebar that edits it (its controls,
the share link, "Copy as text", the downloads).  Two pages' own controls also write a state key into the
session (the Compare page A's ``path``, the custom profile box a side's ``ghz``); every other write is here.

* First run of a session: ``st.query_params`` is decoded with :func:`skbmodel.provenance.read_link`
  (lenient; every ignored or clamped parameter is listed in one ``st.warning``).
* The state lives in ``_skb_state`` (:data:`STORE`), a key no widget owns, and in ``st.session_state``
  under the widget keys (widget key == state key, so the slider for ``bulk`` is ``.st-key-bulk`` in
  the DOM).  Streamlit drops a widget's value after a run that does not draw it, so the store is what
  keeps the values of controls drawn on one page only (the Design stages, the Overview path, scenario
  B) across page switches: a run takes every widget value Streamlit still holds into the store
  (:func:`init`, :func:`get_state`), and :func:`param_widget` hands the store's value back to the
  widget key just before it draws the widget.  A widget key is written only while its widget holds a
  value (:func:`set_value`): a value written under a key no widget has drawn yet would stay behind in
  Streamlit's state and resurface, outdated, once the widget is dropped again.
* :func:`commit_url` writes the short share link (:func:`skbview.report.share_query`, ``v=2``: what
  differs from the defaults, the versions and the page) into ``st.query_params`` after the widgets, on
  every run (also from fragments).
* ``page`` follows the current ``st.navigation`` page (url_path == slug of ``skbmodel.links.pages.PAGES``); a
  link whose ``page`` differs from the opened page switches to it once.
* :func:`question`: the question the view asks (:class:`skbmodel.question.Question`), once per run at the
  page's start; the page's surfaces render it and ask none of their own.
* Versions (:mod:`skbmodel.provenance`): a link made with an archived profile version keeps it
  (``pv``/``b_pv`` in the state, so the page shows the link's numbers) until **Use current** or
  another CPU profile; the link's model version and headline (``mv``/``h``) stay in the URL while
  the scenario and page are the link's.  :func:`show_version_notice` says what differs.
"""
from __future__ import annotations

import functools
from urllib.parse import parse_qsl

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.pages_manager import PagesManager

from skbmodel import provenance
from skbmodel import mailtext
from skbmodel.evidence import validation
from skbmodel.machine import profile as sk_profile
from skbmodel.links import state as sk_state
from skbmodel.question import Question, scenario_of
from skbview.app import copybox, custom_profile
from skbview.app.downloads import page_share_link, report_buttons
from skbview.report import share_query
from skbview.safe_text import md_escape  # link text is user data: never markdown

STORE = "_skb_state"
WARNINGS = "_skb_warnings"
VIEWS = "_skb_views"  # keys of the fragments (page's live area, sidebar link box) drawn in the last full run
LINK_PAGE = "_skb_link_page"
NOTICE = "_skb_version_notice"  # {"unversioned": bool, "page": the link's page} while the link's notice applies
LINK_CHART = "_skb_link_chart"  # the chart tab of a link without page=, until the page it opens is known
OPEN_CHART = "_skb_open_chart"  # {page: its open chart tab, 1-based}: the link's on the first run, then the user's
LIVE_SENT = "_skb_live_sent"  # {live control key: {"sid"}}: the payload its browser copy holds (skbview.app.live)
DRAWN_PAGE = "_skb_drawn_page"  # the URL path of the page the last full run drew
MODEL_KEYS = sk_state.MODEL_KEYS
#: Widgets of scenario A and the view: their values are the state.  Scenario B's controls are views of its
#: overrides (see :func:`param_widget`): a B key enters the state only when its control is moved.
WIDGET_KEYS = tuple(MODEL_KEYS) + sk_state.DISPLAY_KEYS
B_WIDGET_KEYS = tuple(sk_state.key_of(k, "b") for k in MODEL_KEYS)
#: What a link's scenario is (A, B's overrides, the view): to tell whether the user moved away from it
LINK_KEYS = WIDGET_KEYS + B_WIDGET_KEYS

#: One preset per seed thread: (label, help, A overrides, B overrides).  Each sets EVERY control:
#: the profile's defaults first, then the thread's conditions.  B is the thread's "before" case.
PRESETS: dict[str, dict] = {
    "000": dict(label="000 kfree_skb_list bulk free",
                help="pktgen queue_xmit into fq_codel, drop_batch 64, KFREE_SKB_BULK_SIZE 16 (B: no bulk free)",
                a=dict(cpu="e5-1650v4", kfl_bulk=16, drop_batch=64, clone_frac=0.0, link_gbps=10.0, frame_bytes=64,
                       path="kfree_skb_list"),
                b=dict(kfl_bulk=1)),
    "001": dict(label="001 NAPI defer cache",
                help="same-CPU skb_attempt_defer_free into the NAPI cache (B: without)",
                a=dict(cpu="e5-1650v4", defer_cache=1, path="xdp_pass"),
                b=dict(defer_cache=0)),
    "002": dict(label="002 veth bulk alloc / memset",
                help="veth XDP_PASS, VETH_XDP_BATCH 16, memset of 184 B, 2 ns noise (B: __GFP_ZERO)",
                a=dict(cpu="e5-1650v4", xdp_batch=16, zero="memset", zero_bytes=184, noise_ns=2.0, link_gbps=10.0,
                       frame_bytes=64, path="veth"),
                b=dict(zero="gfp_zero")),
    "003": dict(label="003 cpumap page_pool recycling",
                help="Xeon Platinum + iavf, cpumap to a core on the same node, skb page_pool recycling "
                     "(B: no recycling)",
                a=dict(cpu="xeon-platinum-iavf", pp_recycle=1.0, place="same_l3", zero="gfp_zero", frame_bytes=64,
                       path="cpumap"),
                b=dict(pp_recycle=0.0)),
    "004": dict(label="004 slab_bulk_test01",
                help="kmem_cache bulk alloc/free microbenchmark at bulk 16 (B: bulk 1)",
                a=dict(cpu="e5-1650v4", bulk=16),
                b=dict(bulk=1)),
}


def preset_state(preset_id: str) -> dict:
    """The full state a preset sets: every control of A, and B as A with the thread's "before" overrides."""
    pr = PRESETS[preset_id]
    full = sk_state.defaults(pr["a"].get("cpu"))
    full.update(pr["a"])
    return sk_state.with_b_overrides(full, pr["b"])


def _query_mapping() -> dict:
    qp = st.query_params
    return {k: qp.get_all(k) for k in qp.keys()}


def init() -> None:
    """Sync the session with the store; decode the URL on the session's first run.

    Call at the top of every full run, before any widget is created.
    """
    ss = st.session_state
    first = STORE not in ss
    if first:
        mapping = _query_mapping()
        state, warnings = provenance.read_link(mapping)
        ss[STORE] = state
        ss[WARNINGS] = warnings
        ss[LINK_PAGE] = state["page"] if "page" in mapping else None
        # a link without page= (a hand-typed /slub?chart=3) means the chart of the page its path opens,
        # which is known only when the navigation has run (link_page_to_open)
        ss[OPEN_CHART] = {state["page"]: state["chart"]} if "page" in mapping else {}
        ss[LINK_CHART] = None if "page" in mapping else state["chart"]
        ss["_skb_link_query"] = sk_state.encode({k: v for k, v in state.items() if k != "page"}, LINK_KEYS)
        notice = provenance.link_notice(mapping, state)
        ss[NOTICE] = None if notice is None else {"unversioned": notice["unversioned"], "page": state["page"]}
    store = ss[STORE]
    current = ss.to_dict()
    for k in WIDGET_KEYS:
        # the widget's value, moved by the user or a callback since the last run; on the first run the link
        # decides: a page script that ran alone before it (the first request of a fresh server, see
        # ensure_navigation) left its controls at their minimums
        if k in current and not first:
            store[k] = current[k]


def open_chart(page: str, n_charts: int) -> int:
    """The open chart tab of ``page`` (1-based, at most ``n_charts``), as the link or the user left it."""
    return min(max(int(st.session_state.setdefault(OPEN_CHART, {}).get(page, 1)), 1), n_charts)


def set_open_chart(page: str, index: int) -> None:
    """Record ``page``'s open chart tab; the state's ``chart`` (the link) follows the page on screen."""
    st.session_state.setdefault(OPEN_CHART, {})[page] = index
    set_value("chart", index)


def chart_tab_changed(page: str, key: str, labels: list[str]) -> None:
    """``on_change`` of a page's chart tabs: remember the tab, redraw the views (the link records it)."""
    set_open_chart(page, labels.index(st.session_state[key]) + 1)
    _rerun_views()


def begin_full_run() -> None:
    """Forget the view fragments of the previous full run (call at the top of ``dashboard.py``)."""
    st.session_state[VIEWS] = []


def begin_page(url_path: str) -> None:
    """Record the page this full run draws (call once its path is known).

    On another page than the last full run's, the browser mounts the page's live controls afresh and
    holds no payload for them: forget what was sent to the old ones, so that each control gets its payload
    with its first render, rather than asking for it and making the page's live area run and draw twice.
    """
    ss = st.session_state
    if ss.get(DRAWN_PAGE) != url_path:
        ss[DRAWN_PAGE] = url_path
        ss.pop(LIVE_SENT, None)


def view_fragment(key: str):
    """Decorator: ``fn`` becomes the keyed fragment ``key``, rerun alone when a model control moves.

    A control's ``on_change`` (:func:`_rerun_views`) reruns exactly the fragments registered here
    in the last full run (the page's metrics and charts, the sidebar's share link and report
    buttons) instead of the whole app: the other ~25 controls, the navigation and the page's
    static text are neither re-executed on the server nor sent to the browser again.
    """
    def deco(fn):
        frag = st.fragment(fn, key=key)

        @functools.wraps(fn)
        def call(*args, **kwargs):
            views = st.session_state.setdefault(VIEWS, [])
            if key not in views:
                views.append(key)
            return frag(*args, **kwargs)
        return call
    return deco


def _rerun_views() -> None:
    """``on_change`` of every model control: rerun only the views that depend on the state.

    Falls back to the default full rerun on a page without a live area (e.g. the Calibrate page,
    which uses the state in its body) or when Streamlit no longer knows one of the views.
    """
    views = list(st.session_state.get(VIEWS) or ())
    if "live" not in views:  # a page without a live area (Validation, Calibrate) reads the state in its body
        return
    try:
        st.rerun(views)
    except StreamlitAPIException:
        return


def rerun_views() -> None:
    """``on_change`` of a control drawn by a page itself: rerun the views that depend on the state."""
    _rerun_views()


def get_state() -> dict:
    """The current full state (every key of ``skbmodel.links.state.PARAMS``), from the session."""
    ss = st.session_state
    current = ss.to_dict()  # one snapshot: each proxy access filters the whole session state
    store = current.get(STORE) or sk_state.defaults()
    state = dict(store)
    state.update({k: current[k] for k in WIDGET_KEYS if k in current})
    ss[STORE] = state
    return state


def set_value(key: str, value) -> None:
    """Set one parameter from code (a preset, a page that fixes a control): the store, and the widget's
    value while Streamlit holds one (else :func:`param_widget` hands the store's value back)."""
    ss = st.session_state
    ss.setdefault(STORE, sk_state.defaults())[key] = value
    if key in ss:
        ss[key] = value


def set_page(slug: str) -> None:
    get_state()
    st.session_state[STORE]["page"] = slug


def ensure_navigation() -> None:
    """Make a page opened directly (``/veth``) on a fresh server go through ``dashboard.py``.

    Streamlit starts in the legacy "pages/ directory" mode because ``pages/`` exists, and only
    leaves it when ``st.navigation`` runs the first time.  If the first request of a fresh server
    is a page URL, the page script would run alone (no sidebar, legacy nav).  Leave that mode and
    rerun: the entry point then runs with the requested page.
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def page_state(slug: str) -> dict:
    """Called first by each page: records the current page (``page`` in the URL) and returns the state."""
    ensure_navigation()
    set_page(slug)
    return get_state()


def link_page_to_open(current_slug: str) -> str | None:
    """The page a shared link asked for, once per session, if it differs from the opened page.

    A link without ``page=`` opens the page of its path, which therefore gets the link's chart tab.
    """
    ss = st.session_state
    want = ss.pop(LINK_PAGE, None)
    ss[LINK_PAGE] = None
    chart = ss.pop(LINK_CHART, None)
    if chart is not None:
        ss.setdefault(OPEN_CHART, {})[current_slug] = chart
    if want and want != current_slug:
        return want
    return None


def commit_url(state: dict | None = None) -> str:
    """Write the short share link's query into ``st.query_params`` (only when it differs)."""
    state = state or get_state()
    query = share_query(state)
    want = dict(parse_qsl(query, keep_blank_values=True))
    qp = st.query_params
    have = {k: qp.get_all(k) for k in qp.keys()}
    if have != {k: [v] for k, v in want.items()}:
        qp.from_dict(want)
    return query


def url_state(state: dict) -> dict:
    """What the URL and the share link describe: the state, with the composed path on the Design page.

    The Design page shows the composition, so its link says ``path=design`` (``eval`` of the link and
    its headline ``h`` give the page's numbers).  The Overview's own choice of path stays in the
    state: visiting the Design page does not change what the Overview shows.
    """
    if state.get("page") == "design" and state.get("path") != "design":
        return {**state, "path": "design"}
    return state


def question(state: dict | None = None) -> Question:
    """The question the view asks (:func:`url_state` of the session's state, or of ``state``): the page's start
    asks it once per run and hands it to every surface it draws."""
    return Question.of_state(url_state(state if state is not None else get_state()))


def share_link(state: dict | None = None) -> str:
    """Share link: the page's address (the public one when set, downloads.page_share_link) + ``?`` + the short query."""
    return page_share_link(state or get_state())


def _link_scenario_kept(state: dict) -> bool:
    """True while the scenario and page are still the ones the opened link gave."""
    info = st.session_state.get(NOTICE) or {}
    return (state.get("page") == info.get("page")
            and sk_state.encode(state, LINK_KEYS) == st.session_state.get("_skb_link_query"))


def drop_stale_provenance(state: dict) -> dict:
    """Forget the link's ``mv``/``h`` once the scenario or page moved away from the link's.

    From then on the URL and share link record today's model version and headline: they describe
    a view made now.  An archived profile version (``pv``) stays until **Use current**.  The patch a link
    names (``patch``/``phash``) goes the same way: the A and B on screen are then no longer that patch's.
    """
    ss = st.session_state
    if any(k in state for k in sk_state.PATCH_KEYS) and (
            state.get("page") != "compare" or sk_state.encode(state, LINK_KEYS) != ss.get("_skb_link_query")):
        for k in sk_state.PATCH_KEYS:
            state.pop(k, None)
            ss.get(STORE, {}).pop(k, None)
    if ("mv" in state or "h" in state or (ss.get(NOTICE) or {}).get("unversioned")) and not _link_scenario_kept(state):
        for k in ("mv", "h"):
            state.pop(k, None)
            ss.get(STORE, {}).pop(k, None)
        if ss.get(NOTICE):
            ss[NOTICE] = {**ss[NOTICE], "unversioned": False}
    return state


def _use_current_versions() -> None:
    """**Use current**: today's profile versions and model for both scenarios; the notice goes."""
    ss = st.session_state
    for k in sk_state.VERSION_KEYS:
        ss.get(STORE, {}).pop(k, None)
    ss[NOTICE] = None
    ss["_skb_versions_changed"] = True  # the notice fragment then reruns the whole app (page, link, URL)


def has_version_notice() -> bool:
    """Whether the opened link's version notice may still apply (decides if its fragment is drawn)."""
    ss = st.session_state
    store = ss.get(STORE) or {}
    return bool(ss.get(NOTICE)) or any(store.get(k) for k in sk_state.VERSION_KEYS)


def show_version_notice() -> None:
    """The version notice of the opened link, above the page (a view fragment: redrawn on every move)."""
    if has_version_notice():
        _version_notice()


@view_fragment("notice")
def _version_notice() -> None:
    from skbview.safe_text import md_escape

    if st.session_state.pop("_skb_versions_changed", False):
        st.rerun()  # Use current: every number on the page and the URL change, not just this fragment
    state = drop_stale_provenance(get_state())
    info = st.session_state.get(NOTICE) or {}
    notice = provenance.notice(state, unversioned=bool(info.get("unversioned")))
    if notice is None:
        return
    with st.container(key="version_notice"):
        edited = notice["model"]["text"] if notice["edited"] else None
        old = notice["profile"] or (notice["model"] and not edited)
        for msg in notice["messages"]:
            if msg == edited:  # the numbers below are not the author's: a problem with the link
                st.warning(md_escape(msg), icon=":material/link_off:")
            elif old:
                st.info(md_escape(msg), icon=":material/history:")
            else:  # a link from before versions were recorded: a fact, not a problem
                st.caption(md_escape(msg))
        if old:
            st.button("Use current", key="use_current_versions", on_click=_use_current_versions,
                      help="Evaluate with today's profile versions and model; the share link records them")


def show_link_warnings() -> None:
    """Warn about every ignored/clamped link parameter while the controls still show the link's state."""
    ss = st.session_state
    warnings = ss.get(WARNINGS) or []
    if warnings and sk_state.encode(get_state(), LINK_KEYS) != ss.get("_skb_link_query"):
        ss[WARNINGS] = []
        warnings = []
    if warnings:
        st.warning("Some link parameters were ignored or adjusted:\n\n"
                   + "\n".join(f"- {md_escape(w)}" for w in warnings),
                   icon="⚠️")


# ------------------------------------------------------------------ widgets
def _cpu_changed(which: str = "a") -> None:
    """Picking a shipped CPU profile sets its clock and drops a custom profile (``prof``) from a link; B's clock
    then follows B's profile (it is no override of its own)."""
    ss = st.session_state
    cpu, ghz = sk_state.key_of("cpu", which), sk_state.key_of("ghz", which)
    if which == "b":
        store = ss.setdefault(STORE, sk_state.defaults())
        store[cpu] = ss[cpu]
        store.pop(ghz, None)
        if ghz in ss:
            ss[ghz] = sk_profile.load_profile(ss[cpu]).ghz
    else:
        set_value(ghz, sk_profile.load_profile(ss[cpu]).ghz)
    if STORE in ss:
        ss[STORE].pop(sk_state.key_of("prof", which), None)
        ss[STORE].pop(sk_state.key_of("pv", which), None)  # another profile: its current version


def _apply_preset(preset_id: str) -> None:
    full = preset_state(preset_id)
    ss = st.session_state
    ss[STORE] = {k: v for k, v in ss.get(STORE, {}).items() if k not in sk_state.PV_KEYS}  # today's versions
    for k in WIDGET_KEYS:
        set_value(k, full[k])
    set_b_overrides(sk_state.b_overrides(full))
    ss["_skb_preset"] = preset_id


def set_b_overrides(overrides: dict) -> None:
    """Make B exactly A plus ``overrides`` (keys without the prefix; {} makes B equal to A)."""
    ss = st.session_state
    ss[STORE] = sk_state.with_b_overrides(ss.get(STORE) or sk_state.defaults(), overrides)
    for k in B_WIDGET_KEYS:
        if k in ss and sk_state.side_of(k)[1] not in overrides:
            del ss[k]
    for k, v in overrides.items():
        if sk_state.key_of(k, "b") in ss:
            ss[sk_state.key_of(k, "b")] = v


def remove_b_override(key: str) -> None:
    """B follows A again in ``key`` (for the CPU: in its whole profile, clock included)."""
    over = sk_state.b_overrides(get_state())
    for k in (("cpu", "prof", "pv", "ghz") if key == "cpu" else (key,)):
        over.pop(k, None)
    set_b_overrides(over)


def add_b_override(key: str) -> None:
    """Let B differ from A in ``key``: a choice of two starts at the other option (the only difference it can
    make), anything else at A's value; its control then moves it alone."""
    state = get_state()
    over = sk_state.b_overrides(state)
    a_value = scenario_of(state, "b").params[key]
    p = sk_state.PARAMS[key]
    if p.kind == "choice" and len(p.choices) == 2:
        a_value = next(c for c in p.choices if c != a_value)
    over.setdefault(key, a_value)
    set_b_overrides(over)


def _b_recorded(key: str) -> None:
    """A B control that decides the page's layout moved: record the override; the whole page reruns."""
    ss = st.session_state
    ss.setdefault(STORE, sk_state.defaults())[key] = ss[key]


def _b_changed(key: str) -> None:
    """A B control moved: its value becomes one of B's overrides."""
    ss = st.session_state
    ss.setdefault(STORE, sk_state.defaults())[key] = ss[key]
    _rerun_views()


def _loaded_profile(pid: str):
    """``pid``'s profile, or None where it does not load (it is still listed and named, by its id)."""
    try:
        return sk_profile.load_profile(pid)
    except Exception:  # noqa: BLE001 - any failure to load leaves the choice in the list
        return None


def _profile_label(pid: str) -> str:
    prof = _loaded_profile(pid)
    # the kernel and its mitigation first: a narrow box cuts the end of the label, not them
    return f"{pid} — {prof.configuration_label} — {prof.name}" if prof else pid


def _profile_caption(pid: str) -> str:
    prof = _loaded_profile(pid)
    return f"{prof.configuration_label}; {prof.name}" if prof else pid


def param_widget(key: str, container=None, label: str | None = None, short=None, help: str | None = None,
                 whole_page: bool = False, shown=None) -> None:
    """The widget of one model parameter (A's, or B's: :func:`skbmodel.links.state.key_of`); key == state key.

    ``short``: the option texts of a choice (default: the schema's labels); ``whole_page``: a change
    reruns the whole page (the control decides which other controls the page shows), not only its views;
    ``shown``: what a B control shows while B does not override it (default: B's value, i.e. A's).
    """
    c = container or st
    p = sk_state.PARAMS[key]
    which, base = sk_state.side_of(key)
    is_b = which == "b"
    label = label or p.label
    ss = st.session_state
    if key in ss.get(STORE, ()):  # hand the kept value back: Streamlit forgets it on pages without this widget
        ss[key] = ss[STORE][key]
    elif is_b:  # B's control shows what B is (A's value, or the page's default B), until it is moved
        ss[key] = shown if shown is not None else scenario_of(ss.get(STORE) or get_state(), "b").params[base]
    live = None if whole_page else _rerun_views  # the CPU selectbox reruns the app: it also sets the clock slider
    if is_b and base != "cpu":
        live = functools.partial(_b_recorded if whole_page else _b_changed, key)
    show = short or p.label_of
    if base == "cpu":
        pid = c.selectbox(label, p.choices, key=key, format_func=_profile_label, on_change=_cpu_changed,
                          args=(which,), help=help)
        # a sidebar-wide box cuts a long label: the chosen profile's kernel and mitigation, whole, below it
        c.caption(_profile_caption(pid))
    elif base.startswith("d_") and p.kind == "choice":  # the Design page's stages: many options, a list
        c.selectbox(label, p.choices, key=key, format_func=show, on_change=live, help=help)
    elif p.kind == "choice":  # zero, place, path: the texts shown are the schema's labels
        c.radio(label, p.choices, key=key, format_func=show, horizontal=True, on_change=live, help=help)
    elif p.widget == "onoff":
        c.radio(label, (0, 1), key=key, format_func={0: "off", 1: "on"}.get, horizontal=True, on_change=live,
                help=help)
    elif p.widget == "number" and p.kind == "float":
        c.number_input(label, min_value=float(p.lo), max_value=float(p.hi), step=float(p.step), key=key,
                       format="%g", on_change=live, help=help)
    elif p.widget == "number":
        c.number_input(label, min_value=int(p.lo), max_value=int(p.hi), step=int(p.step), key=key, on_change=live,
                       help=help)
    elif p.kind == "int":
        c.slider(label, min_value=int(p.lo), max_value=int(p.hi), step=int(p.step or 1), key=key, on_change=live,
                 help=help)
    else:
        c.slider(label, min_value=float(p.lo), max_value=float(p.hi), step=float(p.step), key=key, on_change=live,
                 help=help)


def _sidebar_groups() -> tuple[tuple[str, tuple[str, ...]], ...]:
    groups: dict[str, list[str]] = {}
    for p in sk_state.MODEL_PARAMS + sk_state.DISPLAY_PARAMS:
        if p.group:
            groups.setdefault(p.group, []).append(p.key)
    return tuple((title, tuple(keys)) for title, keys in groups.items())


#: Sidebar controls shared by all pages, grouped: each parameter's ``group`` in the schema, in its order.
SIDEBAR_GROUPS = _sidebar_groups()


def render_sidebar() -> None:
    """Presets and every shared control, in the sidebar (after the page: a new visitor's browser then
    fetches the chart's code first, and the controls' dozens of small modules after it)."""
    with st.sidebar:
        with st.expander("Presets (one per seed thread)", expanded=False):
            for pid, pr in PRESETS.items():
                st.button(pr["label"], key=f"preset_{pid}", help=pr["help"], on_click=_apply_preset, args=(pid,),
                          width="stretch")
        for title, keys in SIDEBAR_GROUPS:
            st.markdown(f"**{title}**")
            for k in keys:
                param_widget(k)
            if title == "CPU":  # custom profiles fitted/uploaded on the Calibrate page or from a link
                custom_profile.sidebar_selector()


def render_link_box() -> None:
    """The sidebar's link box (share link, report buttons, URL write-back), after the page: it carries the
    page's state."""
    with st.sidebar:
        _link_box()


@view_fragment("link")
def _link_box() -> None:
    """Share link, report downloads and the URL write-back: rerun with the page's view on every move."""
    state = url_state(drop_stale_provenance(get_state()))
    st.markdown("**Share link** (what differs from the defaults, model and profile versions)")
    link = share_link(state)
    with st.container(key="share_link"):  # one line, scrolled sideways; the button copies it whole
        copybox.copy_block(link, key="share_link_text")
    # the block `python -m skbmodel eval QUERY --text` prints, to paste into a mail
    if st.toggle("Copy as text", key="copy_as_text",
                 help="A plain-text summary for a mailing list: what differs from the defaults, this page's "
                      "numbers with 90 % intervals, B − A, the versions and the link (ASCII, 70 columns)"):
        with st.container(key="copy_text"):  # 70 columns do not fit the sidebar: wrapped on screen, copied whole
            evidence = validation.seed_rows_line() if state.get("page") == "validation" else None
            copybox.copy_block(mailtext.summary_text(state, link, evidence), key="copy_text_block", wrap=True)
    # Exports (skbview.app.downloads): "Download report" (one HTML file) and a zip of every chart's PNG.
    report_buttons(state, st.session_state.get(WARNINGS) or ())
    commit_url(state)
