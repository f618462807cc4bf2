"""The JSON API against independent references: ``mt-eval leaderboard --json`` and ``mt-eval compare
--json`` on the same store and cards, the card files themselves, and the corpus file's own counts."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from web_helpers import board_json, cli, put_cards

from mt_eval.store.pages import pareto
from mt_eval.store.query import BoardRow
from mt_eval.web.app import create_app
from pgserver import create_database


@pytest.fixture(scope="module")
def client(board_db: str) -> Iterator[TestClient]:
    with TestClient(create_app(board_db)) as test_client:
        yield test_client


def _hash(card: Path) -> str:
    return str(json.loads(card.read_text(encoding="utf-8"))["run_card_hash"])


@pytest.mark.parametrize("query,cli_args", [
    ("", ()),
    ("?dataset=ntrex128-eng-spa-demo", ("--dataset", "ntrex128-eng-spa-demo")),
    ("?tier=functional&method_class=custom-plugin", ("--tier", "functional", "--method-class", "custom-plugin")),
    ("?sort=chrf_plus_plus&limit=3", ("--sort", "chrf_plus_plus", "--limit", "3")),
])  # fmt: skip
def test_leaderboard_api_equals_the_cli_json(client: TestClient, board_db: str, query: str,
                                             cli_args: tuple[str, ...]) -> None:
    api = client.get(f"/api/leaderboard{query}")
    assert api.status_code == 200
    expected = board_json(board_db, *cli_args)
    assert api.json() == expected
    assert len(expected) >= 3 and any(r["rank"] for r in expected)


def test_web_filters_model_and_complete_coverage(client: TestClient, board_db: str,
                                                 secret_cards: dict[str, Any]) -> None:
    every = board_json(board_db)
    truncated = client.get("/api/leaderboard?model=truncated").json()
    assert [r["model"] for r in truncated] == ["truncated"] and truncated[0]["rank"] == "1"
    partial = _hash(secret_cards["cards"]["partial"])
    complete = client.get("/api/leaderboard?complete=true").json()
    assert partial in {r["run_card_hash"] for r in every}
    assert {r["run_card_hash"] for r in complete} == {r["run_card_hash"] for r in every} - {partial}


def test_pareto_draws_no_point_for_an_unknown_cost(client: TestClient, board_db: str) -> None:
    """Cards scored from predictions files record cost and latency as unknown (never 0): no Pareto point is
    drawn for them, on any filter (the frontier itself: ``test_pareto_frontier_by_dominance``)."""
    rows = [r for r in board_json(board_db, "--dataset", "ntrex128-eng-spa-demo") if r["rank"]]
    assert rows and all(r["cost_per_entry_usd"] is None and r["avg_latency_seconds"] is None for r in rows)
    for query in ("", f"&model={rows[0]['model']}"):
        boards = client.get(f"/api/pareto?dataset=ntrex128-eng-spa-demo{query}").json()
        assert boards and all(b["cost_per_entry"] == [] and b["avg_latency"] == [] for b in boards)


def test_run_api_matches_the_card(client: TestClient, cards: dict[str, Path]) -> None:
    card = json.loads(cards["near"].read_text(encoding="utf-8"))
    data = client.get(f"/api/runs/{card['run_card_hash']}").json()
    assert data["composite"] == card["scores"]["composite"]
    assert data["scores"]["chrf_plus_plus"] == card["scores"]["chrf_plus_plus"]
    ci = card["scores"]["confidence_intervals"]["composite"]
    assert data["confidence_intervals"]["composite"] == {"lower": ci["ci_lower"], "upper": ci["ci_upper"]}
    assert data["fingerprint"]["hash"] == card["fingerprint"]["hash"]
    assert data["environment"] == card["environment"] and data["verification_tier"] == "self-benchmarked"
    assert data["breakdowns"]["by_difficulty"] == card["scores"]["by_difficulty"]
    entries = client.get(f"/api/runs/{card['run_card_hash']}/entries?limit=1000").json()
    assert [e["predicted"] for e in entries["entries"]] == [r["predicted"] for r in card["results"]]
    third = client.get(f"/api/runs/{card['run_card_hash']}/entries?difficulty=3&q=the").json()
    expected = [r["entry_id"] for r in card["results"] if r["difficulty"] == 3 and any(
        "the" in r[k].casefold() for k in ("source", "reference", "predicted"))]
    assert [e["entry_id"] for e in third["entries"]] == expected[:100] and third["matched"] == len(expected)


def _tests(paired: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[float, float, float]]:
    return {(p["system"], p["metric"]): (p["delta"], p["p_value"], p["p_adjusted"]) for p in paired}


def test_compare_api_equals_the_cli_compare(client: TestClient, cards: dict[str, Path]) -> None:
    names = ("near", "truncated", "half")
    result = cli("compare", *(str(cards[n]) for n in names), "--json")
    assert result.exit_code == 0, result.output
    expected = json.loads(result.stdout)
    query = "&".join(f"run={_hash(cards[n])}" for n in names)
    data = client.get(f"/api/compare?{query}").json()
    got, want = _tests(data["comparison"]["paired"]), _tests(expected["paired"])
    assert got == want and ("truncated", "composite") in got
    spreads = [d["spread"] for d in data["disagreements"]]
    assert spreads == sorted(spreads, reverse=True) and spreads[0] > 0


def test_dataset_api_counts_the_corpus(client: TestClient, secret_cards: dict[str, Any]) -> None:
    entries = secret_cards["entries"]
    [version] = client.get("/api/datasets/secret-demo").json()
    assert version["counts"]["segment"] == dict(Counter(e["segment"] for e in entries))
    assert version["counts"]["difficulty"] == {str(k): v for k, v in Counter(e["difficulty"] for e in entries).items()}
    assert version["secret_entries"] == 6 and version["cards"] == 3


def test_openapi_lists_every_api_page(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    for path in ("/api/leaderboard", "/api/pareto", "/api/runs/{run_card_hash}", "/api/runs/{run_card_hash}/entries",
                 "/api/compare", "/api/datasets", "/api/datasets/{dataset_id}"):
        assert path in spec["paths"], path
    assert "/api/leaderboard" in client.get("/api").text


def test_api_on_postgresql(postgres_url: str, cards: dict[str, Path], secret_cards: dict[str, Any]) -> None:
    """The app on a real PostgreSQL store (SQLite is every other test's): the rows equal the CLI's, the
    coverage filter's JSON-path query works on JSONB, and a card published while the app runs shows
    at once (boards are remembered by the store's state, cards by hash, a missing card not at all)."""
    db_url = create_database(postgres_url)
    put_cards(db_url, cards["near"], cards["half"])
    with TestClient(create_app(db_url, n_resamples=200)) as client:
        first = client.get("/api/leaderboard").json()
        assert len(first) == 2 and client.get("/api/leaderboard").json() == first
        partial = _hash(secret_cards["cards"]["partial"])
        assert client.get(f"/api/runs/{partial}").status_code == 404
        put_cards(db_url, secret_cards["cards"]["partial"])
        rows = client.get("/api/leaderboard").json()
        assert [r["run_card_hash"] for r in rows] == [r["run_card_hash"] for r in board_json(db_url)]
        assert len(rows) == 3 and client.get(f"/api/runs/{partial}").status_code == 200  # no 404 remembered
        complete = {r["run_card_hash"] for r in client.get("/api/leaderboard?complete=1").json()}
        assert complete == {_hash(cards["near"]), _hash(cards["half"])}
        assert client.get(f"/runs/{_hash(cards['near'])}").status_code == 200
        assert client.get("/datasets/secret-demo").status_code == 200
        for url in ("/api/leaderboard?dataset=%00", "/?sort=x%00", "/datasets/a%00b"):  # PostgreSQL refuses NUL
            assert client.get(url).status_code == 400, url


def _row(name: str, composite: float | None, cost: float | None) -> BoardRow:
    blank: dict[str, Any] = {f.name: None for f in fields(BoardRow)}
    return BoardRow(**{**blank, "run_card_hash": name, "method": name, "composite": composite,
                       "cost_per_entry": cost, "scores": {}})  # fmt: skip


def test_pareto_frontier_by_dominance() -> None:
    """Checked against the definition, pair by pair: on the frontier iff no other point is at least as
    good on both axes and strictly better on one."""
    rows = [_row("a", 0.9, 0.02), _row("b", 0.8, 0.01), _row("c", 0.7, 0.01), _row("d", 0.9, 0.03),
            _row("e", 0.95, 0.05), _row("f", 0.95, 0.05), _row("g", None, 0.0), _row("h", 0.5, None),
            _row("i", 0.6, 0.0)]  # fmt: skip
    points = pareto(rows, "cost_per_entry")
    drawn = [r for r in rows if r.composite is not None and r.cost_per_entry is not None]
    assert [p.x for p in points] == sorted(p.x for p in points) and len(points) == len(drawn)

    def dominated(r: BoardRow) -> bool:
        return any(o.composite >= r.composite and o.cost_per_entry <= r.cost_per_entry  # type: ignore[operator]
                   and (o.composite > r.composite or o.cost_per_entry < r.cost_per_entry)  # type: ignore[operator]
                   for o in drawn)  # fmt: skip

    assert {p.run_card_hash for p in points if p.on_frontier} == {r.run_card_hash for r in drawn if not dominated(r)}
    assert {p.run_card_hash for p in points if p.on_frontier} == {"i", "b", "a", "e", "f"}
