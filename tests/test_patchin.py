"""A patch in, its Δ out (skbmodel/patchin.py, patchcode.py, ``python -m skbmodel patch``): the C net change of a
function (comments, reflowed and moved code are no change), every row of the mechanism table on a diff of its
own, the posted mails of the development sample as a reviewer pastes them, the two-CPU and per-flush answers,
and the exit codes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skbmodel import patchcode, patchin, patchmail
from skbmodel.links import shortlink, state as sk_state
from skbmodel.physics import noise
from tests.cli_util import skbmodel_cli
from tests.limits import SUBPROCESS_TIMEOUT_S

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "data" / "seeds"
SAMPLE = ROOT / "tests" / "data" / "patches" / "sample"


def cli(*args, **kw):
    return skbmodel_cli(*args, cwd=ROOT, **kw)


def diff(file: str, old: list[str], new: list[str], heading: str = "static void f(struct sk_buff *skb)") -> str:
    """A one-hunk diff of ``file`` that replaces the lines ``old`` by ``new`` (each without its prefix)."""
    rows = [f"-{x}" for x in old] + [f"+{x}" for x in new]
    return (f"diff --git a/{file} b/{file}\n--- a/{file}\n+++ b/{file}\n"
            f"@@ -10,{len(old)} +10,{len(new)} @@ {heading}\n" + "\n".join(rows) + "\n")


def changes(text: str) -> dict:
    return patchcode.net_changes(patchin.hunks(patchmail.read_mails(text)))


def answer(text: str) -> dict:
    try:
        return patchin.answer(text)
    except patchin.NothingPriced as e:
        return e.doc


# ---------------------------------------------------------------- code, not lines
def test_a_comment_naming_a_priced_call_is_no_change_and_no_number():
    """A typo fixed in a comment that names kmem_cache_free_bulk: the function is touched, nothing it calls
    changes, and the patch touches no priced mechanism (exit 2 with the table)."""
    text = diff("net/core/skbuff.c", ["\t/* free them in bulk with kmem_cache_free_bulk, teh fast way */"],
                ["\t/* free them in bulk with kmem_cache_free_bulk, the fast way */"])
    ch = changes(text)
    assert [c.net for c in ch.values()] == [False] and all(c.touched for c in ch.values())
    with pytest.raises(patchin.NothingPriced) as e:
        patchin.answer(text)
    assert [r["status"] for r in e.value.doc["hunks"]] == ["no net change"]
    r = subprocess.run([sys.executable, "-m", "skbmodel", "patch", "-"], cwd=ROOT, capture_output=True, text=True,
                       input=text, timeout=SUBPROCESS_TIMEOUT_S)
    assert r.returncode == 2 and "Hunks:" in r.stdout and "no net change" in r.stdout and "B - A" not in r.stdout


def test_a_hunk_that_starts_or_ends_inside_a_comment_is_no_change():
    """Context cut in the middle of a block comment: its words are not calls."""
    starts = diff("include/net/page_pool/helpers.h", [" * the pool calls page_pool_put_page() on teh page", " */"],
                  [" * the pool calls page_pool_put_page() on the page", " */"], heading="")
    ends = diff("net/core/skbuff.c", ["\t/* refill with kmem_cache_alloc_bulk(), teh"],
                ["\t/* refill with kmem_cache_alloc_bulk(), the"])
    for text in (starts, ends):
        assert [c.net for c in changes(text).values()] == [False]


def test_a_reflowed_call_and_code_moved_inside_a_function_are_no_change():
    reflow = diff("net/core/skbuff.c", ["\tkmem_cache_free_bulk(net_hotdata.skbuff_cache, n, skbs);"],
                  ["\tkmem_cache_free_bulk(net_hotdata.skbuff_cache,", "\t\t\t     n, skbs);"])
    moved = diff("net/core/skbuff.c", ["\ta = kmem_cache_alloc_bulk(c, gfp, n, p);", "\tmemset(p, 0, 8);"],
                 ["\tmemset(p, 0, 8);", "\ta = kmem_cache_alloc_bulk(c, gfp, n, p);"])
    for text in (reflow, moved):
        assert [c.net for c in changes(text).values()] == [False]


def test_a_string_is_no_call_and_a_real_call_is():
    text = diff("net/core/skbuff.c", ['\tpr_info("kmem_cache_free_bulk(%d)", n);'],
                ['\tpr_info("kmem_cache_free_bulk(%d)", n);', "\tkmem_cache_free_bulk(c, n, p);"])
    (ch,) = changes(text).values()
    assert ch.names("added", "call") == {"kmem_cache_free_bulk"} and not ch.removed


def test_a_macro_the_patch_introduces_is_none_to_n_and_a_changed_one_before_to_after():
    new = diff("drivers/net/veth.c", [], ["#define VETH_XDP_BATCH 16"], heading="")
    changed = diff("drivers/net/veth.c", ["#define VETH_XDP_BATCH 16"], ["#define VETH_XDP_BATCH 32"], heading="")
    assert next(iter(changes(new).values())).macros() == {"VETH_XDP_BATCH": (None, "16")}
    assert next(iter(changes(changed).values())).macros() == {"VETH_XDP_BATCH": ("16", "32")}
    # batching introduced: one skb per allocation before (1 -> 16), not 16 -> 16
    doc = patchin.answer(new)
    assert doc["a"]["xdp_batch"] == 1 and doc["b"] == {"xdp_batch": 16} and doc["answer"]["value"] < 0
    doc = patchin.answer(changed)
    assert doc["a"]["xdp_batch"] == 16 and doc["b"] == {"xdp_batch": 32}


def test_a_series_that_adds_a_call_and_removes_it_later_changes_nothing():
    one = diff("net/core/skbuff.c", ["\tkmem_cache_free(c, skb);"], ["\tkmem_cache_free_bulk(c, 16, p);"])
    two = diff("net/core/skbuff.c", ["\tkmem_cache_free_bulk(c, 16, p);"], ["\tkmem_cache_free(c, skb);"])
    mails = "".join(f"From: A <a@b.c>\nSubject: [PATCH {i}/2] x\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\n{d}\n"
                    for i, d in ((1, one), (2, two)))
    assert patchmail.series_info(patchmail.read_mails(mails))["mails"] == 2
    assert [c.net for c in changes(mails).values()] == [False]


def test_a_helper_the_patch_defines_is_priced_where_it_is_called():
    """net/core/xdp.c gains xdp_alloc_skb_bulk (kmem_cache_alloc_bulk inside); veth's poll calls it in place of
    one build per frame: the helper's row is 'helper', the caller carries its bulk allocation."""
    text = (diff("net/core/xdp.c", [], ["int xdp_alloc_skb_bulk(void **skbs, int n_skb, gfp_t gfp)", "{",
                                        "\treturn kmem_cache_alloc_bulk(skbuff_head_cache, gfp, n_skb, skbs);",
                                        "}"], heading="")
            + diff("drivers/net/foo.c", ["\tskb = xdp_build_skb_from_frame(frame, dev);"],
                   ["\tn = xdp_alloc_skb_bulk(skbs, 16, GFP_ATOMIC);"], heading="static int foo_rx_poll(void)"))
    doc = patchin.answer(text)
    status = {r["function"]: r["status"] for r in doc["hunks"]}
    assert status == {"xdp_alloc_skb_bulk": "helper", "foo_rx_poll": "mapped"}
    rows = next(r for r in doc["hunks"] if r["function"] == "foo_rx_poll")["mechanisms"]
    assert [m["id"] for m in rows] == ["skb-head-bulk-alloc"] and "xdp_alloc_skb_bulk" in rows[0]["line"]
    assert doc["b"]["d_skb"] == "slab_bulk" and doc["path"] == "design (from xdp_pass)"


