"""Shared fixtures for the QA tests: the real XQuAD data; the fake OpenAI server made importable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from data_paths import XQUAD

# The fake OpenAI server lives with the provider tests (tests/providers/fake_openai.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))


@pytest.fixture(scope="session")
def xquad_dir() -> Path:
    """XQuAD as checked in under ``tests/data/xquad`` (six languages whole, six sliced)."""
    return XQUAD
