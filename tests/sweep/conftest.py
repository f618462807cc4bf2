"""Fixtures for the sweep tests: one oracle server and one local sweep per session (sweep_helpers.py)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sweep_helpers import FAST, FakeOpenAI, LocalSweep, Oracle, write_sweep

from mt_eval.cli import app
from store_fixtures import register_corpus


@pytest.fixture(scope="session")
def oracle_server() -> Any:
    """One oracle server for the session (its counts are per test: compare before and after)."""
    oracle = Oracle()
    with FakeOpenAI(responder=oracle) as server:
        server.oracle = oracle  # type: ignore[attr-defined]
        yield server


@pytest.fixture(scope="session")
def local_sweep(tmp_path_factory: pytest.TempPathFactory, oracle_server: Any) -> LocalSweep:
    """The 3 models × 2 temperatures × 2 prompts + Apertium sweep, run once with the local executor
    and published to a SQLite store."""
    tmp = tmp_path_factory.mktemp("local-sweep")
    file = write_sweep(tmp, oracle_server.base_url)
    before = Counter(oracle_server.oracle.asked)
    register_corpus(str(tmp / "store.db"))  # publish rescores each cell's card against the registered corpus
    result = CliRunner().invoke(app, ["sweep", str(file), "--runs-dir", str(tmp / "runs"), "--no-cache", "-j", "2",
                                      "--concurrency", "4", "--publish", "--db", str(tmp / "store.db"), *FAST])
    assert result.exit_code == 0, result.output
    return LocalSweep(file, tmp / "runs" / "demo", tmp / "store.db", oracle_server.oracle.asked - before,
                      result.stderr)
