"""The kernel configuration in view: a profile says its kernel and SRSO mode, Zen 4 has its stock (safe-RET)
profile beside the IBPB one, a pasted run starts from the profile of its CPU and kernel configuration, and a
fit that lands far from its base says so and offers the bases that fit."""
from __future__ import annotations

import pytest

from skbmodel.evidence import corpus, parsers, userfit
from skbmodel.machine import cpuinfo
from skbmodel.machine.profile import load_profile

RUN = "pp-epyc9684x-2025-02-v613-srso"
TESTS = {"tasklet-fast": "tasklet_page_pool01_fast_path", "tasklet-ring": "tasklet_page_pool02_ptr_ring",
         "tasklet-slow": "tasklet_page_pool03_slow"}


def _stock_run_text(boot: str = "") -> str:
    """page_pool08_bench_AMD.org's v6.13 run on the stock kernel, as its notebook writes it: the CPU line, the
    kernel line and the time_bench lines (values from the corpus rows transcribed from it)."""
    df = corpus.load_corpus()
    lines = ["CPU: AMD EPYC 9684X 96-Core Processor (CF Gen 12)", "", "Kernel: 6.13.0-traits-006-skb+", boot, ""]
    for suffix, test in TESTS.items():
        r = df[df["id"] == f"{RUN}-{suffix}"].iloc[0]
        ns = float(str(r["conditions"]).split(";")[0].split("=")[1])
        lines.append(f" time_bench: Type:{test} Per elem: {int(r['value'])} cycles(tsc) {ns:.3f} ns (step:0) - "
                     f"(measurement period time:0.1 sec time_interval:100000000) - (invoke count:10000000 "
                     f"tsc_interval:254620000)")
    return "\n".join(lines) + "\n"


def test_the_profiles_say_their_kernel_and_mitigation():
    ibpb, stock = load_profile("epyc-9684x"), load_profile("epyc-9684x-srso")
    assert ibpb.configuration_label == "kernel 6.13, spec_rstack_overflow=ibpb (IBPB, plain ret)"
    assert stock.configuration_label == "kernel 6.13, SRSO safe-RET (the Zen 1-4 default)"
    assert load_profile("e5-1650v4").configuration_label == "kernels 5.11-6.7, mitigations not stated"


def test_the_picker_shows_the_configuration_before_the_name():
    from skbview.app import appstate

    label = appstate._profile_label("epyc-9684x-srso")
    assert label.startswith("epyc-9684x-srso — kernel 6.13, SRSO safe-RET")
    assert label.index("safe-RET") < label.index("AMD EPYC")


def test_zen4_has_both_configurations_from_the_measured_runs():
    ibpb, stock = load_profile("epyc-9684x"), load_profile("epyc-9684x-srso")
    got = {k: (ibpb.value(k), stock.value(k)) for k in ("pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles")}
    assert got == {"pp_fast_cycles": (9, 36), "pp_ring_cycles": (26, 87), "page_slow_cycles": (78, 241)}
    assert stock.config["return_thunk"] == "srso-safe-ret" and ibpb.config["return_thunk"] == "srso-ibpb"
    assert stock.ghz == ibpb.ghz and stock.sockets == ibpb.sockets == 1


def test_a_stock_kernel_run_starts_from_the_safe_ret_profile_and_an_ibpb_boot_from_the_ibpb_one():
    pid, m = cpuinfo.start_profile(None, [_stock_run_text()])
    assert pid == "epyc-9684x-srso"
    assert "safe-RET" in m.line("e5-1650v4")
    assert cpuinfo.start_profile(None, [_stock_run_text("booted with spec_rstack_overflow=ibpb")])[0] == "epyc-9684x"
    assert cpuinfo.boot_setup([_stock_run_text()]) == {"kernel": "6.13", "return_thunk": "default-srso"}
    # a typed CPU name and no run: the CPU's first profile, as before
    assert cpuinfo.start_profile("AMD EPYC 9684X")[0] == "epyc-9684x"


def _fit(base_id: str):
    res = parsers.parse_text(_stock_run_text(), "page_pool08_bench_AMD.org")
    base = load_profile(base_id)
    free = ["pp_fast_cycles", "pp_ring_cycles", "page_slow_cycles"]
    return userfit.fit(userfit.usable(res.measurements), base, free, ghz=2.546)


def test_a_fit_far_from_its_base_says_so_in_one_line_and_offers_the_stock_profile():
    res = _fit("epyc-9684x")
    assert res.ok
    far = [w for w in res.warnings if w.startswith("far from the base epyc-9684x")]
    assert len(far) == 1 and "\n" not in far[0]
    assert "pp_fast_cycles 9 -> 36 cycles (+300 %" in far[0]
    assert "another mitigation mode" in far[0] and "another kernel" in far[0] and "another CPU" in far[0]
    offered = far[0].split("bases that fit better: ")[1]
    assert offered.startswith("epyc-9684x-srso (kernel 6.13, SRSO safe-RET")


def test_a_fit_on_the_matching_base_has_no_such_line():
    res = _fit("epyc-9684x-srso")
    assert res.ok and not [w for w in res.warnings if w.startswith("far from the base")]
    assert pytest.approx(36.0, abs=0.5) == res.profile.value("pp_fast_cycles")


def test_a_notes_file_of_two_boots_starts_from_the_chosen_run_s_mitigation_and_the_fit_states_it():
    """Lab notes of two boots under headings, the stock (safe-RET) run first and an IBPB boot second: the run
    fitted decides the base (each run's own lines and heading name its mode), and the fitted profile states
    the base's mitigation instead of "not stated"."""
    from skbmodel.evidence import userinput
    body = _stock_run_text().split("\n", 4)[4]  # the time_bench lines, without the CPU and kernel lines
    notes = ("CPU: AMD EPYC 9684X 96-Core Processor (CF Gen 12)\n\n"
             "== Stock boot ==\nKernel: 6.13.0-traits-006-skb+\n" + body +
             "\n== IBPB boot ==\nKernel: 6.13.0-traits-006-skb+\nbooted with spec_rstack_overflow=ibpb\n" + body)
    parsed = userinput.parse_sources([("notes.org", notes)])
    assert len(parsed.runs) == 2
    first, second = (userinput.setup_of(parsed, k) for k in (1, 2))
    assert first["return_thunk"] == "default-srso" and second["return_thunk"] == "srso-ibpb"
    assert cpuinfo.start_profile(None, setup=first, texts=[notes])[0] == "epyc-9684x-srso"
    assert cpuinfo.start_profile(None, setup=second, texts=[notes])[0] == "epyc-9684x"
    fitted = _fit("epyc-9684x-srso").profile
    assert fitted.config.get("return_thunk") == "srso-safe-ret" and "not stated" not in fitted.configuration_label
