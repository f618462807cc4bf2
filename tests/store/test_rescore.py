"""``mt-eval rescore``: stored cards rebuilt from their outputs with this harness's metrics.

The real "new metric version" case: ``tests/runcard/saved/card-2.0-apertium-eng-spa.json`` was scored
before the entry-level hallucination rate (signature null, word-level ``hallucination_v1``) and before
the anchored composite (no ``composite_rule``). It is stored as a store of that time held it (the card
as written, its statistics as that harness computed them: ``table_from_card`` chooses the old
hallucination through the recorded signature). The independent reference for the rescored card is
``mt-eval score`` of the same outputs, run afresh today: rescoring must give exactly its scores.
"""

from __future__ import annotations

import csv
import functools
import io
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.runcard.io import load_card
from mt_eval.runcard.rescore import table_from_card
from mt_eval.runcard.seal import card_hash
from mt_eval.runcard.statistics import encode
from mt_eval.runcard.verify import verify_card
from mt_eval.store import open_store
from mt_eval.store.models import Card, CardLink
from mt_eval.store.publish import insert_card
from mt_eval.store.query import Filters, query_rows
from mt_eval.store.rescore import rebuild_card
from pgserver import create_database
from store_fixtures import register_corpus

ROOT = Path(__file__).resolve().parents[2]
SAVED = ROOT / "tests" / "runcard" / "saved" / "card-2.0-apertium-eng-spa.json"
CORPUS = ROOT / "examples" / "ntrex128-eng-spa.json"
runner = CliRunner()


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


@pytest.fixture(autouse=True)
def pinned_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other engineers commit while tests run: pin the checkout's commit recorded in ``environment`` so
    the same rescore gives byte-identical cards in both stores (the scores never depend on it)."""
    monkeypatch.setattr("mt_eval.runcard.environment.git_commit", lambda: "pinned")


@functools.cache
def old_card() -> tuple[dict[str, Any], bytes]:
    """The saved 2.0 card and its statistics as that harness computed them (once per session)."""
    card = load_card(SAVED)
    assert verify_card(card) == []  # a real card that verifies under its own (recorded) metric versions
    return card, encode(table_from_card(card), [r["entry_id"] for r in card["results"]])


def store_old_card(db: str) -> str:
    """The saved 2.0 card as that harness's store held it, submitted by "old-lab"; its hash."""
    card, stats = old_card()
    with open_store(db) as store, store.session() as session:
        insert_card(session, card, stats, submitter="old-lab")
    return str(card["run_card_hash"])


def board(db: str, *extra: str) -> list[dict[str, Any]]:
    result = cli("leaderboard", "--db", db, "--json", *extra)
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.output)
    return rows


def links(db: str) -> list[tuple[str, str, str, dict[str, Any]]]:
    with open_store(db) as store, store.session() as session:
        old, new = Card.__table__.alias(), Card.__table__.alias()
        stmt = (select(old.c.run_card_hash, new.c.run_card_hash, CardLink.reason, CardLink.change_log)
                .join(old, old.c.id == CardLink.old_card_id).join(new, new.c.id == CardLink.new_card_id))
        return [(a, b, c, d) for a, b, c, d in session.execute(stmt)]


def card_count(db: str) -> int:
    with open_store(db) as store, store.session() as session:
        return int(session.scalar(select(func.count()).select_from(Card)) or 0)


def test_a_current_card_rebuilds_to_itself(cards: dict[str, Path]) -> None:
    """Everything the builder needs is on the card: rebuilding a card this harness wrote gives the
    same card field for field (the environment and so the hash aside), and with the card's own
    environment the same hash."""
    card = load_card(cards["truncated"])
    new, sidecar = rebuild_card(card)
    skip = ("environment", "run_card_hash")
    assert {k: v for k, v in new.items() if k not in skip} == {k: v for k, v in card.items() if k not in skip}
    assert card_hash({**new, "environment": card["environment"]}) == card["run_card_hash"]
    assert sidecar == (cards["truncated"].parent / card["statistics"]["file"]).read_bytes()


