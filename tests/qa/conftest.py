"""Shared fixtures for the QA tests: the real XQuAD data; the fake OpenAI server made importable."""

from __future__ import annotations

from pathlib import Path

import pytest

from data_paths import XQUAD


@pytest.fixture(scope="session")
def xquad_dir() -> Path:
    """XQuAD as checked in under ``tests/data/xquad`` (six languages whole, six sliced)."""
    return XQUAD
