"""The perf reader, the kernel symbol map and the named stages of each path's rest, on published perf profiles.

Every profile under tests/data/perf/ is a report quoted in a mail or a public note, saved with its source, CPU,
kernel and the rate of the same run (index.csv lists them).  The folded-stack test alone uses two lines written
here: no published folded stack of a modelled path was found.
"""
from __future__ import annotations

import csv
import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

from skbmodel import perfin
from skbmodel.evidence import kstages, perfprofile as pp
from skbmodel.evidence.parsers import perf
from skbmodel.physics import rest as sk_rest
from tests.cli_util import skbmodel_cli

DATA = Path(__file__).parent / "data" / "perf"
FILES = sorted(DATA.glob("*.txt"))
INDEX = {r["file"]: r for r in csv.DictReader((DATA / "index.csv").open(encoding="utf-8"))}


def _read(name: str) -> perf.Profile:
    return perf.parse((DATA / name).read_text(encoding="utf-8"))


# ---------------------------------------------------------------- the saved profiles
def test_every_saved_profile_is_indexed_with_its_source_cpu_kernel_and_rate():
    assert {f.name for f in FILES} == set(INDEX)
    assert len(FILES) >= 10
    for f in FILES:
        meta = _read(f.name).meta
        for key in ("source", "path", "variant", "cpu", "kernel", "rate_pps", "rate_where", "command"):
            assert key in meta, (f.name, key)
        row = INDEX[f.name]
        assert (row["path"], row["cpu"], row["kernel"], row["rate_pps"]) == (
            meta["path"], meta["cpu"], meta["kernel"], meta["rate_pps"]), f.name
        assert meta["path"] in (*sk_rest.CONTENTS, "other")


def test_index_counts_are_what_the_reader_reads():
    for f in FILES:
        p = _read(f.name)
        row = INDEX[f.name]
        assert p.format == row["format"], f.name
        assert len(p.entries) == int(row["entries"]), f.name
        assert p.listed_pct == pytest.approx(float(row["listed_pct"]), abs=0.006), f.name


# ---------------------------------------------------------------- the reader
def test_plain_report_with_ipc_columns():
    p = _read("veth-mlx5-e5-1650v4-5.11-baseline.txt")
    assert p.format == "report"
    s = p.shares()
    # "+    4,87%  [k] __netif_receive_skb_core   -  -": a decimal comma, the IPC columns after the symbol
    assert s["__netif_receive_skb_core"] == pytest.approx(4.87)
    assert s["free_unref_page_prepare.part.0"] == pytest.approx(1.45)
    assert list(s)[0] == "__netif_receive_skb_core"
    assert len(s) == 44


def test_cpu_comm_and_dso_columns_and_a_decimal_comma():
    s = _read("cpumap-dst-i40e-e5-1650v4-5.1-bulkfree-hack.txt").shares()
    assert s["cpu_map_kthread_run"] == pytest.approx(28.68)
    assert s["memset"] == pytest.approx(1.28) and s["memset_erms"] == pytest.approx(9.86)
    assert sum(s.values()) == pytest.approx(96.95)


def test_call_graph_lines_are_not_entries():
    # the espressobin report has a caller graph under __pi___inval_dcache_area (|--9.69%--dma_direct_sync...)
    p = _read("xdp-pass-netstack-mvneta-a53-iptables.txt")
    s = p.shares()
    assert s["__pi___inval_dcache_area"] == pytest.approx(12.29)
    assert "dma_direct_sync_single_for_device" not in s
    assert len(p.entries) == 38
    # the TUI's expanded callers ("- 10.73% memcpy_orig", "+ 5.50% skb_store_bits") are not entries either
    s = _read("other-veth-afxdp-e5-1650v4-6.5-callers.txt").shares()
    assert s["memcpy_orig"] == pytest.approx(10.76)
    assert "skb_store_bits" not in s and "xsk_build_skb" not in s


def test_a_report_of_two_cpus_quoted_with_bars_keeps_each_entry_cpu():
    p = _read("cpumap-drop-ixgbe-sebastian-2024-unpatched.txt")
    assert len(p.entries) == 17 and {e.cpu for e in p.entries} == {"017", "003"}
    dst = p.on_cpu("3")
    assert dst.listed_pct == pytest.approx(30.10) and dst.shares()["cpu_map_kthread_run"] == pytest.approx(10.68)
    assert pp.stage_shares(dst) == pytest.approx({"cpumap": 10.68, "free": 9.48, "other": 8.39, "xdp_run": 1.55})