# ---------------------------------------------------------------- every row on a diff of its own
#: a minimal change that is each row's mechanism: (file, function heading, old lines, new lines)
ROW_CASES = {
    "veth-xdp-frames-to-page-pool": (
        "drivers/net/veth.c", "static int __veth_napi_enable_range(void)", [],
        ["\terr = xdp_reg_mem_model(&rq->xdp_mem_pp, MEM_TYPE_PAGE_POOL, rq->page_pool);"]),
    "kfree_skb_list-bulk-free": ("net/core/skbuff.c", "void kfree_skb_list_reason(struct sk_buff *segs)",
                                 ["\t\t__kfree_skb(segs);"], ["\t\tkmem_cache_free_bulk(skbuff_cache, 16, sa);"]),
    "skb-head-bulk-free": ("net/core/dev.c", "static void net_tx_action(void)", ["\t\t__kfree_skb(skb);"],
                           ["\t\tkmem_cache_free_bulk(skbuff_cache, 8, skbs);"]),
    "napi-consume-skb": ("drivers/net/ethernet/foo/foo_main.c", "static bool foo_clean_tx_irq(struct foo_q *q)",
                         ["\t\tdev_consume_skb_any(skb);"], ["\t\tnapi_consume_skb(skb, budget);"]),
    "gfp-zero-for-memset": ("net/core/xdp.c", "struct sk_buff *xdp_build_skb(void)",
                            ["\tskb = kmem_cache_alloc(c, GFP_ATOMIC);",
                             "\tmemset(skb, 0, offsetof(struct sk_buff, tail));"],
                            ["\tskb = kmem_cache_alloc(c, GFP_ATOMIC | __GFP_ZERO);"]),
    "memset-for-gfp-zero": ("net/core/xdp.c", "struct sk_buff *xdp_build_skb(void)",
                            ["\tskb = kmem_cache_alloc(c, GFP_ATOMIC | __GFP_ZERO);"],
                            ["\tskb = kmem_cache_alloc(c, GFP_ATOMIC);", "\tmemset(p, 0, 184);"]),
    "memset-skb-added": ("drivers/net/veth.c", "static int veth_xdp_rcv(void)", [],
                         ["\tmemset(skb, 0, offsetof(struct sk_buff, tail));"]),
    "veth-xdp-batch": ("drivers/net/veth.c", "", ["#define VETH_XDP_BATCH 16"], ["#define VETH_XDP_BATCH 8"]),
    "skb-head-bulk-alloc": ("drivers/net/ethernet/foo/foo_rx.c", "static int foo_rx_poll(struct napi_struct *n)",
                            ["\tskb = build_skb(data, size);"],
                            ["\tn = kmem_cache_alloc_bulk(c, GFP_ATOMIC, 32, skbs);"]),
    "napi-skb-cache-for-bulk": ("kernel/bpf/cpumap.c", "static int cpu_map_kthread_run(void *data)",
                                ["\tm = kmem_cache_alloc_bulk(c, gfp, n, skbs);"],
                                ["\tm = napi_skb_cache_get_bulk(skbs, n);"]),
    "napi-skb-cache": ("net/core/skbuff.c", "struct sk_buff *__alloc_skb(unsigned int size, gfp_t gfp_mask)",
                       ["\tskb = kmem_cache_alloc_node(cache, gfp_mask, node);"],
                       ["\tskb = napi_skb_cache_get(true);"]),
    "skb-defer-free": ("net/core/skbuff.c", "void napi_consume_skb(struct sk_buff *skb, int budget)",
                       ["\t__kfree_skb(skb);"], ["\tskb_attempt_defer_free(skb);"]),
    "page-pool-recycle-skb": ("kernel/bpf/cpumap.c", "static int cpu_map_kthread_run(void *data)", [],
                              ["\t\tskb_mark_for_recycle(skb);"]),
    "page-alloc-bulk": ("net/core/page_pool.c", "static struct page *__page_pool_alloc_pages_slow(void)",
                        ["\tpage = alloc_pages_node(nid, gfp, 0);"],
                        ["\tn = alloc_pages_bulk_array_node(gfp, nid, 64, pages);"]),
    "page-pool-for-page-alloc": ("drivers/net/ethernet/foo/foo_rx.c", "static int foo_rx_refill(struct foo_q *q)",
                                 ["\tpage = dev_alloc_page();"], ["\tpage = page_pool_dev_alloc_pages(q->pool);"]),
    "lock-per-flush": ("kernel/bpf/cpumap.c", "static int cpu_map_kthread_run(void *data)",
                       ["\t\tspin_lock(&rcpu->lock);"], ["\t\tspin_lock_bh(&rcpu->lock);"]),
    "slub-bulk-internals": ("mm/slub.c", "int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t flags)",
                            ["\t\t\tgoto error;"], ["\t\t\tp[i] = __slab_alloc(s, flags, NUMA_NO_NODE, c);"]),
    "page-alloc-internals": ("mm/page_alloc.c", "", ["static struct page *__rmqueue_pcplist(struct zone *zone,"],
                             ["static inline struct page *__rmqueue_pcplist(struct zone *zone,"]),
}


