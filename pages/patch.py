"""Patch in, Δ out: paste or upload a kernel patch (a diff, a mail, a series, an mbox), see each hunk mapped to a
mechanism the model prices or listed as not modelled, and Compare's predicted B − A with its verdict; the link
opens that comparison.  The translation and the answer are :mod:`skbmodel.patchin`'s (``python -m skbmodel
patch`` prints the same)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from skbmodel import patchin
from skbmodel.links import shortlink
from skbmodel.links.pages import BY_SLUG as PAGE_BY_SLUG
from skbmodel.machine.profile import available_profiles
from skbmodel.physics.noise import VERDICT_SHORT
from skbview.app import appstate, copybox, ui
from skbview.safe_text import md_escape

st.title(PAGE_BY_SLUG["patch"].heading)
appstate.ensure_navigation()  # a first request to /patch on a fresh server goes through dashboard.py
state = appstate.get_state()
st.caption("Paste a patch as it was posted (a mail with its headers, a series, an mbox, a unified diff, or a "
           "reply quoting the hunk), or upload it. Each hunk is matched against the kernel mechanisms the model "
           "prices (skbmodel/data/patch-mechanisms.toml) on the net change of each function it touches; A is "
           "the code before, B after, on the path its files and functions run on. Nothing of the patch leaves "
           "this page: the link carries A and B only.")

text = st.text_area("Patch", key="patch_text", height=220,
                    placeholder="From ... / Subject: [PATCH] ... / diff --git ...")
upload = st.file_uploader("or upload it (.patch, .eml, .mbox, .txt)", key="patch_file",
                          type=["patch", "diff", "eml", "mbox", "txt"])
profiles = available_profiles()
cpu = st.selectbox("CPU profile", profiles, index=profiles.index(state["cpu"]) if state["cpu"] in profiles else 0,
                   key="patch_cpu")
raw = upload.getvalue() if upload is not None else text


def _table(doc: dict) -> None:
    """What was read, every touched function with its status, and what the mails measured."""
    info = doc["series"]
    st.caption(f"Read {info['mails']} mail(s), {info['with_diff']} with a diff, {info['hunks']} hunks"
               + (f"; skipped: {md_escape('; '.join(info['skipped']))}" if info["skipped"] else "")
               + (f"; repaired: {md_escape('; '.join(info['repairs']))}" if info["repairs"] else ""))
    st.markdown("**Hunks**")
    st.dataframe(pd.DataFrame([{"file": r["file"], "function": r["function"], "stage": r.get("stage", ""),
                                "status": r["status"],
                                "mechanisms or reason": patchin.hunk_text(r).split(": ", 1)[-1]}
                               for r in doc["hunks"]]), hide_index=True, width="stretch", key="patch_hunks")
    st.markdown("**Measured in the mails**" if doc["measured"] else "**Measured in the mails:** nothing read")
    if doc["measured"]:
        st.dataframe(pd.DataFrame([{"measured": patchin.measured_text(m), "mail": m["mail"] + 1,
                                    "read as": m["how"], "line": " / ".join(m["lines"])}
                                   for m in doc["measured"]]), hide_index=True, width="stretch",
                     key="patch_measured")
    for note in doc["notes"]:
        st.caption(md_escape(note))


def _draw(raw) -> None:
    """The answer of the patch (no ``st.stop``: the dashboard draws its sidebar and link box after the page)."""
    if not raw:
        st.info("Paste a patch or upload one to see its predicted difference.")
        return
    try:  # the Compare page beside this one, at the address the browser shows (or the public one)
        seen = st.context.url
    except Exception:  # noqa: BLE001 - AppTest has no browser address
        seen = None
    seen = seen and seen.split("?", 1)[0].rstrip("/").rsplit("/", 1)[0] + "/compare"
    try:
        doc = patchin.answer(raw, cpu, base=shortlink.page_address("compare", seen))
    except patchin.NothingPriced as e:
        st.error(str(e))
        _table(e.doc)
        return
    except patchin.PatchError as e:
        st.error(str(e))
        return
    ans = doc["answer"]
    st.subheader(md_escape(doc["subject"]))
    first = doc["measured"][0] if doc["measured"] else None
    measured = ("Measured in the mail", "—" if first is None or first.get("delta_ns_per_packet") is None
                else f"{first['delta_ns_per_packet']:+.2f}",
                "where a mail states a before and an after" if first is None else patchin.measured_text(first))
    if ans is None:
        ui.metrics([("B − A (ns/packet)", "—", "nothing in the patch changes a term of the model"), measured])
    else:
        ui.metrics([
            ("B − A (ns/packet)", f"{ans['value']:+.2f}", "predicted difference of the path's cost, after − before",
             f"90 %: {ans['interval'][0]:+.2f} to {ans['interval'][1]:+.2f}"),
            ("Verdict", VERDICT_SHORT.get(ans["verdict"], ans["verdict"]),
             f"{ans['verdict']}; {patchin.runs_text(ans)}"),
            ("Path", doc["start"], f"{doc['path']}: A {ans['a']:.1f}, B {ans['b']:.1f} ns/packet on "
             f"{doc['profile']['id']}"),
            measured,
        ])
        for c in (ans.get("cpus") or {}).values():
            st.caption(md_escape(f"{c['cpu']}: {c['value']:+.2f} ns/packet (90 %: {c['interval'][0]:+.2f} to "
                                 f"{c['interval'][1]:+.2f})"))
        st.link_button("Open this comparison", doc["link"], help="the Compare page with the patch's A and B")
    _table(doc)
    st.markdown("**Copy as text**")
    copybox.copy_block(patchin.text_block(doc), key="patch_text_block")


_draw(raw)
