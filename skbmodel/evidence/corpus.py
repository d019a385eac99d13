"""Public measurement corpus: published micro-benchmark numbers for the SKB memory path.

The corpus is a CSV shipped in ``skbmodel/data/public-measurements.csv``.  Each
row is one number as published (cycles, ns, Mpps, ...) with the CPU, kernel,
conditions, the public source it was read from and how it was checked.  Rows
that share a ``series`` form one curve: one CPU, one kernel/design and one
test, with one input (``x_name``) varied.

Only the standard library, numpy and pandas are used.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from .. import folders

CORPUS_CSV = folders.DATA_DIR / "public-measurements.csv"

COLUMNS = (
    "id", "series", "subsystem", "output", "x_name", "x_value", "value", "unit",
    "cpu", "ghz", "kernel", "conditions", "source", "verified",
)

SUBSYSTEMS = frozenset({
    "slub", "zeroing", "page_pool", "page_alloc", "cpumap", "veth",
    "napi_cache", "kfree_skb_list", "other",
})


class CorpusError(ValueError):
    """A corpus CSV that breaks one of the rules; the message is one line."""


def _blank(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or str(v).strip() == ""


def load_corpus(path=None) -> pd.DataFrame:
    """
    Read and validate the public measurement corpus.

    Parameters
    ----------
    path : str or path-like, optional
        CSV to read. Default is the corpus shipped with the package
        (``skbmodel/data/public-measurements.csv``).

    Returns
    -------
    df : pandas.DataFrame
        One row per published number, columns in :data:`COLUMNS` order.
        ``value`` and ``ghz`` are float, ``x_value`` is float (NaN for
        single points), every other column is str.

    Raises
    ------
    CorpusError
        If a required column is missing, an ``id`` is empty or repeated, a row
        has no ``source`` or ``verified``, ``value`` is not a finite positive
        number, or ``subsystem`` is unknown.  The message is one line naming
        the row id and the problem, e.g. ``row slub-x-3: no source``.
    """
    path = CORPUS_CSV if path is None else Path(path)
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise CorpusError(f"{path.name}: missing columns {', '.join(missing)}")
    df = df[list(COLUMNS)].copy()

    seen = set()
    values, xs, ghzs = [], [], []
    for i, r in enumerate(df.itertuples(index=False), start=2):
        rid = r.id.strip()
        if not rid:
            raise CorpusError(f"line {i}: empty id")
        if rid in seen:
            raise CorpusError(f"row {rid}: duplicate id")
        seen.add(rid)
        if _blank(r.source):
            raise CorpusError(f"row {rid}: no source")
        if _blank(r.verified):
            raise CorpusError(f"row {rid}: no verified note")
        if r.subsystem not in SUBSYSTEMS:
            raise CorpusError(f"row {rid}: unknown subsystem {r.subsystem!r}")
        if _blank(r.series):
            raise CorpusError(f"row {rid}: no series")
        try:
            v = float(r.value)
        except ValueError:
            raise CorpusError(f"row {rid}: value {r.value!r} is not a number") from None
        if not math.isfinite(v) or v <= 0:
            raise CorpusError(f"row {rid}: value {r.value!r} is not finite and positive")
        values.append(v)
        try:
            xs.append(float(r.x_value) if not _blank(r.x_value) else math.nan)
        except ValueError:
            raise CorpusError(f"row {rid}: x_value {r.x_value!r} is not a number") from None
        try:
            ghzs.append(float(r.ghz) if not _blank(r.ghz) else math.nan)
        except ValueError:
            raise CorpusError(f"row {rid}: ghz {r.ghz!r} is not a number") from None
    df["value"] = values
    df["x_value"] = xs
    df["ghz"] = ghzs
    return df


def series(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """
    One curve of the corpus.

    Parameters
    ----------
    df : pandas.DataFrame
        As returned by :func:`load_corpus`.
    name : str
        A value of the ``series`` column.

    Returns
    -------
    curve : pandas.DataFrame
        The rows of that series sorted by ``x_value`` (index reset).

    Raises
    ------
    KeyError
        If no row has that series name.
    """
    out = df[df["series"] == name]
    if out.empty:
        raise KeyError(f"no series {name!r}")
    return out.sort_values("x_value", kind="stable").reset_index(drop=True)


def curves(df: pd.DataFrame, subsystem=None, output=None, min_points: int = 4) -> list:
    """
    Names of the series that are curves (at least ``min_points`` points).

    Parameters
    ----------
    df : pandas.DataFrame
        As returned by :func:`load_corpus`.
    subsystem : str, optional
        Keep only series of this subsystem.
    output : str, optional
        Keep only series of this model output (e.g. ``"slub.bulk_cycles"``).
    min_points : int, default 4
        Smallest number of rows a series needs to count as a curve.

    Returns
    -------
    names : list of str
        Sorted series names.
    """
    sel = df
    if subsystem is not None:
        sel = sel[sel["subsystem"] == subsystem]
    if output is not None:
        sel = sel[sel["output"] == output]
    counts = sel.groupby("series").size()
    return sorted(counts[counts >= min_points].index)
