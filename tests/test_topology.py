"""Topology in the machine descriptions: levels, a line's move per level, each from a cited published row.

* every description states its levels and a one-way CAS latency per level it has, each the median of the row
  of ``skbmodel/data/core-to-core-levels.csv`` it cites, its spread at least that row's p10-p90 (wider where
  the row is of another part), and that file holds exactly the shared table's numbers where it is present;
* the levels are ordered: SMT < same L3 < another L3 < another socket (and a line homed away from both CPUs
  costs more than one homed at one of them);
* one transfer in the kernel path is one CAS one-way latency: seed 003's fitted same-node line agrees with the
  CAS latency of its machine's same-L3 level within two of its standard errors.
"""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from skbmodel.machine import description as D
from skbmodel.machine.profile import load_profile

DESCRIPTIONS = D.descriptions()
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "core-to-core" / "levels.csv"
NUMBERS = ("pairs", "median_ns", "p10_ns", "p90_ns")


@pytest.mark.parametrize("name", sorted(DESCRIPTIONS))
def test_every_description_states_its_levels_from_a_cited_row(name):
    t = DESCRIPTIONS[name].topology
    assert t is not None and "same_l3" in t.line_ns
    assert t.source.strip() and min(t.cores_per_l3, t.l3_per_socket, t.sockets, t.nodes_per_socket) >= 1
    rows = D.levels_table()
    for level, fig in t.line_ns.items():
        row = rows[fig.row]  # the cited row is in the project's copy
        assert fig.value == pytest.approx(float(row["median_ns"]), abs=0.05), (name, level)
        p10, p90 = float(row["p10_ns"]), float(row["p90_ns"])
        assert fig.low <= p10 + 1e-9 and fig.high >= p90 - 1e-9, (name, level)
        if "nearest part" in fig.source:  # another part's row: a wider spread, and said to be uncertain
            assert fig.uncertain and fig.low <= 0.76 * p10 and fig.high >= 1.32 * p90, (name, level)
        assert fig.row.split("|")[1] in ("smt", "same_l3", "other_l3_same_socket", "other_socket")


@pytest.mark.parametrize("name", sorted(DESCRIPTIONS))
def test_levels_are_ordered(name):
    ns = {k: f.value for k, f in DESCRIPTIONS[name].topology.line_ns.items()}
    chain = [ns[k] for k in ("smt", "same_l3", "other_l3", "other_socket") if k in ns]
    assert chain == sorted(chain) and len(set(chain)) == len(chain), (name, ns)
    if "other_l3_far" in ns:
        assert ns["other_l3_far"] > 1.3 * ns["other_l3"], (name, ns)


def test_a_level_the_machine_lacks_is_missing():
    bw, rome, kp = DESCRIPTIONS["broadwell-ep"].topology, DESCRIPTIONS["zen2-rome"].topology, \
        DESCRIPTIONS["kunpeng-920"].topology
    assert bw.missing("other_socket") == "one socket" and bw.missing("other_l3").startswith("one L3")
    assert bw.cross_node() is None
    assert rome.missing("other_l3_far") is None and rome.missing("other_l3_far", 1, 1) is not None
    assert rome.missing("other_socket", sockets=1) == "one socket"
    assert kp.cross_node() == "other_l3"  # the other SCCL die is the other node
    assert bw.ns("other_socket") == bw.line_ns["same_l3"].value  # evaluated as the nearest level it has


def test_every_shipped_profile_has_a_description_with_levels():
    from skbmodel.machine.profile import available_profiles
    for pid in available_profiles():
        d, why = D.for_profile(load_profile(pid))
        assert d is not None and d.topology is not None, (pid, why)


@pytest.mark.skipif(not SHARED.exists(), reason="the shared core-to-core table is not on this machine")
def test_the_project_copy_matches_the_shared_table():
    with SHARED.open(newline="") as f:
        shared = {D.row_key(r): r for r in csv.DictReader(f)}
    for key, row in D.levels_table().items():
        assert key in shared, key
        for col in (*NUMBERS, "source_repo", "source_path", "source_commit", "caveats"):
            assert row[col] == shared[key][col], (key, col)


def test_one_transfer_is_one_cas_latency_on_seed_003():
    """Seed 003's fit of the same-node cacheline move (``xcpu_line_cycles`` of xeon-platinum-iavf, a two-socket
    Xeon Platinum redirecting within one node) against the one-way CAS latency of the same L3 on the part its
    levels are taken from: within two standard errors of the fit."""
    prof = load_profile("xeon-platinum-iavf")
    d, _ = D.for_profile(prof)
    fitted_ns = prof.value("xcpu_line_cycles") / prof.ghz
    sd_ns = prof.stderr("xcpu_line_cycles") / prof.ghz
    cas = d.topology.line_ns["same_l3"]
    assert sd_ns > 0
    assert abs(fitted_ns - cas.value) <= 2.0 * sd_ns, (fitted_ns, sd_ns, cas.value)


def test_the_placements_a_scenario_offers_are_the_description_levels():
    from skbmodel import params
    assert params.PLACEMENTS == D.PLACEMENTS == D.LEVELS[1:]
    assert all(params.PLACE_LABELS[k] == D.LEVEL_LABELS[k] for k in params.PLACEMENTS)
