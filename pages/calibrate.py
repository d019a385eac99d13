"""Calibrate: bring your own measurements, fit a CPU profile, share it.

Paste or upload time_bench / pktgen / xdp-bench output (or a seed-format CSV), pick the run when the
input holds several (kernels, repeats), check the mapping of each measurement to a model output in
the editable table, check the clock (inferred from the lines that give cycles and ns), choose the
constants to fit, fit.  The
fitted profile becomes the one in use (sidebar), can be downloaded (TOML), uploaded again, and
travels in the share link.  Until a fit succeeds the model in use stays as it was.
"""
from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from skbmodel import custom, model, parsers, userfit
from skbmodel import state as sk_state
from skbmodel.pages import BY_SLUG as PAGE_BY_SLUG
from skbmodel.profile import available_profiles, load_profile
from skbview import charts, custom_profile
from skbview.safe_text import md_escape  # file names, lines and TOML sources are user data: never markdown

try:  # inside the dashboard (st.navigation); the page also runs on its own
    from skbview import appstate
except Exception:  # noqa: BLE001 - any failure means the page runs on its own, without the dashboard
    appstate = None

PAGE_KEY = "calibrate"
PARSED = "_cal_parsed"
RESULT = "_cal_result"
MAX_PASTE = parsers.MAX_TEXT_CHARS

st.title(PAGE_BY_SLUG["calibrate"].heading)
if appstate is not None:
    # a first request to /calibrate on a fresh server must go through dashboard.py's st.navigation
    appstate._ensure_navigation()
state = appstate.get_state() if appstate else dict(custom_profile._store())
custom_profile.adopt_link_profile()


# ------------------------------------------------------------------ profile in use
def _in_use() -> None:
    prof = custom_profile.active()
    with st.container(key="cal_in_use", border=True):
        if prof is None:
            cpu = st.session_state.get("cpu") or state.get("cpu") or sk_state.defaults()["cpu"]
            st.markdown(f"**Profile in use:** shipped `{cpu}`")
            prof = load_profile(cpu)
        else:
            base = load_profile(prof.inherits)
            st.markdown(f"**Profile in use:** custom `{prof.id}` — {md_escape(prof.name)}, base `{prof.inherits}`")
            diff = custom.diff(prof, base)
            st.markdown("\n".join(
                f"- `{k}` = {prof.value(k):.6g} {prof.constants[k].unit} (base {base.value(k):.6g}) — "
                f"{md_escape(prof.constants[k].source)}" for k in sorted(diff)))
        bulk = int(st.session_state.get("bulk", state.get("bulk", 16)))
        out = model.evaluate({"bulk": bulk}, prof)
        st.caption(f"With it: kmem_cache one-at-a-time {float(out['slub.loop_cycles']):.2f} cycles, bulk "
                   f"{float(out['slub.bulk_cycles']):.2f} cycles per object at bulk {bulk}; clock {prof.ghz:g} GHz.")


_in_use()

# ------------------------------------------------------------------ input
st.subheader("1. Your measurements")
left, right = st.columns([3, 2])
with left:
    text = st.text_area("Paste tool output (time_bench / dmesg, pktgen, xdp-bench, or a seed-format CSV)",
                        key="cal_text", height=180,
                        placeholder=" kmem-in-loop Per elem: 109 cycles(tsc) 30.532 ns (step:16)\n"
                                    " kmem-bulk    Per elem: 64 cycles(tsc) 17.905 ns (step:16)")
with right:
    files = st.file_uploader("…or upload files (text, at most 5 MB each)", accept_multiple_files=True,
                             key="cal_files")

sources: list[tuple[str, bytes | str]] = []
if text and text.strip():
    sources.append(("pasted text", text))
for f in files or []:
    sources.append((f.name, f.getvalue()))

sig = hashlib.sha1(b"".join((n.encode() + b"\0" + (d.encode("utf-8", "replace") if isinstance(d, str) else d))
                            for n, d in sources)).hexdigest()[:12]
parsed = st.session_state.get(PARSED)
if parsed is None or parsed["sig"] != sig:
    ms, errs, notes, runs = [], [], [], []
    for name, data in sources:
        res = parsers.parse_text(data, name) if isinstance(data, str) else parsers.parse_bytes(data, name)
        ms += res.measurements
        errs += [str(e) for e in res.errors]
        notes += res.notes
        runs += res.runs
    parsed = dict(sig=sig, measurements=ms, errors=errs, notes=notes, runs=runs)
    if st.session_state.get(PARSED) is not None:
        st.session_state.pop(RESULT, None)  # the last fit's report belonged to the previous input
    st.session_state[PARSED] = parsed

