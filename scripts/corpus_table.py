"""Print the markdown table of corpus series for docs/corpus.md.

Usage: python scripts/corpus_table.py > /tmp/table.md
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skbmodel.evidence.corpus import load_corpus  # noqa: E402


def short_source(s: str, n: int = 70) -> str:
    s = s.replace("|", "/")
    return s if len(s) <= n else s[: n - 1] + "…"


def main() -> None:
    df = load_corpus()
    print("| series | subsystem | output | points | x range | CPU | kernel | source |")
    print("|---|---|---|---|---|---|---|---|")
    for name, g in df.groupby("series", sort=True):
        xs = g["x_value"].dropna()
        xr = f"{g['x_name'].iloc[0]} {xs.min():g}–{xs.max():g}" if len(xs) else "–"
        r = g.iloc[0]
        print(f"| {name} | {r.subsystem} | {r.output} | {len(g)} | {xr} | {r.cpu} | "
              f"{short_source(r.kernel, 50)} | {short_source(r.source)} |")


if __name__ == "__main__":
    main()
