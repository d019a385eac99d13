"""Robustness under bad input and concurrent use: a sample of the soak scripts, bounded work, safe defaults.

* fuzzed share links through AppTest on every page (10 per page here; benchmarks/soak_links.py runs
  10,000): no exception, every bad parameter named in a warning, no HTML, a canonical URL written back;
* fuzzed pastes, measurement files and profile TOML on the Calibrate page (36 here;
  benchmarks/soak_uploads.py runs 1,000): no exception, no input vanishes without a word;
* user text in markdown is escaped (links, images from a link key are not rendered);
* bounded work: chart grids do not depend on any link or control, extreme states stay small and fast,
  caches are capped, parser limits hold;
* static audit: .streamlit/config.toml safe defaults; no unsafe_allow_html / st.html / pickle / eval /
  exec / shell in the app code.
"""
from __future__ import annotations

import ast
import re
import tomllib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from skbmodel.evidence import parsers
from skbmodel.question import Question
from skbmodel.links import state as sk_state
from tests.fuzz_inputs import (
    ALL_PAGES,
    check_link,
    check_upload,
    fuzz_query,
    fuzz_upload,
    md_unescape,
    named_in,
    value_status,
)

pytest.importorskip("streamlit.testing.v1")
REPO = Path(__file__).resolve().parent.parent
APP_FILES = sorted([REPO / "dashboard.py", *(REPO / "pages").glob("*.py"), *(REPO / "skbview").rglob("*.py"),
                    *(REPO / "skbmodel").rglob("*.py")])
#: links per page through AppTest: what the app adds to the codec (whose oracle runs on 2,000 links below,
#: without the app) is the page drawing whatever state a link decodes to and writing its URL back; each link
#: carries many bad and extreme values at once, so 10 a page (110 in all) reach every page's controls
LINKS_PER_PAGE = 10
UPLOADS = 36
LINK_SEED = 500_000   # the suite's sample does not repeat the soak script's seeds 0..9,999
UPLOAD_SEED = 50_000


# --------------------------------------------------------------------------------------- links
def _refused(q, page: str) -> bool:
    """Whether the link's question has no numbers (a cross-node cpumap on a one-node machine, a composition
    that makes no sense): the page says why instead of drawing a chart."""
    from skbmodel import answers
    state, _ = sk_state.decode(q.mapping())
    opens = state["page"] if "page" in q.mapping() else page  # a link's page= switches to that page
    return opens in sk_state.PAGES and answers.of_state({**state, "page": opens}).problem is not None


@pytest.mark.parametrize("page", ALL_PAGES)
def test_fuzzed_links_on_every_page(page):
    i0 = LINK_SEED + ALL_PAGES.index(page) * LINKS_PER_PAGE
    failures, named, bad = [], 0, 0
    for seed in range(i0, i0 + LINKS_PER_PAGE):
        q = fuzz_query(seed)
        o = check_link(q, page)
        if o.failed and not (o.no_chart and not o.exception and not o.unnamed and not o.html and not o.unclean_url
                             and _refused(fuzz_query(seed), page)):
            failures.append((seed, o.exception, o.unnamed, o.html, o.unclean_url[:2], o.no_chart))
        if not o.exception and not o.dropped:
            bad += len(q.bad)
            named += len(q.bad) - len(o.unnamed)
    assert not failures, failures
    assert bad > 0 and named == bad


def test_decoder_names_every_bad_parameter_of_2000_links():
    """The same oracle straight on the codec (fast): every bad key named, valid links silent."""
    for seed in range(2_000):
        q = fuzz_query(seed)
        state, warnings = sk_state.decode(q.mapping())
        missing = [k for k in q.bad if not named_in(k, warnings)]
        assert not missing, (seed, missing, warnings)
        if not q.bad and not any(value_status(sk_state.PARAMS[k], v) == "either" for k, v in q.pairs
                                 if k in sk_state.PARAMS):
            assert all(" replaced by " in w for w in warnings), (seed, warnings)
        assert {k for k in sk_state.PARAMS
                if not k.startswith(sk_state.B_PREFIX)} <= set(state)  # A and the view in full
        assert sk_state.normalised(state) == state  # B as what it overrides, nothing more
        _, again = sk_state.decode(sk_state.encode(state))
        assert again == [], (seed, again)


