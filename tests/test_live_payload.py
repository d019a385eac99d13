"""The live control's payload (skbview.app.live.payload) decoded as the browser decodes it
(skbview/app/live_control/live.js: ``expand``, ``slotEntries``, ``entry``) gives, at every value tried, the
metric row the page draws at that value (the answers engine's texts) and the marker, legend name and
caption the chart builder draws there."""
from __future__ import annotations

import json

import numpy as np
import pytest

from skbmodel import answers
from skbmodel.question import Question
from skbmodel.links import state as sk_state
from skbview import charts
from skbview.app import live, ui

LIVE = sorted(charts.LIVE_CONTROLS)
#: the payload's numbers carry 5 significant digits (a chart position)
REL = 1e-4


def _expand(items):
    out = []
    for x in items:
        out.extend([x[0]] * x[1] if isinstance(x, list) else [x])
    return out


def _slot(slot):
    if slot == 1:
        return None
    if isinstance(slot, list):
        return slot
    return _expand([[x[:x.rindex("*")], int(x[x.rindex("*") + 1:])] if "*" in x else x for x in slot.split("|")])


def _entry(body, ref, i, value_text: str, value: float):
    if ref is None:
        return None
    if isinstance(ref, list):
        return [_entry(body, r, i, value_text, value) for r in ref]
    col = body["columns"][ref]
    if "c" in col:
        return col["c"]
    if "f" in col:
        return _expand(col["f"])[i]
    if str(i) in col.get("x", {}):
        return col["x"][str(i)]
    if col.get("v") == 1:
        return value
    if col.get("v") == "log10":
        return float(np.log10(value))
    parts = [_slot(s) for s in col["s"]]
    text = col["t"][0]
    for j, p in enumerate(parts):
        text += (value_text if p is None else p[i]) + col["t"][j + 1]
    return text


def _payload(slug: str, state: dict) -> dict:
    res = answers.of_state(state)
    out = {a.output: a.value for a in res.values}
    iv = {a.output: (a.lo, a.hi) for a in res.values}
    return json.loads(live.payload(slug, Question.of_state(state), ui.page_metrics(slug), out, iv))


