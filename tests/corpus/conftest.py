"""Fixtures for corpus tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_helpers import shared_data_dir


@pytest.fixture
def ntrex() -> Path:
    """The real NTREX-128 files; skipped (with the reason) where the shared data is absent."""
    data = shared_data_dir()
    if data is None or not (data / "ntrex128" / "newstest2019-src.eng.txt").is_file():
        pytest.skip("shared NTREX-128 data not found at <repo>/../shared/data/ntrex128")
    return data / "ntrex128"
