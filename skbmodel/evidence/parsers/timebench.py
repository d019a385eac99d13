"""prototype-kernel ``time_bench`` output: ``<name> Per elem: <n> cycles(tsc) <x.xxx> ns (step:<n>)``
lines (the dmesg ``Type:`` form and the short form quoted in mails), and, last of all formats, any other
line with ``<n> cycles(tsc) <x> ns`` (unlabelled numbers the user maps by hand)."""
from __future__ import annotations

import re

from .common import LineFormat, Measurement, _clock_problem, _mapped, _short

# slab_bulk_test01 (prototype-kernel kernel/mm): "kmem fastpath reuse" (step 0), per bulk size
# "kmem bulk_fallback" (a loop of single alloc/free) and "kmem bulk_quick_reuse" (bulk API); the
# names quoted in the kfree_skb_list patch (seed 004) are "kmem-in-loop" and "kmem-bulk".
_SLUB_LOOP = {"kmem-in-loop", "kmem bulk_fallback", "kmem-bulk_fallback", "kmem_bulk_fallback"}
_SLUB_BULK = {"kmem-bulk", "kmem bulk_quick_reuse", "kmem-bulk_quick_reuse", "kmem_bulk_quick_reuse"}
_SLUB_FAST = {"kmem fastpath reuse", "kmem-fastpath-reuse", "kmem_fastpath_reuse"}
# bench_page_pool_simple: the tasklet (softirq) variants of the out-of-tree module, and the
# process-context variants, the only ones of the upstream selftest benchmark (tools/testing/
# selftests/net/bench/page_pool): what their page_pool01 measures depends on the kernel
# (skbmodel.physics.page_pool.nosoftirq_cycles).
_PP = {"tasklet_page_pool01_fast_path": "page_pool.fast_cycles",
       "tasklet_page_pool02_ptr_ring": "page_pool.ring_cycles",
       "tasklet_page_pool03_slow": "page_pool.slow_cycles",
       "no-softirq-page_pool01": "page_pool.nosoftirq01_cycles",
       "no-softirq-page_pool02": "page_pool.nosoftirq02_cycles",
       "no-softirq-page_pool03": "page_pool.nosoftirq03_cycles"}
_PP_NOTES = {"no-softirq-page_pool01": "process context: the fast path on kernels since 6.8, the ptr_ring before "
                                       "(the profile's kernels decide)"}
#: in-run baselines of the time_bench modules, measured on the same CPU and kernel as the tests
#: after them: inputs that describe the machine (the cost of a locked add, of an uncontended
#: spin_lock+unlock, of a per-CPU increment), not outputs of the model.  Name -> what it measures.
IN_RUN_BASELINES = {"atomic_inc": "atomic_inc_cycles", "lock": "spin_lock_unlock_cycles",
                    "this_cpu_inc": "this_cpu_inc_cycles", "for_loop": "loop_cycles",
                    "rcu": "rcu_read_lock_unlock_cycles", "u64_stats_inc": "u64_stats_inc_cycles"}
# other lines every time_bench module prints first: recognised, no model output
_BASELINES = {"funcion_call_cost", "function_call_cost", "func_ptr_call_cost", "mem_zero_hacks", "page_pool01",
              "tasklet_page_pool01", "tasklet_page_pool02"}
# time_bench_memset: offsetof(struct sk_buff, tail) of the build measured in seed 002
SKB_TAIL_BYTES = 184


def map_time_bench(test: str, step: int | None) -> tuple[str | None, dict, str]:
    """Model output and conditions for a time_bench test name (``(None, {}, why)`` if none)."""
    t = test.strip()
    low = t.lower()
    m = re.fullmatch(r"memset_variable_step\((\d+)\)", low)
    if m:
        return _mapped("zero.erms_cycles", {"zero_bytes": int(m.group(1))})
    if low == "memset_variable_step":
        if step is None:
            return None, {}, "memset_variable_step without (step:N): size unknown"
        return _mapped("zero.erms_cycles", {"zero_bytes": step})
    m = re.fullmatch(r"memset_(\d+)", low)
    if m:
        return _mapped("zero.memset_cycles", {"zero_bytes": int(m.group(1))})
    if low == "memset_skb_tail":
        return _mapped("zero.memset_cycles", {"zero_bytes": SKB_TAIL_BYTES},
                       f"offsetof(struct sk_buff, tail) = {SKB_TAIL_BYTES} B assumed (seed 002 build)")
    if low == "memset_skb_tail_roundup":
        return _mapped("zero.memset_cycles", {"zero_bytes": 192}, "184 B rounded up to 3 cachelines")
    if low in _SLUB_LOOP or low in _SLUB_BULK:
        if not step:
            return None, {}, f"{t} without (step:N): bulk size unknown"
        return _mapped("slub.loop_cycles" if low in _SLUB_LOOP else "slub.bulk_cycles", {"bulk": step})
    if low in _SLUB_FAST:
        return _mapped("slub.loop_cycles", {"bulk": 1}, "one alloc+free at a time")
    if low in _PP:
        return _mapped(_PP[low], {}, _PP_NOTES.get(low, ""))
    if low in IN_RUN_BASELINES:
        return None, {}, f"in-run baseline: an input ({IN_RUN_BASELINES[low]}), recorded with a fitted profile"
    if low in _BASELINES:
        return None, {}, "baseline of the benchmark module (no model output)"
    return None, {}, "test name not recognised: map it by hand"


