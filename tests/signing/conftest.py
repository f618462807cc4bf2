"""Fixtures for the signature tests: the store tests' real databases and real scored cards.

``score`` and the ``db_url``/``postgres_url`` fixtures come from ``tests/store_fixtures.py`` (shared by
the whole suite through ``tests/conftest.py``: one PostgreSQL server per session).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from signing_helpers import cli

from store_fixtures import score


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
