"""Import layers: the model knows nothing of the view, the exports know nothing of Streamlit, no cycles.

Every import of every project module is read with ``ast``, at module level and inside functions alike,
so a function-level import cannot hide a dependency.

    skbmodel (numpy, pandas, stdlib)  <-  skbview figures/report/export (plotly, kaleido)
                                      <-  skbview Streamlit modules, dashboard.py, pages/ (streamlit)

``skbmodel/__main__.py`` is the program ``python -m skbmodel``, not a library module (nothing imports it):
it alone may add the view layer's ``export`` subcommand (``skbview.cli_export``).
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The subpackage that uses Streamlit (with dashboard.py and pages/ the only places that may): every
#: module under skbview.app, none elsewhere in skbview.
STREAMLIT_PACKAGE = "skbview.app"
#: skbview's figure, report and export modules: the only places that may import Plotly or kaleido.
PLOTTING_MODULES = {"skbview.charts", "skbview.report", "skbview.exporter"}
#: Modules that must work without Streamlit (the CLI's export uses them): no Streamlit, not even indirectly.
NO_STREAMLIT = {"skbview.charts", "skbview.report", "skbview.exporter", "skbview.cli_export", "skbview.tables",
                "skbview.safe_text"}
#: unidiff parses a patch's hunks and tree-sitter (with its C grammar) their code: the patch reader's
#: (requirements.txt)
MODEL_EXTERNAL_OK = {"numpy", "pandas", "unidiff", "tree_sitter", "tree_sitter_c"}
MAIN = "skbmodel.__main__"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _project_files() -> dict[str, Path]:
    files = [ROOT / "dashboard.py", *sorted((ROOT / "pages").glob("*.py"))]
    for pkg in ("skbmodel", "skbview"):
        files += sorted((ROOT / pkg).rglob("*.py"))
    return {_module_name(p): p for p in files}


MODULES = _project_files()


def _imports(name: str, path: Path) -> set[str]:
    """Absolute names of everything ``name`` imports anywhere in its source (``a.b`` for ``from a import b``
    when ``a.b`` is a project module, and ``a`` itself only when a name of ``a`` is imported: the package is
    loaded either way, as it is for ``import a.b``)."""
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module
            subs = {f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in MODULES}
            out.update(subs)
            if len(subs) < len(node.names):  # a name of the module itself (not only its submodules)
                out.add(mod)
    return out


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


def _top(mod: str) -> str:
    return mod.split(".", 1)[0]


def _external(name: str) -> set[str]:
    return {_top(m) for m in IMPORTS[name] if _top(m) not in {"skbmodel", "skbview", "pages", "dashboard"}}


def _project_edges(name: str) -> set[str]:
    return {m for m in IMPORTS[name] if m in MODULES and m != name}


def test_every_layer_module_is_seen():
    for m in ("skbmodel.cli", "skbmodel.model", "skbview.charts", "skbview.app.appstate", "dashboard",
              "pages.calibrate"):
        assert m in MODULES
    assert "skbmodel" in IMPORTS["skbmodel.cli"] or "skbmodel.links.state" in IMPORTS["skbmodel.cli"]


def test_model_imports_only_numpy_pandas_stdlib_and_itself():
    bad = {}
    for name in MODULES:
        if _top(name) != "skbmodel" or name == MAIN:
            continue
        ext = {m for m in _external(name) if m not in MODEL_EXTERNAL_OK and m not in sys.stdlib_module_names}
        view = {m for m in IMPORTS[name] if _top(m) in {"skbview", "pages", "dashboard"}}
        if ext or view:
            bad[name] = sorted(ext | view)
    assert not bad, f"skbmodel must not import the view layer or other libraries: {bad}"


def test_main_adds_only_the_export_subcommand_from_the_view():
    view = {m for m in IMPORTS[MAIN] if _top(m) != "skbmodel" and m not in sys.stdlib_module_names}
    assert view <= {"skbview.cli_export"}, view


def test_streamlit_only_in_the_app_and_its_modules():
    app = {m for m in MODULES if m == STREAMLIT_PACKAGE or m.startswith(STREAMLIT_PACKAGE + ".")}
    allowed = {"dashboard", *app} | {m for m in MODULES if _top(m) == "pages"}
    users = {m for m in MODULES if "streamlit" in _external(m)}
    assert users <= allowed, f"Streamlit imported outside the app: {sorted(users - allowed)}"
    # the subpackage is the Streamlit layer: each of its modules (not the package docstring) uses it
    assert app - {STREAMLIT_PACKAGE} <= users, f"in {STREAMLIT_PACKAGE} without Streamlit: {app - users}"


def test_plotly_and_kaleido_only_in_the_figure_report_export_modules():
    users = {m for m in MODULES if _external(m) & {"plotly", "kaleido"}}
    users = {"skbview.charts" if m.startswith("skbview.charts.") else m for m in users}
    assert users <= PLOTTING_MODULES, f"Plotly/kaleido outside the figure modules: {sorted(users - PLOTTING_MODULES)}"


def test_figure_report_export_modules_never_reach_streamlit():
    for start in NO_STREAMLIT:
        seen, todo = set(), [start]
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            assert "streamlit" not in _external(m), f"{start} reaches Streamlit through {m}"
            todo += _project_edges(m)


def _cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in _project_edges(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in MODULES:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles_among_project_modules():
    assert _cycles() == []


def test_cycle_detection_finds_a_cycle(monkeypatch):
    """The check above can fail: a planted edge back from skbmodel.links.state to skbmodel.cli is a cycle."""
    monkeypatch.setitem(IMPORTS, "skbmodel.links.state", IMPORTS["skbmodel.links.state"] | {"skbmodel.cli"})
    assert any({"skbmodel.cli", "skbmodel.links.state"} <= set(c) for c in _cycles())


def test_importing_the_model_cli_loads_no_view_library():
    code = ("import sys, skbmodel.cli, skbmodel.model, skbmodel.evidence.userfit; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'skbview', 'streamlit', 'plotly', 'kaleido'}))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


def test_the_command_line_loads_plotly_for_an_export_alone():
    """``python -m skbmodel`` (with its export subcommand) answers ``eval`` and ``link`` without Plotly,
    Streamlit or kaleido, and without pandas (the evidence wing reads tables; a question reads none): they
    cost a cold start and draw nothing there."""
    code = ("import sys, runpy; sys.argv = ['skbmodel'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('skbmodel', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "heavy = {m.split('.')[0] for m in sys.modules} & {'streamlit', 'plotly', 'kaleido', 'pandas'}\n"
            "print(sorted(heavy), file=sys.stderr)")
    for args in (["eval", "page=veth"], ["link", "page=cpumap&place=other_socket&cpu=epyc-9684x"]):
        r = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, check=True)
        assert r.stderr.strip().splitlines()[-1] == "[]", (args, r.stderr[-300:])


def test_one_page_registry():
    """Every page of the registry has its figure builders, and nothing else does."""
    from skbmodel.links import pages, state as sk_state, versions
    from skbview import charts
    assert tuple(charts.PAGE_CHARTS) == pages.SLUGS == sk_state.PAGES
    assert set(versions.HEADLINES) <= set(pages.SLUGS)


def test_the_schema_is_at_the_bottom_of_the_model():
    """The inputs (``params``, the Design stages included) and the outputs (``schema``) import no composer,
    no model and no codec: every other module reads them, they read none of those."""
    assert not {m for m in IMPORTS["skbmodel.schema"] if m.startswith("skbmodel")}
    above = {"skbmodel.composer", "skbmodel.model", "skbmodel.links.state", "skbmodel.links.versions",
             "skbmodel.scenario"}
    assert not IMPORTS["skbmodel.params"] & above, IMPORTS["skbmodel.params"] & above


#: skbmodel's wings, and what each may import besides itself.  The flat core (the inputs, outputs, composer,
#: propagation and answers) and the programs on top (cli, bench, mailtext) import the wings; a wing reads
#: the core only where it lists it.
WINGS = {
    # the kernel's subsystems: leaves, arrays in and out, labelled by the output schema only
    "physics": {"schema"},
    # profiles, their kernel configuration and era, the machine descriptions and the user's CPU: files read,
    # nothing evaluated (the derivation from a description reads the corpus: it is evidence,
    # evidence/derivation/derive.py)
    "machine": {"folders"},
    # the address of a scenario: a link names profiles and the headline it was made with; it computes no number
    # (the headline is the answer's, skbmodel.provenance)
    "links": {"machine", "params", "folders", "schema"},
    # measurements, fits and protocols: read everything below the answers
    "evidence": {"physics", "machine", "links", "params", "folders", "schema", "model", "uncertainty"},
}
CORE = {"schema", "params", "folders", "composer", "model", "constant_sets", "uncertainty", "interval_rules",
        "scenario", "question", "answers", "provenance", "attribution", "grid"}
PROGRAMS = {"cli", "bench", "mailtext", "plaintext", "patchin", "patchmail", "patchcode", "patchnumbers", "perfin",
            "__main__"}


def _room(mod: str) -> str | None:
    """The wing or the flat core module a ``skbmodel`` module lives in (``None`` for a package file)."""
    parts = mod.split(".")
    if parts[0] != "skbmodel" or len(parts) < 2:
        return None
    if parts[1] in WINGS:
        return parts[1] if len(parts) > 2 else None
    return parts[1]


def test_every_model_module_is_in_a_wing_the_core_or_a_program():
    rooms = {_room(m) for m in MODULES if m.startswith("skbmodel.")} - {None}
    assert rooms <= set(WINGS) | CORE | PROGRAMS, rooms - set(WINGS) - CORE - PROGRAMS
    assert set(WINGS) <= rooms
    for wing in WINGS:
        assert (ROOT / "skbmodel" / wing / "__init__.py").read_text(encoding="utf-8").startswith('"""')