def test_dry_run_and_metric_selection_write_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "board.db")
    old_hash = store_old_card(db)
    dry = cli("rescore", "--db", db, "--dry-run")
    assert dry.exit_code == 0 and "would rescore" in dry.output and "hallucination_rate" in dry.output, dry.output
    chrf = cli("rescore", "--db", db, "--metric", "chrf_plus_plus")  # chrF++ did not change: card not selected
    assert chrf.exit_code == 0 and "1 not selected" in chrf.output, chrf.output
    assert card_count(db) == 1 and links(db) == []
    picked = cli("rescore", "--db", db, "--metric", "hallucination_rate", "--card", old_hash[:10])
    assert picked.exit_code == 0 and "1 rescored" in picked.output, picked.output
    assert card_count(db) == 2 and len(links(db)) == 1
    again = cli("rescore", "--db", db)  # idempotent: the superseded card is not rescored again, the new one is current
    assert again.exit_code == 0 and "1 card(s): 1 unchanged" in again.output, again.output
    assert card_count(db) == 2 and len(links(db)) == 1


@pytest.mark.parametrize(("args", "message"), [
    (("--card", "zz12"), "6 or more hex digits"),
    (("--card", "abcdef0123"), "no current card in the store starts with it"),
    (("--out", "FILE"), "--out must be a folder"),
    (("--metric", "chrf_plus_plus", "--metric", "nope"), "--metric nope: no such metric here"),
])
def test_bad_options_are_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    db = str(tmp_path / "board.db")
    (tmp_path / "FILE").write_text("x", encoding="utf-8")
    result = cli("rescore", "--db", db, *(str(tmp_path / a) if a == "FILE" else a for a in args))
    assert result.exit_code == 2 and message in result.output, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) <= 2


def test_card_with_a_metric_not_installed_here_is_skipped(tmp_path: Path) -> None:
    """A store written by a harness with a plugin metric: rebuilt here, that metric would vanish from the
    card without a word, so the card is left as it is and the reason said; so is a card scored with an
    embedding model that cannot run here (no ``$MT_EVAL_SEMANTIC_URL``)."""
    db = str(tmp_path / "board.db")
    card, stats = old_card()
    plugin = {**card, "metrics": {**card["metrics"], "lab_metric": {"weight": None, "signature": "lab:1"}}}
    embedded = {**card, "semantic": {"backend": "openai", "model": "m"}, "run_card_hash": "f" * 64}
    with open_store(db) as store, store.session() as session:
        insert_card(session, plugin, stats)
        insert_card(session, embedded, stats)
    result = cli("rescore", "--db", db)
    assert result.exit_code == 0 and "skipped, metrics not installed here: lab_metric" in result.output, result.output
    assert "skipped, scored semantic_score with an embedding model" in result.output.replace("\n", " ")
    assert card_count(db) == 2 and links(db) == []


def _exports(db: str, tmp_path: Path, name: str) -> tuple[list[dict[str, Any]], list[dict[str, str]], str]:
    rows = [{k: v for k, v in r.items() if k != "published_at"} for r in board(db)]
    out = tmp_path / f"{name}.csv"
    assert cli("export", "--db", db, "--format", "csv", "-o", str(out)).exit_code == 0
    table = [{k: v for k, v in r.items() if k != "published_at"}
             for r in csv.DictReader(io.StringIO(out.read_text(encoding="utf-8")))]  # fmt: skip
    entries = cli("export", "--db", db, "--format", "jsonl", "--entries")
    assert entries.exit_code == 0
    return rows, table, entries.output


