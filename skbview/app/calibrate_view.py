"""The Calibrate page's sections (Streamlit): the profile in use, the input, the runs, the mapping table,
the fit and its report, share/download/upload.  The steps between them are :mod:`skbmodel.evidence.userinput`;
``pages/calibrate.py`` calls these in order.

Widget keys start with ``cal_`` (a control is ``.st-key-<key>`` in the DOM); the parsed input and the
last fit's report live in the session under :data:`PARSED` and :data:`RESULT`.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from skbmodel.machine import cpuinfo, custom
from skbmodel import model
from skbmodel.evidence import parsers, userfit, userinput
from skbmodel.links import state as sk_state
from skbmodel.machine.profile import Profile, available_profiles, load_profile
from skbview import charts
from skbview.app import copybox, custom_profile, ui
from skbview.safe_text import md_escape  # file names, lines and TOML sources are user data: never markdown

PARSED = "_cal_parsed"
RESULT = "_cal_result"
#: the last fit of each scenario, ``{"a"|"b": FitResult}`` (before/after runs compared on the Compare page)
FITS = "_cal_fits"


# ------------------------------------------------------------------ profile in use
def in_use(state) -> None:
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
            floor = sk_state.noise_floor_for(prof)
            if floor is not None:
                with st.container(key="cal_noise_in_use"):
                    st.caption(f"Measured noise {prof.value(custom.NOISE_CONSTANT):.3g} ns per run: the A/B verdicts' "
                               f"noise floor is {floor:g} ns while this profile is in use.")
        bulk = int(st.session_state.get("bulk", state.get("bulk", sk_state.PARAMS["bulk"].default)))
        out = model.evaluate({"bulk": bulk}, prof)
        st.caption(f"With it: kmem_cache one-at-a-time {float(out['slub.loop_cycles']):.2f} cycles, bulk "
                   f"{float(out['slub.bulk_cycles']):.2f} cycles per object at bulk {bulk}; clock {prof.ghz:g} GHz.")


# ------------------------------------------------------------------ input
def measurement_input() -> userinput.Parsed:
    """The paste box and the file uploader; their content parsed (again only when it changed)."""
    st.subheader("1. Your measurements")
    left, right = st.columns([3, 2])
    with left:
        text = st.text_area("Paste tool output (time_bench / dmesg, pktgen, xdp-bench, or a seed-format CSV)",
                            key="cal_text", height=180,
                            placeholder=" kmem-in-loop Per elem: 109 cycles(tsc) 30.532 ns (step:16)\n"
                                        " kmem-bulk    Per elem: 64 cycles(tsc) 17.905 ns (step:16)")
    with right:
        limit = f"text, at most {parsers.MAX_TEXT_CHARS / 1e6:.0f} MB each"  # the parsers' limit, not the server's
        files = st.file_uploader(f"…or upload files ({limit})", accept_multiple_files=True,
                                 key="cal_files")
    sources: list[tuple[str, bytes | str]] = []
    if text and text.strip():
        sources.append(("pasted text", text))
    for f in files or []:
        sources.append((f.name, f.getvalue()))

    parsed = st.session_state.get(PARSED)
    if parsed is None or parsed.sig != userinput.signature(sources):
        if parsed is not None:
            st.session_state.pop(RESULT, None)  # the last fit's report belonged to the previous input
        parsed = userinput.parse_sources(sources)
        st.session_state[PARSED] = parsed

    if not sources:
        st.info("Paste lines or upload files to start. Example: the two slab_bulk_test01 lines of seed 004.")
    if parsed.repairs:
        with st.container(key="cal_repairs"):
            st.info("Repaired mail-archive text: " + " · ".join(md_escape(r) for r in parsed.repairs), icon="🩹")
    n_errors, n_notes = len(parsed.errors), len(parsed.notes)
    if n_errors:
        with st.container(key="cal_parse_errors"):
            st.warning(f"{n_errors} problem(s) in the input (these lines are not used):\n\n"
                       + "\n".join(f"- {md_escape(e)}" for e in parsed.errors[:30])
                       + ("\n- …" if n_errors > 30 else ""), icon="⚠️")
    if n_notes:
        with st.expander(f"{n_notes} note(s): repeated lines and repeats"):
            st.markdown("\n".join(f"- {md_escape(n)}" for n in parsed.notes[:50]))
    return parsed


# ------------------------------------------------------------------ runs
def run_choice(parsed: userinput.Parsed) -> tuple[list, object]:
    """``(measurements of the chosen run, run number or "all")``; asks only when there are several runs."""
    runs, measurements = parsed.runs, parsed.measurements
    if len(runs) <= 1:
        return measurements, "all"
    several_files = len({r.origin for r in runs}) > 1
    labels = {}
    for k, r in enumerate(runs, start=1):
        rep = userinput.run_repeats(measurements, r)
        labels[k] = r.describe(k, with_origin=several_files) + (f" — {rep}" if rep else "")
    clash = userinput.runs_in_conflict(measurements)
    options = ([] if clash else ["all"]) + list(labels)
    with st.container(key="cal_runs"):
        if clash:
            _, a, b = clash
            st.info(f"The input holds {len(runs)} runs that measure the same tests ({md_escape(a.test)}: "
                    f"{a.value:g} {a.unit} on {md_escape(a.where())}, {b.value:g} {b.unit} on {md_escape(b.where())}). "
                    "Choose the run to fit; fit the others one by one (or with `python -m skbmodel fit --each-run`).",
                    icon="ℹ️")
        run_pick = st.selectbox(f"Run to fit ({len(runs)} found)", options, key=f"cal_run_{parsed.sig}",
                                format_func=lambda k: "all runs together" if k == "all" else labels[k])
    if run_pick != "all":
        measurements = userinput.of_run(measurements, runs[run_pick - 1])
    return measurements, run_pick


# ------------------------------------------------------------------ mapping table
def mapping(measurements, sig: str, run_pick) -> tuple[list, list[str]]:
    """The editable mapping table: ``(measurements to fit, problems of rows that cannot be used)``."""
    if not measurements:
        return [], []
    st.subheader("2. Map each measurement to a model output")
    st.caption("Rows with a model output are used by the fit. Edit the output, the conditions "
               "(e.g. `kfl_bulk=1, drop_batch=64`) or the tolerance; untick a row to leave it out.")
    edited = st.data_editor(
        pd.DataFrame(userinput.mapping_rows(measurements)), key=f"cal_editor_{sig}_{run_pick}", hide_index=True,
        width="stretch", num_rows="fixed", disabled=["where", "test", "unit", "repeats", "note"],
        column_config={
            "use": st.column_config.CheckboxColumn("use"),
            "value": st.column_config.NumberColumn(format="%.6g"),
            "output": st.column_config.SelectboxColumn("model output", options=["", *parsers.MAPPABLE_OUTPUTS]),
            "conditions": st.column_config.TextColumn("conditions"),
            "tol_pct": st.column_config.NumberColumn("tolerance (%)", min_value=0.1, max_value=100.0, format="%g"),
            "repeats": st.column_config.TextColumn("repeats (the value used)"),
        })
    edited_ms, row_errors = userinput.apply_mapping(measurements, (row for _, row in edited.iterrows()))
    if row_errors:
        st.error("Fix these rows before fitting:\n\n" + "\n".join(f"- {md_escape(e)}" for e in row_errors), icon="🚫")
    return edited_ms, row_errors


# ------------------------------------------------------------------ fit
def _do_fit(ms, base_id, free, label_text, ghz=None, ghz_source="", run_ms=None, which: str = "a") -> None:
    res = userfit.fit(ms, load_profile(base_id), list(free), label=label_text or "my-lab", ghz=ghz,
                      ghz_source=ghz_source, noise_from=run_ms)
    st.session_state[RESULT] = res
    if res.ok:
        custom_profile.select(res.profile, which)
        st.session_state.setdefault(FITS, {})[which] = res


def ab_fits() -> tuple | None:
    """``(fit A, fit B)`` when this session fitted one run as A and another as B and both are still the
    profiles in use; else None."""
    fits = st.session_state.get(FITS) or {}
    if "a" not in fits or "b" not in fits:
        return None
    for w in ("a", "b"):
        now = custom_profile.active(w)
        if now is None or now.id != fits[w].profile.id:
            return None
    return fits["a"], fits["b"]


def _your_cpu(cpu: str | None, setup: dict | None = None) -> str | None:
    """The "Your CPU" field and the profile of the CPU it or the input names (None: no CPU named).

    A named CPU moves "Start from" to its profile once (the user may then pick another); the line under
    the field says which CPU was read and where the fit starts, or that the CPU is unknown."""
    default = sk_state.defaults()["cpu"]
    typed = st.text_input("Your CPU", key="cal_cpu", max_chars=120,
                          placeholder=cpu or "model name from /proc/cpuinfo, e.g. Intel(R) Xeon(R) Gold 6140 CPU "
                                             "@ 2.30GHz",
                          help="The fit starts from this CPU's profile (its own data where the public corpus has "
                               "some, else derived from its machine description). Empty: the 'model name' line of "
                               "/proc/cpuinfo (arm64: 'CPU part') pasted with the measurements, if any.")
    start_id, match = cpuinfo.start_profile(typed or cpu, default=default, setup=setup or {})
    if match is None:
        return None
    with st.container(key="cal_cpu_line"):
        st.caption(md_escape(match.line(default)))
    if st.session_state.get("_cal_cpu_for") != (match.text, start_id):
        st.session_state["_cal_cpu_for"] = (match.text, start_id)
        st.session_state["cal_base"] = start_id
    return start_id


def fit_controls(measurements, edited_ms, row_errors, sig: str, run_pick, cpu: str | None = None,
                 setup: dict | None = None) -> None:
    """The user's CPU, base profile, clock, constants to fit, profile name and the Fit button."""
    st.subheader("3. Fit")
    current = custom_profile.active()
    start_id = _your_cpu(cpu, setup)
    base_default = start_id or (current.inherits if current else None) or st.session_state.get("cpu") \
        or sk_state.defaults()["cpu"]
    c1, c2, c3, c4 = st.columns([2, 4, 2, 2])
    with c1:
        if st.session_state.get("cal_base") not in available_profiles():  # first run, or set by "Your CPU"
            st.session_state["cal_base"] = base_default
        base_id = st.selectbox("Start from", available_profiles(), key="cal_base")
    base = load_profile(base_id)
    clock = parsers.infer_clock(measurements)  # every line of the run, mapped or not
    with c4:
        ghz_value = _clock_field(clock, base, base_id, sig, run_pick)
    if clock.warning:
        st.warning(md_escape(clock.warning), icon="⚠️")
    ghz_fit, ghz_source = userinput.clock_for_fit(clock, ghz_value, base)
    suggested = userfit.suggest_free(edited_ms, base) if edited_ms else []
    with c2:
        free_for = (sig, base_id, tuple(sorted(m.key() for m in edited_ms)))
        if st.session_state.get("_cal_free_for") != free_for:
            st.session_state["_cal_free_for"] = free_for
            st.session_state["cal_free"] = suggested
        free = st.multiselect("Constants to fit (free)", userfit.freeable(base), key="cal_free",
                              help="Suggested: the fitted constants your measurements constrain. Everything else "
                                   "stays at the base profile's value.")
    with c3:
        label_text = st.text_input("Profile name", value="my-lab", key="cal_label", max_chars=40)
    b1, b2, b3 = st.columns([1, 1, 3])
    args = (edited_ms, base_id, tuple(free), label_text, ghz_fit, ghz_source, measurements)
    b1.button("Fit", key="cal_fit", type="primary", disabled=not edited_ms or bool(row_errors),
              on_click=_do_fit, args=args, help="fit this run and use it as scenario A (the sidebar)")
    b2.button("Fit as B", key="cal_fit_b", disabled=not edited_ms or bool(row_errors),
              on_click=_do_fit, args=(*args, "b"),
              help="fit this run as scenario B (e.g. the 'after' kernel's run) and compare it with A on Compare")
    if ab_fits():
        b3.page_link("pages/compare.py", label="Open Compare: A and B are your two fits", icon=":material/compare:")


