"""publish → leaderboard → export on SQLite and on a real PostgreSQL server: the same results."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.store import open_store
from mt_eval.store.db import table_names
from pgserver import create_database
from store_fixtures import register_corpus

runner = CliRunner()


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


def _publish_all(db: str, cards: dict[str, Path]) -> None:
    order = ["half", "near2", "profile_b", "near", "truncated"]  # not best first: the board must sort
    result = cli("publish", *(str(cards[k]) for k in order), "--db", db, "--submitter", "tester")
    assert result.exit_code == 0, result.output
    assert result.output.count("inserted") == 5


def _board(db: str, *extra: str) -> list[dict[str, Any]]:
    result = cli("leaderboard", "--db", db, "--json", *extra)
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.output)
    return rows


def _comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows without what legitimately differs between stores (publication time)."""
    return [{k: v for k, v in r.items() if k != "published_at"} for r in rows]


@pytest.mark.slow  # covered fast by test_export_formats and test_board_ranks_with_clusters_and_sets_apart, each on both
# backends (publish, board and both exports); this one adds their byte-for-byte equality (~2.5 % of stage 1's CPU)
def test_round_trip_same_on_sqlite_and_postgresql(cards: dict[str, Path], tmp_path: Path, postgres_url: str) -> None:
    results = {}
    for kind, db in (("sqlite", str(tmp_path / "a.db")), ("postgresql", create_database(postgres_url))):
        _publish_all(register_corpus(db), cards)
        board = _board(db)
        out = tmp_path / f"{kind}.csv"
        exported = cli("export", "--db", db, "--format", "csv", "-o", str(out))
        assert exported.exit_code == 0, exported.output
        jsonl = cli("export", "--db", db, "--format", "jsonl", "--entries")
        assert jsonl.exit_code == 0, jsonl.output
        results[kind] = (_comparable(board), out.read_text(encoding="utf-8"), jsonl.output)
    assert results["sqlite"][0] == results["postgresql"][0]
    sqlite_csv = [{k: v for k, v in r.items() if k != "published_at"}
                  for r in csv.DictReader(io.StringIO(results["sqlite"][1]))]  # fmt: skip
    pg_csv = [{k: v for k, v in r.items() if k != "published_at"}
              for r in csv.DictReader(io.StringIO(results["postgresql"][1]))]  # fmt: skip
    assert sqlite_csv == pg_csv and len(sqlite_csv) == 5
    assert results["sqlite"][2] == results["postgresql"][2]
    entries = [json.loads(line) for line in results["sqlite"][2].splitlines()]
    assert len(entries) == 5 * 200
    near_entries = [e for e in entries if e["run_card_hash"] == _hash(cards["near"])]
    card_results = json.loads(cards["near"].read_text(encoding="utf-8"))["results"]
    assert [e["predicted"] for e in near_entries] == [r["predicted"] for r in card_results]


def _hash(card: Path) -> str:
    return str(json.loads(card.read_text(encoding="utf-8"))["run_card_hash"])


def test_board_ranks_with_clusters_and_sets_apart(cards: dict[str, Path], db_url: str) -> None:
    _publish_all(db_url, cards)
    by_chrf = _board(db_url)  # the registered dataset's default key: chrF++, whatever the profile
    assert [r["rank"] for r in by_chrf] == ["1–3", "1–3", "1–3", "4", "5"]
    assert {r["method"] for r in by_chrf[:3]} == {"near", "near2", "profile_b"}  # the same outputs as near
    # by the composite (the spec's §4.1 comparability: same metrics, profile and rule)
    assert cli("dataset", "primary-metric", "ntrex128-eng-spa-demo", "composite", "--db", db_url).exit_code == 0
    rows = _board(db_url)
    ranked = [r for r in rows if r["rank"] is not None]
    assert [r["method"] for r in ranked][2:] == ["truncated", "half"]
    assert {r["method"] for r in ranked[:2]} == {"near", "near2"}
    composites = [r["composite"]["value"] for r in ranked]
    assert composites == sorted(composites, reverse=True)
    # near and near2 differ by one word on different entries: one cluster, never split by time
    assert ranked[0]["rank"] == ranked[1]["rank"] == "1–2"
    assert [r["rank"] for r in ranked[2:]] == ["3", "4"]
    apart = [r for r in rows if r["rank"] is None]
    assert [r["method"] for r in apart] == ["profile_b"]
    assert "profile B" in apart[0]["unranked_reason"]
    for r in ranked:
        assert r["composite"]["ci_lower"] <= r["composite"]["value"] <= r["composite"]["ci_upper"]
        assert r["verification_tier"] == "self-benchmarked" and r["submitter"] == "tester"
        assert "chrf_plus_plus" in r["scores"]
    table = cli("leaderboard", "--db", db_url)
    assert table.exit_code == 0 and "1–2" in table.output and "profile B" in table.output