def test_every_row_of_the_table_has_its_own_case():
    assert set(ROW_CASES) == {m.id for m in patchin.table()}


@pytest.mark.parametrize("row", sorted(ROW_CASES))
def test_each_row_maps_its_own_change(row):
    file, heading, old, new = ROW_CASES[row]
    m = next(x for x in patchin.table() if x.id == row)
    doc = answer(diff(file, old, new, heading))
    found = {x["id"] for r in doc["hunks"] for x in r["mechanisms"]} | {r.get("priced_code") for r in doc["hunks"]}
    assert row in found, doc["hunks"]
    if not m.priced:  # a priced mechanism's own code: listed with its reason, no number
        assert doc["answer"] is None and any(r.get("reason") == m.reason for r in doc["hunks"])
        return
    ans = doc["answer"]
    assert ans is not None and ans["interval"][0] <= ans["value"] <= ans["interval"][1]
    st = sk_state.decode_strict(doc["link"].split("?", 1)[1])  # the link decodes to the question it answers
    assert st["page"] == "compare" and sk_state.b_overrides(st) == doc["b"]
    if m.per == "flush":  # a lock change per batch: about 0 per packet, below the noise, with its cost per flush
        assert ans["verdict"] == noise.VERDICT_NOISE and ans["per_flush"]["rows"] == [row]
        assert ans["value"] == 0 and ans["per_flush"]["ns_per_flush"][1] > 0


