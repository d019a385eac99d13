"""Where the package's data live: one module, so that a module can move between the package's folders
without its files moving with it."""
from __future__ import annotations

from pathlib import Path

#: the package's root folder (skbmodel/)
PACKAGE_DIR = Path(__file__).resolve().parent
#: measurements, recorded reports and the machine descriptions (skbmodel/data/)
DATA_DIR = PACKAGE_DIR / "data"
#: the shipped CPU profiles and their archived versions (skbmodel/profiles/)
PROFILE_DIR = PACKAGE_DIR / "profiles"
