"""The page's live control: the chart, its marker and notes and the metric row follow the thumb in the browser.

``st.slider`` sends its value when the thumb is released, and a rerun of the page takes a few hundred ms,
so the chart jumps once after a drag.  The live control (an ``st.components.v2`` element, ``live_control/``)
is an ``<input type=range>`` whose ``input`` events apply a precomputed per-value patch to the charts and
metrics the page drew (``Plotly.update`` on the page's own chart with the page's own plotly.js, the one
Streamlit drew it with; should the page expose none, the copy inside the installed ``plotly`` package,
served from its folder with no network) and whose ``change`` event, at release, sends the value to
Python once.  From there the value is the parameter's, exactly as if the
sidebar slider had moved: :func:`appstate.set_value` and a full rerun, so the sidebar shows it and the
session state, URL, share link, text block and exports follow as always.

The payload (:func:`payload`) comes from one vectorised evaluation of the control's whole range
(:func:`evaluate_sweep`): the metric row of every value (the page's own ``headline``) and the patches of
the page's live charts (``skbview.charts.LIVE_CONTROLS``), compactly encoded (:class:`Columns`).
It goes to the browser once per scenario: with the first render of a scenario or of a page (a page switch
mounts the control afresh, :func:`appstate.begin_page`), and again when a control mounted afresh on the same
page asks for it.  It is never cached or hashed by Streamlit.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import re
from collections.abc import Callable, Mapping

import numpy as np
import streamlit as st
import streamlit.components.v1 as components

from skbmodel.links import state as sk_state
from skbmodel import answers, uncertainty
from skbmodel.question import Question
from skbview import charts
from skbview.app import appstate
from skbview.charts.live import Sweep

_HERE = os.path.dirname(os.path.abspath(__file__))


def _asset(name: str) -> str:
    with open(os.path.join(_HERE, "live_control", name), encoding="utf-8") as f:
        return f.read()


# drawn in the page itself: a frame of its own would be loaded anew on every page switch
_CONTROL = st.components.v2.component("skbmodel_live_control", html=_asset("control.html"),
                                      css=_asset("control.css"), js=_asset("live.js"))
# The folder of the installed plotly.js (plotly/package_data/plotly.min.js), served by Streamlit as a
# (v1) component's folder: the control loads it from there only when the page has no window.Plotly of its own.
# (found, not imported: the figures stay in skbview.charts)
_PLOTLY_JS = components.declare_component(
    "plotly_js", path=os.path.join(importlib.util.find_spec("plotly").submodule_search_locations[0], "package_data"))
SENT = appstate.LIVE_SENT  # {control key: {"sid": the scenario id of the payload last sent}}
METRICS_KEY = "headline"  # container of the metric row (ui.metrics): the control rewrites its texts


def control_key(slug: str, key: str | None = None) -> str:
    return f"live_{slug}" if key is None else f"live_{slug}_{key}"


def spec(slug: str, key: str | None = None) -> tuple:
    """``(parameter, choice swept along or None, {chart: patch function})`` of the page's live control (of
    ``key``, one of the Design page's stage sizes)."""
    if key is not None:
        keys, patches = charts.LIVE_DESIGN
        assert slug == "design" and key in keys, (slug, key)
        return key, None, patches
    return charts.LIVE_CONTROLS[slug]


#: B's cost, and the paired B − A of it, in the Design page's sweep (:func:`skbmodel.answers.design_sweep`)
B_COST, AB_DELTA = answers.B_COST, answers.AB_DELTA


def evaluate_sweep(params: Mapping, profile, outputs) -> tuple[dict, dict]:
    """The one vectorised evaluation the payload is built from: ``(values, intervals)`` of ``outputs``
    over the parameter arrays in ``params`` (:func:`skbmodel.uncertainty.evaluate_with_intervals`)."""
    return uncertainty.evaluate_with_intervals(params, profile, outputs)


def values_of(key: str) -> np.ndarray:
    """Every value the parameter's slider can take, in order."""
    p = sk_state.PARAMS[key]
    step = p.step or 1
    n = int(round((p.hi - p.lo) / step)) + 1
    if p.kind == "int":
        return int(p.lo) + int(step) * np.arange(n)
    return np.round(float(p.lo) + float(step) * np.arange(n), 10)


