"""Reusable adversarial inputs for the robustness soak scripts and tests; not a test module.

* :func:`fuzz_query` — a random or adversarial share-link query: wrong types, huge numbers, NaN/inf,
  negative sizes, out-of-range and non-integer values, repeated keys, unknown keys, very long values,
  unicode, script tags and markdown.  It records, by construction, which keys are *bad* (every one
  of them must be named in a warning by the lenient link decoder).
* :func:`fuzz_upload` — a random or adversarial pasted text / uploaded file for the Calibrate page:
  real tool output (seed lines, prototype-kernel formats) mutated (numbers to NaN/huge/negative,
  truncation, byte flips, duplicated lines, CRLF, BOM), plus binary data, NUL bytes, UTF-16, non-UTF-8,
  over-long lines, too many lines, hostile file names, script tags; and profile TOML files.

Everything is deterministic for a given ``seed`` (``random.Random``), so a failing case found by the
10,000-link soak can be replayed: ``fuzz_query(seed)``.  The oracle for "bad" is independent of
:mod:`skbmodel.links.state`'s parser: a value is only marked bad when it is unambiguously invalid (not
an ASCII decimal number in range, not an integer for an integer parameter, not one of the choices);
inputs that a lenient parser may reasonably accept (unicode digits, ``1_000``, ``16.0``) are marked
``either`` and not asserted on.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import random
import re
from pathlib import Path
from urllib.parse import urlencode

from skbmodel.links import state as sk_state
from tests.limits import APPTEST_TIMEOUT_S

REPO = Path(__file__).resolve().parent.parent
MAX_VALUE_CHARS = 200  # the documented limit of a link value (skbmodel.links.state.MAX_VALUE_CHARS)
_ASCII_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")

HOSTILE = (
    "<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "javascript:alert(1)",
    "[click](javascript:alert(1))", "![x](http://127.0.0.1:9/x.png)", "**bold** _it_ `code`",
    "{{7*7}}", "${jndi:ldap://x}", "__import__('os').system('id')", "eval(1)", "'; DROP TABLE x;--",
    "\u202egnp.exe", "\u200b", "ﬁ", "𝟙𝟞", "🙂🙂🙂", "日本語", "Ω≈ç√", "\x00", "\x1b[31m", "\r\n", "%00", "%ZZ",
    "../../etc/passwd", "a" * 300, "é" * 100,
)
WRONG_TYPES = ("abc", "true", "false", "None", "null", "[1,2]", "{}", "()", "0x10", "1,5", "1 2", "--1",
               "1e", "e5", ".", "+", "-", "", " ", "1.2.3", "1e5e5", "٣x", "16px", "16 objects")
HUGE = ("1e308", "-1e308", "1e309", "-1e309", "9" * 150, "1" + "0" * 199, "123456789012345678901234567890",
        "4294967296", "-2147483649", "1e-320", "5e-324")
NONFINITE = ("nan", "NaN", "-nan", "inf", "-inf", "Infinity", "-Infinity", "INF", "+inf", "nAn")
#: parsed by Python's float() but not plain ASCII decimals: a lenient decoder may accept them
EITHER = ("１６", "١٦", "1_6", " 16 ", "\t8\n", "16.0", "+16", "0016", "1.6e1")


@dataclasses.dataclass
class FuzzQuery:
    """One link: ordered ``pairs`` (a key may repeat), the keys that must be named in a warning."""
    seed: int
    pairs: list[tuple[str, str]]
    bad: set[str]
    kinds: list[str]

    def mapping(self) -> dict[str, list[str]]:
        """``{key: [values...]}`` as ``st.query_params`` / AppTest see it (repeats kept in order)."""
        out: dict[str, list[str]] = {}
        for k, v in self.pairs:
            out.setdefault(k, []).append(v)
        return out

    def apptest_params(self) -> dict[str, str | list[str]]:
        return {k: (v[0] if len(v) == 1 else v) for k, v in self.mapping().items()}

    def query_string(self) -> str:
        return urlencode(self.pairs)


def _is_plain_number(v: str) -> bool:
    return bool(_ASCII_NUMBER.match(v))


def value_status(p: sk_state.Param, v: str) -> str:
    """Independent oracle: ``"ok"``, ``"bad"`` (must warn) or ``"either"`` for value ``v`` of ``p``."""
    if len(v.strip()) > MAX_VALUE_CHARS:
        return "bad"
    if p.kind == "choice":
        if v in p.choices:
            return "ok"
        return "either" if v.strip() in p.choices else "bad"
    s = v.strip()
    if not _is_plain_number(s):
        try:
            x = float(s)  # unicode digits, underscores, inf/nan words
        except ValueError:
            return "bad"
        return "bad" if not math.isfinite(x) or not p.lo <= x <= p.hi else "either"
    x = float(s)
    if not math.isfinite(x) or x < p.lo or x > p.hi:
        return "bad"
    if p.kind == "int" and x != int(x):
        return "bad"
    return "ok" if s == v else "either"


def _valid_value(rng: random.Random, p: sk_state.Param) -> str:
    if p.kind == "choice":
        return rng.choice(p.choices)
    if p.kind == "int":
        return str(rng.randint(int(p.lo), int(p.hi)))
    x = rng.uniform(p.lo, p.hi)
    return rng.choice([f"{x:g}", repr(x), f"{round(x, 2)}", sk_state.fmt_value(p.lo), sk_state.fmt_value(p.hi)])


def _bad_value(rng: random.Random, p: sk_state.Param) -> tuple[str, str]:
    """An adversarial value and its category."""
    kind = rng.choice(["wrong_type", "huge", "nonfinite", "negative", "out_of_range", "non_integer",
                       "long", "unicode", "script", "either"])
    if kind == "wrong_type":
        return rng.choice(WRONG_TYPES), kind
    if kind == "huge":
        return rng.choice(HUGE), kind
    if kind == "nonfinite":
        return rng.choice(NONFINITE), kind
    if kind == "negative":
        return rng.choice(["-1", "-16", "-0.5", "-1e9", "-0", "-9999999"]), kind
    if kind == "out_of_range" and p.kind != "choice":
        span = p.hi - p.lo
        return sk_state.fmt_value(rng.choice([p.hi + rng.choice([1, span, 1e6]), p.lo - rng.choice([1, span,
                                                                                                    1e6])])), kind
    if kind == "non_integer" and p.kind == "int":
        return f"{rng.randint(int(p.lo), int(p.hi)) + rng.choice([0.5, 0.25, 0.001])}", kind
    if kind == "long":
        n = rng.choice([201, 1_000, 10_000, 50_000])
        return rng.choice(["1", "9", "a", "é", "<"]) * n, kind
    if kind == "unicode":
        return rng.choice(["∞", "一六", "16€", "ß", "🙂", "\u202e16", "16\u0000", "Ⅻ", "½", "１６ｘ"]), kind
    if kind == "script":
        return rng.choice(HOSTILE), kind
    if kind == "either":
        return rng.choice(EITHER), kind
    if p.kind == "choice":
        return rng.choice([c.upper() for c in p.choices] + [c + "x" for c in p.choices] + ["", "*"]), "wrong_choice"
    return rng.choice(WRONG_TYPES), "wrong_type"


def _unknown_key(rng: random.Random) -> str:
    return rng.choice([
        "foo", "BULK", "Bulk", "bulk[]", "b_", "b_b_bulk", "c_bulk", "__proto__", "constructor", "page;x",
        "zero bytes", "", "=", "&", "#", "?", "v1", "vv", "prof2", "b_page", "b_v",
        "<script>alert(1)</script>", "[x](javascript:alert(1))", "![i](http://127.0.0.1:9/k.png)",
        "k" * rng.choice([41, 200, 5000]), "ключ", "键", "🙂", "\u202ebulk", "bulk\u200b", "\x00", "a\nb",
        f"x{rng.randint(0, 10**9)}",
    ])


def _prof_value(rng: random.Random) -> tuple[str, bool]:
    """A custom-profile link value: valid (True) or garbage (False)."""
    from skbmodel.machine import custom
    from skbmodel.machine.profile import DEFAULT_PROFILE, available_profiles, load_profile

    if rng.random() < 0.3:
        base = load_profile(rng.choice(list(available_profiles()) or [DEFAULT_PROFILE]))
        prof = custom.build(base, {"ghz": round(rng.uniform(1.0, 5.0), 3)}, label=f"fuzz{rng.randint(0, 99)}")
        return custom.encode_profile(prof), True
    if rng.random() < 0.4:  # one constant at an edge of its allowed range (0, tiny, the maximum)
        base = load_profile(rng.choice(list(available_profiles()) or [DEFAULT_PROFILE]))
        name = rng.choice(sorted(base.constants))
        value = rng.choice(["0", "0.000001", "1", "10000000", sk_state.fmt_value(10 * abs(base.constants[name].value)),
                            "0.5", "6"])
        text = f"1~{base.id}~{name}:{value}"
        try:  # the constant's own range decides; the oracle only asks that a refusal is named
            custom.decode_profile(text)
        except custom.ProfileLinkError:
            return text, False
        return text, True
    return rng.choice([
        "1~e5-1650v4~ghz:99", "1~nope~ghz:3", "2~e5-1650v4~ghz:3", "1~e5-1650v4~evil:1", "1~e5-1650v4~ghz:nan",
        "1~e5-1650v4~ghz:inf", "1~e5-1650v4~ghz:-1", "1~e5-1650v4~ghz:3~<script>", "~~~~", "1", "x" * 2000,
        "1~e5-1650v4~ghz:3,ghz:4", "1~e5-1650v4~slub_fast_pair_cycles:1e400", "__import__('os')",
    ]), False


def fuzz_query(seed: int) -> FuzzQuery:
    """One random/adversarial link.  About one in eight is fully valid (no bad keys)."""
    rng = random.Random(seed)
    keys = list(sk_state.PARAMS)
    pairs: list[tuple[str, str]] = []
    bad: set[str] = set()
    kinds: list[str] = []
    clean = rng.random() < 0.125
    p_bad = 0.0 if clean else rng.choice([0.05, 0.2, 0.5, 1.0])
    chosen = rng.sample(keys, rng.randint(0, len(keys)))
    if rng.random() < 0.7:
        chosen = ["v"] + chosen
    for k in chosen:
        if k == "v":
            if rng.random() < p_bad:
                v = rng.choice(["3", "0", "", "1.0", "999", "<script>", "v1"])
                pairs.append(("v", v))
                bad.add("v")
                kinds.append("version")
            else:
                pairs.append(("v", "1"))
            continue
        p = sk_state.PARAMS[k]
        if rng.random() < p_bad:
            v, kind = _bad_value(rng, p)
            kinds.append(kind)
        else:
            v = _valid_value(rng, p)
        status = value_status(p, v)
        if status == "bad":
            bad.add(k)
        pairs.append((k, v))
    if not clean:
        if rng.random() < 0.25:  # custom profile, valid or not
            pk = rng.choice(sk_state.PROFILE_KEYS)
            v, ok = _prof_value(rng)
            pairs.append((pk, v))
            kinds.append("prof" if ok else "bad_prof")
            if not ok:
                bad.add(pk)
        for _ in range(rng.choice([0, 0, 1, 2, 5])):  # unknown keys
            k = _unknown_key(rng)
            if k.strip() in sk_state.PARAMS or k.strip() in sk_state.PROFILE_KEYS or k.strip() == "v":
                continue
            pairs.append((k, rng.choice(["1", "", "<script>alert(1)</script>", "x" * 50])))
            bad.add(k.strip())
            kinds.append("unknown_key")
        if pairs and rng.random() < 0.25:  # a repeated key
            k, _ = rng.choice(pairs)
            if k.strip() in sk_state.PARAMS and k.strip() != "v":
                pairs.append((k, _valid_value(rng, sk_state.PARAMS[k.strip()])))
                bad.add(k.strip())
                kinds.append("repeated")
        if rng.random() < 0.03:  # many unknown keys (Streamlit drops a query over 1,000 fields)
            n = rng.randint(50, 400)
            pairs += [(f"junk{i}", str(i)) for i in range(n)]
            bad.update(f"junk{i}" for i in range(n))
            kinds.append("many_keys")
        rng.shuffle(pairs)
        # the decoder keeps the first of repeated keys: re-derive which repeated keys end up bad
    return FuzzQuery(seed=seed, pairs=pairs, bad=bad, kinds=kinds or ["valid"])


def named_in(key: str, warnings: list[str]) -> bool:
    """True if one warning starts by naming ``key`` (``key: ...`` or its quoted, possibly shortened, repr)."""
    prefixes = (f"{key}:", repr(key), repr(key[:37])[:-1])
    return any(w.startswith(prefixes) for w in warnings)


# ----------------------------------------------------------------------------------- uploads
SEED_LINES = (
    " kmem-in-loop Per elem: 109 cycles(tsc) 30.532 ns (step:16)\n"
    " kmem-bulk    Per elem: 64 cycles(tsc) 17.905 ns (step:16)\n",
    "  - memset_skb_tail Per elem: 37 cycles(tsc) 10.463 ns\n"
    " - memset_variable_step(256) Per elem: 31 cycles(tsc) 8.803 ns\n"
    " - memset_256 Per elem: 41 cycles(tsc) 11.552 ns\n",
    "Result: OK: 41724905(c41718935+d5970) usec, 100000000 (60byte,0frags)\n"
    "  2396594pps 1150Mb/sec (1150365120bps) errors: 1417469\n",
    "[  160.181402] time_bench: Type:kmem fastpath reuse Per elem: 60 cycles(tsc) 16.832 ns "
    "(step:0) - (measurement period time:0.168328360 sec time_interval:168328360) "
    "- (invoke count:10000000 tsc_interval:605981541)\n",
)


def _samples() -> list[str]:
    out = list(SEED_LINES)
    for path in (REPO / "tests" / "data" / "prototype_kernel_formats.txt",
                 REPO / "skbmodel" / "data" / "seed-measurements.csv"):
        try:
            out.append(path.read_text(encoding="utf-8"))
        except OSError:
            pass
    return out


_SAMPLES = _samples()
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
CSV_QUANTITIES = ("kmem-bulk per element", "", '"quoted, comma"', '"unterminated')


@dataclasses.dataclass
class FuzzUpload:
    """One input for the Calibrate page: ``how`` = "paste" | "file" | "profile"."""
    seed: int
    how: str
    name: str
    data: bytes | str
    kind: str
    mime: str = "text/plain"


def _mutate_numbers(rng: random.Random, text: str) -> str:
    repl = ["nan", "inf", "-1", "0", "1e308", "9" * 40, "-0.0", "1e-320", "१२", "0x1f", "", "<b>9</b>"]
    return _NUMBER_RE.sub(lambda m: rng.choice(repl) if rng.random() < 0.3 else m.group(0), text)


def _mutate_text(rng: random.Random, text: str) -> tuple[str, str]:
    kind = rng.choice(["numbers", "truncate", "dup_lines", "shuffle", "crlf", "inject", "quote", "csv_cells",
                       "long_line", "many_lines", "unicode", "as_is"])
    lines = text.splitlines(keepends=True)
    if kind == "numbers":
        return _mutate_numbers(rng, text), kind
    if kind == "truncate":
        return text[: rng.randint(0, max(1, len(text)))], kind
    if kind == "dup_lines":
        return "".join(ln * rng.choice([1, 2, 50]) for ln in lines), kind
    if kind == "shuffle":
        rng.shuffle(lines)
        return "".join(lines), kind
    if kind == "crlf":
        return text.replace("\n", rng.choice(["\r\n", "\r", "\n\n", "\u2028"])), kind
    if kind == "inject":
        at = rng.randint(0, len(lines))
        lines.insert(at, rng.choice(HOSTILE) + "\n")
        return "".join(lines), kind
    if kind == "quote":
        return "".join(rng.choice(["> ", "> > ", "| ", "[ 12.345678] ", "- ", "1) "]) + ln for ln in lines), kind
    if kind == "csv_cells":
        return "id,system,quantity,value,unit,condition,cpu,seed\n" + "".join(
            f"{rng.choice(['x1', '', '<script>', 'id'])},{rng.choice(['slub', '', 'veth'])},"
            f"{rng.choice(CSV_QUANTITIES)},"
            f"{rng.choice(['64', 'nan', 'inf', '-5', '1e999', '', 'abc'])},"
            f"{rng.choice(['cycles', 'ns', 'Mpps', 'parsecs', '', '%'])},"
            f"{rng.choice(['bulk 16', 'bulk -1', 'bulk 1e9', '', 'step:nan'])},x,y\n"
            for _ in range(rng.randint(0, 30))), kind
    if kind == "long_line":
        return text + "x" * rng.choice([20_001, 100_000]) + "\n", kind
    if kind == "many_lines":
        return lines[0] * 5_001 if lines else "x\n" * 5_001, kind
    if kind == "unicode":
        return "".join(ch if rng.random() > 0.05 else rng.choice("é日🙂\u202e\u200b\ufeffﬁ") for ch in text), kind
    return text, kind


def fuzz_upload(seed: int) -> FuzzUpload:
    """One random/adversarial paste, measurement file or profile TOML."""
    rng = random.Random(seed)
    how = rng.choices(["paste", "file", "profile"], weights=[4, 4, 2])[0]
    name = rng.choice(["lab.txt", "dmesg.log", "bench.csv", "<script>alert(1)</script>.txt", "../../etc/passwd",
                       "résumé 日本.txt", "a" * 300 + ".txt", "[x](javascript:alert(1)).txt", ".txt", "noext",
                       "p.toml", "evil.toml"])
    if how == "profile":
        return _fuzz_profile(rng, seed, name if name.endswith(".toml") else name + ".toml")
    text, kind = _mutate_text(rng, rng.choice(_SAMPLES))
    if how == "paste":
        return FuzzUpload(seed, "paste", "pasted text", text, kind)
    enc = rng.choices(["utf-8", "utf-8-sig", "utf-16", "latin-1", "binary", "nul", "empty", "flip", "huge"],
                      weights=[10, 2, 1, 1, 1, 1, 1, 2, 0.3])[0]
    if enc in ("utf-8", "utf-8-sig", "utf-16"):
        data = text.encode(enc, "replace")
    elif enc == "latin-1":
        data = text.encode("utf-8") + b"\xe9\xff caf\xe9\n"
    elif enc == "binary":
        data = bytes(rng.getrandbits(8) for _ in range(rng.choice([1, 100, 5000])))
    elif enc == "nul":
        data = text.encode() + b"\x00" * 8
    elif enc == "empty":
        data = b""
    elif enc == "flip":
        b = bytearray(text.encode())
        for _ in range(max(1, len(b) // 50)):
            if b:
                b[rng.randrange(len(b))] = rng.getrandbits(8)
        data = bytes(b)
    else:  # a file over the parser's limit (the server refuses > maxUploadSize before that)
        data = (SEED_LINES[0] * (4_100_000 // len(SEED_LINES[0]))).encode()
    return FuzzUpload(seed, "file", name, data, f"{kind}/{enc}")


def _fuzz_profile(rng: random.Random, seed: int, name: str) -> FuzzUpload:
    from skbmodel.machine import custom
    from skbmodel.machine.profile import DEFAULT_PROFILE, load_profile

    base = load_profile(DEFAULT_PROFILE)
    good = custom.profile_toml(custom.build(base, {"ghz": 3.1}, label="fuzz"))
    kind = rng.choice(["valid", "numbers", "garbage", "huge_value", "unknown_const", "bad_inherits", "deep",
                       "truncate", "binary", "script"])
    if kind == "valid":
        text = good
    elif kind == "numbers":
        text = _mutate_numbers(rng, good)
    elif kind == "garbage":
        text = rng.choice(["", "[[[", "a = ", "x=1\n" * 1000, "\x00\x01", "inherits = 5", "id = []"])
    elif kind == "huge_value":
        text = good.replace("3.1", rng.choice(["1e400", "nan", "inf", "-3", "1" * 500]))
    elif kind == "unknown_const":
        text = good + "\n[constants.evil]\nvalue = 1\nunit = 'x'\nsource = 'x'\n"
    elif kind == "bad_inherits":
        text = re.sub(r'inherits\s*=\s*"[^"]*"', rng.choice(['inherits = "../../etc/passwd"', 'inherits = "nope"',
                                                              'inherits = ""']), good)
    elif kind == "deep":
        text = "a = " + "[" * 5000 + "]" * 5000 + "\n"
    elif kind == "truncate":
        text = good[: rng.randint(0, len(good))]
    elif kind == "binary":
        return FuzzUpload(seed, "profile", name, bytes(rng.getrandbits(8) for _ in range(500)), "profile/binary",
                          "application/toml")
    else:
        text = good.replace("fuzz", "<script>alert(1)</script>")
    return FuzzUpload(seed, "profile", name, text.encode("utf-8"), f"profile/{kind}", "application/toml")


# ----------------------------------------------------------------------------------- AppTest drivers
DASHBOARD = str(REPO / "dashboard.py")
#: every page of the dashboard (the 8 chart pages of skbmodel.links.state.PAGES and the Calibrate page)
ALL_PAGES = tuple(sk_state.PAGES) + ("calibrate",)


@contextlib.contextmanager
def legacy_pages_mode_left():
    """AppTest resets ``PagesManager.uses_pages_directory`` on every run; a real server leaves the
    legacy ``pages/`` mode for good at the first ``st.navigation``.  Do the same inside the block
    (see tests/test_app_pages.py), and undo it after: a later AppTest sees Streamlit as it was."""
    import logging

    from streamlit.runtime.pages_manager import PagesManager

    orig_init, orig_flag = PagesManager.__init__, PagesManager.uses_pages_directory

    def init(self, *a, **k):
        orig_init(self, *a, **k)
        PagesManager.uses_pages_directory = False

    # "missing ScriptRunContext" is logged for harness-side calls; it is noise here
    log = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")

    def quiet(record):
        return "missing ScriptRunContext" not in record.getMessage()
    # Harness speed only: every AppTest run re-scans all installed distributions for v2 component
    # manifests (~90 % of a run here).  The installed packages do not change during a soak; scan once.
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # other Streamlit versions
        manifest_scanner = None
    scan = manifest_scanner.scan_component_manifests if manifest_scanner else None
    cache: list = []

    def scan_once(*a, **k):
        if not cache:
            cache.append(scan(*a, **k))
        return list(cache[0])

    PagesManager.__init__ = init
    log.addFilter(quiet)
    if manifest_scanner:
        manifest_scanner.scan_component_manifests = scan_once
    try:
        yield
    finally:
        PagesManager.__init__ = orig_init
        PagesManager.uses_pages_directory = orig_flag
        log.removeFilter(quiet)
        if manifest_scanner:
            manifest_scanner.scan_component_manifests = scan


@dataclasses.dataclass
class LinkOutcome:
    seed: int
    page: str
    exception: str | None = None        # an uncaught exception (in the script or in AppTest)
    unnamed: list[str] = dataclasses.field(default_factory=list)  # bad keys no warning names
    html: bool = False                  # some element was rendered with unsafe_allow_html
    unclean_url: list[str] = dataclasses.field(default_factory=list)  # the URL written back does not decode cleanly
    warnings: int = 0
    charts: int = 0                     # Plotly charts drawn
    opened: str = ""                    # the page the URL says is shown after the run
    dropped: bool = False               # Streamlit ignored the whole query (over 512 Ki chars / 1,000 fields)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return bool(self.exception or self.unnamed or self.html or self.unclean_url or self.no_chart)

    @property
    def no_chart(self) -> bool:
        # /calibrate has no charts (its URL keeps page=overview unless the link asks for a chart page)
        return self.exception is None and self.opened in sk_state.PAGES and self.charts == 0 \
            and not (self.page == "calibrate" and self.opened == "overview")


_MD_UNESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def md_unescape(text: str) -> str:
    """Undo markdown backslash escapes (the page escapes user text; the oracle reads the plain text)."""
    return _MD_UNESCAPE.sub(r"\1", text)


def _warning_lines(at) -> list[str]:
    lines = []
    for w in at.warning:
        for ln in str(w.value).splitlines():
            if ln.startswith("- "):
                lines.append(md_unescape(ln[2:]))
    return lines


def _any_html(at) -> bool:
    """Any element in the tree rendered with HTML allowed (``unsafe_allow_html=True`` / ``st.html``)."""
    stack = [at._tree]
    while stack:
        node = stack.pop()
        proto = getattr(node, "proto", None)
        if proto is not None and getattr(node, "type", "") == "html":
            return True
        if proto is not None and hasattr(proto, "allow_html") and proto.allow_html:
            return True
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            stack.extend(children.values())
    return False


def check_link(q: FuzzQuery, page: str, timeout: float = APPTEST_TIMEOUT_S) -> LinkOutcome:
    """Open ``page`` of the dashboard in AppTest with the link ``q``; report what went wrong."""
    with legacy_pages_mode_left():
        return _check_link(q, page, timeout)


def _check_link(q: FuzzQuery, page: str, timeout: float) -> LinkOutcome:
    import time

    from streamlit.testing.v1 import AppTest

    out = LinkOutcome(seed=q.seed, page=page)
    t0 = time.perf_counter()
    try:
        at = AppTest.from_file(DASHBOARD, default_timeout=timeout)
        at.query_params.update(q.apptest_params())
        if page != "overview":
            at.switch_page(f"pages/{page}.py")
        at.run()
    except Exception as e:  # noqa: BLE001 - counted, not raised
        out.exception = f"{type(e).__name__}: {e}"[:500]
        out.seconds = time.perf_counter() - t0
        return out
    out.seconds = time.perf_counter() - t0
    if at.exception:
        out.exception = "; ".join(str(e.value)[:300] for e in at.exception)
        return out
    warnings = _warning_lines(at)
    out.warnings = len(warnings)
    out.charts = len(at.get("plotly_chart"))
    out.opened = str(at.query_params.get("page", ""))
    # Streamlit itself drops a query string over 524,288 characters or 1,000 fields before the app sees it
    out.dropped = len(q.query_string()) > 524_288 or len(q.pairs) > 1_000
    if not out.dropped:
        out.unnamed = sorted(k for k in q.bad if not named_in(k, warnings))
    out.html = _any_html(at)
    _, back = sk_state.decode({k: at.query_params.get_all(k) if hasattr(at.query_params, "get_all") else
                        ([v] if isinstance(v, str) else list(v)) for k, v in at.query_params.items()})
    out.unclean_url = back
    return out


@dataclasses.dataclass
class UploadOutcome:
    seed: int
    how: str
    kind: str
    exception: str | None = None
    silent: bool = False           # nothing told the user what happened to the input (no rows, no message)
    html: bool = False
    measurements: int = 0
    problems: int = 0              # parse problems listed in the warning
    fitted: str = ""               # "" (no fit tried) | "ok" | "refused"
    profile: str = ""              # profile uploads: "offered" (a Use button) | "refused" | "used"
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return bool(self.exception or self.silent or self.html)


def _texts(at) -> str:
    return "\n".join(str(e.value) for e in list(at.warning) + list(at.error) + list(at.info) + list(at.success))


def check_upload(u: FuzzUpload, fit: bool = False, timeout: float = APPTEST_TIMEOUT_S) -> UploadOutcome:
    """Feed ``u`` to the Calibrate page in AppTest (paste, measurement upload or profile upload)."""
    with legacy_pages_mode_left():
        return _check_upload(u, fit, timeout)


def _check_upload(u: FuzzUpload, fit: bool, timeout: float) -> UploadOutcome:
    import time

    from streamlit.testing.v1 import AppTest

    out = UploadOutcome(seed=u.seed, how=u.how, kind=u.kind)
    t0 = time.perf_counter()
    try:
        at = AppTest.from_file(DASHBOARD, default_timeout=timeout)
        at.switch_page("pages/calibrate.py")
        at.run()
        if u.how == "paste":
            at.text_area(key="cal_text").set_value(u.data).run()
        elif u.how == "file":
            at.file_uploader(key="cal_files").set_value([(u.name, u.data, u.mime)]).run()
        else:
            at.file_uploader(key="cal_profile_upload").set_value((u.name, u.data, u.mime)).run()
        if not at.exception:
            _after_input(at, u, out, fit)
    except Exception as e:  # noqa: BLE001 - counted, not raised
        out.exception = f"{type(e).__name__}: {e}"[:500]
    out.seconds = time.perf_counter() - t0
    if out.exception is None and at.exception:
        out.exception = "; ".join(str(e.value)[:300] for e in at.exception)
    if out.exception is None:
        out.html = _any_html(at)
    return out


def _after_input(at, u: FuzzUpload, out: UploadOutcome, fit: bool) -> None:
    text = _texts(at)
    if u.how == "profile":
        use = [b for b in at.button if (b.key or "") == "cal_use_uploaded"]
        if use:
            out.profile = "offered"
            use[0].click().run()
            if not at.exception:
                out.profile = "used" if "custom" in "\n".join(m.value for m in at.markdown) else "offered"
        elif "Profile not used" in text:
            out.profile = "refused"
        else:
            out.silent = True
        return
    has_rows = any("Map each measurement" in s.value for s in at.subheader)
    problems = [w for w in at.warning if "problem(s) in the input" in str(w.value)]
    out.problems = sum(str(w.value).count("\n- ") for w in problems)
    out.measurements = int(has_rows)
    idle = any("Paste lines or upload files to start" in str(i.value) for i in at.info)  # empty paste
    if not has_rows and not problems and not idle:
        out.silent = True  # the input vanished without a word
    if fit and has_rows:
        btn = at.button(key="cal_fit")
        if not btn.disabled:
            btn.click().run()
            if not at.exception:
                t = _texts(at)
                out.fitted = "ok" if "is now in use" in t else ("refused" if "fit was not done" in t else "?")
                if out.fitted == "?":
                    out.silent = True