def test_generator_is_adversarial_and_reproducible():
    kinds = set()
    for seed in range(400):
        kinds.update(fuzz_query(seed).kinds)
    for k in ("wrong_type", "huge", "nonfinite", "negative", "out_of_range", "non_integer", "long", "unicode",
              "script", "unknown_key", "repeated", "bad_prof", "valid", "version"):
        assert k in kinds, k
    assert fuzz_query(7).pairs == fuzz_query(7).pairs


# --------------------------------------------------------------------------------------- uploads
def test_fuzzed_uploads_on_the_calibrate_page():
    """Every odd seed's upload that maps a measurement is also fitted (the fit button pressed): the fuzz
    must reach both ends of the fit branch, a fit done and a fit refused with a message."""
    failures, hows, fitted = [], set(), Counter()
    for seed in range(UPLOAD_SEED, UPLOAD_SEED + UPLOADS):
        u = fuzz_upload(seed)
        o = check_upload(u, fit=seed % 2 == 1)
        hows.add(u.how)
        fitted[o.fitted] += 1
        if o.failed:
            failures.append((seed, u.how, u.kind, u.name[:40], o.exception, o.silent, o.html))
    assert not failures, failures
    assert hows == {"paste", "file", "profile"}
    assert set(fitted) <= {"", "ok", "refused"}, fitted
    assert fitted["ok"] >= 2 and fitted["refused"] >= 1, fitted


def test_hostile_file_name_is_text_not_markdown():
    from tests.fuzz_inputs import FuzzUpload

    u = FuzzUpload(1, "file", "![i](http://127.0.0.1:9/t.png) [l](https://example.invalid).txt", b"junk\n", "x")
    o = check_upload(u)
    assert not o.failed, o


def test_md_escape_keeps_text_and_disarms_markdown():
    from skbview.safe_text import md_escape

    for text in ("'![x](http://h/t.png)': unknown parameter", "[a](javascript:alert(1))", "<script>x</script>",
                 "$x^2$ :red[r] **b** _i_ `c` # h | t ~s~", "a\\b", "plain 'quoted', 1=2; 50%?"):
        esc = md_escape(text)
        assert md_unescape(esc) == text
        assert not re.search(r"(?<!\\)[\[\]()<>`*_$!]", esc), esc
    assert md_escape("a\nb\r\nc") == "a b c"


# --------------------------------------------------------------------------------------- bounded work
def _corner(which: str) -> dict:
    st = sk_state.defaults()
    for k, p in sk_state.PARAMS.items():
        if p.kind in ("int", "float"):
            st[k] = (int if p.kind == "int" else float)(p.lo if which == "lo" else p.hi)
        elif p.kind == "choice" and k != "page":
            st[k] = p.choices[0 if which == "lo" else -1]
    return st


def _points(fig) -> int:
    n = 0
    for tr in fig.to_dict()["data"] if hasattr(fig, "to_dict") else fig["data"]:
        for ax in ("x", "y", "z"):
            v = tr.get(ax)
            if v is not None:
                n += int(np.asarray(v, dtype=object).size)
    return n


@pytest.mark.parametrize("which", ["lo", "hi"])
def test_extreme_states_give_bounded_charts(which):
    """Every link value is clamped and every sweep grid is fixed: the worst corner of the parameter
    space draws a bounded number of points on every page (its time is a benchmark's, not a test's)."""
    from skbview import charts

    st = _corner(which)
    for page in sk_state.PAGES:
        figs = charts.figures_for_page(page, Question.of_state({**st, "page": page}))
        pts = sum(_points(f) for _, f in figs)
        assert figs and pts <= 50_000, (page, pts)