_TB = re.compile(
    r"^(?:Type:)?(?P<name>.*?)\s*Per elem:\s*(?P<rest>.*)$")
_TB_VALUES = re.compile(
    r"^(?P<cyc>\d+)\s+cycles\(tsc\)\s+(?P<ns>\d+(?:\.\d+)?)\s+ns"
    r"(?:\s*\(step:(?P<step>-?\d+)\))?(?:\s*-\s*\(measurement period.*)?\s*[.,;)]*$")
_GENERIC = re.compile(
    r"(?P<cyc>\d+)\s*cycles(?:\(tsc\))?\s*-?\s*(?P<ns>\d+\.\d+)\s*(?P<unit>ns|us|µs|ms|s)\b")
_CONST_MEMSET = re.compile(r"(?:memset|rep[- ]stos).*?const(?:ant)?\s+(\d+)"
                           r"|const(?:ant)?\s+(\d+).*?(?:memset|rep[- ]stos)", re.I)


class TimeBench(LineFormat):
    """``[Type:]<name> Per elem: <n> cycles(tsc) <x.xxx> ns [(step:<n>)] [- (measurement period ...)]``."""

    def feed(self, i: int, raw: str, s: str) -> bool:
        t = _TB.match(s)
        if not (t and "per elem:" in s.lower()):
            return False
        name = t.group("name").strip().rstrip(":").strip()
        v = _TB_VALUES.match(t.group("rest").strip())
        if not v:
            self.err(i, "time_bench line: expected 'Per elem: <int> cycles(tsc) <x.xxx> ns (step:<n>)' after "
                        f"the test name, got {_short(t.group('rest'), 60)!r}", raw)
            return True
        if not name:
            self.err(i, "time_bench line without a test name (expected 'Type:<name> Per elem: ...')", raw)
            return True
        cyc, ns = float(v.group("cyc")), float(v.group("ns"))
        step = int(v.group("step")) if v.group("step") is not None else None
        prob = _clock_problem(cyc, ns)
        if prob:
            self.err(i, prob, raw)
            return True
        out, cond, note = map_time_bench(name, step)
        origin = self.origin
        self.add(Measurement(origin, i, _short(raw), name, cyc, "cycles", cond, out, "time_bench", 0.05, note))
        self.add(Measurement(origin, i, _short(raw), name, ns, "ns", cond, out, "time_bench", 0.05, note))
        return True


class Unlabelled(LineFormat):
    """Anything else with ``<n> cycles(tsc) <x> ns``: time_bench numbers without a test name."""

    def feed(self, i: int, raw: str, s: str) -> bool:
        g = _GENERIC.search(s)
        if not g:
            return False
        unit = g.group("unit")
        if unit != "ns":
            self.err(i, f"'{g.group(0)}': time_bench prints ns per element, not {unit}", raw)
            return True
        cyc, ns = float(g.group("cyc")), float(g.group("ns"))
        prob = _clock_problem(cyc, ns)
        if prob:
            self.err(i, prob, raw)
            return True
        label = s[: g.start()].strip(" :-(") or "cycles"
        out, cond, note = None, {}, "no test name: map it by hand"
        cm = _CONST_MEMSET.search(s)
        if cm:
            size = int(cm.group(1) or cm.group(2))
            out, cond, note = _mapped("zero.memset_cycles", {"zero_bytes": size},
                                      f"constant-size memset of {size} B (from the text)")
        origin = self.origin
        self.add(Measurement(origin, i, _short(raw), _short(label, 60), cyc, "cycles", cond, out, "generic", 0.05,
                             note))
        self.add(Measurement(origin, i, _short(raw), _short(label, 60), ns, "ns", cond, out, "generic", 0.05, note))
        return True
