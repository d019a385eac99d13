# ruff: noqa: E501  (each old text is one line of the module, kept whole so that it can be searched)
"""How much of what matters the tests kill: a listed sample of single-point mutations of the model.

Each mutation replaces one exact piece of text (it must occur exactly once in all of ``skbmodel/``, wherever
a split or a rename has moved it; ``tests/test_mutation_sample.py`` holds that) with another,
in a copy of the tree (never the working tree), runs the tests it names with a generous time limit,
and puts the text back.  A mutation is killed when a named test fails.  The tests named are rule tests:
ones that restate a formula, a kernel fact or a seed figure.  Snapshot and regenerate-and-compare tests
(a refreshed snapshot would hide the change) may not be named (:data:`NOT_KILLERS`), and the named
tests run with the browser and export tests deselected.

    .venv/bin/python scripts/mutation_sample.py            # every mutation, one line each, then "killed K of N"
    .venv/bin/python scripts/mutation_sample.py --check    # each old text found exactly once; nothing run
    .venv/bin/python scripts/mutation_sample.py --only slub --jobs 2
    .venv/bin/python scripts/mutation_sample.py --ids 2,12   # the mutations numbered so in the output

Before the mutations, the named tests run once on the unmutated copy: a test that fails there would kill
every mutation, so the run stops (exit 2).  Exit 0 when at least :data:`TARGET` of the sample is killed,
else 1.
"""
from __future__ import annotations

import argparse
import ast
import concurrent.futures as cf
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: a test run of one mutation that takes longer than this has hung (the named tests take seconds)
RUN_TIMEOUT_S = 900
#: the unmutated run of every named test at once (all of them, on a loaded runner: it took over 900 s once)
BASELINE_TIMEOUT_S = 3600
TARGET = 0.95

#: where the mutations' texts are searched: every module of the model, so that a text found again after a
#: module was split or renamed needs no edit here (the label of a mutation only groups the output)
PACKAGE = ROOT / "skbmodel"

#: tests that compare with a stored snapshot or a regenerated file, or refit: they may not count as kills
NOT_KILLERS = ("tests/test_docs.py", "tests/test_golden_links.py", "tests/test_report_figures.py",
               "tests/test_corpus_profiles.py", "tests/test_derived_cpus.py", "tests/test_shortlink.py::test_golden",
               "tests/test_model_properties.py::test_calibrate_reproduces_the_shipped_profiles")


@dataclasses.dataclass(frozen=True)
class Mutation:
    module: str  # a label: the subsystem the text belongs to (``--only`` selects by it)
    old: str
    new: str
    tests: tuple[str, ...]  # pytest node ids
    why: str  # the rule the change breaks


R = "tests/test_rules.py::"
MP = "tests/test_model_properties.py::"
PR = "tests/test_properties.py::"
MS = "tests/test_model_seeds.py::"

