"""Streamlit helpers for custom (user-fitted) CPU profiles.

The custom profile in use travels in the scenario state under the optional key ``prof``
(compact link text, :mod:`skbmodel.machine.custom`); ``skbmodel.links.state.profile_for`` and the charts honour
it.  This module keeps the session side: the profiles fitted or uploaded in this session (with
their full per-constant sources), selecting one (sets ``prof``, ``cpu`` = its base and the clock),
and a sidebar control to switch between shipped and custom profiles.

Call :func:`select` / :func:`clear` from widget callbacks (they set widget keys ``cpu``/``ghz``).
"""
from __future__ import annotations

import streamlit as st

from skbmodel.machine import custom
from skbmodel.links import state as sk_state
from skbmodel.machine.profile import Profile, load_profile
from skbview.app.downloads import page_share_link

STORE = "_skb_state"            # the dashboard's state store (skbview.app.appstate.STORE)
REGISTRY = "_skb_custom_profiles"
PICK_KEY = "custom_profile_pick"
NONE = "(shipped profile)"


def session_store() -> dict:
    ss = st.session_state
    if STORE not in ss:
        ss[STORE] = sk_state.defaults()
    return ss[STORE]


def registry() -> dict[str, Profile]:
    """Custom profiles of this session, ``{id: Profile}`` (insertion order)."""
    return st.session_state.setdefault(REGISTRY, {})


def register(profile: Profile) -> None:
    registry()[profile.id] = profile


def active(which: str = "a") -> Profile | None:
    """The custom profile in use for scenario ``which`` (None = a shipped profile)."""
    pre = sk_state.key_of("", which)
    store = session_store()
    text = store.get(pre + "prof")
    if not text:
        return None
    try:  # on the base version the link asks for (pv), like the model evaluation (state.profile_for)
        prof = custom.decode_cached(text, store.get(pre + "pv") or None)
    except custom.ProfileLinkError:
        return None
    return registry().get(prof.id, prof)


def adopt_link_profile() -> None:
    """Register the profile a share link brought in (so the sidebar can list it)."""
    prof = active()
    if prof is not None and prof.id not in registry():
        register(prof)


def select(profile: Profile, which: str = "a") -> None:
    """Use ``profile`` for scenario ``which``: ``prof`` = its link text, ``cpu`` = its base, clock = its clock."""
    register(profile)
    store = session_store()
    # fitted/uploaded on today's version of its base; a fit that measured its noise sets the verdicts' floor
    new = sk_state.with_custom_profile(store, profile, which)
    store.pop(sk_state.key_of("pv", which), None)
    store.update(new)
    ss = st.session_state
    shown = ("cpu", "ghz") + (("noise_ns",) if sk_state.noise_floor_for(profile) is not None else ())
    for k in shown:  # the sidebar's widgets show what the state now says
        ss[sk_state.key_of(k, which)] = new[sk_state.key_of(k, which)]
    if which == "a":
        ss[PICK_KEY] = profile.id


def clear(which: str = "a") -> None:
    """Back to the shipped profile named by ``cpu`` (and its clock)."""
    pre = sk_state.key_of("", which)
    store = session_store()
    store.pop(pre + "prof", None)
    store.pop(pre + "pv", None)
    cpu = store.get(pre + "cpu") or st.session_state.get(pre + "cpu")
    if cpu:
        store[pre + "ghz"] = load_profile(cpu).ghz
        st.session_state[pre + "ghz"] = store[pre + "ghz"]
    if which == "a":
        st.session_state[PICK_KEY] = NONE


def _picked() -> None:
    pick = st.session_state.get(PICK_KEY)
    if pick in registry():
        select(registry()[pick])
    else:
        clear()


def label(profile: Profile | None) -> str:
    if profile is None:
        return NONE
    return f"{profile.name} ({profile.id}, base {profile.inherits})"


def sidebar_selector(container=None) -> None:
    """A selectbox of the custom profiles of this session (shown once there is one)."""
    adopt_link_profile()
    reg = registry()
    if not reg:
        return
    c = container or st
    cur = active()
    options = [NONE, *reg]
    want = cur.id if cur is not None else NONE
    if st.session_state.get(PICK_KEY) != want:
        st.session_state[PICK_KEY] = want
    c.selectbox("Custom profile (fitted on the Calibrate page)", options, key=PICK_KEY, on_change=_picked,
                format_func=lambda pid: NONE if pid == NONE else label(reg.get(pid)))


def share_link(state: dict | None = None) -> str:
    """The link of the Calibrate page for ``state`` (the current one by default): it opens this page with the
    scenario and the custom profile."""
    return page_share_link(dict(state or session_store()), with_page=False)
