"""Rank ranges from significance steps, and that the order of publication never changes a rank."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.store.query import BoardRow
from mt_eval.store.ranking import assign_ranks
from store_fixtures import register_corpus


def _row(i: int) -> BoardRow:
    return BoardRow(f"h{i}", f"r{i}", "d", "sha", "ids", "A", "anchored-1", "chrf", f"m{i}", "llm", "model", "c",
                    1.0 - i / 10, (None, None), None, None, None, "fluent", "self-benchmarked", None,
                    datetime.now(UTC))  # fmt: skip


@pytest.mark.parametrize(("breaks", "expected"), [
    ([], ["1"]),
    ([False, False], ["1–3", "1–3", "1–3"]),
    ([True, True], ["1", "2", "3"]),
    ([False, True, False], ["1–2", "1–2", "3–4", "3–4"]),
    ([True, False, False], ["1", "2–4", "2–4", "2–4"]),
])  # fmt: skip
def test_rank_ranges(breaks: list[bool], expected: list[str]) -> None:
    rows = [_row(i) for i in range(len(breaks) + 1)]
    assign_ranks(rows, breaks)
    assert [r.rank for r in rows] == expected


def test_publication_order_does_not_change_ranks(cards: dict[str, Path], tmp_path: Path) -> None:
    boards = []
    for name, order in (("a", ["near", "near2", "truncated"]), ("b", ["truncated", "near2", "near"])):
        db = register_corpus(str(tmp_path / f"{name}.db"))
        for kind in order:  # one publish per card: different times, different row ids
            assert CliRunner().invoke(app, ["publish", str(cards[kind]), "--db", db]).exit_code == 0
        out = CliRunner().invoke(app, ["leaderboard", "--db", db, "--json"])
        boards.append([(r["run_card_hash"], r["rank"]) for r in json.loads(out.output)])
    assert boards[0] == boards[1]
    assert [rank for _, rank in boards[0]] == ["1–2", "1–2", "3"]