if not sources:
    st.info("Paste lines or upload files to start. Example: the two slab_bulk_test01 lines of seed 004.")
if parsed["errors"]:
    with st.container(key="cal_parse_errors"):
        st.warning(f"{len(parsed['errors'])} problem(s) in the input (these lines are not used):\n\n"
                   + "\n".join(f"- {md_escape(e)}" for e in parsed["errors"][:30])
                   + ("\n- …" if len(parsed["errors"]) > 30 else ""), icon="⚠️")
if parsed["notes"]:
    with st.expander(f"{len(parsed['notes'])} note(s): repeated lines kept once"):
        st.markdown("\n".join(f"- {md_escape(n)}" for n in parsed["notes"][:50]))

measurements: list[parsers.Measurement] = parsed["measurements"]

# ------------------------------------------------------------------ runs
runs: list[parsers.Run] = parsed.get("runs", [])
run_pick = "all"
if len(runs) > 1:
    several_files = len({r.origin for r in runs}) > 1
    labels = {k: r.describe(k, with_origin=several_files) for k, r in enumerate(runs, start=1)}
    clash = None
    seen: dict = {}
    for m in userfit.usable(measurements):
        if m.key() in seen and (seen[m.key()].origin, seen[m.key()].run) != (m.origin, m.run):
            clash = (seen[m.key()], m)
            break
        seen.setdefault(m.key(), m)
    options = ([] if clash else ["all"]) + list(labels)
    with st.container(key="cal_runs"):
        if clash:
            a, b = clash
            st.info(f"The input holds {len(runs)} runs that measure the same tests ({md_escape(a.test)}: "
                    f"{a.value:g} {a.unit} on {md_escape(a.where())}, {b.value:g} {b.unit} on {md_escape(b.where())}). "
                    "Choose the run to fit; fit the others one by one (or with `python -m skbmodel fit --each-run`).",
                    icon="ℹ️")
        run_pick = st.selectbox(f"Run to fit ({len(runs)} found)", options, key=f"cal_run_{parsed['sig']}",
                                format_func=lambda k: "all runs together" if k == "all" else labels[k])
    if run_pick != "all":
        chosen = runs[run_pick - 1]
        measurements = [m for m in measurements if (m.origin, m.run) == (chosen.origin, chosen.index)]


# ------------------------------------------------------------------ mapping table
def _cond_text(c: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in c.items())


def _parse_cond(text: str) -> tuple[dict, str | None]:
    cond = {}
    for part in filter(None, (p.strip() for p in str(text or "").split(","))):
        k, sep, v = part.partition("=")
        k = k.strip()
        if not sep or k not in parsers.CONDITION_KEYS:
            return {}, f"{part!r}: expected key=value with key one of {', '.join(parsers.CONDITION_KEYS)}"
        val, problem = sk_state.PARAMS[k].parse(v)
        if val is None or problem:
            return {}, f"{k}={v.strip()!r}: expected {sk_state.PARAMS[k].allowed()}"
        cond[k] = val
    return cond, None


