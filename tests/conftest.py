"""Shared fixtures: the real NTREX-128 data checked in under ``tests/data/ntrex128``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from data_paths import NTREX
from mt_eval.metrics.embeddings import CACHE_ENV
from store_fixtures import cards, db_url, postgres_url  # noqa: F401  (one PostgreSQL server and card set per session)

# run and score embed for semantic_score by default: every test's command reads and writes one vector cache (the
# default, .mt-eval-cache/ in each test's own directory, would be cold every time), so a text that any test
# embedded is never embedded again. tests/semantic measure what is computed with caches of their own.
os.environ.setdefault(CACHE_ENV, str(Path(__file__).resolve().parents[1] / ".mt-eval-cache" / "test-embeddings.sqlite"))


@pytest.fixture(scope="session")
def ntrex_dir() -> Path:
    """The NTREX-128 folder; the data ships with the repository, so it is never skipped."""
    return NTREX


def read_lines(path: Path, n: int | None = None) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines[:n] if n else lines
