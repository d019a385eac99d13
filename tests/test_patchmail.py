"""Patch mails and series as reviewers paste them (skbmodel/patchmail.py): the eight posted patches of
tests/data/patches/sample (series concatenated without mbox lines, as copied from an archive), the same mails in an
mbox, quoted-printable, base64 and with CRLF line ends (made here from the real files with :mod:`email`),
archive pages, replies quoting a hunk, and a 5 MB paste."""
from __future__ import annotations

import email.message
import email.policy
import re
import time
from pathlib import Path

import pytest
import unidiff

from skbmodel import patchmail as pm

DATA = Path(__file__).resolve().parent / "data"
PATCHES = DATA / "patches" / "sample"
SEEDS = DATA / "seeds"

# file: (subject of each mail, in order; hunks of each mail), as read by hand from the files
SERIES = {
    "cpumap-napi-skb-cache-get-bulk.diff": (
        ["[PATCH net-next v4 4/8] bpf: cpumap: reuse skb array instead of a linked list to chain skbs",
         "[PATCH net-next v4 5/8] net: skbuff: introduce napi_skb_cache_get_bulk()",
         "[PATCH net-next v4 6/8] bpf: cpumap: switch to napi_skb_cache_get_bulk()"], [9, 2, 5]),
    "napi-consume-skb-alien-defer.diff": (
        ["[PATCH net-next 1/3] net: allow skb_release_head_state() to be called multiple times",
         "[PATCH net-next 2/3] net: fix napi_consume_skb() with alien skbs"], [1, 1]),
    "page-pool-alloc-pages-bulk.diff": (
        ["[PATCH 9/9] net: page_pool: use alloc_pages_bulk in refill code path"], [3]),
    "page-alloc-inline-rmqueue-pcplist.diff": (["[PATCH 5/9] mm/page_alloc: inline __rmqueue_pcplist"], [1]),
    "kfree-skb-list-free-bulk.diff": (["[PATCH net-next V2 2/2] net: kfree_skb_list use kmem_cache_free_bulk"], [1]),
    "slub-bulk-alloc-strategy.diff": (["[PATCH V2 4/6] slub: improve bulk alloc strategy"], [2]),
    "slub-bulk-free-detached-freelist.diff": (["[PATCH 6/7] slub: optimize bulk slowpath free by detached freelist"],
                                              [1]),
    "veth-xdp-alloc-skb-bulk.diff": (["[PATCH v3 bpf-next] net: veth: alloc skb in bulk for ndo_xdp_xmit"], [7]),
}
# the first header line of each mail of a file, to cut the files into mails independently of the reader
_MAIL_START = re.compile(r"^(?=From: Alexander Lobakin|Message-ID: <20251106)", re.M)
_DIFFSTAT = re.compile(r"^ \d+ files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?", re.M)


def _text(name: str) -> str:
    return (PATCHES / name).read_text(encoding="utf-8")


def _added_removed(diff: str) -> tuple[int, int]:
    ps = unidiff.PatchSet(diff)
    return sum(f.added for f in ps), sum(f.removed for f in ps)


@pytest.mark.parametrize("name", sorted(SERIES))
def test_every_mail_and_every_hunk_of_the_posted_patches(name):
    """Each file read whole: its mails in order with their subjects (a folded subject unfolded), each mail's
    hunk count, and each mail's added and removed lines exactly what git's diffstat in the same mail says
    (so no hunk line is lost at a signature and none is borrowed from the next mail)."""
    subjects, hunks = SERIES[name]
    mails = pm.read_mails(_text(name))
    assert [m.subject for m in mails] == subjects
    assert [m.hunk_count for m in mails] == hunks
    assert [m.index for m in mails] == list(range(len(subjects)))
    for m in mails:
        stat = _DIFFSTAT.search(m.prose)
        assert stat, m.subject
        assert _added_removed(m.diff) == (int(stat.group(1) or 0), int(stat.group(2) or 0))
        assert not m.repairs and not m.skipped and not m.is_cover and not m.quoted_diff
        assert all(line not in ("-- ", "--") for line in m.diff.split("\n"))
        assert m.sender and m.message_id.startswith("<")
    info = pm.series_info(mails)
    assert info["mails"] == info["with_diff"] == len(subjects) and info["hunks"] == sum(hunks)
    assert info["cover"] is None and info["priced"] == list(range(len(subjects)))


def test_the_cpumap_series_is_three_mails_and_sixteen_hunks():
    info = pm.series_info(pm.read_mails(_text("cpumap-napi-skb-cache-get-bulk.diff")))
    assert (info["mails"], info["hunks"]) == (3, 16)
    assert info["subject"] == "[PATCH net-next v4 4/8] bpf: cpumap: reuse skb array instead of a linked list to " \
                              "chain skbs (and 2 more)"


