"""The community review's 0–3 ratings as judgments, from a real store: a campaign over two real cards, rated by
simulated reviewers (``tests/review/review_helpers.py``), read back and checked against the ratings table
itself, then calibrated against the same cards (``-j review:CAMPAIGN --cards …``)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from sqlalchemy import select

from mt_eval.judgments import review_judgments
from mt_eval.store import open_store
from mt_eval.store.models import Card, ReviewItem, ReviewRating
from review.review_helpers import cli, publish, review


def test_review_ratings_become_judgments(cards: dict[str, Path], tmp_path: Path) -> None:
    from mt_eval.store.publish import read_for_publish

    db = str(tmp_path / "review.db")
    hashes = publish(db, {k: read_for_publish(cards[k]) for k in ("near", "half")})
    result = cli("review", "create", "--db", db, "--card", hashes["near"], "--card", hashes["half"], "--size", 60,
                 "--seed", 4, "--name", "cal-test")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    for seed, name in enumerate(("ana", "ben", "cem")):
        done = cli("review", "import", review(db, "cal-test", name, "attentive", seed, tmp_path), "--db", db)
        assert done.exit_code == 0, done.output  # type: ignore[attr-defined]
    table = review_judgments(db, "cal-test")
    assert table.scale == "review" and table.datasets() == ["cal-test"]
    assert set(table.systems()) == {hashes["near"], hashes["half"]}
    # the reference: every real item's ratings averaged straight from the tables (controls have no card)
    expected: dict[tuple[str, str], list[int]] = defaultdict(list)
    with open_store(db) as store, store.session() as session:
        rows = session.execute(select(ReviewItem.entry_id, Card.run_card_hash, ReviewRating.value)
                               .join(ReviewItem, ReviewItem.id == ReviewRating.item_id)
                               .join(Card, Card.id == ReviewItem.card_id)).all()
    for entry, card_hash, value in rows:
        expected[(str(entry), card_hash)].append(value)
    got = {(s.entry, s.system): (s.score, s.raters) for s in table.segments()}
    assert got == {k: (sum(v) / len(v), len(v)) for k, v in expected.items()}
    assert len(got) == 120 and all(0 <= s <= 3 for s, _ in got.values())

    report = cli("calibrate", "-j", "review:cal-test", "--db", db, "--cards", cards["near"], "--cards", cards["half"],
                 "-b", "20", "--seeds", "1", "--json")
    assert report.exit_code == 0, report.output  # type: ignore[attr-defined]
    data = json.loads(report.stdout)  # type: ignore[attr-defined]
    assert data["scale"] == "review" and data["segments"] == 120 and data["systems"] == 2
