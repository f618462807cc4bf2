"""Fixtures for the review tests: the store tests' real databases (SQLite and a real PostgreSQL) and
real sealed cards made with ``mt-eval score`` and published with ``mt-eval publish``.

``tests/store/conftest.py`` is loaded under a name of its own (a second module called ``conftest``
would clash) and its ``postgres_url``/``db_url`` fixtures and ``score`` helper are reused as they are.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

STORE_TESTS = Path(__file__).resolve().parents[1] / "store"
if str(STORE_TESTS) not in sys.path:
    sys.path.insert(0, str(STORE_TESTS))  # store's conftest imports its sibling pgserver.py


def _load_store_conftest() -> object:
    spec = importlib.util.spec_from_file_location("mt_eval_review_store_fixtures", STORE_TESTS / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_store = _load_store_conftest()
postgres_url = _store.postgres_url  # type: ignore[attr-defined]
db_url = _store.db_url  # type: ignore[attr-defined]
score = _store.score  # type: ignore[attr-defined]
@pytest.fixture(scope="session")
def review_cards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two real cards on the 200-entry eng→spa corpus: ``near`` (the reference, one word dropped in
    every fifth line) and ``half`` (the first half of each reference)."""
    tmp = tmp_path_factory.mktemp("review-cards")
    return {kind: score(tmp, kind) for kind in ("near", "half")}


@pytest.fixture(scope="session")
def verified(review_cards: dict[str, Path]) -> dict[str, object]:
    """The cards read and verified once (``read_for_publish``), ready to insert into any store."""
    from mt_eval.store.publish import read_for_publish

    return {kind: read_for_publish(path) for kind, path in review_cards.items()}


@pytest.fixture
def sqlite_db(tmp_path: Path) -> str:
    """An empty SQLite store (tests whose logic does not depend on the database run once)."""
    return str(tmp_path / "review.db")
