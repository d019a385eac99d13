"""cpumap placement moves both CPUs: the producer's ring lines, the recycled pages' return and the kthread's
wake-ups, each line at the level of the machine's topology the two CPUs meet at; a level the machine lacks is
refused by the question itself; which CPU limits the rate is an output; no rate rises as the CPUs move apart."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skbmodel.physics import cpumap
from skbmodel import model, question
from skbmodel.links import state as sk_state
from skbmodel.machine.profile import load_archived, archived_versions, load_profile, parse_profile
from tests.cli_util import skbmodel_cli
from tests.limits import SUBPROCESS_TIMEOUT_S

ROOT = Path(__file__).resolve().parents[1]
#: an AMD and an Intel two-socket profile, each a machine with more than one node (or nodes not stated)
MULTI_NODE = ("epyc-9684x", "xeon-platinum-iavf")
OUT = ["cpumap.src_ns", "cpumap.dst_ns", "cpumap.src_mpps", "cpumap.dst_mpps", "cpumap.bottleneck",
       "cpumap.sleep_fraction"]


def _eval(cpu, constants=None, **kw):
    st = {**sk_state.defaults(cpu), **kw}
    return {k: float(v) for k, v in model.evaluate(sk_state.scenario(st), load_profile(cpu), constants,
                                                   outputs=OUT).items()}


@pytest.mark.parametrize("cpu", MULTI_NODE)
@pytest.mark.parametrize("prog", ["pass", "drop"])
def test_cross_node_costs_more_on_both_cpus(cpu, prog):
    far = model.cross_node_placement(load_profile(cpu))
    same, cross = _eval(cpu, place="same_l3", cpumap_prog=prog), _eval(cpu, place=far, cpumap_prog=prog)
    assert cross["cpumap.src_ns"] > same["cpumap.src_ns"]
    assert cross["cpumap.dst_ns"] > same["cpumap.dst_ns"]
    assert cross["cpumap.src_mpps"] < same["cpumap.src_mpps"]
    assert cross["cpumap.dst_mpps"] < same["cpumap.dst_mpps"]


def test_the_recycled_pages_return_costs_the_source_across_nodes():
    lo, hi = (_eval("xeon-platinum-iavf", place="other_socket", pp_recycle=r)["cpumap.src_ns"]
              - _eval("xeon-platinum-iavf", place="same_l3", pp_recycle=r)["cpumap.src_ns"] for r in (0.0, 1.0))
    assert hi > lo > 0  # the ring slot alone at r = 0; the struct page line too at r = 1


def test_seed_003_s_runs_are_destination_bound_and_no_wake_up_finds_the_kthread_asleep():
    out = _eval("xeon-platinum-iavf")
    assert out["cpumap.bottleneck"] == 1 and out["cpumap.sleep_fraction"] == 0.0
    # the seed's same-node rates (7.9 and 2.2 Mpps) unchanged by the placement terms
    assert out["cpumap.src_mpps"] == pytest.approx(7.9, rel=0.02)
    assert out["cpumap.dst_mpps"] == pytest.approx(2.2, rel=0.02)


def test_a_faster_consumer_sleeps_more_and_the_source_pays_the_wake_ups():
    """XDP_DROP on the cpumap entry, across nodes, the destination's own cycles ever cheaper: while it cannot
    keep up it never sleeps and the source drops the rest (recycled on the source, no line moves: the
    source's time grows as more frames are delivered); once it keeps up no frame is dropped and it sleeps
    after a share of the flushes, then after every one, and the source pays every wake-up."""
    cheap = [1200.0, 800.0, 600.0, 450.0, 400.0, 0.0]
    # a sleep dearer than the profile's (3 x), so that the band where the kthread sleeps after some flushes
    # only, D(p) = T(p), is wide enough to hold a step of this grid
    slow_sleep = 3.0 * load_profile("xeon-platinum-iavf").value("cpumap_sleep_cycles")
    outs = [_eval("xeon-platinum-iavf", {"cpumap_drop_dst_cycles": v, "cpumap_xfer_lines": 0.0,
                                         "cpumap_sleep_cycles": slow_sleep}, cpumap_prog="drop",
                  place="other_socket")
            for v in cheap]
    p = np.array([o["cpumap.sleep_fraction"] for o in outs])
    src = np.array([o["cpumap.src_ns"] for o in outs])
    drops = np.array([o["cpumap.src_mpps"] - o["cpumap.dst_mpps"] for o in outs])
    assert np.all(np.diff(p) >= 0) and p[0] == 0.0 and 0.0 < p[3] < 1.0 and p[-1] == 1.0
    assert np.all(np.diff(src) >= 0) and src[-1] > src[0]
    assert np.all(drops[p > 0] == 0) and np.all(np.diff(drops) <= 0) and drops[0] > 1.0
    assert outs[-1]["cpumap.bottleneck"] == 0  # the source limits the rate now
    assert outs[-1]["cpumap.dst_mpps"] == pytest.approx(outs[-1]["cpumap.src_mpps"])


def test_the_sleep_fraction_solves_its_equation():
    """Per flush, in time per packet: the kthread's D(p) = D0 + p b against the flush period
    T(p) = max(S0 + p a, 1 / R): all flushes find it asleep where D(1) <= T(1), none where D(0) >= T(0),
    and in between exactly as many as make D(p) = T(p)."""
    s0 = np.array([100.0, 100.0, 50.0, 100.0, 100.0, 20.0])
    d0 = np.array([60.0, 150.0, 20.0, 10.0, 90.0, 30.0])
    wake = np.array([20.0, 20.0, 5.0, 30.0, 10.0, 5.0])
    sleep = np.array([40.0, 40.0, 0.0, 50.0, 30.0, 20.0])
    offered = 27.0
    p = cpumap.sleep_fraction(s0, d0, wake, sleep, offered)
    period = lambda q: np.maximum(s0 + q * wake, 1e3 / offered)  # noqa: E731
    need = d0 + p * sleep
    assert np.all((p == 1.0) & (need <= period(p) + 1e-9) | (p == 0.0) & (d0 >= period(0.0) - 1e-9)
                  | (p > 0) & (p < 1) & (np.abs(need - period(p)) < 1e-9))
    assert p[1] == 0.0 and p[4] == pytest.approx(0.5)  # never drains; drains half the flushes
    assert p[5] == pytest.approx((1e3 / offered - 30.0) / 20.0)  # the offered load sets the period


def test_frames_a_full_ring_refuses_go_back_on_the_source_and_move_no_line():
    """bq_flush_to_queue: frames the ring refuses return to the source's own pool; the source's line moves
    are per delivered frame, so u = rate_dst / rate_src and S = S0 + u L."""
    s0, lines, d = np.array([100.0, 100.0, 10.0]), np.array([20.0, 20.0, 5.0]), np.array([400.0, 110.0, 200.0])
    u = cpumap.delivered_share(s0, lines, d, 27.0)
    src = s0 + u * lines
    assert u[1] == 1.0  # the destination keeps up with the source
    assert u[0] == pytest.approx(src[0] / d[0])
    assert u[2] == pytest.approx((1e3 / 27.0) / d[2])  # offered-bound: the source takes every offered frame


def test_cross_node_on_a_one_node_machine_exits_2_with_one_line():
    """A real process: a refused question is the entry point's exit status 2, with nothing on stdout."""
    for query in ("page=cpumap&numa=cross", "page=cpumap&place=other_socket"):  # an old link and a new one
        r = subprocess.run([sys.executable, "-m", "skbmodel", "eval", query], cwd=ROOT,
                           capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
        assert r.returncode == 2 and r.stdout == ""
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "one socket" in lines[0] and "e5-1650v4" in lines[0]


def test_an_archived_version_of_the_one_node_machine_refuses_too():
    old = load_archived(f"e5-1650v4@{archived_versions('e5-1650v4')[0]}")
    assert old.numa_nodes == 1 and model.placement_problem(old, "other_socket")
    assert model.placement_problem(load_profile("epyc-9684x"), "other_l3_far") is None  # NPS not stated: allowed
    assert model.placement_problem(load_profile("epyc-9684x"), "other_socket")  # one socket
    assert model.placement_problem(load_profile("e5-1650v4"), "same_l3") is None


def test_a_stated_topology_needs_its_source():
    text = (ROOT / "skbmodel/profiles/epyc-9684x.toml").read_text()
    bad = "\n".join(line for line in text.splitlines() if not line.startswith("topology_source"))
    with pytest.raises(ValueError, match="topology_source"):
        parse_profile(bad, resolve_parent=load_profile)


def test_the_text_block_names_the_bottleneck():
    r = skbmodel_cli("eval", "--text", "page=cpumap&cpu=epyc-9684x&numa=cross", cwd=ROOT)
    assert r.returncode == 0
    assert "Bottleneck: destination CPU" in " ".join(r.stdout.split())


# ---------------------------------------------------------------- levels
#: placements nearest first, in the order a pair of CPUs moves apart (far-homed lines after the same-home ones)
APART = ("same_l3", "other_l3", "other_l3_far", "other_socket")
RATES = ("cpumap.src_mpps", "cpumap.dst_mpps", "xdp_pass.mpps", "path.mpps")


@pytest.mark.parametrize("cpu", sorted(["derived-zen2-rome", "derived-zen3-milan", "derived-zen4-genoa",
                                        "derived-zen1-naples", "derived-kunpeng-920", "epyc-9684x",
                                        "xeon-platinum-iavf", "derived-ice-lake-sp", "kunpeng-920", "epyc-7351"]))
def test_no_rate_rises_as_the_two_cpus_move_apart(cpu):
    """Over the levels the machine has (in the order the line's cost grows), both programs, the recycle ratio
    and the link: every rate of the cpumap path stays or falls, and the kthread never sleeps less where its
    destination falls further behind."""
    prof = load_profile(cpu)
    have = [p for p in model.available_placements(prof)]
    ns = model.constants_of(prof)
    have.sort(key=lambda p: ns[f"line_{p}_ns"])
    base = sk_state.scenario(sk_state.defaults(cpu))
    grid = {**base, "path": "cpumap", "place": np.array(have)[:, None, None, None],
            "cpumap_prog": np.array(["pass", "drop"])[None, :, None, None],
            "pp_recycle": np.linspace(0.0, 1.0, 5)[None, None, :, None],
            "link_gbps": np.array([10.0, 100.0])[None, None, None, :]}
    out = model.evaluate(grid, prof)
    assert len(have) >= 2
    for k in RATES:
        v = np.asarray(out[k], dtype=float)
        assert np.all(np.diff(v, axis=0) <= 1e-9 * np.abs(v[:-1])), (cpu, k)


def test_the_sleep_fraction_follows_the_rates():
    """Where a flush finds the kthread asleep at all it keeps up (no drop, the destination takes every frame);
    where it drops frames it never sleeps; it sleeps after every flush only where one batch of
    ``cpumap_flush_packets`` frames, the wake's latency included, is drained before the next comes."""
    cpus = ["derived-zen3-milan", "epyc-9684x", "xeon-platinum-iavf", "derived-kunpeng-920", "e5-1650v4"]
    for cpu in cpus:
        prof = load_profile(cpu)
        g = {**sk_state.scenario(sk_state.defaults(cpu)), "path": "cpumap",
             "place": np.array(model.available_placements(prof))[:, None, None],
             "cpumap_prog": np.array(["pass", "drop"])[None, :, None],
             "pp_recycle": np.linspace(0.0, 1.0, 5)[None, None, :]}
        out = model.evaluate(g, prof)
        p, drop = np.asarray(out["cpumap.sleep_fraction"]), np.asarray(out["cpumap.drop_mpps"])
        assert np.all(drop[p > 0] == 0) and np.all(p[drop > 1e-12] == 0), cpu
        src_ns, dst_ns = np.asarray(out["cpumap.src_ns"]), np.asarray(out["cpumap.dst_ns"])
        assert np.all(dst_ns[p == 1.0] <= src_ns[p == 1.0] + 1e-9), cpu  # it drains before the next batch


def test_a_remote_xdp_drop_on_a_chiplet_part_makes_the_source_the_bottleneck_with_a_loss_its_terms_explain():
    """EPYC 9684X (Zen 4, one L3 per 8-core CCD), an XDP_DROP destination on another CCD: the source limits the
    rate, and its loss against the same L3 is exactly its placement terms: the excess line moves per delivered
    frame (the ring slot, the recycled page's return and headroom line) and the wake-ups of a sleeping kthread."""
    prof = load_profile("epyc-9684x")
    c = model.constants_of(prof)
    same, far = (_eval("epyc-9684x", cpumap_prog="drop", place=p) for p in ("same_l3", "other_l3"))
    # on one CCD the two CPUs nearly balance (each within 5 % of the other's time per packet); on two, the
    # source's excess line moves make it the bottleneck by far
    assert abs(same["cpumap.src_ns"] / same["cpumap.dst_ns"] - 1) < 0.05
    assert far["cpumap.bottleneck"] == 0 and far["cpumap.src_ns"] > 1.2 * far["cpumap.dst_ns"]
    assert far["cpumap.src_mpps"] < 0.5 * same["cpumap.src_mpps"]
    ghz = prof.ghz
    line = float(model.line_cycles(1, c, ghz))
    s_lines, _, wake, _, _ = cpumap.placement_cycles(line, 1.0, c)
    terms_ns = (float(s_lines) + far["cpumap.sleep_fraction"] * float(wake)) / ghz
    s0 = model.line_cycles(0, c, ghz)
    _, _, wake0, _, _ = cpumap.placement_cycles(float(s0), 1.0, c)
    same_terms_ns = same["cpumap.sleep_fraction"] * float(wake0) / ghz
    assert far["cpumap.src_ns"] - same["cpumap.src_ns"] == pytest.approx(terms_ns - same_terms_ns, rel=1e-9)
    # one transfer at the level is the published one-way latency of another CCD of the part's description
    assert (line - c["xcpu_line_cycles"]) / ghz == pytest.approx(c["line_other_l3_ns"] - c["line_same_l3_ns"])


@pytest.mark.parametrize("query", ["page=compare&cpu=e5-1650v4&path=cpumap&b_place=other_socket",
                                   "page=compare&cpu=e5-1650v4&path=cpumap&b_numa=cross",
                                   "page=cpumap&cpu=xeon-platinum-iavf&place=other_l3",
                                   "page=overview&cpu=i7-4790k&path=design&d_from=veth&d_free=defer"
                                   "&place=other_socket"])
def test_the_question_refuses_a_level_the_machine_lacks_on_every_surface(query):
    from skbmodel import answers
    st = sk_state.decode(query)[0]
    q = question.Question.of_state(st)
    res = answers.of_question(q)
    assert res.problem and ("one socket" in res.problem or "one L3" in res.problem)
    assert not res.values and not res.differences