def test_sweep_grids_are_fixed_constants():
    """No grid in skbview/charts/ is sized from the state: every np.arange/linspace/geomspace has
    literal or module-constant bounds."""
    files = sorted((REPO / "skbview" / "charts").glob("*.py"))
    assert len(files) > 5
    for node in (n for f in files for n in ast.walk(ast.parse(f.read_text()))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("arange", "linspace", "geomspace",
                                                                             "logspace", "repeat", "tile", "zeros",
                                                                             "ones", "empty", "full"):
            names = {n.id for a in node.args for n in ast.walk(a) if isinstance(n, ast.Name)}
            assert names <= {"np", "ops"} | {n for n in names if n.isupper()}, (node.lineno, names)


@pytest.mark.parametrize("slab_bytes,object_bytes", [(8192, 256), (256, 256), (8192, 2048), (16384, 64)])
def test_slab_boundary_lines_stay_on_the_bulk_axis(slab_bytes, object_bytes):
    """The one grid sized from the state (``ops``, objects per slab, from a link's custom profile at its own
    object size): the SLUB charts over bulk draw a boundary at every multiple of it up to the largest bulk
    on the axis (256), no further, so even one object per slab gives at most 256 lines."""
    from skbmodel.machine import custom
    from skbmodel.machine.profile import load_profile
    from skbview import charts

    prof = custom.build(load_profile("e5-1650v4"),
                        {"slub_slab_bytes": slab_bytes, "slub_object_bytes": object_bytes}, "slab-test")
    st, warnings = sk_state.decode(f"obj_bytes={object_bytes}&prof=" + custom.encode_profile(prof))
    assert warnings == []
    ops = slab_bytes // object_bytes
    for name, fig in charts.figures_for_page("slub", Question.of_state(st)):
        if name == "cost_vs_size":  # over object size: one line, where the page allocator takes over
            assert [shape.x0 for shape in fig.layout.shapes] == [8192]
            continue
        xs = sorted(shape.x0 for shape in fig.layout.shapes if shape.x0 == shape.x1)
        assert xs == list(range(ops, 257, ops)), (name, ops, xs[:3], len(xs))


def test_caches_are_capped():
    """Every cache that could be keyed by link or upload data has a size limit."""
    from skbmodel.machine import custom

    assert custom.decode_cached.cache_info().maxsize is not None
    for path in APP_FILES:
        src = path.read_text()
        for m in re.finditer(r"@(?:functools\.)?lru_cache\(([^)]*)\)|@(?:functools\.)?cache\b", src):
            assert m.group(1) and "maxsize=None" not in m.group(1) and "maxsize" in m.group(1), (path, m.group(0))
        for m in re.finditer(r"@st\.cache_(?:data|resource)(\([^)]*\))?\s*\ndef \w+\(([^)]*)\)", src):
            args, params = m.group(1) or "", m.group(2).strip()
            assert not params or "max_entries" in args, (path, m.group(0))


def test_link_and_upload_size_limits():
    assert sk_state.MAX_VALUE_CHARS <= 1_000
    assert sk_state.decode("a=" + "x" * (sk_state.MAX_QUERY_CHARS + 1))[1][0].startswith("link ignored")
    _, w = sk_state.decode({f"k{i}": ["1"] for i in range(1_000)})
    assert len(w) == 1_000
    r = parsers.parse_text("x\n" * (parsers.MAX_LINES + 1))
    assert not r.measurements and "limit" in str(r.errors[0])
    r = parsers.parse_bytes(b"1" * (parsers.MAX_TEXT_CHARS * 2 + 1), "big.txt")
    assert not r.measurements and "limit" in str(r.errors[0])
    line = " kmem-bulk Per elem: 64 cycles(tsc) 17.905 ns (step:16)\n"
    r = parsers.parse_text(line * (parsers.MAX_LINES - 1))
    assert 0 < len(r.measurements) <= parsers.MAX_MEASUREMENTS


# --------------------------------------------------------------------------------------- static audit
def test_streamlit_config_has_safe_defaults():
    cfg = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["enableXsrfProtection"] is True
    assert 0 < cfg["server"]["maxUploadSize"] <= 5  # MB: a 5 MB patch mail
    assert cfg["browser"]["gatherUsageStats"] is False
    assert cfg["server"].get("enableCORS", True) is True
    assert cfg["server"].get("maxMessageSize", 200) <= 200


_FORBIDDEN = [
    (r"unsafe_allow_html\s*=\s*True", "unsafe_allow_html"),
    (r"\bst\.html\s*\(", "st.html"),
    (r"components\.v1\.html|components\.html\s*\(", "components.html"),
    (r"^\s*(?:import|from)\s+(?:pickle|cPickle|dill|shelve|marshal|cloudpickle)\b", "pickle-like import"),
    (r"\bpickle\.|read_pickle|allow_pickle\s*=\s*True", "pickle use"),
    (r"(?<![\w.])eval\s*\(", "eval"),
    (r"(?<![\w.])exec\s*\(", "exec"),
    (r"yaml\.load\s*\((?![^)]*SafeLoader)", "yaml.load"),
    (r"shell\s*=\s*True|os\.system\s*\(|os\.popen\s*\(", "shell"),
    (r"__import__\s*\(", "__import__"),
]


def _code_only(src: str) -> str:
    """The source without comments and string literals (docstrings talk about pickle/eval)."""
    import io
    import tokenize

    out = []
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type in (tokenize.COMMENT, tokenize.STRING) or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            out.append(" ")
        elif tok.type == tokenize.NEWLINE or tok.type == tokenize.NL:
            out.append("\n")
        else:
            out.append(tok.string + " ")
    return "".join(out)


def test_no_html_pickle_eval_or_shell_in_app_code():
    found = []
    for path in APP_FILES:
        code = _code_only(path.read_text())
        for pat, what in _FORBIDDEN:
            for m in re.finditer(pat, code, flags=re.M):
                found.append(f"{path.relative_to(REPO)}: {what}: {m.group(0)!r}")
    assert not found, found


def test_user_text_reaches_markdown_only_escaped():
    """Where the app puts link warnings or upload-derived text into markdown, it goes through md_escape."""
    app = (REPO / "skbview" / "app" / "appstate.py").read_text()
    assert re.search(r"md_escape\(w\)", app)
    cal = (REPO / "skbview" / "app" / "calibrate_view.py").read_text()  # the Calibrate page's sections
    for needle in ("parsed.errors", "parsed.notes", "row_errors", "res.errors", "Profile not used"):
        shown = [line for line in cal.splitlines()
                 if needle in line and ("st." in line or "join" in line) and "{" in line]
        assert shown, f"no line of skbview/app/calibrate_view.py shows {needle} in markdown: update the needle"
        for line in shown:
            assert "md_escape" in line, line


# --------------------------------------------------------------------------------------- downloads under load
def test_generated_download_survives_other_sessions_media_sweeps(monkeypatch):
    """Streamlit sweeps unreferenced media after every rerun of any session; a deferred download's
    file is unreferenced by design, so two reruns elsewhere between "export done" and the browser's
    GET gave a 404 under load.  skbview.app.media_grace keeps it for GRACE_S seconds."""
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    import skbview.app.downloads  # noqa: F401 - installs the grace period, as the dashboard does
    from skbview.app import media_grace

    assert media_grace.install()
    m = MediaFileManager(MemoryMediaFileStorage("/media"))
    url = m.execute_deferred(m.add_deferred(lambda: b"\x89PNG fake", "image/png", "c1", "chart.png"))
    assert url.startswith("/media/")
    m.remove_orphaned_files()
    m.remove_orphaned_files()
    assert len(m._file_metadata) == 1  # still there for the browser's GET
    monkeypatch.setattr(media_grace, "GRACE_S", 0.0)
    m.remove_orphaned_files()
    m.remove_orphaned_files()
    assert len(m._file_metadata) == 0  # and swept afterwards: memory stays bounded
