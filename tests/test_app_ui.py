"""AppTest of what the user sees around a link and the Design page: a cut link warns with the author's
number; the Design page shows each stage's title once and only the controls its options read; the
Overview says which composition its numbers are."""
from __future__ import annotations

import re
from urllib.parse import parse_qsl

import numpy as np

from skbmodel import answers
from skbmodel import composer, model
from skbmodel.evidence import perfprofile
from skbmodel.links import state as sk_state
from skbview.safe_text import md_escape
from tests.test_app_pages import _app, _navigation_mode  # noqa: F401 - the autouse fixture

BASE = "http://localhost:8501/"


def _texts(at, kind: str) -> list[str]:
    """The texts of the page's elements of ``kind``, markdown escapes removed (user data is escaped)."""
    return [re.sub(r"\\(.)", r"\1", e.value) for e in getattr(at, kind)]


def _cut_link(state: dict, chars: int = 76) -> dict:
    """The query of a share link cut after ``chars`` characters, as a mail client or chat might."""
    cut = (BASE + "?" + answers.share_query(state))[:chars]
    return dict(parse_qsl(cut.split("?", 1)[1], keep_blank_values=True))


def test_a_link_cut_at_76_characters_warns_with_the_author_s_number():
    author = {**sk_state.defaults(), "path": "cpumap", "page": "overview"}
    h = answers.headline_value(author)
    query = _cut_link(author)
    assert "h" in query and "path" not in query  # the headline survived the cut, the parameters did not
    at = _app(query)
    assert not at.exception
    lines = [w for w in _texts(at, "warning") if "appears truncated or edited" in w]
    assert len(lines) == 1
    assert f"the author saw Throughput (Mpps) = {float(query['h']):.4g}" in lines[0]
    assert abs(float(query["h"]) - h) / h < 1e-3  # X is the author's number (cut to its digits)
    shown = model.evaluate(sk_state.scenario(sk_state.defaults()),
                           sk_state.profile_for(sk_state.defaults()))["path.mpps"]
    assert f"its parameters give {float(shown):.4g}" in lines[0]
    # the whole link opens silently: its h is what its parameters give
    full = dict(parse_qsl(sk_state.encode(author)))
    at2 = _app(full)
    assert not [w for w in _texts(at2, "warning") if "truncated" in w]


def test_the_cut_link_s_warning_goes_once_the_reader_changes_the_scenario():
    at = _app(_cut_link({**sk_state.defaults(), "path": "cpumap", "page": "overview"}))
    assert any("appears truncated" in w for w in _texts(at, "warning"))
    at.slider(key="bulk").set_value(32).run()
    assert not any("appears truncated" in w for w in _texts(at, "warning"))


def test_keys_in_use_are_exactly_the_numbers_that_move_the_cost():
    """Changing a design number outside :func:`composer.keys_in_use` never moves the cost; inside it always
    does (recycle ratio 0.5, so that the mixed RX buffer reads its refill bulk)."""
    rng = np.random.default_rng(7)
    moves = (("d_rx_bulk", 7), ("d_skb_bulk", 5), ("d_zero_bytes", 512), ("d_free_bulk", 3), ("d_rest_ns", 900.0),
             ("d_stage_pct", 40.0))
    checked = 0
    for _ in range(250):
        st = {**sk_state.defaults(), "path": "design", "pp_recycle": 0.5,
              "d_from": str(rng.choice(composer.START_PATHS))}
        st.update({k: str(rng.choice(composer.choices_of(k))) for k in composer.STAGE_CHOICES})
        if composer.problems(st):
            continue
        p = sk_state.scenario(st)
        prof = sk_state.profile_for(st)
        base = float(model.evaluate(p, prof)["path.ns_per_packet"])
        used = composer.keys_in_use(p)
        flip = "remote" if composer.resolved(p)["d_free_where"] == "local" else "local"
        for k, v in (*moves, ("d_free_where", flip)):
            moved = float(model.evaluate({**p, k: v}, prof)["path.ns_per_packet"])
            assert (abs(moved - base) > 1e-6) == (k in used), (k, composer.resolved(p))
            checked += 1
    assert checked > 300


def _design(query: dict | None = None):
    at = _app(query)
    at.switch_page("pages/design.py").run()
    assert not at.exception
    return at


def _widget_keys(at) -> set[str]:
    return {w.key for kind in ("selectbox", "slider", "radio", "number_input") for w in getattr(at, kind) if w.key}


def test_design_page_titles_each_stage_once_and_shows_only_the_numbers_its_options_read():
    at = _design()
    labels = [w.label for w in at.selectbox if w.key and w.key.startswith("d_")]
    assert labels == ["Start from", "RX buffer", "skb head", "Zeroing", "Hand-off", "skb free", "Rest of path",
                      "A named stage of it, re-priced"]
    texts = " ".join(m.value for m in at.markdown)
    assert not any(f"**{t}**" in texts for t in labels)  # no title above the control that says it again
    # the rest it takes is described with its named stages, as on the Overview
    captions = " ".join(c.value for c in at.caption)
    assert md_escape(perfprofile.describe_stages("veth")) in captions
    assert "XDP program run 14 %" in captions and "rest, unnamed 13 %" in captions
    d_keys = {k for k in _widget_keys(at) if k.startswith("d_")}
    # from veth, every stage as in the start: no number of a stage option is read
    assert d_keys == {"d_from", *composer.STAGE_CHOICES} - {"d_free_where"}
    assert not any(k.startswith("b_d_") for k in _widget_keys(at))  # B is veth, not a composition
    at.selectbox(key="d_skb").set_value("slab_bulk").run()
    at.selectbox(key="d_free").set_value("slab_one").run()
    keys = _widget_keys(at)
    assert {"d_skb_bulk", "d_free_where"} <= keys and not {"d_free_bulk", "d_rx_bulk", "d_rest_ns"} & keys
    at.radio(key="b_path").set_value("design").run()
    assert {"b_d_from", "b_d_skb"} <= _widget_keys(at)


def test_design_verdict_when_a_and_b_are_the_same_path():
    at = _design({"b_path": "veth", "d_from": "veth"})
    verdict = next(m.value for m in at.markdown if "B − A" in m.value or "same path" in m.value)
    assert "A and B are the same path" in verdict and "1000000" not in verdict and "runs" not in verdict
    at.selectbox(key="d_skb").set_value("slab_one").run()  # a real difference: a verdict and its runs
    verdict = next(m.value for m in at.markdown if "B − A" in m.value)
    assert "Verdict on B − A: " in verdict and "runs per variant" in verdict


def test_overview_names_the_composition_its_numbers_are():
    at = _app({"path": "design", "d_skb": "slab_one", "page": "overview"})
    note = " ".join(_texts(at, "caption"))
    assert f"Composed path (Design page): from {sk_state.PARAMS['path'].label_of('veth')} with skb head: " \
           f"{composer.OPTION_LABELS['slab_one']}" in note
    at = _app({"path": "design", "page": "overview"})  # nothing changed: it says the numbers are the start's
    assert "every stage as in it: the numbers are those of veth XDP_PASS" in " ".join(_texts(at, "caption"))
    at = _app({"path": "cpumap", "page": "overview"})
    assert not any("Composed path" in c for c in _texts(at, "caption"))
