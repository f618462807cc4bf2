"""Fixtures for the review tests: the store tests' real databases (SQLite and a real PostgreSQL) and
real sealed cards made with ``mt-eval score`` and published with ``mt-eval publish``.

``score`` and the ``db_url``/``postgres_url`` fixtures come from ``tests/store_fixtures.py`` (shared by
the whole suite through ``tests/conftest.py``: one PostgreSQL server per session).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from store_fixtures import register_corpus


@pytest.fixture(scope="session")
def review_cards(cards: dict[str, Path]) -> dict[str, Path]:
    """Two real cards on the 200-entry eng→spa corpus: ``near`` (the reference, one word dropped in
    every fifth line) and ``half`` (the first half of each reference): the store tests' cards, scored once."""
    return {kind: cards[kind] for kind in ("near", "half")}


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


@pytest.fixture(autouse=True)
def cheap_hashing() -> Iterator[None]:
    """Cheap argon2 parameters for the reviewer accounts these tests invite (a hash records its own
    parameters, so verification is the same code; the default cost is asserted in ``tests/accounts``)."""
    from argon2 import PasswordHasher

    from mt_eval.accounts import passwords

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(passwords, "HASHER", PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1))
        passwords._dummy.cache_clear()
        yield
    passwords._dummy.cache_clear()


@pytest.fixture(scope="session")
def published_template(verified: dict[str, object], tmp_path_factory: pytest.TempPathFactory
                       ) -> tuple[Path, dict[str, str]]:
    """A SQLite store with ``near`` and ``half`` published once (publishing rescores every card against the
    registered dataset: seconds each), and their run_card_hash by kind."""
    from review_helpers import publish

    path = tmp_path_factory.mktemp("review-published") / "template.db"
    return path, publish(register_corpus(str(path)), verified)


@pytest.fixture
def published(published_template: tuple[Path, dict[str, str]], tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A fresh copy of the published store for one test, and the cards' hashes."""
    import shutil

    path, hashes = published_template
    copy = tmp_path / "published.db"
    shutil.copyfile(path, copy)
    return str(copy), hashes