def test_headers_of_the_mails():
    first, second = pm.read_mails(_text("napi-consume-skb-alien-defer.diff"))
    assert first.sender == "Eric Dumazet <edumazet@google.com>" and first.date == ""
    assert second.message_id == "<20251106202935.1776179-3-edumazet@google.com>"
    assert second.in_reply_to == "<20251106202935.1776179-1-edumazet@google.com>"
    (pool,) = pm.read_mails(_text("page-pool-alloc-pages-bulk.diff"))
    # git's in-body "From: Jesper ..." under the headers is the author line, not a new mail
    assert pool.sender == "Mel Gorman <mgorman@techsingularity.net>" and "From: Jesper" in pool.prose
    assert pool.date == "Thu, 25 Mar 2021 11:42:28 +0000"


def test_a_signature_right_above_the_next_headers_still_splits():
    """Without the blank line between git's version line and the next mail's headers."""
    text = _text("cpumap-napi-skb-cache-get-bulk.diff").replace("2.48.1\n\nFrom:", "2.48.1\nFrom:")
    assert text.count("2.48.1\nFrom:") == 2
    assert [m.hunk_count for m in pm.read_mails(text)] == [9, 2, 5]


def test_headerless_concatenation_keeps_reading_past_each_signature():
    """The three mails' bodies pasted without their headers: one mail, whose diff goes on past each
    ``-- `` signature to the next mail's diff: all 16 hunks, the same diff as the three mails'."""
    text = _text("cpumap-napi-skb-cache-get-bulk.diff")
    bodies = [re.split(r"\n\n", chunk, maxsplit=1)[1] for chunk in _MAIL_START.split(text) if chunk.strip()]
    (one,) = pm.read_mails("\n".join(bodies))
    assert one.hunk_count == 16
    assert one.diff == "".join(m.diff for m in pm.read_mails(text))


def test_a_removed_line_that_looks_like_a_signature_stays_in_its_hunk():
    diff = ("diff --git a/Documentation/x.rst b/Documentation/x.rst\n--- a/Documentation/x.rst\n"
            "+++ b/Documentation/x.rst\n@@ -1,3 +1,3 @@\n a\n-- \n+- b\n c\n-- \n2.43.0\n")
    (m,) = pm.read_mails(diff)
    assert m.diff.split("\n")[4:8] == [" a", "-- ", "+- b", " c"] and not m.repairs
    assert _added_removed(m.diff) == (1, 1)


def _mails_of(name: str) -> list[email.message.EmailMessage]:
    """The file's mails rebuilt with :mod:`email` from the file's own header and body text."""
    out = []
    for chunk in _MAIL_START.split(_text(name)):
        if not chunk.strip():
            continue
        head, body = chunk.split("\n\n", 1)
        msg = email.message_from_string(head + "\n\n", policy=email.policy.default)
        new = email.message.EmailMessage(policy=email.policy.default)
        for key in ("From", "To", "Subject", "Date", "Message-ID"):
            if msg[key] is not None:
                new[key] = str(msg[key])
        out.append((new, body))
    return out


def _encoded(name: str, cte: str, linesep: str, mbox: bool) -> bytes:
    parts = []
    for new, body in _mails_of(name):
        new.set_content(body, cte=cte)
        raw = new.as_bytes(policy=email.policy.default.clone(linesep=linesep))
        sep = f"From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001{linesep}".encode()
        parts.append((sep if mbox else b"") + raw)
    return linesep.encode().join(parts)


@pytest.mark.parametrize("name", ["cpumap-napi-skb-cache-get-bulk.diff", "napi-consume-skb-alien-defer.diff",
                                  "page-pool-alloc-pages-bulk.diff", "veth-xdp-alloc-skb-bulk.diff"])
@pytest.mark.parametrize("cte,linesep,mbox", [("quoted-printable", "\n", False), ("quoted-printable", "\r\n", True),
                                              ("8bit", "\r\n", False), ("base64", "\n", True),
                                              ("7bit", "\n", True), ("base64", "\r\n", False)])