def _clock_field(clock: parsers.Clock, base: Profile, base_id: str, sig: str, run_pick) -> float:
    ghz_default = userinput.default_ghz(clock, base)
    if st.session_state.get("_cal_ghz_for") != (sig, run_pick, base_id, ghz_default):
        st.session_state["_cal_ghz_for"] = (sig, run_pick, base_id, ghz_default)
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
    return ghz_value


def fit_report(state) -> None:
    """The last fit: why it was not done, or its residuals, figures and the fitted constants."""
    res: userfit.FitResult | None = st.session_state.get(RESULT)
    if res is None:
        return
    if not res.ok:
        with st.container(key="cal_fit_errors"):
            st.error("The fit was not done; the model in use is unchanged.\n\n"
                     + "\n".join(f"- {md_escape(e)}" for e in res.errors), icon="🚫")
        return
    prof = res.profile
    with st.container(key="cal_fit_ok"):
        st.success(f"Fitted profile `{prof.id}` ({prof.name}) is now in use (sidebar: custom profile).", icon="✅")
    for w in res.warnings:
        st.warning(md_escape(w), icon="⚠️")
    with st.container(key="cal_noise"):
        if res.noise.ns is not None:
            floor = sk_state.noise_floor_for(prof)
            st.markdown(f"**Measured noise:** {md_escape(res.noise.describe())}. Stored in the profile "
                        f"(`{custom.NOISE_CONSTANT}`); the A/B verdicts use {floor:g} ns as their noise floor while "
                        "it is in use.")
        else:
            st.caption("No repeated measurements: the verdicts keep the noise floor they had. Repeat a benchmark "
                       "(load the module again) to measure this machine's noise.")
    rows = pd.DataFrame(res.rows)
    st.markdown(f"**Residuals** (residual / tolerance; |z| ≤ 1 is within tolerance): largest before "
                f"{max(abs(rows.z_before)):.2f}, after {max(abs(rows.z_after)):.2f}")
    st.dataframe(rows[["origin", "line", "test", "output", "conditions", "unit", "measured", "before", "after",
                       "z_before", "z_after"]], hide_index=True, width="stretch", key="cal_residuals",
                 column_config={c: st.column_config.NumberColumn(format="%.5g")
                                for c in ("measured", "before", "after")}
                 | {c: st.column_config.NumberColumn(format="%+.2f") for c in ("z_before", "z_after")})
    names = [f"{r.origin}:{r.line} {r.unit}" for r in rows.itertuples()]
    label = f"profile {prof.id} ({prof.name}) on base {res.base_id}"
    view = {**state, "page": "calibrate"}
    ui.show_chart(charts.fit_residuals(rows, names, label), "fit_residuals", view)
    ui.show_chart(charts.fit_parity(rows, names, label), "fit_parity", view)
    st.markdown("**Fitted profile**")
    st.dataframe(pd.DataFrame(userinput.fitted_constants(res, load_profile(res.base_id))),
                 hide_index=True, width="stretch", key="cal_profile_table",
                 column_config={"change_pct": st.column_config.NumberColumn("change (%)", format="%+.2f"),
                                "stderr": st.column_config.NumberColumn("± (std. error)", format="%.3g"),
                                "value": st.column_config.NumberColumn(format="%.6g"),
                                "base": st.column_config.NumberColumn(format="%.6g")})


