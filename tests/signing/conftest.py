"""Fixtures for the signature tests: the store tests' real databases and real scored cards.

``tests/store/conftest.py`` is loaded under a name of its own (a second module called ``conftest``
would clash) and its ``postgres_url``/``db_url`` fixtures and ``score`` helper are reused as they
are, so publish runs on SQLite and on a real PostgreSQL server here too.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from signing_helpers import cli

STORE_TESTS = Path(__file__).resolve().parents[1] / "store"
if str(STORE_TESTS) not in sys.path:
    sys.path.insert(0, str(STORE_TESTS))  # store's conftest imports its sibling pgserver.py


def _load_store_conftest() -> object:
    spec = importlib.util.spec_from_file_location("mt_eval_store_test_fixtures", STORE_TESTS / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_store = _load_store_conftest()
postgres_url = _store.postgres_url  # type: ignore[attr-defined]
db_url = _store.db_url  # type: ignore[attr-defined]
score = _store.score  # type: ignore[attr-defined]

@pytest.fixture(scope="session")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two real cards made by ``mt-eval score``: ``alice`` (her system) and ``mallory`` (another
    system's outputs: a card that verifies perfectly well, made by someone else)."""
    tmp = tmp_path_factory.mktemp("signing-cards")
    return {"alice": score(tmp, "near", name="alice"), "mallory": score(tmp, "half", name="mallory")}


@pytest.fixture(scope="session")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Private key files of alice, bob and mallory (each with its .pub beside it); tests only read them."""
    tmp = tmp_path_factory.mktemp("signing-keys")
    made: dict[str, Path] = {}
    for who in ("alice", "bob", "mallory"):
        result = cli("keys", "new", "-o", tmp / f"{who}.key", "--signer", who)
        assert result.exit_code == 0, result.output
        made[who] = tmp / f"{who}.key"
    return made