MUTATIONS = [
    # ---- SLUB
    Mutation("slub", "return np.floor(np.asarray(slab_bytes", "return np.round(np.asarray(slab_bytes",
             (R + "test_objects_per_slab_is_the_whole_objects_that_fit",
              R + "test_the_model_s_kmalloc_96_and_192_slabs_hold_the_kernel_s_objects"),
             "a slab holds whole objects: 96 B in 4 KiB is 42, not 43"),
    Mutation("slub", "return (1.0 - np.asarray(free_share, dtype=float)) * (bulk_obj_pair_cycles + call / n)",
             "return (1.0 - np.asarray(free_share, dtype=float)) * (bulk_obj_pair_cycles + call / (n + 1))",
             (R + "test_veth_is_its_docstring_s_stages", R + "test_the_cpumap_destination_is_its_docstring_s_stages"),
             "one bulk call's fixed cost is shared by the n objects of the bulk"),
    Mutation("slub", "return np.asarray(free_share, dtype=float) * fast_pair_cycles",
             "return (1.0 - np.asarray(free_share, dtype=float)) * fast_pair_cycles",
             (R + "test_xdp_pass_is_its_docstring_s_stages",),
             "kmem_cache_free is the free share of an alloc+free pair"),
    Mutation("slub", "return np.asarray(fast_pair_cycles, dtype=float) - np.asarray(bulk_obj_pair_cycles",
             "return np.asarray(fast_pair_cycles, dtype=float) + np.asarray(bulk_obj_pair_cycles",
             (MP + "test_bulk_never_costs_more_than_one_at_a_time",),
             "a bulk of one costs one alloc+free: call = fast - per-object"),
    Mutation("slub", "on = np.asarray(init_on_alloc, dtype=float) > 0.5",
             "on = np.asarray(init_on_alloc, dtype=float) > 1.5",
             (MP + "test_init_on_alloc_is_never_cheaper_and_costs_one_memset_per_object",),
             "init_on_alloc=1 clears every object it hands out"),
    # ---- zeroing
    Mutation("zeroing", "return np.ceil(np.maximum(np.asarray(nbytes", "return np.floor(np.maximum(np.asarray(nbytes",
             ("tests/test_intervals.py::test_the_half_width_of_a_two_constant_output_is_z_times_its_propagated_sd",
              MS + "test_time_bench_memset_within_5pct"),
             "a partial cacheline is still a line stored: 184 B is 3 lines"),
    Mutation("zeroing", "return erms_setup_cycles + erms_line_cycles * cachelines(nbytes, cacheline_bytes)",
             "return erms_setup_cycles + erms_line_cycles * cachelines(nbytes, 2 * cacheline_bytes)",
             (R + "test_the_cpumap_destination_is_its_docstring_s_stages",),
             "memset_erms costs one line store per 64-byte line"),
    Mutation("zeroing", "return np.where(method_is_gfp_zero, erms, stos)", "return np.where(method_is_gfp_zero, stos, erms)",
             (MS + "test_veth_rows_within_2ns_per_packet", MS + "test_memset_vs_gfp_zero_delta_is_the_seed_1_66_ns_and_below_noise"),
             "__GFP_ZERO is memset_erms of the object, memset is rep stos of zero_bytes (seed 002)"),
    Mutation("zeroing", "+ stos_drain_line_cycles * np.maximum(lines - sb_lines, 0.0))",
             "+ stos_drain_line_cycles * np.maximum(lines, 0.0))",
             (MS + "test_time_bench_memset_within_5pct",), "only the lines past the store buffer drain at the L1 rate (seed 002 mem rows)"),
    # ---- page allocator and page_pool
    Mutation("page_alloc", "* np.maximum(n - pcp_high_pages, 0.0) / n)", "* np.maximum(n - 2 * pcp_high_pages, 0.0) / n)",
             (PR + "test_page_allocator_spills_past_the_pcp_list",),
             "pages beyond the per-CPU list's high mark come from the zone"),
    Mutation("page_pool", "return r * pp_ring_cycles + (1.0 - r) * page_slow_cycles",
             "return r * page_slow_cycles + (1.0 - r) * pp_ring_cycles",
             (MP + "test_monotone_in_recycle_ratio",), "a recycled page costs the ptr_ring, the rest the page allocator"),
    Mutation("page_pool", "+ (1.0 - r) * xcpu_line_cycles * f", "+ (1.0 - r) * xcpu_line_cycles",
             (R + "test_the_cpumap_hand_off_across_nodes_costs_strictly_more",),
             "a remote free pulls struct page's line across the interconnect"),
    Mutation("page_pool", "return page_alloc_share * recycle_mix_cycles(",
             "return (1.0 - page_alloc_share) * recycle_mix_cycles(",
             (R + "test_the_cpumap_source_is_its_docstring_s_stages", MS + "test_cpumap_rows"),
             "the allocating CPU pays its share of the page's cost (seed 003's source CPU)"),
    Mutation("page_pool", "return np.where(t == 1, fast, np.where(t == 2, pp_ring_cycles, page_slow_cycles))",
             "return np.where(t == 1, fast, np.where(t == 2, page_slow_cycles, pp_ring_cycles))",
             ("tests/test_era.py::test_process_context_page_pool01_follows_the_kernel",), "no-softirq test 2 returns into the ptr_ring, test 3 to the page allocator"),
    # ---- cpumap, XDP_PASS, kfree_skb_list, NAPI cache, budget
    Mutation("cpumap", "dst = np.minimum(src, 1e3 / dst_ns)", "dst = np.minimum(offered_mpps, 1e3 / dst_ns)",
             (PR + "test_cpumap_source_never_exceeds_what_is_offered",
              MP + "test_drops_are_excess_of_source_over_destination"),
             "the destination cannot take more than the source sends"),
    Mutation("cpumap", 'return c["cpumap_src_base_cycles"] - c["cpumap_redirect_cycles"] + c["cpumap_dst_stack_cycles"]',
             'return c["cpumap_src_base_cycles"] + c["cpumap_redirect_cycles"] + c["cpumap_dst_stack_cycles"]',
             (R + "test_xdp_pass_is_its_docstring_s_stages",), "XDP_PASS on one CPU has no redirect"),
    Mutation("kfree_skb_list", "t_ns = (base_ns + free_ns) / (1.0 + w_per_ns * free_ns)",
             "t_ns = (base_ns + free_ns) / (1.0 + w_per_ns * base_ns)",
             (R + "test_the_qdisc_drop_path_is_in_steady_state", MS + "test_pktgen_qdisc_drop_rate_within_3pct"),
             "T = (base + F) / (1 + W F): only the dropped share is freed (seed 000)"),
    Mutation("napi_cache", 'skb = np.where(defer_cache, c["napi_cache_pair_cycles"], c["slub_fast_pair_cycles"])',
             'skb = np.where(defer_cache, c["slub_fast_pair_cycles"], c["napi_cache_pair_cycles"])',
             (MS + "test_napi_defer_cache_effect_sign_and_size",), "with the defer cache the skb comes from the NAPI cache (seed 001)"),
    Mutation("budget", "WIRE_OVERHEAD_BYTES = 20", "WIRE_OVERHEAD_BYTES = 24",
             (MS + "test_line_rate_kfl11",), "preamble + SFD (8 B) + inter-frame gap (12 B) per frame"),
    # ---- the composer
    Mutation("design", 'd_rx="pp_mix", d_skb="slab_bulk", d_zero="gfp_zero", d_hand="path", d_free="slab_one",',
             'd_rx="pp_mix", d_skb="slab_bulk", d_zero="gfp_zero", d_hand="path", d_free="napi_cache",',
             (R + "test_the_cpumap_destination_is_its_docstring_s_stages",),
             "cpumap frees each skb with kmem_cache_free (the docstring's free_one)"),
    Mutation("design", 'd_rx="pp_direct", d_skb="napi_cache", d_zero="path"', 'd_rx="pp_ring", d_skb="napi_cache", d_zero="path"',
             (R + "test_xdp_pass_is_its_docstring_s_stages",), "XDP_PASS recycles pages directly (pp_fast)"),
    Mutation("design", "NAPI_SKB_CACHE_HALF = 32", "NAPI_SKB_CACHE_HALF = 64",
             (R + "test_a_napi_cache_nobody_takes_from_flushes_half_of_it_in_one_bulk_free",),
             "napi_skb_cache_put flushes half of the 64-entry cache"),
    Mutation("design", 'True: Option(("factor",), lambda c, f: c["cpumap_xfer_lines"] * c["xcpu_line_cycles"] * f)}),',
             'True: Option(("factor",), lambda c, f: c["cpumap_xfer_lines"] * c["xcpu_line_cycles"])}),',
             (R + "test_the_cpumap_hand_off_across_nodes_costs_strictly_more",),
             "the frame's lines cross the interconnect after a cross-node hand-off"),
    Mutation("design", 'lambda c, cached, extra, line: _napi_put(c, cached, extra) + line),',
             'lambda c, cached, extra, line: _napi_put(c, cached, extra)),',
             ("tests/test_design.py::test_a_deferred_free_costs_at_least_the_same_cpu_free_into_the_cache",),
             "a deferred free pulls the skb's line back from the other CPU"),
    Mutation("design", "_where(skb_from_cache, lambda: 0.0, lambda: flush + extra)",
             "_where(skb_from_cache, lambda: 0.0, lambda: flush)",
             (R + "test_a_napi_cache_nobody_takes_from_flushes_half_of_it_in_one_bulk_free",),
             "a flush to a remote slab pays the slow free's extra"),
    # ---- the noise rules and verdicts
    Mutation("noise", "return np.abs(np.asarray(delta_ns, dtype=float)) >= np.asarray(noise_ns, dtype=float)",
             "return np.abs(np.asarray(delta_ns, dtype=float)) > np.asarray(noise_ns, dtype=float)",
             (R + "test_a_difference_exactly_at_the_noise_floor_is_measurable",), "|delta| = noise is measurable"),
    Mutation("noise", "sure = (np.asarray(lo, dtype=float) > 0) | (np.asarray(hi, dtype=float) < 0)",
             "sure = (np.asarray(lo, dtype=float) >= 0) | (np.asarray(hi, dtype=float) <= 0)",
             (R + "test_a_difference_exactly_at_the_noise_floor_is_measurable",),
             "an interval that reaches 0 cannot tell the sign"),
    Mutation("noise", "n = np.ceil(2.0 * ((z_alpha_half + z_power) * sigma / d) ** 2)",
             "n = np.ceil(((z_alpha_half + z_power) * sigma / d) ** 2)",
             (R + "test_runs_needed_is_the_two_sample_formula", MP + "test_noise_rules"), "two-sample runs: n = 2 ((z_a/2 + z_b) sigma / delta)^2"),
    # ---- intervals and pairing
    Mutation("uncertainty", "return NormalDist().inv_cdf((1.0 + level) / 2.0)", "return NormalDist().inv_cdf(level)",
             ("tests/test_intervals.py::test_the_half_width_of_a_two_constant_output_is_z_times_its_propagated_sd",),
             "a two-sided 90 % interval is 1.645 sd each side"),
    Mutation("uncertainty", "return (flat * (corr @ flat)).reshape(u.shape)",
             "return (flat * flat).reshape(u.shape)",
             ("tests/test_intervals.py::test_the_half_width_of_a_two_constant_output_is_z_times_its_propagated_sd",),
             "correlated constants: var = J C J^T, not the sum of the squares"),
    Mutation("uncertainty", 'np.hypot(own["A"][o], own["B"][o]) if across',
             'np.maximum(own["A"][o], own["B"][o]) if across',
             ("tests/test_attribution.py::test_a_delta_across_two_profiles_carries_both_uncertainties",),
             "two machines' model errors are independent: in quadrature"),
    Mutation("uncertainty", "if across else np.abs(value[o]))",
             "if across else 0.0 * np.abs(value[o]))",
             (R + "test_with_exact_constants_the_interval_of_a_difference_is_the_structural_term",),
             "on one machine the structural error of B - A is rel |f_B - f_A|"),
    Mutation("schema", 'EXACT_OUTPUTS = frozenset(of_kind("exact", "category"))', "EXACT_OUTPUTS = frozenset()",
             (PR + "test_intervals_respect_physics_over_4000_random_states",),
             "the slab geometry is the kernel's: no interval"),
    Mutation("uncertainty", "return (ca is not None and cb is not None and machine(profile_a) == machine(profile_b)",
             "return (ca is not None and cb is not None",
             ("tests/test_attribution.py::test_a_delta_across_two_profiles_carries_both_uncertainties",
              "tests/test_attribution.py::test_same_machine_pairs_and_a_changed_constant_does_not"),
             "another CPU's inherited constant is a stand-in, not the same quantity"),
    Mutation("uncertainty", 'return pid.split("@", 1)[0]', "return pid",
             ("tests/test_attribution.py::test_same_machine_pairs_and_a_changed_constant_does_not",),
             "an archived version is the same machine"),
    Mutation("uncertainty", "pid = profile.inherits if profile.id.startswith(CUSTOM_PREFIX) and profile.inherits else profile.id",
             "pid = profile.id",
             ("tests/test_attribution.py::test_same_machine_pairs_and_a_changed_constant_does_not",),
             "a custom profile is its base's machine"),
    # ---- links and codec
    Mutation("custom", "changes = diff(profile, base)", "changes = {k: v for k, v in diff(profile, base).items() if k != 'ghz'}",
             ("tests/test_custom_profile_link.py::test_link_text_is_compact_and_round_trips",),
             "the link carries every constant that differs from the base"),
    Mutation("params", "y = min(max(x, lo), hi)", "y = min(max(x, lo), hi - 1)",
             (MP + "test_a_link_with_a_value_out_of_range_is_clamped_with_a_warning",),
             "a value out of range is clamped to the nearest end of the range"),
    Mutation("params", 'return repr(float(x)) if isinstance(x, float) else str(x)',
             'return f"{float(x):g}" if isinstance(x, float) else str(x)',
             ("tests/test_state_codec.py::test_round_trip_any_valid_state",), "a link's number parses back to exactly the value"),
    # ---- mail text
    Mutation("answers", "d = np.where(ok, digits - 1 - np.floor(np.log10(np.where(ok, a, 1.0))), 0)",
             "d = np.where(ok, digits - np.floor(np.log10(np.where(ok, a, 1.0))), 0)",
             ("tests/test_mailtext.py::test_default_view_says_defaults_and_quotes_the_headline_with_its_interval",
              "tests/test_mailtext.py::test_a_and_b_on_the_compare_line_have_four_significant_digits"),
             "four significant digits in the mail text"),
    # ---- parsers
    Mutation("parsers.mail", '_SOFT = re.compile(r"(?<!=)=$")', '_SOFT = re.compile(r"=$")',
             (R + "test_one_soft_break_with_one_code_and_no_header_is_quoted_printable",),
             "'==' at the end of a line is text (a setext rule), not a soft break"),
    Mutation("parsers.mail", "return bool(broken) and (codes >= 1 or len(broken) >= 2 or header or record)",
             "return bool(broken) and (codes >= 2 or len(broken) >= 2 or header or record)",
             (R + "test_one_soft_break_with_one_code_and_no_header_is_quoted_printable",),
             "one soft break with one =XX code is quoted-printable"),
    # ---- fit
    Mutation("userfit", "return (a - b) / ((a + b) / 2), m.repeat_lines[hi], m.repeat_lines[lo]",
             "return (a - b) / a, m.repeat_lines[hi], m.repeat_lines[lo]",
             ("tests/test_fit.py::test_repeats_far_apart_are_named_time_bench_uses_the_minimum_others_are_refused",), "the repeats' spread is relative to their mean"),
    # ---- validation protocols
    Mutation("validation", "ok = bool(abs(z) <= 1.0)", "ok = bool(abs(z) <= 2.0)",
             (R + "test_a_seed_row_is_within_tolerance_exactly_when_its_relative_error_is",),
             "a row is within tolerance iff |error| <= tol"),
    Mutation("validation", "out[..., i] = (p - m) / (abs(m) * s.tol)", "out[..., i] = (p - m) / (abs(p) * s.tol)",
             (R + "test_a_relative_residual_is_of_the_measured_value",),
             "a relative tolerance is of the measured value"),
    Mutation("protocols.curves", 'return [p for p in self.points if not p["fit"]]', 'return [p for p in self.points]',
             ("tests/test_outofsample.py::test_fit_on_three_recovers_a_known_curve",), "a fit is not a validation: the fitted points are not predictions"),
    Mutation("era_validation", "profile=pid, points=len(ps), mape=float(np.mean(e)),",
             "profile=pid, points=len(ps), mape=float(np.median(e)),",
             ("tests/test_era.py::test_era_profile_predicts_its_eras_published_points_within_ten_percent",),
             "MAPE is the mean absolute relative error"),
    # ---- the derivation
    Mutation("derive", '"page_slow_cycles": 5}}', '"page_slow_cycles": 4}}',
             (R + "test_a_page_pool_cost_moves_by_its_locked_count_times_the_lock_price",),
             "the 6.5+ slow path: get_page, the counter, two put_page, the pcp spinlock"),
    Mutation("derive", '"pp_ring_cycles": 1, "page_slow_cycles": 5}', '"pp_ring_cycles": 0, "page_slow_cycles": 5}',
             (R + "test_a_page_pool_cost_moves_by_its_locked_count_times_the_lock_price",),
             "ptr_ring_produce takes the producer lock"),
    Mutation("derive", 'core = instr / d.value("issue_width") + LOCKED_OPS[new_era][name] * d.value("lock_add_cycles")',
             'core = instr / d.value("issue_width") + LOCKED_OPS[new_era][name] * d.value("lock_add_cycles") * 0.5',
             (R + "test_a_page_pool_cost_moves_by_its_locked_count_times_the_lock_price",),
             "each locked operation costs lock_add_cycles"),
    Mutation("derive", '"slub", lambda k: {"l2_latency_cycles": 2.0}, False,', '"slub", lambda k: {"l2_latency_cycles": 1.0}, False,',
             (R + "test_a_counted_constant_moves_by_count_times_price",),
             "an object past the L1: the alloc's and the free's free-pointer line, two L2 accesses"),
    Mutation("derive", '"slub", lambda k: {"cmpxchg16b_cycles": 2.0}, True,', '"slub", lambda k: {"cmpxchg16b_cycles": 1.0}, True,',
             (R + "test_a_fitted_constant_moves_by_its_counted_operations_on_one_training_cpu",),
             "one this_cpu_cmpxchg_double in the alloc and one in the free"),
    Mutation("derive", "value = r[\"core\"] * ghz / turbo", "value = r[\"core\"]",
             (R + "test_a_counted_constant_moves_by_count_times_price",),
             "a time_bench loop runs one core at turbo: TSC cycles = core cycles x TSC / turbo"),
]


