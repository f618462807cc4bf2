"""Fixtures for the review tests: the store tests' real databases (SQLite and a real PostgreSQL) and
real sealed cards made with ``mt-eval score`` and published with ``mt-eval publish``.

``score`` and the ``db_url``/``postgres_url`` fixtures come from ``tests/store_fixtures.py`` (shared by
the whole suite through ``tests/conftest.py``: one PostgreSQL server per session).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from store_fixtures import register_corpus, score


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
    """A SQLite store with no card, the cards' corpus registered (tests whose logic does not depend on the
    database run once)."""
    return register_corpus(str(tmp_path / "review.db"))