def _along(data: Mapping, keys, row, n: int) -> dict:
    """The sweep's outputs (or intervals) ``keys`` along the control's ``n`` values (the row of the current
    choice when the page also sweeps one)."""
    def column(a):
        a = np.asarray(a, dtype=float)
        if row is not None and a.ndim == 2:
            a = a[row]
        return np.broadcast_to(a, (n,))

    return {k: tuple(column(x) for x in data[k]) if isinstance(data[k], tuple) else column(data[k]) for k in keys}


def _each(x, n: int) -> list:
    """A metric's text for every value: the list it is, or the one text ``n`` times."""
    return x if isinstance(x, list) else [x] * n


class _Reads(Mapping):
    """A mapping that records the keys read from it (which outputs the headline needs)."""

    def __init__(self, data: Mapping):
        self._data, self.read = data, set()

    def __getitem__(self, k):
        self.read.add(k)
        return self._data[k]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


def _read_by(headline: Callable, params: Mapping, out: Mapping, iv: Mapping) -> set:
    o, i = _Reads(out), _Reads(iv)
    headline(params, o, i)
    return o.read | i.read


def _rounded(a, digits: int = 5) -> list:
    """Numbers to ``digits`` significant digits (a chart position: far finer than a pixel), as short JSON."""
    return [float(f"{x:.{digits}g}") for x in np.asarray(a, dtype=float).tolist()]


#: a number in a text: what varies from one value of the control to the next ("−" is the charts' minus)
_NUMBER = re.compile(r"[-+\u2212]?\d(?:[\d,]*\d)?(?:\.\d+)?(?:e[-+]?\d+)?")
#: what a piece common to every text must not end (or start) with: it could cut a number in two
_NUMBER_END = re.compile(r"[-+\u2212]?[\d.,]+$")
_NUMBER_START = re.compile(r"^[\d.,]+")
_SEP, _TIMES = "|", "*"


def _runs(items: list) -> list[tuple]:
    """``[(item, count), ...]``: consecutive equal items once (a curve that flattens repeats its texts)."""
    out = []
    for x in items:
        if out and out[-1][0] == x:
            out[-1][1] += 1
        else:
            out.append([x, 1])
    return out