edited_ms: list[parsers.Measurement] = []
row_errors: list[str] = []
if measurements:
    st.subheader("2. Map each measurement to a model output")
    st.caption("Rows with a model output are used by the fit. Edit the output, the conditions "
               "(e.g. `kfl_bulk=1, drop_batch=64`) or the tolerance; untick a row to leave it out.")
    df = pd.DataFrame([dict(use=bool(m.output), where=f"{m.origin}:{m.line}", test=m.test, value=m.value, unit=m.unit,
                            output=m.output or "", conditions=_cond_text(m.conditions), tol_pct=m.tol * 100,
                            note=m.note) for m in measurements])
    edited = st.data_editor(
        df, key=f"cal_editor_{parsed['sig']}_{run_pick}", hide_index=True, width="stretch", num_rows="fixed",
        disabled=["where", "test", "unit", "note"],
        column_config={
            "use": st.column_config.CheckboxColumn("use"),
            "value": st.column_config.NumberColumn(format="%.6g"),
            "output": st.column_config.SelectboxColumn("model output", options=["", *parsers.MAPPABLE_OUTPUTS]),
            "conditions": st.column_config.TextColumn("conditions"),
            "tol_pct": st.column_config.NumberColumn("tolerance (%)", min_value=0.1, max_value=100.0, format="%g"),
        })
    for m, (_, row) in zip(measurements, edited.iterrows()):
        if not row["use"]:
            continue
        out = row["output"] or None
        cond, problem = _parse_cond(row["conditions"])
        if problem:
            row_errors.append(f"{m.where()}: conditions {problem}")
            continue
        try:
            value, tol = float(row["value"]), float(row["tol_pct"]) / 100
        except (TypeError, ValueError):
            row_errors.append(f"{m.where()}: value and tolerance must be numbers")
            continue
        if out is None:
            continue
        if not parsers.compatible(out, m.unit):
            row_errors.append(f"{m.where()}: a value in {m.unit} cannot be compared with {out} "
                              f"({model.OUTPUT_UNITS[out]})")
            continue
        edited_ms.append(dataclasses.replace(m, output=out, conditions=cond, value=value, tol=tol))
    if row_errors:
        st.error("Fix these rows before fitting:\n\n" + "\n".join(f"- {md_escape(e)}" for e in row_errors), icon="🚫")

# ------------------------------------------------------------------ fit
st.subheader("3. Fit")
current = custom_profile.active()
base_default = (current.inherits if current else None) or st.session_state.get("cpu") or sk_state.defaults()["cpu"]
c1, c2, c3, c4 = st.columns([2, 4, 2, 2])
with c1:
    base_id = st.selectbox("Start from", available_profiles(), index=available_profiles().index(base_default),
                           key="cal_base")
base = load_profile(base_id)
clock = parsers.infer_clock(measurements)  # every line of the run, mapped or not
with c4:
    ghz_default = round(clock.ghz, 4) if clock.ghz and custom.GHZ_RANGE[0] <= clock.ghz <= custom.GHZ_RANGE[1] \
        else base.ghz
    if st.session_state.get("_cal_ghz_for") != (parsed["sig"], run_pick, base_id, ghz_default):
        st.session_state["_cal_ghz_for"] = (parsed["sig"], run_pick, base_id, ghz_default)
        st.session_state["cal_ghz"] = float(ghz_default)
    ghz_value = st.number_input("Clock (GHz)", min_value=custom.GHZ_RANGE[0], max_value=custom.GHZ_RANGE[1],
                                step=0.001, format="%.4f", key="cal_ghz",
                                help="TSC clock of the measurements: converts ns values to cycles and becomes the "
                                     "fitted profile's clock.")
    if clock.ghz:
        st.caption(f"inferred from {clock.pairs} cycles/ns pair{'s' if clock.pairs != 1 else ''}"
                   + (f" ({clock.ghz:.4f} GHz)" if abs(ghz_value - clock.ghz) > 5e-5 else ""))
    else:
        st.caption(f"no cycles/ns pairs: {base_id}'s clock")
if clock.warning:
    st.warning(md_escape(clock.warning), icon="⚠️")
if clock.ghz and abs(ghz_value - round(clock.ghz, 4)) <= 5e-5:
    ghz_fit, ghz_source = ghz_value, clock.describe()
elif not clock.ghz and abs(ghz_value - base.ghz) <= 5e-5:
    ghz_fit, ghz_source = None, ""
else:
    ghz_fit, ghz_source = ghz_value, "given on the Calibrate page"
suggested = userfit.suggest_free(edited_ms, base) if edited_ms else []
with c2:
    if st.session_state.get("_cal_free_for") != (parsed["sig"], base_id, tuple(sorted(m.key() for m in edited_ms))):
        st.session_state["_cal_free_for"] = (parsed["sig"], base_id, tuple(sorted(m.key() for m in edited_ms)))
        st.session_state["cal_free"] = suggested
    free = st.multiselect("Constants to fit (free)", userfit.freeable(base), key="cal_free",
                          help="Suggested: the fitted constants your measurements constrain. Everything else stays "
                               "at the base profile's value.")
with c3:
    label_text = st.text_input("Profile name", value="my-lab", key="cal_label", max_chars=40)


def _do_fit(ms, base_id, free, label_text, ghz=None, ghz_source="") -> None:
    res = userfit.fit(ms, load_profile(base_id), list(free), label=label_text or "my-lab", ghz=ghz,
                      ghz_source=ghz_source)
    st.session_state[RESULT] = res
    if res.ok:
        custom_profile.select(res.profile)


