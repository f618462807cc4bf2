"""Shared fixtures: the real NTREX-128 data in ``<repo>/../shared/data`` (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared_paths import SHARED_DATA


@pytest.fixture(scope="session")
def ntrex_dir() -> Path:
    path = SHARED_DATA / "ntrex128"
    if not (path / "newstest2019-src.eng.txt").is_file():
        pytest.skip(f"shared NTREX-128 data not found at {path}")
    return path


def read_lines(path: Path, n: int | None = None) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines[:n] if n else lines