def test_user_symbols_and_the_marker():
    p = _read("other-veth-udp-sink-5.12-cpu-column.txt")
    user = {e.symbol for e in p.entries if e.user}
    assert user == {"__libc_recv"}
    assert p.shares()["syscall_exit_to_user_mode"] == pytest.approx(10.96)


def test_children_report_reads_the_self_column_and_keeps_an_inlined_symbol():
    p = _read("other-children-inlined-i7-6700k-5.8.txt")
    assert p.format == "report-children"
    by = {e.symbol: e for e in p.entries}
    assert by["multiply1"].share_pct == pytest.approx(98.68) and by["multiply1"].children_pct == pytest.approx(99.97)
    assert by["__GI___clone (inlined)"].share_pct == 0.0
    assert kstages.clean("__GI___clone (inlined)") == "__GI___clone"
    assert len(p.entries) == 5   # the call graph's frames are not entries


def test_children_and_no_children_reports_of_one_run_agree_on_each_symbol():
    plain = _read("xdp-pass-generic-drop-mlx5-i7-6700k-4.11.txt").shares()
    kids = _read("xdp-pass-generic-drop-mlx5-i7-6700k-4.11-children.txt")
    assert kids.format == "report-children"
    both = [e for e in kids.entries if e.share_pct > 0.5]
    assert len(both) == 17
    for e in both:
        assert e.share_pct == pytest.approx(plain[e.symbol]), e.symbol


def test_a_truncated_symbol_is_marked_and_placed_by_the_names_it_begins():
    # the first entry line of the veth baseline, cut by perf at a narrow column as perf prints it
    text = "+    4,87%  [k] __netif_receive_skb_co>\n+    3,50%  [k] kmem_cache_free\n"
    p = perf.parse(text)
    assert p.entries[0].truncated and p.entries[0].symbol == "__netif_receive_skb_co"
    assert dict((s, st) for s, st, _ in pp.symbol_stages(p))["__netif_receive_skb_co"] == "stack"


def test_folded_stacks_give_each_leaf_its_share():
    text = ("ksoftirqd/1;ret_from_fork;kthread;net_rx_action;ixgbe_poll;napi_build_skb 30\n"
            "ksoftirqd/1;ret_from_fork;kthread;net_rx_action;ixgbe_poll;kmem_cache_free_[k] 10\n")
    p = perf.parse(text)
    assert p.format == "folded"
    assert p.shares() == pytest.approx({"napi_build_skb": 75.0, "kmem_cache_free": 25.0})


def test_mail_quoting_is_read_through_and_perf_diff_is_refused():
    quoted = "".join("> " + x + "\n" for x in (DATA / "veth-skb-ixgbe-lorenzo-2022-after.txt")
                     .read_text().split("---\n", 1)[1].splitlines())
    assert perf.parse(quoted).shares()["ixgbe_poll"] == pytest.approx(8.24)
    with pytest.raises(perf.PerfError, match="perf diff"):
        perf.parse("# Baseline  Delta Abs  Shared Object  Symbol\n     3.46%     -0.98%  [kernel.vmlinux]  [k] x\n")
    with pytest.raises(perf.PerfError):
        perf.parse("Samples: 40K of event 'cycles'\nnothing else\n")


# ---------------------------------------------------------------- the map
def test_the_map_places_every_kernel_symbol_of_the_modelled_paths_profiles():
    """Coverage: every symbol of the profiles of modelled paths has a stage; of the others (reader samples of
    other workloads), the kernel network symbols do."""
    for f in FILES:
        p = _read(f.name)
        unplaced = [s for s, st, _ in pp.symbol_stages(p) if st is None]
        if p.meta["path"] != "other":
            assert unplaced == [], (f.name, unplaced)
        for s in p.shares():
            assert len(kstages.ambiguous(s)) <= 1, (f.name, s, kstages.ambiguous(s))
    placed = sum(share for f in FILES for _, st, share in pp.symbol_stages(_read(f.name)) if st)
    total = sum(_read(f.name).listed_pct for f in FILES)
    assert placed / total > 0.85


def test_stage_of_reads_through_suffixes_and_refuses_addresses():
    assert kstages.stage_of("free_unref_page_prepare.part.77") == "page_alloc"
    assert kstages.stage_of("ip_rcv_core.isra.0") == "stack"
    assert kstages.stage_of("[k] kmem_cache_alloc_bulk") == "slub_alloc"
    assert kstages.stage_of("bpf_prog_943df0a1ce7ea5c2_xdp_prognum0") == "xdp_run"
    assert kstages.stage_of("veth_convert_skb_to_xdp_buff") == "skb_build"   # the longer pattern beats veth_
    assert kstages.stage_of("kfree") == "slub_free" and kstages.stage_of("kfree_skb_list_reason") == "free"
    assert kstages.stage_of("0x0000000000004c05") is None and kstages.stage_of("multiply1") is None