def test_a_memset_moved_out_of_a_kernel_call_is_no_new_memset():
    """__build_skb (an allocation and a memset up to tail) replaced by a bulk allocation and the same memset
    open-coded: the allocation changed, the zeroing did not."""
    text = diff("net/core/skbuff.c", ["\tskb = __build_skb(data, len);"],
                ["\tn = kmem_cache_alloc_bulk(skbuff_head_cache, gfp_mask, 8, nc->skb_cache);",
                 "\tskb = nc->skb_cache[--n];", "\tmemset(skb, 0, offsetof(struct sk_buff, tail));"],
                heading="struct sk_buff *__napi_alloc_skb(struct napi_struct *napi, unsigned int len)")
    doc = patchin.answer(text)
    assert doc["composed"] == ["skb-head-bulk-alloc"] and doc["b"]["d_skb"] == "slab_bulk"
    assert doc["answer"]["value"] < 0


def test_two_rows_on_one_stage_are_decided_by_specificity_not_by_order():
    """A veth patch that introduces VETH_XDP_BATCH and calls kmem_cache_alloc_bulk: both say 'skb head'; the
    row naming veth's macro (its file, the macro's name and value) decides over the generic bulk allocation (an
    added and a removed call)."""
    text = (diff("drivers/net/veth.c", [], ["#define VETH_XDP_BATCH 16"], heading="")
            + diff("drivers/net/veth.c", ["\tskb = xdp_build_skb_from_frame(frame, dev);"],
                   ["\tn = kmem_cache_alloc_bulk(c, GFP_ATOMIC, VETH_XDP_BATCH, skbs);"],
                   heading="static int veth_xdp_rcv(struct veth_rq *rq, int budget)"))
    doc = patchin.answer(text)
    assert doc["b"] == {"xdp_batch": 16} and doc["path"] == "veth"
    assert any("veth-xdp-batch (more specific) decides over skb-head-bulk-alloc" in n for n in doc["notes"])
    rows = [m for m in patchin.table() if m.id in ("veth-xdp-batch", "skb-head-bulk-alloc")]
    assert rows[0].specificity != rows[1].specificity or rows[0].id == rows[1].id


# ---------------------------------------------------------------- the development sample, as posted
EXPECTED = {  # file: (mails, mechanisms the answer composes, the path, the sign of B - A)
    "cpumap-napi-skb-cache-get-bulk.diff": (3, {"napi-skb-cache-for-bulk", "napi-consume-skb"}, "design (from cpumap)",
                                            -1),
    "kfree-skb-list-free-bulk.diff": (1, {"kfree_skb_list-bulk-free"}, "kfree_skb_list", -1),
    "napi-consume-skb-alien-defer.diff": (2, {"skb-defer-free"}, "design (from xdp_pass)", 1),
    "page-pool-alloc-pages-bulk.diff": (1, {"page-alloc-bulk"}, "design (from xdp_pass)", -1),
    "veth-xdp-alloc-skb-bulk.diff": (1, {"veth-xdp-batch"}, "veth", -1),
    "page-alloc-inline-rmqueue-pcplist.diff": (1, set(), None, 0),
    "slub-bulk-alloc-strategy.diff": (1, set(), None, 0),
    "slub-bulk-free-detached-freelist.diff": (1, set(), None, 0),
}