def test_each_wing_imports_only_what_it_lists():
    for mod in MODULES:
        room = _room(mod)
        if room not in WINGS:
            continue
        reached = {_room(m) for m in _project_edges(mod)} - {None, room}
        assert reached <= WINGS[room], (mod, reached - WINGS[room])


def test_no_wing_imports_the_answers_or_a_program():
    for mod in MODULES:
        if _room(mod) in WINGS:
            assert not {_room(m) for m in _project_edges(mod)} & (PROGRAMS | {"answers", "question", "scenario",
                                                                              "attribution"}), mod


def test_every_out_of_sample_protocol_has_the_one_shape():
    """Each module of ``skbmodel/evidence/protocols/`` (but the shared ``base``) is one protocol of the registry,
    with a name, a title, ``run``, ``format`` and ``add_arguments``: the CLI and the combined report iterate the
    registry and know no protocol by name."""
    from skbmodel.evidence import protocols
    files = {p.stem for p in (ROOT / "skbmodel" / "evidence" / "protocols").glob("*.py")} - {"__init__", "base"}
    assert {p.__name__.rsplit(".", 1)[1] for p in protocols.PROTOCOLS} == files
    assert len(protocols.BY_NAME) == len(protocols.PROTOCOLS)
    for p in protocols.PROTOCOLS:
        assert isinstance(p.NAME, str) and isinstance(p.TITLE, str), p.__name__
        assert all(callable(getattr(p, f)) for f in ("run", "format", "add_arguments")), p.__name__
    for mod in ("skbmodel.cli", "skbmodel.evidence.outofsample"):
        assert not {m for m in IMPORTS[mod] if m.startswith("skbmodel.evidence.protocols.")} - {
            "skbmodel.evidence.protocols.base"}, mod