def _check_against_fresh_score(db: str, tmp_path: Path, folder: Path, old_hash: str, published_at: str) -> None:
    """The rescored card against today's ``mt-eval score`` of the same 40 outputs (the reference); it
    verifies with its sidecar, keeps the old card's submitter and tier, and its change log is right."""
    [(old, new_hash, reason, log)] = links(db)
    assert (old, reason) == (old_hash, "rescore")
    saved = load_card(SAVED)
    change = log["metrics"]["hallucination_rate"]
    assert change["old"] == saved["scores"]["hallucination_rate"] and change["old_signature"] is None
    assert change["new_signature"].startswith("hallucination:2")
    # chrF++ and BLEU did not move; TER moved to the bounded shift search (decisions §63: its signature records
    # the budget), exact/equivalent match to votes weighted by reference words (§67), and the critical-error checks
    # are new: nothing else may appear in the log
    critical = {"critical_error_rate", "number_error_rate", "entity_error_rate", "negation_error_rate",
                "addition_rate", "omission_rate"}
    assert set(log["metrics"]) == {"hallucination_rate", "ter", "exact_match_rate", "equivalent_match_rate"} | critical
    assert "|shifts:" in log["metrics"]["ter"]["new_signature"] and log["metrics"]["ter"]["old_signature"]
    assert all(log["metrics"][m]["old"] is None for m in critical)
    assert log["scores"]["composite_rule"] == {"old": None, "new": "anchored-2"}
    assert log["harness_version"] == {"old": "2.0.0", "new": saved["harness_version"]}
    hyp = tmp_path / "apertium.jsonl"
    hyp.write_text("".join(json.dumps({"entry_id": r["entry_id"], "predicted": r["predicted"]}) + "\n"
                           for r in saved["results"]), encoding="utf-8")  # fmt: skip
    scored = cli("score", "-c", str(CORPUS), "--ids", "1-40", "-p", str(hyp), "--bootstrap", "200", "--no-semantic",
                 "-o", str(tmp_path / "fresh.json"))  # the saved card has no semantic_score: rescore adds none
    assert scored.exit_code == 0, scored.output
    path = folder / f"{new_hash[:16]}.json"
    fresh, written = load_card(tmp_path / "fresh.json"), load_card(path)
    timing = {"avg_latency_seconds", "median_latency_seconds", "p95_latency_seconds", "cost_adjusted"}
    assert written["run_card_hash"] == new_hash and {k: v for k, v in written["scores"].items() if k not in timing} \
        == {k: v for k, v in fresh["scores"].items() if k not in timing}
    assert verify_card(written, path) == []  # seal, every score, the sidecar's bytes
    assert [r["predicted"] for r in written["results"]] == [r["predicted"] for r in saved["results"]]
    [row] = [r for r in board(db) if r["run_card_hash"] == new_hash]
    assert (row["submitter"], row["verification_tier"]) == ("old-lab", "self-benchmarked")
    assert row["published_at"] == published_at  # the old card's, kept (ties are never broken by time anyway)
    assert row["composite"]["value"] == pytest.approx(fresh["scores"]["composite"])


@pytest.mark.slow  # two backends, every card rescored on each: 12 s (stage 2, decisions §87)
def test_round_trip_same_on_sqlite_and_postgresql(cards: dict[str, Path], tmp_path: Path, postgres_url: str) -> None:
    """publish → leaderboard → export → rescore → leaderboard → export, on both databases: the same."""
    results, stamps = {}, {}
    for kind, db in (("sqlite", str(tmp_path / "a.db")), ("postgresql", create_database(postgres_url))):
        old_hash = store_old_card(register_corpus(db))
        assert cli("publish", str(cards["near"]), "--db", db, "--submitter", "lab").exit_code == 0
        first = _exports(db, tmp_path, f"{kind}-1")
        stamps[kind] = next(r["published_at"] for r in board(db) if r["run_card_hash"] == old_hash)
        rescored = cli("rescore", "--db", db, "-o", str(tmp_path / kind))
        assert rescored.exit_code == 0 and "1 rescored, 1 unchanged" in rescored.output, rescored.output
        assert "hallucination_rate" in rescored.output
        second = _exports(db, tmp_path, f"{kind}-2")
        assert old_hash in {r["run_card_hash"] for r in first[0]}
        assert old_hash not in {r["run_card_hash"] for r in second[0]}  # superseded: the lineage's newest only
        with open_store(db) as store, store.session() as session:  # superseded cards stay, on request
            every = {r.run_card_hash for r in query_rows(session, Filters(include_superseded=True))}
        assert every == {r["run_card_hash"] for r in first[0]} | {r["run_card_hash"] for r in second[0]}
        shown = cli("leaderboard", "--db", db, "--json", "--include-superseded")  # the same, from the CLI
        assert shown.exit_code == 0 and {r["run_card_hash"] for r in json.loads(shown.stdout)} == every
        results[kind] = (first, second, links(db), sorted(every))
    assert results["sqlite"] == results["postgresql"]
    _check_against_fresh_score(str(tmp_path / "a.db"), tmp_path, tmp_path / "sqlite", old_hash, stamps["sqlite"])