def _tried(key: str, default):
    vals = live.values_of(key)
    return sorted({vals[0].item(), vals[1].item(), vals[len(vals) // 3].item(), default, vals[-1].item()})


@pytest.mark.parametrize("slug", LIVE)
def test_decoded_payload_is_what_the_page_draws_at_each_value(slug):
    key, _, patches = charts.LIVE_CONTROLS[slug]
    state = {**sk_state.defaults(), "page": slug}
    body = _payload(slug, state)
    values = live.values_of(key).tolist()
    assert body["n"] == len(values)
    for v in _tried(key, state[key]):
        i = values.index(v)
        at = {**state, key: v}
        shown = sk_state.fmt_value(v)
        want = ui.answer_metrics(answers.of_state(at))
        got = [(_entry(body, m["label"], i, shown, v), _entry(body, m["value"], i, shown, v),
                _entry(body, m["delta"], i, shown, v) or None) for m in body["metrics"]]
        assert got == [(w[0], w[1], w[3] if len(w) > 3 else None) for w in want], (slug, v)
        for name, patch in body["charts"].items():
            fig = charts.figure_for(slug, name.removeprefix(f"chart_{slug}_"), Question.of_state(at))
            for t in patch["traces"]:
                trace = fig.data[t["i"]]
                for attr in ("x", "y"):
                    if attr in t:
                        got_xy = np.atleast_1d(np.asarray(_entry(body, t[attr], i, shown, v), dtype=float))
                        np.testing.assert_allclose(got_xy, np.asarray(trace[attr], dtype=float), rtol=REL,
                                                   err_msg=f"{slug} {name} trace {t['i']} {attr} at {v}")
                if "name" in t:
                    assert _entry(body, t["name"], i, shown, v) == trace.name
            notes = {a.name: a for a in fig.layout.annotations if a.name}
            for a in patch["annotations"]:
                if "text" in a:
                    assert _entry(body, a["text"], i, shown, v) == notes[a["name"]].text, (slug, name, a["name"], v)


@pytest.mark.parametrize("slug", LIVE)
def test_payload_is_compact(slug):
    """At most 30 KB of JSON per page before compression (it goes over an uncompressed WebSocket)."""
    body = live.payload(slug, Question.of_state({**sk_state.defaults(), "page": slug}), ui.page_metrics(slug),
                        *_scalars(slug))
    assert len(body.encode()) <= 30_000, (slug, len(body.encode()))


def _scalars(slug):
    res = answers.of_state({**sk_state.defaults(), "page": slug})
    return {a.output: a.value for a in res.values}, {a.output: (a.lo, a.hi) for a in res.values}


def test_texts_of_is_each_answers_text():
    """The vectorised texts (skbmodel.answers.texts_of) are those of each value's own Answer."""
    state = {**sk_state.defaults(), "page": "zeroing"}
    outs = [o for o, _ in answers.BY_SLUG["zeroing"].summary]
    rows = [answers.of_state({**state, "zero_bytes": b}) for b in (8, 184, 1024)]
    vals = {o: np.array([r.value(o).value for r in rows]) for o in outs}
    ivs = {o: (np.array([r.value(o).lo for r in rows]), np.array([r.value(o).hi for r in rows])) for o in outs}
    texts = answers.texts_of(outs, vals, ivs, float(state["noise_ns"]))
    for o in outs:
        assert texts[o]["value"] == [r.value(o).value_text() for r in rows]
        assert texts[o]["interval"] == [r.value(o).interval_text() for r in rows]
        assert (texts[o]["verdict"] or [None] * 3) == [r.value(o).verdict for r in rows]


#: compositions that use each of the Design page's stage sizes in bulk
DESIGN_CASES = (("d_skb_bulk", {"d_skb": "slab_bulk"}),
                ("d_free_bulk", {"d_from": "cpumap", "d_free": "slab_bulk"}),
                ("d_rx_bulk", {"d_from": "cpumap", "d_rx": "page_bulk", "b_path": "design"}))


def _design_row(state: dict) -> list:
    """The Design page's metric row at ``state``, as the page draws it (ui.design_live)."""
    res = answers.of_state(state)
    o = "path.ns_per_packet"
    out = {a.output: a.value for a in res.values}
    iv = {a.output: (a.lo, a.hi) for a in res.values}
    b = next(v for v in res.b_values if v.output == o)
    d = next(v for v in res.differences if v.output == o)
    out[live.B_COST], iv[live.B_COST] = b.value, (b.lo, b.hi)
    out[live.AB_DELTA], iv[live.AB_DELTA] = d.value, (d.lo, d.hi)
    q = Question.of_state(state)
    return out, iv, ui.design_metrics(q)(q.compare_a.params, out, iv)


@pytest.mark.parametrize("key,composition", DESIGN_CASES)
def test_design_payload_is_what_the_page_draws_at_each_value(key, composition):
    state = {**sk_state.defaults(), "page": "design", **composition}
    assert not answers.of_state(state).problem
    out, iv, _ = _design_row(state)
    q = Question.of_state(state)
    raw = live.payload("design", q, ui.design_metrics(q), out, iv, key)
    assert len(raw.encode()) <= 30_000
    body = json.loads(raw)
    values = live.values_of(key).tolist()
    for v in sorted({1, 2, 16, 64, 100, 256} - {0}):
        i = values.index(v)
        at = {**state, key: v}
        want = _design_row(at)[2]
        got = [(_entry(body, m["label"], i, str(v), v), _entry(body, m["value"], i, str(v), v),
                _entry(body, m["delta"], i, str(v), v) or None) for m in body["metrics"]]
        assert got == [(w[0], w[1], w[3] if len(w) > 3 else None) for w in want], (key, v)
        fig = charts.figure_for("design", "breakdown", Question.of_state(at))
        patch = body["charts"]["chart_design_breakdown"]
        for t in patch["traces"]:
            np.testing.assert_allclose(np.asarray(_entry(body, t["y"], i, str(v), v), dtype=float),
                                       np.asarray(fig.data[t["i"]].y, dtype=float), rtol=REL)
        notes = {a.name: a for a in fig.layout.annotations if a.name}
        for a in patch["annotations"]:
            if "text" in a:
                assert _entry(body, a["text"], i, str(v), v) == notes[a["name"]].text, (key, v, a["name"])
        assert _entry(body, patch["layout"]["title.text"], i, str(v), v) == fig.layout.title.text
