"""Shared fixtures: the real NTREX-128 data checked in under ``tests/data/ntrex128``."""

from __future__ import annotations

from pathlib import Path

import pytest

from data_paths import NTREX
from store_fixtures import cards, db_url, postgres_url  # noqa: F401  (one PostgreSQL server and card set per session)


@pytest.fixture(scope="session")
def ntrex_dir() -> Path:
    """The NTREX-128 folder; the data ships with the repository, so it is never skipped."""
    return NTREX


def read_lines(path: Path, n: int | None = None) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines[:n] if n else lines
