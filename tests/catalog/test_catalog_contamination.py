"""Contamination facts (issue 24.2): a card on a catalogue test set records its exposure; the store keeps
each card's declared training cut-off and its test set's release month; ``leaderboard --clean-only`` keeps
only methods whose cut-off predates the release (an undeclared cut-off never counts as clean)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog_upstream import Upstream, ntrex_lines
from sqlalchemy import select, update
from typer.testing import CliRunner

from mt_eval.catalog.cutoffs import predates, release_month, training_cutoff
from mt_eval.cli import app
from mt_eval.runcard.seal import seal
from mt_eval.store import open_store
from mt_eval.store.db import downgrade, upgrade
from mt_eval.store.models import Card

runner = CliRunner()
IDS = "1-30"


def _ok(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_cutoff_rules() -> None:
    card = {"model_slug": "openai/gpt-4o-mini", "method": {"config": {}},
            "dataset": {"exposure": {"released": "2022-10"}}}
    assert (training_cutoff(card), release_month(card)) == ("2023-10", "2022-10")
    assert not predates("2023-10", "2022-10") and predates("2021-09", "2022-10")
    assert not predates("2022-10", "2022-10")  # the same month: either order, so not clean
    assert not predates(None, "2022-10") and not predates("2021-09", None)
    declared = {**card, "method": {"config": {"training_cutoff": "2019-05-31"}}}
    assert training_cutoff(declared) == "2019-05"  # the method's own declaration wins over the table
    assert training_cutoff({"model_slug": "apertium/eng-spa", "method": {}}) is None
    assert training_cutoff({**card, "method": {"config": {"training_cutoff": "soon"}}}) == "2023-10"


def _score(tmp: Path, name: str, drop_every: int) -> Path:
    """A predictions file named as a model (its stem is the card's model_slug): references losing a word."""
    refs = [r.strip() for r in ntrex_lines("spa", 30)]
    hyps = [" ".join(r.split()[:-1]) if i % drop_every == 0 else r for i, r in enumerate(refs)]
    predictions = tmp / f"{name}.jsonl"
    predictions.write_text("".join(json.dumps({"entry_id": i, "predicted": h}) + "\n"
                                   for i, h in enumerate(hyps, start=1)), encoding="utf-8")
    out = tmp / f"{name}.json"
    _ok("score", "--corpus", "ntrex128:eng-spa", "--predictions", str(predictions), "--ids", IDS, "--out", str(out),
        "--bootstrap", "0")
    return out


@pytest.mark.slow
def test_leaderboard_clean_only(env: Path, upstream: Upstream, tmp_path: Path) -> None:
    _ok("datasets", "fetch", "ntrex128:eng-spa", "--accept-licence")
    # gpt-3.5-turbo: declared cut-off 2021-09, before NTREX's 2022-10 release: clean. gpt-4o-mini (2023-10):
    # after it. "mystery": no declaration. The contaminated one scores best, as a leak would.
    cards = {name: _score(tmp_path, name, every) for name, every in (("gpt-4o-mini", 7), ("gpt-3.5-turbo", 2),
                                                                        ("mystery", 3))}
    card = json.loads(cards["gpt-4o-mini"].read_text(encoding="utf-8"))
    assert card["dataset"]["exposure"]["released"] == "2022-10"
    assert "WMT19 newstest2019" in card["dataset"]["exposure"]["inclusion"][0]
    # A submitter who re-seals the contaminated card claiming a later release, to pass as clean: the store
    # takes the exposure from the registered dataset, never from the card.
    forged = json.loads(cards["gpt-4o-mini"].read_text(encoding="utf-8"))
    forged["dataset"]["exposure"]["released"] = "2099-01"
    cards["gpt-4o-mini"].write_text(json.dumps(seal(forged), ensure_ascii=False), encoding="utf-8")
    db = str(tmp_path / "board.db")
    _ok("dataset", "register", "ntrex128:eng-spa", "--db", db)  # the catalogue id, registered as it was fetched
    _ok("publish", *map(str, cards.values()), "--db", db)
    every = json.loads(_ok("leaderboard", "--db", db, "--json"))
    clean = json.loads(_ok("leaderboard", "--db", db, "--json", "--clean-only"))

    def models(boards: object) -> list[str]:
        text = json.dumps(boards)
        return sorted(m for m in cards if f'"model": "{m}"' in text)
    assert models(every) == ["gpt-3.5-turbo", "gpt-4o-mini", "mystery"]
    assert models(clean) == ["gpt-3.5-turbo"]
    with open_store(db) as store, store.session() as session:
        rows = dict(session.execute(select(Card.model_slug, Card.training_cutoff)).all())
        assert rows == {"gpt-4o-mini": "2023-10", "gpt-3.5-turbo": "2021-09", "mystery": None}
        session.execute(update(Card).values(training_cutoff=None, test_released=None))
    store = open_store(db)
    downgrade(store.engine, "0009")  # the migration fills existing rows from their stored card JSON
    upgrade(store.engine)
    store.close()
    with open_store(db) as store, store.session() as session:
        filled = set(session.execute(select(Card.model_slug, Card.training_cutoff, Card.test_released)).all())
    assert filled == {("gpt-4o-mini", "2023-10", "2022-10"), ("gpt-3.5-turbo", "2021-09", "2022-10"),
                      ("mystery", None, "2022-10")}


@pytest.mark.parametrize("flag", ["--clean-only"])
def test_leaderboard_help_names_the_flag(flag: str) -> None:
    assert flag in _ok("leaderboard", "--help")


@pytest.mark.slow
def test_migration_fills_rows_and_the_filter_holds_on_both_databases(cards: dict[str, Path], db_url: str) -> None:
    """SQLite and PostgreSQL: insert_card stores both months, migration 0010 refills them from the card JSON
    after a downgrade, and --clean-only compares them as months."""
    from mt_eval.store.insert import insert_card
    from mt_eval.store.query import Filters, query_rows

    base = json.loads(cards["near"].read_text(encoding="utf-8"))
    for n, slug in enumerate(("openai/gpt-4o-mini", "gpt-3.5-turbo", "apertium/eng-spa")):
        card = {**base, "run_card_hash": f"{n:064x}", "model_slug": slug,
                "dataset": {**base["dataset"], "exposure": {"released": "2022-10"}}}
        with open_store(db_url) as store, store.session() as session:
            insert_card(session, card, None, entries=False)
    expected = {("openai/gpt-4o-mini", "2023-10", "2022-10"), ("gpt-3.5-turbo", "2021-09", "2022-10"),
                ("apertium/eng-spa", None, "2022-10")}

    def stored() -> set[tuple[str, str | None, str | None]]:
        with open_store(db_url) as store, store.session() as session:
            rows = session.execute(select(Card.model_slug, Card.training_cutoff, Card.test_released))
            return {(slug, cutoff, released) for slug, cutoff, released in rows}
    assert stored() == expected
    with open_store(db_url) as store, store.session() as session:
        session.execute(update(Card).values(training_cutoff=None, test_released=None))
    store = open_store(db_url)
    downgrade(store.engine, "0009")
    upgrade(store.engine)
    store.close()
    assert stored() == expected
    with open_store(db_url) as store, store.session() as session:
        assert [r.model for r in query_rows(session, Filters(clean_only=True))] == ["gpt-3.5-turbo"]
        assert len(query_rows(session, Filters())) == 3