def test_one_patch_one_hash_in_every_encoding(name, cte, linesep, mbox):
    """The same mails quoted-printable (``=3D``, soft breaks), base64, 8bit with CRLF line ends, in an mbox
    or pasted one after the other: the same subjects, hunks, diff and hash as the file as posted."""
    if cte == "7bit" and not _text(name).isascii():
        cte = "8bit"
    raw = _encoded(name, cte, linesep, mbox)
    assert (b"\r\n" in raw) == (linesep == "\r\n")
    if cte == "quoted-printable":
        assert b"=3D" in raw and (b"=\r\n" in raw or b"=\n" in raw)
    plain = pm.read_mails(_text(name))
    mails = pm.read_mails(raw)
    assert [m.subject for m in mails] == [m.subject for m in plain]
    assert [m.hunk_count for m in mails] == [m.hunk_count for m in plain]
    assert [m.diff for m in mails] == [m.diff for m in plain]
    assert pm.diff_hash(mails) == pm.diff_hash(plain)


def test_the_hash_ignores_index_lines_and_trailing_blanks_of_headers_but_not_code():
    text = _text("napi-consume-skb-alien-defer.diff")
    base = pm.diff_hash(pm.read_mails(text))
    other_index = re.sub(r"^index \S+", "index 0000000..1111111", text, flags=re.M)
    assert pm.diff_hash(pm.read_mails(other_index)) == base
    padded = text.replace("+++ b/net/core/skbuff.c\n", "+++ b/net/core/skbuff.c  \n")
    assert pm.diff_hash(pm.read_mails(padded)) == base
    changed = text.replace("skb->destructor = NULL;", "skb->destructor = 0;")
    assert pm.diff_hash(pm.read_mails(changed)) != base
    assert re.fullmatch(r"[0-9a-f]{12}", base)


def test_an_archive_page_with_its_last_context_line_cut_is_completed_and_hashes_as_posted():
    """Seed 004 (the openwall archive's page of the kfree_skb_list patch): its navigation left out and
    named; the hunk the archive cut one context line short completed, the repair said; and the same hash
    as the patch as posted."""
    (m,) = pm.read_mails((SEEDS / "004_5b5bcd2261c19f35.txt").read_bytes())
    assert m.subject == "[PATCH net-next V2 2/2] net: kfree_skb_list use kmem_cache_free_bulk"
    assert m.repairs == ("a hunk at '@@ -964,16 +964,54 @@' was cut short: 1 trailing context line(s) taken as blank",)
    assert m.skipped == ("5 line(s) before the first mail's headers (no diff in them) left out",)
    assert _added_removed(m.diff) == (39, 1)
    assert pm.diff_hash([m]) == pm.diff_hash(pm.read_mails(_text("kfree-skb-list-free-bulk.diff")))


def test_a_reply_quoting_hunk_lines_without_headers_is_a_fragment_of_an_unknown_file():
    """Seed 002 (a thread page: replies only): no diff of its own; the hunk lines it quotes are a fragment."""
    (m,) = pm.read_mails((SEEDS / "002_e998980d6ab8325f.txt").read_bytes())
    assert m.diff == "" and not m.is_cover and m.quoted_hunk_count == 1
    (f,) = unidiff.PatchSet(m.quoted_diff)
    assert f.path == "" and any("memset(skb, 0, offsetof(struct sk_buff, tail));" in str(x) for x in f[0])
    assert pm.series_info([m])["priced"] == [0] and pm.series_info([m])["quoted_hunks"] == 1


def test_a_prose_line_starting_with_from_is_not_a_mail():
    text = (SEEDS / "002_e998980d6ab8325f.txt").read_text()
    assert "\nFrom my memset benchmarks" in text
    assert len(pm.read_mails(text)) == 1


def test_a_thread_with_the_quoted_diff_headers_of_an_emptied_hunk():
    """Seed 000 (the kfree_skb_list thread as one page): both patches' diffs read (3 hunks); the replies
    quote the file and hunk headers with the lines cut away, so the quoted hunk lines are read as a fragment."""
    (m,) = pm.read_mails((SEEDS / "000_062ad420d30618bd.txt").read_bytes())
    assert m.hunk_count == 3 and not m.is_cover  # its subject is the cover letter's, its diffs the patches'
    assert m.subject.startswith("[PATCH net-next 0/2]") and pm.series_info([m])["cover"] is None
    (f,) = unidiff.PatchSet(m.quoted_diff)
    assert f.path == "" and f.added == 32 and any("__kfree_skb_reason(skb, reason)" in str(x) for x in f[0])


def test_a_cover_letter_in_an_mbox_is_named_and_not_the_subject():
    cover = email.message.EmailMessage()
    cover["From"] = "Eric Dumazet <edumazet@google.com>"
    cover["Subject"] = "[PATCH net-next 0/3] net: use napi_skb_cache even in process context"
    cover.set_content("This series is supposed to be the last one about slab contention.\n")
    sep = b"From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n"
    raw = sep + cover.as_bytes() + b"\n" + _encoded("napi-consume-skb-alien-defer.diff", "8bit", "\n", True)
    mails = pm.read_mails(raw)
    info = pm.series_info(mails)
    assert [m.is_cover for m in mails] == [True, False, False]
    assert info["cover"] == "[PATCH net-next 0/3] net: use napi_skb_cache even in process context"
    assert info["priced"] == [1, 2] and info["subject"].startswith("[PATCH net-next 1/3]")
    assert info["subject"].endswith("(and 1 more)") and info["hunks"] == 2