def test_replay_changes_nothing(cards: dict[str, Path], db_url: str) -> None:
    _publish_all(db_url, cards)
    before = _board(db_url)
    again = cli("publish", str(cards["near"]), str(cards["half"]), "--db", db_url, "--submitter", "someone-else")
    assert again.exit_code == 0, again.output
    assert again.output.count("already published") == 2 and "inserted" not in again.output
    assert _board(db_url) == before


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def published(request: pytest.FixtureRequest, cards: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store holding the five cards, published once per backend for the tests below that only read it (publish
    rescores every card: the five cost seconds on each backend)."""
    if request.param == "sqlite":
        db = register_corpus(str(tmp_path_factory.mktemp("published") / "board.db"))
    else:
        db = register_corpus(create_database(request.getfixturevalue("postgres_url")))
    _publish_all(db, cards)
    return db


def test_filters_and_sorts(cards: dict[str, Path], published: str) -> None:
    db_url = published
    sha = json.loads(cards["near"].read_text(encoding="utf-8"))["dataset"]["sha256"]
    assert len(_board(db_url, "--dataset", sha[:10])) == 5
    assert len(_board(db_url, "--dataset", "ntrex128-eng-spa-demo")) == 5
    assert _board(db_url, "--dataset", "no-such-dataset") == []
    # anchored-2 (decisions §67): half is baseline, truncated functional, near/near2/profile_b fluent
    baseline = _board(db_url, "--tier", "baseline")
    assert len(baseline) == 1 and {r["quality_tier"] for r in baseline} == {"baseline"}
    assert _board(db_url, "--tier", "emerging") == []
    # decisions §20: an unreviewed fluent card counts (and filters) as functional, shown awaiting review
    functional = _board(db_url, "--tier", "functional")
    assert "fluent" in {r["quality_tier"] for r in functional}
    assert {r["effective_tier"] for r in functional} == {"functional"}
    assert any(r["quality_tier_shown"] == "fluent — awaiting review" for r in functional)
    assert _board(db_url, "--tier", "fluent") == []
    assert _board(db_url, "--verification", "community-verified") == []
    assert len(_board(db_url, "--method-class", "custom-plugin")) == 5
    by_length = _board(db_url, "--sort", "length_ratio")
    values = [r["scores"]["length_ratio"]["value"] for r in by_length if r["rank"] is not None]
    assert values == sorted(values, reverse=True)
    by_ter = [r["scores"]["ter"]["value"] for r in _board(db_url, "--sort", "ter") if r["rank"] is not None]
    assert by_ter == sorted(by_ter)  # lower is better
    from mt_eval.store.query import query_rows

    store = open_store(db_url)
    with store.session() as session:  # the SQL sort itself (join on a bound metric name), with a limit
        ters = [r.scores["ter"]["value"] for r in query_rows(session, sort="ter", limit=3)]
        latencies = [r.avg_latency for r in query_rows(session, sort="latency")]
        chrfs = [r.scores["chrf"]["value"] for r in query_rows(session, sort="chrf", limit=2)]
    store.close()
    assert len(ters) == 3 and ters == sorted(ters) and ters[0] == min(by_ter)
    assert latencies == [None] * 5  # scored files: latency unknown (null, never 0), so nothing to sort by
    assert chrfs == sorted(chrfs, reverse=True)


def test_migrations_upgrade_and_downgrade(db_url: str) -> None:
    from mt_eval.store.db import downgrade, upgrade

    store = open_store(db_url)
    first = {"datasets", "run_cards", "card_metrics", "entry_results", "card_statistics"}
    second = {"card_links", "submitter_keys", "card_signatures", "store_settings", "reproductions", "sweeps",
              "sweep_cells"}
    expected = first | second
    assert expected <= table_names(store.engine)
    downgrade(store.engine, "0001")  # one step back: only the second migration's tables go
    assert first <= table_names(store.engine) and not second & table_names(store.engine)
    downgrade(store.engine, "base")
    assert not expected & table_names(store.engine)
    upgrade(store.engine)
    assert expected <= table_names(store.engine)
    upgrade(store.engine)  # idempotent
    store.close()


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_formats(published: str, fmt: str) -> None:
    result = cli("export", "--db", published, "--format", fmt)
    assert result.exit_code == 0, result.output
    if fmt == "csv":  # ranked by chrF++ (the registered dataset's key): profile_b beside near
        rows = list(csv.DictReader(io.StringIO(result.output)))
        assert rows[0]["method"] in {"near", "near2", "profile_b"} and rows[0]["rank"] == "1–3"
        assert float(rows[0]["composite_ci_lower"]) <= float(rows[0]["composite"])
    else:
        rows = [json.loads(line) for line in result.output.splitlines()]
        assert [r["rank"] for r in rows] == ["1–3", "1–3", "1–3", "4", "5"]
