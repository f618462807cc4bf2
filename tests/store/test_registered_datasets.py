"""Registered datasets (``mt-eval dataset register``, migration 0008): stored once per version on SQLite and
PostgreSQL, loaded back as the corpus they came from, refused when a version's content changes."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from mt_eval.store import open_store
from mt_eval.store.dataset_models import CardSubmission, RegisteredDataset, RegisteredEntry
from mt_eval.store.db import downgrade, table_names, upgrade

TABLES = {"registered_datasets", "registered_entries", "card_submissions"}


def test_migration_0008_holds_a_dataset_and_downgrades_one_step(db_url: str) -> None:
    store = open_store(db_url)
    assert table_names(store.engine) >= TABLES
    with store.session() as session:
        row = RegisteredDataset(dataset_id="d", version="1", sha256="a" * 64, entry_ids_sha256="b" * 64,
                                language_pair="EN→ES", source_language="en", target_language="es", entry_count=1,
                                secret_count=0, info={}, registered_at=datetime.now(UTC))
        row.entries.append(RegisteredEntry(entry_id=7, position=0, segment="development", source="s", reference="r",
                                           difficulty=2, detail={"variants": []}))
        session.add(row)
    with store.session() as session:  # the column's default is the documented ranking key
        assert session.scalar(select(RegisteredDataset.primary_metric)) == "chrf_plus_plus"
        assert session.scalar(select(RegisteredEntry.reference)) == "r"
        assert session.scalar(select(CardSubmission.id)) is None
    downgrade(store.engine, "0007")  # one step back: only 0008's tables go
    names = table_names(store.engine)
    assert not TABLES & names and {"run_cards", "sovereign_rankings"} <= names
    upgrade(store.engine)
    assert table_names(store.engine) >= TABLES
    store.close()
