"""Fixtures shared by several test modules."""
import shutil

import pytest

from skbmodel import profile as P, versions as V


@pytest.fixture
def old_e5_version(tmp_path, monkeypatch):
    """The archive plus an older e5-1650v4 version (as if the profile had been recalibrated since):
    ``(version, profile)``."""
    for f in P.ARCHIVE_DIR.glob("*.toml"):
        shutil.copy(f, tmp_path)
    old = P.load_profile("e5-1650v4").with_values({"slub_fast_pair_cycles": 100.0, "veth_base_cycles": 850.0})
    ver = P.profile_version(old)
    (tmp_path / f"e5-1650v4@{ver}.toml").write_text(P.archive_toml(old))
    monkeypatch.setattr(P, "ARCHIVE_DIR", tmp_path)
    P.clear_cache()
    V._value.cache_clear()
    yield ver, old
    monkeypatch.undo()
    P.clear_cache()
    V._value.cache_clear()