# ------------------------------------------------------------------ share / download / upload
def share_download_upload(state) -> None:
    st.subheader("4. Share, download, upload")
    prof_now = custom_profile.active()
    d1, d2 = st.columns(2)
    with d1:
        if prof_now is not None:
            st.download_button("Download profile (TOML)", data=custom.profile_toml(prof_now),
                               file_name=f"{prof_now.id}.toml", mime="application/toml", key="cal_download")
            st.markdown("Share link (carries the custom profile):")
            with st.container(key="cal_share_link"):
                copybox.copy_block(custom_profile.share_link(state), key="cal_share_link_text", wrap=True)
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


# ------------------------------------------------------------------ a perf profile beside the model
def perf_profile(state) -> None:
    """5. A ``perf report`` (or folded stacks) pasted as a reviewer has it: its share per kernel stage beside
    the model's for the same path and CPU (:func:`skbmodel.perfin.answer`, what ``python -m skbmodel perf``
    prints), the disagreements ranked, the symbols the map does not place."""
    from skbmodel import perfin
    from skbmodel.evidence import perfprofile

    st.subheader("5. A perf profile beside the model")
    st.caption("Paste `perf report --stdio` (with or without children, `--sort sym` or `dso,sym`) or folded "
               "stacks from `perf script`: each symbol is placed in a kernel stage (skbmodel/data/"
               "kernel-symbols.toml), and the run's share per stage is set beside the model's for the path.")
    text = st.text_area("perf report", key="cal_perf_text", height=160,
                        placeholder="# Overhead  Symbol\n    12.34%  [k] page_pool_alloc_pages ...")
    if not text.strip():
        return
    c1, c2 = st.columns(2)
    paths = ("from the report", *perfprofile.PATHS)
    with c1:
        path = st.selectbox("Path", paths, key="cal_perf_path")
    with c2:
        on_cpu = st.text_input("Only the entries of CPU (the report's CPU column)", key="cal_perf_cpu")
    try:
        doc = perfin.answer(text, None if path == paths[0] else path, state.get("cpu"), on_cpu.strip() or None)
    except perfin.PerfError as e:
        st.error(f"Not read: {md_escape(e)}", icon="🚫")
        return
    st.caption(md_escape(f"{doc['format']}, {len(doc['symbols'])} symbols holding {doc['listed_pct']:.1f} % of "
                         f"the samples; path {doc['path']} ({doc['path_from']}), profile {doc['cpu']}"))
    st.dataframe(pd.DataFrame([{"row": r["row"], "run (% of samples)": round(r["run_pct"], 1),
                                "model (% of its time)": round(r["model_pct"], 1)} for r in doc["rows"]]),
                 hide_index=True, width="stretch", key="cal_perf_rows")
    if doc["disagreements"]:
        st.markdown("**Disagreements, largest first**")
        st.dataframe(pd.DataFrame([{"row": d["row"], "run - model (points)": round(d["diff_pct"], 1),
                                    "what would explain it": d["why"]} for d in doc["disagreements"]]),
                     hide_index=True, width="stretch", key="cal_perf_disagree")
    if doc["unmapped"]:
        st.caption(md_escape("Not placed by the map: " + ", ".join(
            f"{u['symbol']} {u['share_pct']:.1f} %" for u in doc["unmapped"][:12])))
    st.markdown("**Copy as text**")
    copybox.copy_block(perfin.text_block(doc), key="cal_perf_text_block")