class Columns:
    """The payload's table of columns (one entry per value of the control), each stored once.

    :meth:`add` returns the index of a column in :attr:`table`: ``{"c": x}`` when every entry is equal;
    numbers as ``{"f": [...]}``, where ``[x, k]`` stands for ``k`` entries ``x`` in a row (or ``{"v": 1}`` /
    ``{"v": "log10"}`` when they are the control's value or its log10); texts as a template
    ``{"t": [piece, piece, ...], "s": [slot, ...]}``: the pieces that are the same for every value, with the
    texts between them per value in each slot: ``1`` when that is the value as the slider shows it, else a
    ``|``-joined string in which ``x*k`` stands for ``k`` entries ``x`` in a row (or, should an entry hold
    ``|`` or ``*``, the list of entries); ``"x": {index: text}`` holds the few texts of another form whole.
    A row of numbers per value (a marker on two curves) is a list of
    column indices.
    """

    def __init__(self, values: np.ndarray):
        self.values = np.asarray(values, dtype=float)
        self._log10 = np.log10(np.maximum(self.values, 1e-300))
        self.shown = [sk_state.fmt_value(v) for v in np.asarray(values).tolist()]
        self.table: list = []
        self._index: dict[str, int] = {}

    def _store(self, enc: dict) -> int:
        k = json.dumps(enc, sort_keys=True, ensure_ascii=False)
        if k not in self._index:
            self._index[k] = len(self.table)
            self.table.append(enc)
        return self._index[k]

    def add(self, col):
        if isinstance(col, np.ndarray) and col.dtype.kind in "fiu":
            if col.ndim > 1:
                return [self.add(np.ascontiguousarray(col[:, j])) for j in range(col.shape[1])]
            return self._store(self._numbers(col))
        return self._store(self._texts(["" if t is None else str(t) for t in col]))

    def _numbers(self, col: np.ndarray) -> dict:
        for name, ref in ((1, self.values), ("log10", self._log10)):
            if abs(col[-1] - ref[-1]) <= 1e-12 * abs(ref[-1]) and np.allclose(col, ref, rtol=1e-12, atol=0):
                return {"v": name}
        runs = _runs(_rounded(col))
        if len(runs) == 1:
            return {"c": runs[0][0]}
        return {"f": [x if k == 1 else [x, k] for x, k in runs]}

    def _texts(self, texts: list[str]) -> dict:
        if len(set(texts)) == 1:
            return {"c": texts[0]}
        enc, same = self._template(texts)
        if same:
            return enc
        # a few texts of another form (a caption that leaves a parameter out at its default) stand apart,
        # whole, under their index: the others may still share one template
        forms = [_NUMBER.sub("#", t) for t in texts]
        common = max(set(forms), key=forms.count)
        odd = [i for i, f in enumerate(forms) if f != common]
        if odd and len(odd) <= len(texts) // 10:
            keep = next(t for t, f in zip(texts, forms) if f == common)
            rest, same = self._template([t if f == common else keep for t, f in zip(texts, forms)])
            if same:
                return {**rest, "x": {str(i): texts[i] for i in odd}}
        return enc

    def _template(self, texts: list[str]) -> tuple[dict, bool]:
        """``(encoding, whether the texts share one template of numbers)``."""
        # the part every text shares at its start and its end (a caption, a label), not cutting a number
        pre = os.path.commonprefix(texts)
        pre = pre[:len(pre) - len(_NUMBER_END.search(pre).group()) if _NUMBER_END.search(pre) else len(pre)]
        rest = [t[len(pre):] for t in texts]
        suf = os.path.commonprefix([t[::-1] for t in rest])[::-1]
        cut = _NUMBER_START.match(suf)
        suf = suf[cut.end():] if cut else suf
        mids = [t[:len(t) - len(suf)] for t in rest]
        # between them: the same pieces around numbers in every text (one regex pass over all), or not
        joined = "\n".join(mids)
        numbers, pieces = _NUMBER.findall(joined), _NUMBER.split(joined)
        first = _NUMBER.split(mids[0])
        n_num = len(first) - 1
        same = (n_num and len(numbers) == n_num * len(mids) and joined.count("\n") == len(mids) - 1
                and all(pieces[i * n_num:(i + 1) * n_num + 1][1:-1] == first[1:-1] for i in range(len(mids)))
                and pieces[0] == first[0] and pieces[-1] == first[-1]
                and all(b == first[-1] + "\n" + first[0] for b in pieces[n_num:-1:n_num]))
        if not same:
            return {"t": [pre, suf], "s": [self._slot(mids)]}, False
        out, slots = [pre + first[0]], []
        for j in range(n_num):
            column = numbers[j::n_num]
            if len(set(column)) == 1:  # the same in every text: part of the piece
                out[-1] += column[0] + first[j + 1]
            else:
                slots.append(self._slot(column))
                out.append(first[j + 1])
        out[-1] += suf
        return {"t": out, "s": slots}, True

    def _slot(self, parts: list[str]):
        if parts == self.shown:
            return 1
        if any(_SEP in x or _TIMES in x for x in parts):
            return parts
        return _SEP.join(x if k == 1 else f"{x}{_TIMES}{k}" for x, k in _runs(parts))


