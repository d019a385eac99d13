"""What of a chart changes with the page's live control, for every value of it at once.

A live chart (``LIVE_CHARTS`` in :mod:`skbview.charts`) has, next to its builder, a patch function
``fn(sweep) -> patch`` that reads the one vectorised evaluation of the control's range (:class:`Sweep`)
and returns, per value of the control, the properties of the figure that move with it: the marker of the
current setting, the delta note, the caption.  The browser applies the patch of the value under the thumb
to the figure the page drew (``Plotly.update``); everything else of the figure stays as built.

A patch is ``{"traces": [{"i": trace index, attr: column, ...}], "annotations": [{"name": annotation
name, attr: column, ...}]}`` where a column holds one entry per value of the control (numbers, rows of
numbers or texts).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from skbmodel.links import state as sk_state

from .base import _wrap, caption, delta_text


@dataclasses.dataclass(frozen=True)
class Sweep:
    """The control's values and the scenario's outputs at each of them.

    ``values``: the control's values, shape ``(n,)``; ``out``/``iv``: outputs and their 90 % intervals
    over the grid (``(n,)``, or ``(m, n)`` when the page also sweeps a choice ``across``, one row per
    choice of ``across_values``); ``state``: the question at the control's current value
    (:class:`skbmodel.question.Question`, read as its state).
    """

    key: str
    values: np.ndarray
    out: Mapping
    iv: Mapping
    state: Mapping
    across: str | None = None
    across_values: tuple = ()

    def row(self, name: str, choice=None) -> np.ndarray:
        """Output ``name`` over the control's values (the row of ``choice`` of ``across``)."""
        a = np.asarray(self.out[name], dtype=float)
        if self.across is None:
            return np.broadcast_to(a, self.values.shape)
        i = self.across_values.index(self.state[self.across] if choice is None else choice)
        return np.broadcast_to(a, (len(self.across_values), *self.values.shape))[i]

    def texts(self, fmt) -> list[str]:
        """``fmt(value)`` for each of the control's values."""
        return [fmt(v) for v in self.values.tolist()]


def live_marker(sweep: Sweep, ys, name, x=None, index: int = 0) -> dict:
    """The current-setting trace (:func:`~skbview.charts.base.current_trace`, trace ``index``): at ``x``
    (default: the value) on each of the rows ``ys``, named ``name(value)``."""
    ys = np.stack([np.asarray(y, dtype=float) for y in ys], axis=-1)
    xs = np.asarray(sweep.values if x is None else x, dtype=float)
    return {"i": index, "x": np.broadcast_to(xs[:, None], ys.shape), "y": ys, "name": sweep.texts(name)}


def live_delta(sweep: Sweep, x, y_from, y_to, label: str, unit: str, digits: int = 3, where=None) -> list[dict]:
    """The arrow and the box of :func:`~skbview.charts.base.delta_note` at each value."""
    x, y0, y1 = (np.broadcast_to(np.asarray(a, dtype=float), sweep.values.shape) for a in (x, y_from, y_to))
    wheres = sweep.texts(where) if where else [""] * len(x)
    text = [delta_text(a, b, label, unit, digits, w) for a, b, w in zip(y0.tolist(), y1.tolist(), wheres)]
    return [{"name": "delta_arrow", "x": x, "ax": x, "y": y1, "ay": y0}, {"name": "delta", "text": text}]


def live_caption(sweep: Sweep, keys=(), width: int = 115) -> dict:
    """The caption (:func:`~skbview.charts.base.caption`, wrapped as :func:`~skbview.charts.base.finish`
    does) at each value: the control's part of the current caption replaced."""
    cap = caption(sweep.state, keys)
    now = f"{sweep.key}={sk_state.fmt_value(sweep.state[sweep.key])}"
    parts = cap.split(" · ")
    at = parts.index(now) if now in parts else None
    shown = sweep.texts(sk_state.fmt_value)
    if at is None:
        return {"name": "caption", "text": [_wrap(cap, width)] * len(shown)}
    # where the lines break depends on the value's length only (it holds no space): wrapped once per length
    wrapped = {}
    for v in shown:
        if len(v) not in wrapped:
            parts[at] = f"{sweep.key}={_HOLE * len(v)}"
            wrapped[len(v)] = _wrap(" · ".join(parts), width).split(_HOLE * len(v))
    return {"name": "caption", "text": [v.join(wrapped[len(v)]) for v in shown]}


_HOLE = "\x00"  # stands for the value's characters while the caption is wrapped
