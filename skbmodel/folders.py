"""Where the package's data live: one module, so that a module can move between the package's folders
without its files moving with it."""
from __future__ import annotations

from pathlib import Path

#: the package's root folder (skbmodel/)
PACKAGE_DIR = Path(__file__).resolve().parent
#: measurements, recorded reports and the machine descriptions (skbmodel/data/)
DATA_DIR = PACKAGE_DIR / "data"
#: the out-of-sample report (``scripts/validation_report.py`` writes it; a test keeps it current): its
#: structural sds widen the intervals, its in-sample degrees of freedom say which seed rows are evidence
REPORT_JSON = DATA_DIR / "outofsample.json"
#: the shipped CPU profiles and their archived versions (skbmodel/profiles/)
PROFILE_DIR = PACKAGE_DIR / "profiles"
#: the profile a scenario runs on unless it names one: the E5-1650 v4 of the seed threads (its file in PROFILE_DIR)
DEFAULT_PROFILE = "e5-1650v4"


def shipped_profiles() -> list[str]:
    """Ids of the CPU profiles shipped in :data:`PROFILE_DIR` (their file names)."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.toml"))