def test_every_stage_states_a_model_component_and_every_row_its_kernels_and_source():
    doc = tomllib.loads(kstages.TABLE.read_text(encoding="utf-8"))
    m = kstages.load()
    assert set(m.stages) == {s["id"] for s in doc["stage"]}
    for r in doc["symbols"]:
        assert r["kernels"] and r["source"], r["stage"]
        assert r.get("names") or r.get("patterns")
    for wanted in ("driver_rx", "xdp_run", "skb_build", "gro", "stack", "free", "veth", "qdisc_xmit", "page_pool",
                   "page_alloc", "slub_alloc", "slub_free", "zeroing", "cpumap", "locking", "other"):
        assert wanted in m.stages


# ---------------------------------------------------------------- the rest in stages
def _header(path: Path) -> dict[str, str]:
    head = path.read_text(encoding="utf-8").split("\n---\n")[0]
    return dict(line.split(": ", 1) for line in head.splitlines())


def test_the_shipped_stage_shares_are_the_reading_of_the_saved_profiles():
    for p in pp.published():
        if p.derived:
            continue
        prof = _read(f"{p.text_id}.txt")
        if p.cpu_column:
            prof = prof.on_cpu(p.cpu_column)
        assert dict(p.shares) == pytest.approx(pp.stage_shares(prof), abs=0.006), p.id
        assert p.rate_pps == pytest.approx(float(prof.meta["rate_pps"])) and p.path == prof.meta["path"]
        assert p.listed_pct == pytest.approx(prof.listed_pct, abs=0.006)


def test_a_profile_composed_from_two_rates_keeps_the_base_stages_nanoseconds():
    """The cpumap destination with the stack: the bulk-free hack's profile and the page's two rates."""
    derived = [p for p in pp.published() if p.derived]
    assert [p.id for p in derived] == ["cpumap-dst-i40e-e5-1650v4-5.1-iptables-raw"]
    for p in derived:
        head = _header(DATA / "rates" / f"{p.id}.txt")
        base = pp.by_id(p.derived_from)
        assert float(head["rate_pps"]) == p.rate_pps and float(head["base_rate_pps"]) == base.rate_pps
        assert (head["path"], head["cpu"], head["kernel"]) == (p.path, p.cpu, p.kernel)
        # the stage is the difference of the per-packet times: the page's own 72 ns
        added_ns = p.shares[p.derived_stage] / 100 * p.run_ns
        assert added_ns == pytest.approx(1e9 / 6987990 - 1e9 / 14068307, rel=1e-9)
        assert added_ns == pytest.approx(72, abs=0.5)
        for s, v in base.shares.items():   # every stage of the base run keeps its nanoseconds
            assert v / 100 * base.run_ns == pytest.approx(p.shares[s] / 100 * p.run_ns, rel=1e-9)
        assert p.listed_pct == pytest.approx(base.listed_pct * base.run_ns / p.run_ns + 100 * added_ns / p.run_ns)
        assert sum(p.shares.values()) == pytest.approx(p.listed_pct)
    with pytest.raises(ValueError, match="slower"):
        pp.compose_by_rate(pp.by_id("cpumap-dst-i40e-e5-1650v4-5.1-bulkfree-hack"), 2e7, "stack")


def test_the_shipped_fractions_are_the_profiles_and_the_script_checks_them():
    """skbmodel/data/rest-fractions.json (what the model and the charts read) is what the profiles give."""
    from tests.cli_util import script_main
    for path in pp.REST_KEYS:
        computed = pp.computed_rest_fractions(path)
        assert list(pp.rest_fractions(path)) == list(computed)
        for s, f in computed.items():
            assert pp.rest_fractions(path)[s] == pytest.approx(f, rel=1e-9, abs=1e-12)
    assert pp.rest_fractions("kfree_skb_list") == {}
    r = script_main(Path(__file__).parents[1] / "scripts" / "rest_fractions.py", "--check")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("cpu", ["e5-1650v4", "epyc-9684x", "xeon-platinum-iavf"])