def _tree(dest: Path) -> None:
    """Copy the tracked and the new (not ignored) files of the working tree to ``dest``, and the venv link."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True).stdout.decode()
    for rel in filter(None, out.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    if (ROOT / ".venv").exists():
        os.symlink(os.path.realpath(ROOT / ".venv"), dest / ".venv")


def _pytest(tree: Path, tests, python: str, timeout: float = RUN_TIMEOUT_S) -> tuple[int | None, float, str]:
    cmd = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not browser and not export", *tests]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("SKB_TEST_ORDER_SEED", None)
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - t0, ""
    tail = (r.stdout.strip().splitlines() or [""])[-1]
    return r.returncode, time.monotonic() - t0, tail


def sources(root: Path = ROOT) -> dict[str, str]:
    """The text of every module of the model, by its path relative to ``root``."""
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted((root / PACKAGE.name).rglob("*.py"))}


def where(m: Mutation, texts: dict[str, str]) -> list[str]:
    """The modules that hold ``m.old``, one entry per occurrence: a mutation applies when this is one path."""
    return [rel for rel, text in texts.items() for _ in range(text.count(m.old))]


def check(mutations, texts: dict[str, str] | None = None) -> list[str]:
    """Problems of the list: an old text not found exactly once in the model, a change that does not parse
    (it would be killed by the syntax error, not by a test), a snapshot killer, a named test that is not there."""
    texts = sources() if texts is None else texts
    bad = []
    for i, m in enumerate(mutations):
        found = where(m, texts)
        if len(found) != 1:
            bad.append(f"#{i} {m.module}: the old text occurs {len(found)} times in {PACKAGE.name}/ "
                       f"({', '.join(sorted(set(found))) or 'nowhere'}): {m.old[:60]!r}")
        if m.old == m.new:
            bad.append(f"#{i} {m.module}: old and new are the same")
        elif len(found) == 1:
            try:
                ast.parse(texts[found[0]].replace(m.old, m.new, 1))
            except SyntaxError as e:
                bad.append(f"#{i} {m.module}: the mutated {found[0]} does not parse ({e.msg}, line {e.lineno})")
        for t in m.tests:
            file, _, name = t.partition("::")
            if t.startswith(NOT_KILLERS):
                bad.append(f"#{i} {m.module}: {t} is a snapshot or regeneration test")
            if not (ROOT / file).is_file():
                bad.append(f"#{i} {m.module}: no test file {t}")
            elif name and not re.search(rf"^def {re.escape(name)}\(", (ROOT / file).read_text(), re.M):
                bad.append(f"#{i} {m.module}: no test {name} in {file}")
    return bad


def _run_one(i: int, m: Mutation, rel: str, tree: Path, python: str) -> str:
    path = tree / rel
    original = path.read_text()
    path.write_text(original.replace(m.old, m.new, 1))
    try:
        rc, secs, tail = _pytest(tree, m.tests, python)
    finally:
        path.write_text(original)
    verdict = {1: "KILLED", 0: "SURVIVED", None: "TIMEOUT"}.get(rc, f"ERROR({rc})")
    note = f" [{tail}]" if verdict.startswith("ERROR") else ""
    return f"{verdict:9s} #{i:02d} {m.module} ({rel}): {m.why} ({secs:.0f} s){note}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--check", action="store_true", help="check the list only (each old text found exactly once)")
    ap.add_argument("--only", default="", help="only the mutations whose module contains this text")
    ap.add_argument("--jobs", type=int, default=1, help="mutations run at once, each in its own copy of the tree")
    ap.add_argument("--ids", default="", help="only these mutations, by number (as printed: 2,12,14)")
    args = ap.parse_args(argv)
    texts = sources()
    bad = check(MUTATIONS, texts)
    if bad:
        print("\n".join(bad), file=sys.stderr)
        return 2
    ids = {int(x) for x in args.ids.split(",") if x.strip()}
    chosen = [(i, m) for i, m in enumerate(MUTATIONS) if args.only in m.module and (not ids or i in ids)]
    if args.check:
        print(f"{len(chosen)} mutations, each old text found exactly once")
        return 0
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="skb-mutation-") as tmp:
        trees = []
        for j in range(max(1, args.jobs)):
            trees.append(Path(tmp) / f"tree{j}")
            trees[-1].mkdir()
            _tree(trees[-1])
        every = sorted({t for _, m in chosen for t in m.tests})
        rc, secs, tail = _pytest(trees[0], every, python, BASELINE_TIMEOUT_S)
        if rc != 0:
            why = f"did not finish in {BASELINE_TIMEOUT_S} s" if rc is None else f"do not pass ({tail})"
            print(f"the named tests {why} on the unmutated tree; nothing can be judged", file=sys.stderr)
            return 2
        print(f"unmutated: the {len(every)} named tests pass ({secs:.0f} s)", flush=True)
        killed = 0
        with cf.ThreadPoolExecutor(max_workers=len(trees)) as pool:
            free = list(trees)
            futures = {}
            for i, m in chosen:
                if not free:
                    done = next(cf.as_completed(futures))
                    line, tree = done.result(), futures.pop(done)
                    killed += line.startswith("KILLED")
                    print(line, flush=True)
                    free.append(tree)
                tree = free.pop()
                rel = where(m, texts)[0]
                futures[pool.submit(_run_one, i, m, rel, tree, python)] = tree
            for done in cf.as_completed(futures):
                line = done.result()
                killed += line.startswith("KILLED")
                print(line, flush=True)
    print(f"killed {killed} of {len(chosen)}")
    return 0 if killed >= TARGET * len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
