"""The local upstream server and an isolated data cache for every catalogue test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from catalog_upstream import TOKEN, Upstream, default_files, serve

from mt_eval.catalog import Cache, FetchOptions


@pytest.fixture(scope="session")
def upstream_files() -> dict[str, bytes]:
    return default_files()


@pytest.fixture
def upstream(upstream_files: dict[str, bytes]) -> Iterator[Upstream]:
    with serve(Upstream(files=dict(upstream_files))) as state:
        yield state


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    return Cache(tmp_path / "data")


@pytest.fixture
def options(upstream: Upstream) -> FetchOptions:
    return FetchOptions(mirror=upstream.base, timeout_s=5.0,
                        headers={"huggingface.co": {"Authorization": f"Bearer {TOKEN}"}})


@pytest.fixture
def env(upstream: Upstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment a command reads (``--corpus ID`` anywhere): cache, mirror and token; returns the cache."""
    monkeypatch.setenv("MT_EVAL_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("MT_EVAL_DATA_MIRROR", upstream.base)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.delenv("MT_EVAL_OFFLINE", raising=False)
    return tmp_path / "data"