def test_stages_sum_to_the_rest_on_every_published_profile(cpu):
    for p in pp.published():
        r = pp.rest_stages(p.path, cpu, p)
        assert r["unnamed_ns"] >= -1e-9
        assert sum(r["stages"].values()) + r["unnamed_ns"] == pytest.approx(r["rest_ns"], rel=1e-9), p.id
        assert all(v >= 0 for v in r["stages"].values())
    for path in sk_rest.CONTENTS:
        r = pp.rest_stages(path, cpu)
        assert sum(r["stages"].values()) + r["unnamed_ns"] == pytest.approx(r["rest_ns"], rel=1e-9)


def test_split_rest_is_vectorised_and_never_names_more_than_the_rest():
    shares = {"stack": 40.0, "gro": 30.0, "slub_alloc": 10.0, "unmapped": 5.0}
    rest = np.array([50.0, 100.0, 400.0])
    out = pp.split_rest(rest, shares, {"slub_alloc"}, scale="time", run_ns=200.0, rest_run_ns=100.0)
    # time: 40 % and 30 % of the run's 200 ns are 80 and 60 ns on the run's CPU (rest 100): 1.4 x the rest, so
    # they are scaled to fill it; the same fractions carry to the other rests
    total = out["stack"] + out["gro"] + out["unnamed"]
    np.testing.assert_allclose(total, rest)
    np.testing.assert_allclose(out["stack"] / out["gro"], 4 / 3)
    np.testing.assert_allclose(out["unnamed"], 0.0, atol=1e-12)
    out = pp.split_rest(rest, shares, {"slub_alloc"}, scale="share")
    # share: of the 90 % the rest covers, 40 and 30 are named; 20 of 90 (unmapped and unlisted) stay unnamed
    np.testing.assert_allclose(out["stack"], rest * 40 / 90)
    np.testing.assert_allclose(out["unnamed"], rest * 20 / 90)


def test_the_default_profile_names_at_least_half_of_each_path_where_the_data_allow():
    """veth, xdp_pass and cpumap: >= 50 % of the per-packet time in named stages on the default profile.
    kfree_skb_list has no published profile: what it names (the free costed apart) is stated, not claimed."""
    named = {path: pp.rest_stages(path)["named_pct_of_path"] for path in sk_rest.CONTENTS}
    assert named["veth"] >= 50 and named["xdp_pass"] >= 50 and named["cpumap"] >= 50
    assert pp.default_for("kfree_skb_list") is None and named["kfree_skb_list"] < 5
    # cpumap's stack is the page's own difference of two rates on the default profile's CPU
    assert pp.rest_stages("cpumap")["stages"]["stack"] == pytest.approx(1e9 / 6987990 - 1e9 / 14068307, rel=1e-6)
    # the cpumap source CPU (the limit when the destination drops): its driver RX, XDP program and enqueue
    src = pp.rest_stages("cpumap", None, pp.default_for("cpumap", "source"))
    assert src["named_pct_of_path"] >= 50 and set(src["stages"]) == {"xdp_run", "driver_rx", "cpumap", "other"}


def test_the_cpumap_source_costs_apart_what_its_breakdown_holds():
    from skbmodel import model
    for cpu in ("e5-1650v4", "epyc-9684x"):
        src = model.cpumap_breakdown_ns({**model.default_params(cpu), "path": "cpumap"})["source"]
        assert {c for c, v in src.items() if c != "rest of path" and float(v) > 0} == set(pp.SOURCE_APART)
    assert pp.outside_rest("cpumap", "source") == {"page_pool", "page_alloc"}
    assert "cpumap" in pp.outside_rest("cpumap", "destination") and "free" in pp.outside_rest("cpumap")
    r = pp.rest_stages("veth")
    # on its own CPU a "time" profile names the run's nanoseconds: the XDP program's 12.8 % of 1e9/3677958 ns
    assert r["stages"]["xdp_run"] == pytest.approx(0.128 * 1e9 / 3677958, rel=1e-6)


# ---------------------------------------------------------------- beside the model, and the command
def test_compare_ranks_disagreements_and_lists_unmapped_symbols():
    doc = perfin.answer((DATA / "veth-skb-ixgbe-lorenzo-2022-before.txt").read_text())
    assert doc["path"] == "veth" and doc["path_from"] == "the profile's header"
    diffs = [abs(d["diff_pct"]) for d in doc["disagreements"]]
    assert diffs == sorted(diffs, reverse=True) and all(d["why"] for d in doc["disagreements"])
    run = {r["row"]: r["run_pct"] for r in doc["rows"]}
    assert run["rest, unnamed"] == pytest.approx(100 - 42.12, abs=0.01)   # the top 13 lines hold 42 %
    doc = perfin.answer((DATA / "other-children-inlined-i7-6700k-5.8.txt").read_text(), path="xdp_pass")
    assert {u["symbol"] for u in doc["unmapped"]} >= {"multiply1", "__GI___clone (inlined)"}


