"""cpumap placement moves both CPUs: the producer's ring lines, the recycled pages' return and the kthread's
wake-ups; a cross-node placement on a one-node machine is refused; which CPU limits the rate is an output."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skbmodel.physics import cpumap
from skbmodel import model
from skbmodel.links import state as S
from skbmodel.machine.profile import load_archived, archived_versions, load_profile, parse_profile
from tests.cli_util import skbmodel_cli
from tests.limits import SUBPROCESS_TIMEOUT_S

ROOT = Path(__file__).resolve().parents[1]
#: an AMD and an Intel two-socket profile, each a machine with more than one node (or nodes not stated)
MULTI_NODE = ("epyc-9684x", "xeon-platinum-iavf")
OUT = ["cpumap.src_ns", "cpumap.dst_ns", "cpumap.src_mpps", "cpumap.dst_mpps", "cpumap.bottleneck",
       "cpumap.sleep_fraction"]


def _eval(cpu, constants=None, **kw):
    st = {**S.defaults(cpu), **kw}
    return {k: float(v) for k, v in model.evaluate(S.scenario(st), load_profile(cpu), constants, outputs=OUT).items()}


@pytest.mark.parametrize("cpu", MULTI_NODE)
@pytest.mark.parametrize("prog", ["pass", "drop"])
def test_cross_node_costs_more_on_both_cpus(cpu, prog):
    same, cross = _eval(cpu, numa="same", cpumap_prog=prog), _eval(cpu, numa="cross", cpumap_prog=prog)
    assert cross["cpumap.src_ns"] > same["cpumap.src_ns"]
    assert cross["cpumap.dst_ns"] > same["cpumap.dst_ns"]
    assert cross["cpumap.src_mpps"] < same["cpumap.src_mpps"]
    assert cross["cpumap.dst_mpps"] < same["cpumap.dst_mpps"]


def test_the_recycled_pages_return_costs_the_source_across_nodes():
    lo, hi = (_eval("xeon-platinum-iavf", numa="cross", pp_recycle=r)["cpumap.src_ns"]
              - _eval("xeon-platinum-iavf", numa="same", pp_recycle=r)["cpumap.src_ns"] for r in (0.0, 1.0))
    assert hi > lo > 0  # the ring slot alone at r = 0; the struct page line too at r = 1


def test_seed_003_s_runs_are_destination_bound_and_no_wake_up_finds_the_kthread_asleep():
    out = _eval("xeon-platinum-iavf")
    assert out["cpumap.bottleneck"] == 1 and out["cpumap.sleep_fraction"] == 0.0
    # the seed's same-node rates (7.9 and 2.2 Mpps) unchanged by the placement terms
    assert out["cpumap.src_mpps"] == pytest.approx(7.9, rel=0.02)
    assert out["cpumap.dst_mpps"] == pytest.approx(2.2, rel=0.02)


def test_a_faster_consumer_sleeps_more_and_the_source_pays_the_wake_ups():
    cheap = [200.0, 60.0, 0.0]  # the XDP_DROP destination's own cycles, ever cheaper
    outs = [_eval("xeon-platinum-iavf", {"cpumap_drop_dst_cycles": v, "cpumap_xfer_lines": 0.0},
                  cpumap_prog="drop", numa="cross") for v in cheap]
    p = [o["cpumap.sleep_fraction"] for o in outs]
    src = [o["cpumap.src_ns"] for o in outs]
    assert p[0] < p[1] < p[2] and p[2] > 0.2
    assert src[0] < src[1] < src[2]  # more wake-ups: the source slows down as the destination gets cheaper
    assert outs[2]["cpumap.bottleneck"] == 0  # the source limits the rate now
    assert outs[2]["cpumap.dst_mpps"] == pytest.approx(outs[2]["cpumap.src_mpps"])


def test_the_sleep_fraction_solves_its_equation():
    s0, d0 = np.array([100.0, 100.0, 50.0, 100.0]), np.array([60.0, 150.0, 20.0, 10.0])
    wake, sleep, offered = np.array([20.0, 20.0, 5.0, 30.0]), np.array([40.0, 40.0, 0.0, 50.0]), 27.0
    p = cpumap.sleep_fraction(s0, d0, wake, sleep, offered)
    lam = np.minimum(offered * 1e-3, 1.0 / (s0 + p * wake))
    assert p == pytest.approx(np.maximum(0.0, 1.0 - lam * (d0 + p * sleep)), abs=1e-9)
    assert p[1] == 0.0  # a consumer slower than the producer never drains the ring


def test_cross_node_on_a_one_node_machine_exits_2_with_one_line():
    """A real process: a refused question is the entry point's exit status 2, with nothing on stdout."""
    r = subprocess.run([sys.executable, "-m", "skbmodel", "eval", "page=cpumap&numa=cross"], cwd=ROOT,
                       capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "one NUMA node" in lines[0] and "e5-1650v4" in lines[0]


def test_an_archived_version_of_the_one_node_machine_refuses_too():
    old = load_archived(f"e5-1650v4@{archived_versions('e5-1650v4')[0]}")
    assert old.numa_nodes == 1 and cpumap.placement_problem(old, "cross")
    assert cpumap.placement_problem(load_profile("epyc-9684x"), "cross") is None
    assert cpumap.placement_problem(load_profile("e5-1650v4"), "same") is None


def test_a_stated_topology_needs_its_source():
    text = (ROOT / "skbmodel/profiles/epyc-9684x.toml").read_text()
    bad = "\n".join(line for line in text.splitlines() if not line.startswith("topology_source"))
    with pytest.raises(ValueError, match="topology_source"):
        parse_profile(bad, resolve_parent=load_profile)


def test_the_text_block_names_the_bottleneck():
    r = skbmodel_cli("eval", "--text", "page=cpumap&cpu=epyc-9684x&numa=cross", cwd=ROOT)
    assert r.returncode == 0
    assert "Bottleneck: destination CPU" in " ".join(r.stdout.split())
