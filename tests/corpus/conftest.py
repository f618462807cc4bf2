"""Fixtures for corpus tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from data_paths import NTREX


@pytest.fixture
def ntrex() -> Path:
    """The real NTREX-128 files (``tests/data/ntrex128``, in the repository: never skipped)."""
    return NTREX