def test_a_patch_attached_to_a_multipart_mail_and_a_part_left_out():
    text = _text("kfree-skb-list-free-bulk.diff")
    msg = email.message.EmailMessage()
    msg["From"] = "Toke Høiland-Jørgensen <toke@redhat.com>"   # sent RFC 2047-encoded
    msg["Subject"] = "[PATCH net-next V2 2/2] net: kfree_skb_list use kmem_cache_free_bulk"
    msg["Date"] = "Fri, 13 Jan 2023 14:52:04 +0100"
    msg.set_content("The patch is attached.\n")
    msg.add_attachment(text[text.index("diff --git"):], subtype="x-patch", filename="0002.patch")
    msg.add_attachment(b"\x89PNG\r\n", maintype="image", subtype="png", filename="flame.png")
    raw = msg.as_bytes()
    assert b"=?utf-8?" in raw
    (m,) = pm.read_mails(raw)
    assert m.sender == "Toke Høiland-Jørgensen <toke@redhat.com>"
    assert m.hunk_count == 1 and "The patch is attached." in m.prose
    assert m.skipped == ("part image/png (flame.png) left out: only text/plain and patch parts are read",)
    assert pm.diff_hash([m]) == pm.diff_hash(pm.read_mails(text))


def test_a_latin1_mail_without_charset_and_a_str_with_non_ascii():
    text = _text("cpumap-napi-skb-cache-get-bulk.diff")  # "Toke Høiland-Jørgensen" in its trailers
    assert "ø" in text
    a = pm.read_mails(text.encode("latin-1"))
    b = pm.read_mails(text)
    assert [m.hunk_count for m in a] == [m.hunk_count for m in b] == [9, 2, 5]
    assert "Høiland" in b[0].prose and "Høiland" in a[0].prose


def test_a_five_megabyte_paste():
    """A series repeated to 5 MB and one mail with a 5 MB diff: every mail and hunk read.  The time is
    printed, not asserted (benchmarks/ holds the timing)."""
    src = _text("cpumap-napi-skb-cache-get-bulk.diff")
    copies = 5_000_000 // len(src) + 1
    t0 = time.perf_counter()
    mails = pm.read_mails((src + "\n") * copies)
    info = pm.series_info(mails)
    t1 = time.perf_counter()
    assert info["mails"] == 3 * copies and info["hunks"] == 16 * copies
    head, diff = src.split("\n-- \n")[0].split("diff --git", 1)
    n = 5_000_000 // len(diff) + 1
    big = head + ("diff --git" + diff + "\n") * n
    t2 = time.perf_counter()
    (m,) = pm.read_mails(big)
    t3 = time.perf_counter()
    assert m.hunk_count == 9 * n
    print(f"\n5 MB series ({info['mails']} mails): {t1 - t0:.2f} s; one 5 MB mail ({m.hunk_count} hunks): "
          f"{t3 - t2:.2f} s")


def test_a_reply_quoting_the_whole_diff_keeps_its_file():
    """A review reply that quotes the patch with its headers ("> diff --git ...") and answers under a
    hunk: the quoted diff names its file and holds the hunk as posted; the reply has no diff of its own."""
    (_, patch) = pm.read_mails(_text("napi-consume-skb-alien-defer.diff"))
    quoted = "".join(f"> {x}\n" if x else ">\n" for x in patch.diff.rstrip("\n").split("\n"))
    reply = ("From: Jakub Kicinski <kuba@kernel.org>\nSubject: Re: [PATCH net-next 2/3] net: fix napi_consume_skb() "
             "with alien skbs\nDate: Fri, 7 Nov 2025 10:00:00 -0800\n\nOn Thu, 6 Nov 2025 Eric Dumazet wrote:\n"
             + quoted + "\nNice, how many IPIs does this add?\n")
    (m,) = pm.read_mails(reply)
    assert m.diff == "" and not m.is_cover and m.subject.startswith("Re: [PATCH net-next 2/3]")
    assert m.quoted_diff == patch.diff and unidiff.PatchSet(m.quoted_diff)[0].path == "net/core/skbuff.c"
    assert pm.series_info([m])["quoted_hunks"] == 1