def payload(slug: str, q: Question, headline: Callable, out: Mapping, iv: Mapping, key: str | None = None) -> str:
    """The page's live payload (JSON): metric texts and chart patches for every value of its control.

    ``headline(params, out, iv)`` is the page's metric row (:func:`skbview.app.ui.page_metrics`) of the
    outputs ``out`` and intervals ``iv``: of one value (the current scenario's, from which the outputs it
    reads are learnt), or of every value at once (arrays in, a list of texts per metric out).
    """
    key, across, patches = spec(slug, key)
    scn = q.scenario("a")
    params = dict(scn.params)
    values = values_of(key)
    grid = {**params, key: values}
    across_values = ()
    if across:
        across_values = tuple(sk_state.PARAMS[across].choices)
        grid = {**grid, key: values[None, :], across: np.array(across_values)[:, None]}
    read = _read_by(headline, params, out, iv)
    wanted = set(read)
    for fn in patches.values():
        wanted |= set(fn.outputs)
    if slug == "design":
        vout, viv = answers.design_sweep(q.on_page("design"), key, values, [o for o in wanted if ":" not in o])
    else:
        vout, viv = evaluate_sweep(grid, scn.profile, sorted(wanted))
    sweep = Sweep(key, values, vout, viv, q, across, across_values)
    row = across_values.index(params[across]) if across else None
    cols = Columns(values)
    n = len(values)
    items = headline(params, _along(vout, read & set(vout), row, n), _along(viv, read & set(viv), row, n))
    metrics = [{"label": cols.add(_each(it[0], n)), "value": cols.add(_each(it[1], n)),
                "delta": cols.add(_each(it[3] if len(it) > 3 else None, n))} for it in items]
    chart_patches = {}
    for name, fn in patches.items():
        patch = fn(sweep)
        chart_patches[f"chart_{slug}_{name}"] = {
            "traces": [{"i": t["i"], **{a: cols.add(c) for a, c in t.items() if a != "i"}}
                       for t in patch.get("traces", ())],
            "annotations": [{"name": a["name"], **{k: cols.add(c) for k, c in a.items() if k != "name"}}
                            for a in patch.get("annotations", ())],
            "layout": {k: cols.add(c) for k, c in patch.get("layout", {}).items()}}
    body = {"n": len(values), "metrics_key": METRICS_KEY, "metrics": metrics, "charts": chart_patches,
            "columns": cols.table}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def scenario_id(slug: str, q: Question, key: str) -> str:
    """Names what the payload is built from apart from the control's own value (the page, scenario A's
    parameters and profile version): a new id means a new payload; the open tab or a link's headline do not."""
    rest = {k: v for k, v in q.scenario("a").params.items() if k != key}
    what = [slug, rest, sk_state.b_overrides(q), q.get("pv")]
    return hashlib.blake2b(json.dumps(what, sort_keys=True, default=str).encode(), digest_size=8).hexdigest()


def _released(key: str, ckey: str) -> None:
    """``on_commit_change`` of the control: the value at release becomes the parameter's."""
    msg = (st.session_state.get(ckey) or {}).get("commit") or {}
    if "value" not in msg:
        return
    p = sk_state.PARAMS[key]
    value = int(msg["value"]) if p.kind == "int" else float(msg["value"])
    appstate.set_value(key, min(max(value, p.lo), p.hi))
    st.rerun()  # the whole app: the sidebar's slider of the same parameter shows the value too


def _asked() -> None:
    """``on_want_change`` of the control: nothing to do here, the control's fragment reruns and answers."""


def control(slug: str, q: Question, headline: Callable, out: Mapping, iv: Mapping, key: str | None = None) -> None:
    """Draw the live control of ``slug`` (nothing on a page without one, see ``charts.LIVE_CONTROLS``), or on
    the Design page that of its stage size ``key`` (``charts.LIVE_DESIGN``)."""
    if key is None and slug not in charts.LIVE_CONTROLS:
        return
    key = spec(slug, key)[0]
    p = sk_state.PARAMS[key]
    ckey = control_key(slug, key if slug == "design" else None)
    sid = scenario_id(ckey, q, key)
    ss = st.session_state
    sent = ss.setdefault(SENT, {}).get(ckey) or {}
    asked = (ss.get(ckey) or {}).get("want") == sid  # an event: set in the run it causes only
    body = (payload(slug, q, headline, out, iv, key if slug == "design" else None)
            if asked or sent.get("sid") != sid else None)
    if body is not None:
        ss[SENT][ckey] = {"sid": sid}
    step = p.step or 1
    _CONTROL(data=dict(control=ckey, label=p.label, min=p.lo, max=p.hi, step=step, value=q[key], sid=sid,
                       payload=body, unit=p.unit, plotly=f"component/{_PLOTLY_JS.name}/plotly.min.js"),
             key=ckey, on_commit_change=functools.partial(_released, key, ckey), on_want_change=_asked)
