"""Shared fixtures for the QA tests: the real XQuAD data; the fake OpenAI server made importable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from shared_paths import SHARED_DATA  # tests/shared_paths.py: <repo>/../shared

# The fake OpenAI server lives with the provider tests (tests/providers/fake_openai.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))

XQUAD = SHARED_DATA / "xquad"


@pytest.fixture(scope="session")
def xquad_dir() -> Path:
    """The read-only XQuAD checkout next to the repository (``<repo>/../shared/data/xquad``)."""
    if not (XQUAD / "xquad.en.json").is_file():
        pytest.skip(f"XQuAD data not found at {XQUAD}")
    return XQUAD