def test_cpumap_compares_with_the_destination_cpu_when_the_run_is_the_kthread():
    doc = perfin.answer((DATA / "cpumap-dst-i40e-e5-1650v4-5.1-bulkfree-hack.txt").read_text())
    assert doc["side"] == "destination"
    row = {r["row"]: r for r in doc["rows"]}
    assert row["cross-CPU transfer"]["run_pct"] == pytest.approx(28.68)


def test_cli_text_json_and_exit_2_on_no_perf_lines(tmp_path):
    f = DATA / "xdp-pass-netstack-mvneta-a53-iptables.txt"
    r = skbmodel_cli("perf", str(f))
    assert r.returncode == 0
    assert all(len(line) <= 70 for line in r.stdout.splitlines())
    assert "netif_receive_skb and the protocol" in r.stdout and "Disagreements" in r.stdout
    r = skbmodel_cli("perf", str(f), "--json", "--cpu", "epyc-9684x", "--path", "xdp_pass")
    doc = json.loads(r.stdout)
    assert doc["cpu"] == "epyc-9684x" and doc["path_from"] == "given"
    assert sum(s["share_pct"] for s in doc["stages"]) == pytest.approx(86.2, abs=0.01)
    empty = tmp_path / "none.txt"
    empty.write_text("Samples: 40K of event 'cycles'\nno lines\n")
    r = skbmodel_cli("perf", str(empty))
    assert r.returncode == 2 and "no perf report line" in r.stderr
    cpumap = DATA / "cpumap-drop-ixgbe-sebastian-2024-unpatched.txt"
    doc = json.loads(skbmodel_cli("perf", str(cpumap), "--on-cpu", "3", "--json").stdout)
    assert doc["side"] == "destination" and doc["listed_pct"] == pytest.approx(30.10)
    # its source CPU: the RX poll, the program and the enqueue, beside the source CPU's rest and its profile
    doc = json.loads(skbmodel_cli("perf", str(cpumap), "--on-cpu", "17", "--json").stdout)
    assert doc["side"] == "source" and doc["rest_named_by"] == "cpumap-src-ixgbe-sebastian-2024-unpatched"
    r = skbmodel_cli("perf", str(cpumap), "--on-cpu", "5")
    assert r.returncode == 2 and "no entry of CPU 5" in r.stderr


def test_held_back_stage_shares_are_scored_on_another_source_only():
    for path in ("veth", "xdp_pass", "cpumap"):
        rows = pp.held_back(path)
        assert len(rows) == 2   # each source predicts the other
        for r in rows:
            assert not set(r["from"].split(" + ")) & set(r["on"].split(" + "))
            assert 0 < r["distance"] < 100
            # shares of each side's listed samples: each side sums to 100
            assert sum(a for a, _ in r["stages"].values()) == pytest.approx(100, abs=0.01)
            assert sum(b for _, b in r["stages"].values()) == pytest.approx(100, abs=0.01)
    assert pp.held_back("kfree_skb_list") == []
    text = (Path(__file__).parents[1] / "docs" / "validation.md").read_text(encoding="utf-8")
    assert 'protocol "perf_stages"' in text and "No held-back comparison for kfree_skb_list" in text


def test_the_functions_the_patch_table_names_have_a_stage():
    """The patch reader and the perf reader share the map: every function the patch mechanisms name literally
    (``^name$`` or ``^name``) is placed, in the stage its mechanism prices."""
    doc = tomllib.loads((kstages.TABLE.parent / "patch-mechanisms.toml").read_text(encoding="utf-8"))
    names = {f.strip("^$") for row in doc["mechanism"] + doc["path"] for f in row.get("functions", ())
             if f.startswith("^") and f.strip("^$").replace("_", "").isalnum()}
    assert {"kfree_skb_list", "kfree_skb_add_bulk"} <= names
    for name in names:
        assert kstages.stage_of(name) is not None, name
    assert kstages.stage_of("kfree_skb_list") == "free"
    assert kstages.stage_of("veth_xdp_rcv") == "veth" and kstages.stage_of("cpu_map_kthread_run") == "cpumap"
    assert kstages.stage_of("page_pool_alloc_pages") == "page_pool"