st.button("Fit", key="cal_fit", type="primary", disabled=not edited_ms or bool(row_errors),
          on_click=_do_fit, args=(edited_ms, base_id, tuple(free), label_text, ghz_fit, ghz_source))

res: userfit.FitResult | None = st.session_state.get(RESULT)
if res is not None:
    if not res.ok:
        with st.container(key="cal_fit_errors"):
            st.error("The fit was not done; the model in use is unchanged.\n\n"
                     + "\n".join(f"- {md_escape(e)}" for e in res.errors), icon="🚫")
    else:
        prof = res.profile
        base_p = load_profile(res.base_id)
        with st.container(key="cal_fit_ok"):
            st.success(f"Fitted profile `{prof.id}` ({prof.name}) is now in use (sidebar: custom profile).",
                       icon="✅")
        for w in res.warnings:
            st.warning(md_escape(w), icon="⚠️")
        rows = pd.DataFrame(res.rows)
        st.markdown(f"**Residuals** (residual / tolerance; |z| ≤ 1 is within tolerance): largest before "
                    f"{max(abs(rows.z_before)):.2f}, after {max(abs(rows.z_after)):.2f}")
        st.dataframe(rows[["origin", "line", "test", "output", "conditions", "unit", "measured", "before", "after",
                           "z_before", "z_after"]], hide_index=True, width="stretch", key="cal_residuals",
                     column_config={c: st.column_config.NumberColumn(format="%.5g")
                                    for c in ("measured", "before", "after")}
                     | {c: st.column_config.NumberColumn(format="%+.2f") for c in ("z_before", "z_after")})
        names = [f"{r.origin}:{r.line} {r.unit}" for r in rows.itertuples()]
        st.plotly_chart(charts.fit_residuals(rows, names), theme=None, key="cal_resid_chart",
                        config={"displaylogo": False})
        st.plotly_chart(charts.fit_parity(rows, names), theme=None, key="cal_parity_chart",
                        config={"displaylogo": False})
        st.markdown("**Fitted profile**")
        shown = ["ghz", *[n for n in res.free if n != "ghz"]]
        st.dataframe(pd.DataFrame([dict(constant=n, value=prof.value(n),
                                        stderr=res.stderr.get(n, np.nan) if n in res.free else np.nan,
                                        unit=prof.constants[n].unit, base=base_p.value(n),
                                        change_pct=(prof.value(n) / base_p.value(n) - 1) * 100
                                        if base_p.value(n) else np.nan,
                                        source=prof.constants[n].source) for n in shown]),
                     hide_index=True, width="stretch", key="cal_profile_table",
                     column_config={"change_pct": st.column_config.NumberColumn("change (%)", format="%+.2f"),
                                    "stderr": st.column_config.NumberColumn("± (std. error)", format="%.3g"),
                                    "value": st.column_config.NumberColumn(format="%.6g"),
                                    "base": st.column_config.NumberColumn(format="%.6g")})

# ------------------------------------------------------------------ share / download / upload
st.subheader("4. Share, download, upload")
prof_now = custom_profile.active()
d1, d2 = st.columns(2)
with d1:
    if prof_now is not None:
        st.download_button("Download profile (TOML)", data=custom.profile_toml(prof_now),
                           file_name=f"{prof_now.id}.toml", mime="application/toml", key="cal_download")
        st.markdown("Share link (carries the custom profile):")
        with st.container(key="cal_share_link"):
            st.code(custom_profile.share_link(appstate.get_state() if appstate else None), language=None,
                    wrap_lines=True)
    else:
        st.caption("Fit or upload a profile to download or share it.")
with d2:
    up = st.file_uploader("Upload a profile (TOML)", type=["toml"], key="cal_profile_upload")
    if up is not None:
        try:
            uploaded = custom.load_profile_text(up.getvalue(), up.name)
        except custom.ProfileLinkError as e:
            st.error(f"Profile not used: {md_escape(e)}", icon="🚫")
        else:
            st.button(f"Use {uploaded.name} ({uploaded.id})", key="cal_use_uploaded",
                      on_click=custom_profile.select, args=(uploaded,))
    if prof_now is not None:
        st.button("Back to the shipped profile", key="cal_clear", on_click=custom_profile.clear)
