"""Registered datasets (``mt-eval dataset register``, migration 0008): stored once per version on SQLite and
PostgreSQL, loaded back as the corpus they came from (secret segments without their texts), refused when a
version's content changes; publish stores an honest card as it is and computes its statistics itself."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.corpus import load_corpus
from mt_eval.store import open_store
from mt_eval.store.dataset_models import CardSubmission, RegisteredDataset, RegisteredEntry
from mt_eval.store.datasets import load_registered
from mt_eval.store.db import downgrade, table_names, upgrade
from mt_eval.store.models import Card, CardStatistics

SOVEREIGN = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa-sovereign.json"
runner = CliRunner()


def cli(*args: Any) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def test_migration_0008_holds_a_dataset_and_downgrades_one_step(db_url: str) -> None:
    tables = {"registered_datasets", "registered_entries", "card_submissions"}
    store = open_store(db_url)
    assert table_names(store.engine) >= tables
    with store.session() as session:
        row = RegisteredDataset(dataset_id="d", version="1", sha256="a" * 64, entry_ids_sha256="b" * 64,
                                language_pair="EN→ES", source_language="en", target_language="es", entry_count=1,
                                secret_count=0, info={}, registered_at=datetime.now(UTC))
        row.entries.append(RegisteredEntry(entry_id=7, position=0, segment="development", source="s", reference="r",
                                           difficulty=2, detail={"variants": []}))
        session.add(row)
    with store.session() as session:  # the column's default is the documented ranking key
        mine = session.scalars(select(RegisteredDataset).where(RegisteredDataset.dataset_id == "d")).one()
        assert mine.primary_metric == "chrf_plus_plus" and [e.reference for e in mine.entries] == ["r"]
    downgrade(store.engine, "0007")  # one step back: only 0008's tables go
    names = table_names(store.engine)
    assert not tables & names and {"run_cards", "sovereign_rankings"} <= names
    upgrade(store.engine)
    assert table_names(store.engine) >= tables
    store.close()


def test_register_stores_the_corpus_once_and_loads_it_back(db_url: str, tmp_path: Path) -> None:
    corpus = load_corpus(SOVEREIGN)  # 130 public entries, 50 gold_standard, 20 held_out
    first = cli("dataset", "register", SOVEREIGN, "--db", db_url, "--by", "curator")
    assert first.exit_code == 0 and "registered" in first.output and "70 secret" in first.output, first.output
    again = cli("dataset", "register", SOVEREIGN, "--db", db_url)
    assert again.exit_code == 0 and "already registered" in again.output
    with open_store(db_url) as store, store.session() as session:
        loaded = load_registered(session, corpus.sha256)
        assert loaded is not None and loaded.summary.registered_by == "curator"
        public = [e for e in corpus.entries if e.segment.value in ("development", "diagnostic")]
        assert loaded.dataset.entries == public and loaded.dataset.info == corpus.info  # the corpus, as loaded
        assert loaded.summary.licence == "CC-BY-SA-4.0" and "NTREX-128" in str(loaded.summary.attribution)
        assert sorted(loaded.secret) == sorted(e.id for e in corpus.entries if e not in public)
        # a secret segment's texts never enter the public store
        secret = session.scalars(select(RegisteredEntry).where(RegisteredEntry.segment.in_(["gold_standard",
                                                                                             "held_out"]))).all()
        assert len(secret) == 70 and all(e.source is None and e.reference is None for e in secret)
        assert all(set(e.detail) <= {"provenance"} for e in secret)
    # the same id and version with other content: refused, nothing changed
    data = json.loads(SOVEREIGN.read_text(encoding="utf-8"))
    data["entries"][0]["reference"] = "otra cosa"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    refused = cli("dataset", "register", changed, "--db", db_url)
    assert refused.exit_code == 2 and "already registered with other content" in refused.output, refused.output
    listed = json.loads(cli("dataset", "list", "--db", db_url, "--json").output)
    assert sorted(d["id"] for d in listed) == ["ntrex128-eng-spa-demo", "ntrex128-eng-spa-sovereign-demo"]


def test_primary_metric_is_checked_and_changed_without_touching_cards(cards: dict[str, Path], db_url: str) -> None:
    assert cli("publish", cards["near"], "--db", db_url).exit_code == 0
    shown = json.loads(cli("dataset", "show", "ntrex128-eng-spa-demo", "--db", db_url).output)
    assert shown["primary_metric"] == "chrf_plus_plus" and shown["cards"] == 1
    bad = cli("dataset", "primary-metric", "ntrex128-eng-spa-demo", "chrf_plus_plus; DROP TABLE x", "--db", db_url)
    assert bad.exit_code == 2 and "not a metric this harness knows" in bad.output
    with open_store(db_url) as store, store.session() as session:
        before = session.scalars(select(Card.card)).one()
    for metric in ("composite", "bleu", "profile:cal-1"):
        done = cli("dataset", "primary-metric", shown["sha256"][:10], metric, "--db", db_url)
        assert done.exit_code == 0 and f"ranked by {metric}" in done.output, done.output
    with open_store(db_url) as store, store.session() as session:
        assert session.scalars(select(RegisteredDataset.primary_metric)
                               .where(RegisteredDataset.sha256 == shown["sha256"])).one() == "profile:cal-1"
        assert session.scalars(select(Card.card)).one() == before
    missing = cli("dataset", "show", "no-such-dataset", "--db", db_url)
    assert missing.exit_code == 2 and "no registered dataset" in missing.output


def test_an_honest_card_is_kept_as_submitted_and_needs_no_sidecar(cards: dict[str, Path], db_url: str,
                                                                  tmp_path: Path) -> None:
    original = json.loads(cards["truncated"].read_text(encoding="utf-8"))
    alone = tmp_path / "alone.json"  # copied without its .stats.npz: the store computes the statistics itself
    alone.write_text(cards["truncated"].read_text(encoding="utf-8"), encoding="utf-8")
    done = cli("publish", alone, "--db", db_url)
    assert done.exit_code == 0 and "inserted" in done.output and "rescoring of" not in done.output, done.output
    with open_store(db_url) as store, store.session() as session:
        card = session.scalars(select(Card)).one()
        assert card.run_card_hash == original["run_card_hash"]
        sub = session.scalars(select(CardSubmission)).one()
        assert (sub.submitted_hash, sub.card_id, sub.recomputed, sub.differences) == (card.run_card_hash, card.id,
                                                                                      False, [])
        stats = session.get(CardStatistics, card.id)
        assert stats is not None and stats.sha256 == original["statistics"]["sha256"]


def test_entries_outside_the_registered_dataset_are_refused(cards: dict[str, Path], db_url: str,
                                                           tmp_path: Path) -> None:
    from mt_eval.runcard.seal import seal

    for name, edit in (("unknown", lambda c: c["results"][0].update(entry_id=99999)),
                       ("twice", lambda c: c["results"][1].update(entry_id=c["results"][0]["entry_id"]))):
        card = json.loads(cards["half"].read_text(encoding="utf-8"))
        edit(card)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(seal(card), ensure_ascii=False), encoding="utf-8")
        done = cli("publish", path, "--db", db_url)
        assert done.exit_code == 1, done.output
        assert ("not in the registered dataset" if name == "unknown" else "more than once") in done.output