def test_the_sample_is_all_here():
    assert {p.name for p in SAMPLE.glob("*.diff")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_posted_patch_is_read_whole_and_mapped(name):
    raw = (SAMPLE / name).read_bytes()
    mails, mapped, path, sign = EXPECTED[name]
    doc = answer(raw)
    info = doc["series"]
    headers = raw.count(b"\nSubject: ") + raw.startswith(b"Subject: ")
    assert info["mails"] == mails == headers - raw.count(b"\nSubject: Re:")  # every mail of the series read
    assert info["hunks"] == raw.count(b"\n@@ -")  # every hunk
    got = {m["id"] for r in doc["hunks"] for m in r["mechanisms"]}
    assert mapped <= got
    if path is None:  # a priced mechanism's own code: the table says so, no number, exit 0
        assert doc["answer"] is None and any(r.get("priced_code") for r in doc["hunks"])
        return
    assert doc["path"] == path and (doc["answer"]["value"] > 0) == (sign > 0)


def test_the_cpumap_series_composes_its_cache_its_free_and_its_zeroing_into_one_b():
    """Lobakin's series (4/8, 5/8, 6/8): cpumap takes skb heads from the NAPI cache (napi_skb_cache_get_bulk,
    defined by 5/8), frees into it (napi_consume_skb, 4/8) and zeroes by memset up to tail instead of
    __GFP_ZERO: one B, on the cpumap path."""
    doc = patchin.answer((SAMPLE / "cpumap-napi-skb-cache-get-bulk.diff").read_bytes())
    assert doc["b"] == {"d_skb": "napi_cache", "d_free": "napi_cache", "d_zero": "memset"}
    assert doc["subject"].startswith("[PATCH net-next v4 4/8]")
    helper = next(r for r in doc["hunks"] if r["function"] == "napi_skb_cache_get_bulk")
    assert helper["status"] == "helper"


def test_a_deferred_free_is_work_moved_between_two_cpus():
    """Dumazet's alien-skb fix: the CPU that frees sheds its slab free but moves a line to the other's defer list,
    the CPU that allocated takes the free back.  Each CPU's difference is shown, and the headline interval holds
    both: the headline is the allocating CPU's, which limits one sender (xdpsock measured slower), and the
    interval reaches below 0 (EPYC's 32 queues, whose completion CPU saturated on SLUB's lock, measured
    faster: a contention the model does not have)."""
    doc = patchin.answer((SAMPLE / "napi-consume-skb-alien-defer.diff").read_bytes())
    cpus = doc["answer"]["cpus"]
    assert 0 < cpus["gaining"]["value"] and cpus["shedding"]["line_ns"] > 0
    saved = cpus["shedding"]["value"] - cpus["shedding"]["line_ns"]
    assert saved < 0  # the free itself is shed
    lo, hi = doc["answer"]["interval"]
    assert lo < 0 < hi and lo <= cpus["shedding"]["interval"][0] and hi >= cpus["gaining"]["interval"][1]
    assert doc["answer"]["value"] == cpus["gaining"]["value"]
    text = patchin.text_block(doc)
    assert "the CPU that frees" in text and "the CPU that allocated" in text


def test_the_collected_controls_give_no_number():
    """The comment-only and lock-flavour mails collected as controls (tests/data/patches/index.csv, ids ending
    in -control): no ns per packet, whatever their comments name."""
    import csv
    rows = [r for r in csv.DictReader((SAMPLE.parent / "index.csv").open(encoding="utf-8"))
            if r["id"].endswith("-control")]
    assert len(rows) >= 3
    for r in rows:
        assert answer((SAMPLE.parent / r["file"]).read_bytes())["answer"] is None, r["file"]


def test_one_patch_has_one_hash_in_any_encoding():
    raw = (SAMPLE / "kfree-skb-list-free-bulk.diff").read_text()
    crlf = raw.replace("\n", "\r\n")
    assert patchin.answer(raw)["hash"] == patchin.answer(crlf)["hash"]


# ---------------------------------------------------------------- the surfaces
def test_the_text_block_is_70_columns_and_shows_the_table_and_the_measured_numbers():
    r = cli("patch", str(SEEDS / "000_062ad420d30618bd.txt"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert all(len(line) <= 70 for line in lines if not line.startswith("http"))
    flat = " ".join(r.stdout.split())
    assert "B - A: -14.00 ns/packet" in flat and "Hunks:" in flat and "kfree_skb_list-bulk-free" in flat
    assert "2396594 -> 2479970 pps" in flat and "inside the predicted interval" in flat
    # a real process reading the patch from stdin, as `git format-patch --stdout | python -m skbmodel patch -`
    r = subprocess.run([sys.executable, "-m", "skbmodel", "patch", "-"], cwd=ROOT, capture_output=True,
                       input=(SEEDS / "004_5b5bcd2261c19f35.txt").read_bytes(), timeout=SUBPROCESS_TIMEOUT_S)
    assert r.returncode == 0 and b"kfl_bulk=16" in r.stdout, r.stderr


def test_exit_2_only_when_nothing_priced_is_touched(tmp_path):
    docs = tmp_path / "doc.patch"
    docs.write_text(diff("Documentation/networking/x.rst", ["old words"], ["new words"], heading=""))
    prose = tmp_path / "prose.txt"
    prose.write_text("Hi, this mail has no patch in it.\n")
    r = cli("patch", str(docs))
    assert r.returncode == 2 and "documentation, selftests or scripts only" in " ".join(r.stdout.split())
    r = cli("patch", str(prose))
    assert r.returncode == 2 and r.stdout == "" and "no diff found" in r.stderr
    slub = cli("patch", str(SAMPLE / "slub-bulk-alloc-strategy.diff"))  # priced code touched, no term: exit 0
    assert slub.returncode == 0 and "not modelled: the implementation of a priced call" in " ".join(slub.stdout.split())


def test_the_link_names_the_patch_and_eval_takes_it_whole():
    doc = patchin.answer((SEEDS / "000_062ad420d30618bd.txt").read_bytes())
    state, warnings = sk_state.decode(shortlink.expand(doc["link"].split("?", 1)[1]))
    assert warnings == [] and state["phash"] == doc["hash"] and len(doc["hash"]) == 12
    assert state["kfl_bulk"] == 1 and sk_state.b_overrides(state) == {"kfl_bulk": 16}
    assert "kmem_cache_free_bulk(" not in doc["link"] and "%40%40" not in doc["link"]  # no hunk, no @@ line
    whole = json.loads(cli("eval", doc["link"], "--json").stdout)
    query = json.loads(cli("eval", doc["link"].split("?", 1)[1], "--json").stdout)
    assert whole["answers"] == query["answers"] and whole["b_overrides"] == {"kfl_bulk": 16}


# ---------------------------------------------------------------- the CPU the mails name
COLLECTED = SAMPLE.parent


def test_a_board_or_soc_the_prose_names_is_its_cpu_and_a_cpuinfo_line_wins():
    from skbmodel.machine import cpuinfo
    found = cpuinfo.named_cpu("The test was done by sending to the macchiatobin 64 byte frames")
    assert found.description.name == "cortex-a72" and found.profile == "derived-cortex-a72"
    assert cpuinfo.named_cpu("an ESPRESSObin running 5.13").description.name == "cortex-a53"
    both = cpuinfo.named_cpu("on a macchiatobin\nmodel name : Intel(R) Core(TM) i7-4790K CPU @ 4.00GHz\n")
    assert both.description.name == "haswell"  # the machine's own cpuinfo line, not a board named in passing
    assert cpuinfo.named_cpu("Benchmarking IPv4-forwarding, on CPU i7-4790K @4.2GHz").profile == "i7-4790k"
    assert cpuinfo.named_cpu("no machine named here") is None


def test_the_reader_prices_on_the_cpu_the_mails_name_and_says_so():
    raw = (COLLECTED / "mvpp2-page-pool-recycle.diff").read_bytes()
    doc = patchin.answer(raw)
    assert doc["profile"]["id"] == "derived-cortex-a72"
    assert doc["cpu_from_mail"]["said"].lower() == "macchiatobin" and doc["cpu_from_mail"]["mail"] == 1
    assert any("macchiatobin" in n and "--cpu" in n for n in doc["notes"])
    given = patchin.answer(raw, "e5-1650v4")  # --cpu wins, and nothing is said of the mails' CPU
    assert given["profile"]["id"] == "e5-1650v4" and given["cpu_from_mail"] is None
    # the A72 at 2 GHz and 3 wide pays more per packet than the E5 at 3.6-4 GHz and 4 wide for the same change
    assert doc["answer"]["value"] < given["answer"]["value"] < 0


def test_a_cpu_named_only_inside_a_hunk_is_not_the_machine():
    hunk = diff("drivers/net/ethernet/marvell/mvpp2/mvpp2_main.c", ["\tpage_pool_release_page(pp, page);"],
                ["\t/* as on the macchiatobin */", "\tskb_mark_for_recycle(skb);"], "static int mvpp2_rx(void)")
    doc = answer(hunk)
    assert doc["answer"] is not None and doc["cpu_from_mail"] is None
    assert doc["profile"]["id"] == "e5-1650v4"


def test_a_tx_completion_frees_on_slub_s_remote_path_on_both_sides():
    """A driver's TX completion frees each skb a TX ring's depth after it was allocated: the [[path]] row of TX
    completion sets the remote free (d_free_where) on A and B alike and says why; an RX hunk keeps the local free.
    On the ixgbe mail (i7-4790K) the change is then larger than with a local free, and still a saving."""
    raw = (COLLECTED / "ixgbe-napi-consume-skb.diff").read_bytes()
    doc = patchin.answer(raw, "i7-4790k")
    p = patchin.plan(patchcode.net_changes(patchin.hunks(patchmail.read_mails(raw))))
    assert p.a["d_free_where"] == "remote" and "d_free_where" not in p.b and "d_free_where" not in doc["b"]
    assert any("TX ring's depth" in n for n in doc["notes"]) and "d_free_where=remote" in doc["link"]
    local = patchin._difference(patchin._compare_state(p.path, {**p.a, "d_free_where": "local"}, p.b,
                                                       patchin.Machine("i7-4790k")))[0]["value"]
    assert doc["answer"]["value"] < local < 0
    rx = answer(diff("drivers/net/ethernet/foo/foo_main.c", ["\tdev_kfree_skb_any(skb);"],
                     ["\tnapi_consume_skb(skb, budget);"], "static int foo_clean_rx_irq(struct foo_ring *r)"))
    assert "d_free_where" not in patchin.plan(changes(diff("drivers/net/ethernet/foo/foo_main.c",
                                                          ["\tdev_kfree_skb_any(skb);"],
                                                          ["\tnapi_consume_skb(skb, budget);"],
                                                          "static int foo_clean_rx_irq(struct foo_ring *r)"))).a
    assert rx["answer"] is not None


def test_the_marvell_boards_are_priced_on_their_own_cores():
    """The index names the SoC of each Marvell board (the MACCHIATObin's Armada 8040, the Armada 3720 that mvneta
    implies on arm64): each matches its description and the profile derived from it, at the description's clock,
    an arm64 core; the A53 (1 GHz, 2-wide in order) pays more for the same page recycling than the A72 (2 GHz)."""
    import csv
    from skbmodel.machine import cpuinfo
    from skbmodel.machine.profile import load_profile
    rows = {r["id"]: r for r in csv.DictReader((COLLECTED / "index.csv").open(encoding="utf-8"))}
    want = {"mvpp2-page-pool-recycle-drop": ("derived-cortex-a72", 2.0),
            "mvneta-page-pool-recycle-drop": ("derived-cortex-a53", 1.0)}
    values = {}
    for rid, (pid, ghz) in want.items():
        m = cpuinfo.match_cpu(rows[rid]["cpu"])
        assert m.profile == pid and m.description.isa == "arm64"
        assert load_profile(pid).ghz == pytest.approx(ghz)
        values[pid] = patchin.answer((COLLECTED / rows[rid]["file"]).read_bytes(), pid)["answer"]["value"]
    assert values["derived-cortex-a53"] < values["derived-cortex-a72"] < 0