def test_the_link_state_module_has_one_name():
    """Imported as ``sk_state`` everywhere (pages keep ``st`` for Streamlit and ``state`` for the dict it holds)."""
    names = set()
    for path in [*MODULES.values(), *sorted((ROOT / "tests").glob("*.py")), *sorted((ROOT / "scripts").glob("*.py")),
                 *sorted((ROOT / "benchmarks").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if (node.module or "").endswith("links") or (node.module is None and path.parent.name == "links"):
                names |= {(a.asname or a.name, path.name) for a in node.names if a.name == "state"}
    assert {n for n, _ in names} == {"sk_state"}, sorted(names)


def _longest_chain(start: str, memo: dict) -> tuple[str, ...]:
    if start not in memo:
        best = (start,)
        for w in _project_edges(start):
            if w.startswith("skbmodel"):
                c = (start, *_longest_chain(w, memo))
                best = c if len(c) > len(best) else best
        memo[start] = best
    return memo[start]


def test_the_longest_import_chain_of_the_model_has_at_most_12_modules():
    """Counted per file (a package's ``__init__`` only where a name of it is imported): a newcomer reading
    from the program down reads at most 12 modules to reach the bottom."""
    memo: dict = {}
    longest = max((_longest_chain(m, memo) for m in MODULES if m.startswith("skbmodel")), key=len)
    assert len(longest) <= 12, " -> ".join(longest)


def test_the_chain_measure_sees_a_long_chain(monkeypatch):
    fake = {f"skbmodel.m{i}": {f"skbmodel.m{i + 1}"} for i in range(13)}
    monkeypatch.setattr(sys.modules[__name__], "IMPORTS", {**IMPORTS, **fake, "skbmodel.m13": set()})
    monkeypatch.setattr(sys.modules[__name__], "MODULES", {**MODULES, **{m: None for m in [*fake, "skbmodel.m13"]}})
    assert len(_longest_chain("skbmodel.m0", {})) == 14


def _floors() -> dict[str, int]:
    """The house as drawn: each room (a wing, a core module or a program, :func:`_room`) on the floor above the
    highest room it imports (floor 1: rooms that import no other room)."""
    edges: dict[str, set[str]] = {}
    for mod in MODULES:
        if (room := _room(mod)) is not None:
            edges.setdefault(room, set()).update({_room(m) for m in _project_edges(mod)} - {None, room})
    floors: dict[str, int] = {}

    def floor(room: str, seen: tuple[str, ...] = ()) -> int:
        assert room not in seen, "rooms import each other in a cycle: " + " -> ".join((*seen, room))
        if room not in floors:
            floors[room] = 1 + max((floor(r, (*seen, room)) for r in edges[room]), default=0)
        return floors[room]
    for room in edges:
        floor(room)
    return floors


def drawing(floors: dict[str, int]) -> str:
    """The floors from the top, each with its rooms (what docs/development.md shows)."""
    top = max(floors.values())
    return "\n".join(f"{f:2d}  " + " ".join(sorted(r for r, g in floors.items() if g == f)) for f in range(top, 0, -1))


def test_the_house_has_at_most_12_floors():
    """Rooms stacked by their imports: a newcomer climbing from the programs to the physics passes at most 12."""
    floors = _floors()
    assert max(floors.values()) <= 12, "\n" + drawing(floors)
    assert floors["physics"] == floors["schema"] == 1  # the kernel's subsystems and the outputs are the ground


def test_no_module_has_more_than_800_lines():
    """A room a newcomer can read: a module that grows past 800 lines holds more than one job."""
    long = {name: n for name, path in MODULES.items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 800}
    assert long == {}


def _b_prefix_uses(path: Path) -> int:
    """How often a module spells scenario B's key prefix: the name ``B_PREFIX``, or a text that is ``b_``
    followed by a scenario key (``"b_cpu"``, ``f"b_{k}"``)."""
    from skbmodel.params import MODEL_PARAMS
    keys = {p.key for p in MODEL_PARAMS} | {"prof", "pv"}
    n = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name) and node.id == "B_PREFIX" or \
                isinstance(node, ast.Attribute) and node.attr == "B_PREFIX":
            n += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("b_"):
            n += node.value == "b_" or node.value[2:] in keys  # an f-string's head is a constant too
    return n


def test_scenario_b_s_key_prefix_lives_in_the_link_codec_alone():
    """B's meaning is A plus overrides; how a link spells an override is the codec's business: every other
    module asks ``key_of``/``side_of`` or works on the overrides without the prefix."""
    users = {name for name, path in MODULES.items() if _b_prefix_uses(path)}
    assert users <= {"skbmodel.links.keys", "skbmodel.links.state"}, sorted(users)


def test_the_prefix_check_sees_a_spelled_key(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('x = {"b_cpu": 1}\ny = f"b_{k}"\nz = "b_add"\n')
    assert _b_prefix_uses(f) == 2


#: Where a link's flat keys are read as a scenario (``links.state.scenario`` / ``links.state.profile_for``, the flat
#: resolver): the codec itself and the question, which resolves a state once; every other module reads the
#: scenarios of a question (:meth:`skbmodel.question.Question.scenario`, :func:`skbmodel.question.scenario_of`).
FLAT_RESOLVER = ("scenario", "profile_for")
FLAT_RESOLVER_OK = ("skbmodel.links.", "skbmodel.question")


def _flat_resolver_calls(path: Path) -> int:
    """Calls of the flat resolver in a module: ``sk_state.scenario(...)`` (the codec's one name, checked above)
    or a name imported from ``skbmodel.links.state``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    direct = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
              and (node.module or "").endswith("links.state") for a in node.names if a.name in FLAT_RESOLVER}
    n = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        n += (isinstance(f, ast.Attribute) and f.attr in FLAT_RESOLVER and isinstance(f.value, ast.Name)
              and f.value.id == "sk_state") or (isinstance(f, ast.Name) and f.id in direct)
    return n


def test_only_the_codec_and_the_question_read_a_scenario_from_flat_keys():
    """Every surface renders the question its entry point asked: none resolves a state's scenarios itself."""
    users = {name: n for name, path in MODULES.items()
             if not name.startswith(FLAT_RESOLVER_OK) and (n := _flat_resolver_calls(path))}
    assert users == {}, users


def test_the_flat_resolver_check_sees_a_call(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from skbmodel.links import state as sk_state\nfrom skbmodel.links.state import profile_for as pf\n"
                 "a = sk_state.scenario(s, 'b')\nb = pf(s)\nc = sk_state.key_of('x', 'b')\n")
    assert _flat_resolver_calls(f) == 2


def test_the_links_compute_no_number():
    """A link names a scenario and the headline it was made with; what that headline is, is the answer's."""
    for mod in MODULES:
        if mod.startswith("skbmodel.links."):
            assert not IMPORTS[mod] & {"skbmodel.model", "skbmodel.uncertainty", "skbmodel.answers"}, mod


#: The entry points that ask a state's question (``Question.of_state``, ``answers.of_state``): the page's start,
#: ``eval``, ``patch``, the report and ``export``.  The answer engine and the question ask it of a state they
#: are given (a link's headline, another page's question of the same state); every other module renders the
#: question it is handed.
ASKS_THE_QUESTION = {"skbview.app.appstate", "skbmodel.cli", "skbmodel.patchin", "skbview.report",
                     "skbmodel.answers", "skbmodel.question"}


def _question_lookups(path: Path) -> int:
    return sum(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "of_state"
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def test_the_question_is_asked_at_the_entry_points():
    """A surface takes the question its entry point asked; the plain-text block (``skbmodel.mailtext``, shared
    by ``eval --text`` and the sidebar) still asks its own, once."""
    others = {name: n for name, path in MODULES.items()
              if name not in ASKS_THE_QUESTION and (n := _question_lookups(path))}
    assert set(others) <= {"skbmodel.mailtext"} and sum(others.values()) <= 1, others
