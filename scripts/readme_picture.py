"""Write the README's picture, ``docs/overview.png``: the Overview's cost breakdown for the defaults, as
its PNG (2×) download gives it (kaleido and Debian's chromium; nothing else to install).

    python scripts/readme_picture.py

The image's bytes depend on the browser build, so no test compares them; rerun it when the Overview's
chart or the defaults change.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skbmodel.links import state as sk_state  # noqa: E402 - after the sys.path line, so the script runs from anywhere
from skbmodel.question import Question  # noqa: E402
from skbview import charts, report  # noqa: E402

OUT = ROOT / "docs" / "overview.png"


def main() -> int:
    fig = charts.figure_for("overview", "breakdown", Question.of_state({**sk_state.defaults(), "page": "overview"}))
    OUT.write_bytes(report.figure_png(fig))
    print(OUT.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
