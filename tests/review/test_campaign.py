"""Campaigns in a real store (SQLite and PostgreSQL): create from published cards, export, import with
every check, status, report, and the §7.2 gate verdict from simulated reviewers."""

from __future__ import annotations

import json
from pathlib import Path

from review_helpers import cli, publish, review, truths
from sqlalchemy import func, select

from mt_eval.review.campaign import assign
from mt_eval.review.gate import accepted_hashes, review_verdict
from mt_eval.review.offline import payload
from mt_eval.store import open_store
from mt_eval.store.db import downgrade, table_names, upgrade
from mt_eval.store.models import Card, ReviewItem, ReviewRating

REVIEW_TABLES = {"review_campaigns", "review_items", "reviewers", "review_assignments", "review_ratings"}


def _create(db: str, hashes: dict[str, str], *extra: object) -> None:
    result = cli("review", "create", "--db", db, "--card", hashes["near"][:8], "--card", hashes["half"],
                 "--size", 60, "--seed", 4, "--name", "es-test", *extra)
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]


def _one_line_error(result: object, needle: str) -> None:
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    lines = result.output.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], lines


def test_campaign_items_carry_card_texts_and_hide_methods(review_cards: dict[str, Path], verified: dict,
                                                          sqlite_db: str) -> None:
    db_url = sqlite_db
    hashes = publish(db_url, verified)
    _create(db_url, hashes)
    cards = {k: json.loads(p.read_text(encoding="utf-8")) for k, p in review_cards.items()}
    results = {k: {r["entry_id"]: r for r in c["results"]} for k, c in cards.items()}
    with open_store(db_url) as store, store.session() as session:
        items = session.execute(select(ReviewItem, Card.method_name).outerjoin(Card)).all()
        batch = assign(store, "es-test", "ana")
    outputs = [(i, m) for i, m in items if i.kind == "output"]
    # 12 controls take the place of 12 outputs: 6 more entries keep 60 × 2 real outputs
    assert len(outputs) == 120 and len({i.entry_id for i, _ in items}) == 66
    for item, method in outputs:  # texts are the card's own
        r = results[method][item.entry_id]
        assert (item.source, item.output, item.reference) == (r["source"], r["predicted"], r["reference"])
    controls = [i for i, _ in items if i.kind != "output"]
    assert len(controls) == 12 and sum(i.kind == "control_bad" for i in controls) == 8
    order = list(cards)
    for control in controls:  # each in one card's place, built from that card's own output (or the reference)
        r = results[order[int(control.detail["slot"])]][control.entry_id]
        if control.kind == "control_good":
            assert control.output == r["reference"]
        else:
            assert control.output != r["predicted"] and len(control.output.split()) == len(r["predicted"].split())
    per_entry = {e: [i for i, _ in items if i.entry_id == e] for e in {i.entry_id for i, _ in items}}
    assert {len(v) for v in per_entry.values()} == {2}  # every entry shows one text per card
    # the batch: every item once, no method, card, item kind or reference anywhere
    page = json.dumps(payload(batch), ensure_ascii=False)
    texts = " ".join([g.source + " " + " ".join(i.text for i in g.items) for g in batch.groups])
    for secret in (*hashes.values(), *(c["method"]["name"] for c in cards.values()), "control", "output"):
        assert page.count(secret) == texts.count(secret), secret
    assert all(g.reference == "" for g in batch.groups) and '"reference"' not in page
    assert batch.item_count == 132 and len(batch.groups) == 66


def _board(db: str, *extra: str) -> dict[str, dict]:
    result = cli("leaderboard", "--db", db, "--json", *extra)
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    return {r["run_card_hash"]: r for r in json.loads(result.stdout)}  # type: ignore[attr-defined]


def test_flow_status_report_and_gate(verified: dict, db_url: str, tmp_path: Path) -> None:
    hashes = publish(db_url, verified)
    tier = verified["near"].card["scores"]["quality_tier"]
    assert tier in ("deployable", "fluent")  # the gate matters only for these: the test must reach it
    before = _board(db_url)[hashes["near"]]
    assert before["quality_tier_shown"] == f"{tier} — awaiting review" and before["effective_tier"] == "functional"
    assert hashes["near"] not in _board(db_url, "--tier", tier)
    _create(db_url, hashes)
    people = {"ana": "attentive", "ben": "attentive", "eva": "random", "flo": "always-3"}
    for seed, (name, kind) in enumerate(people.items()):
        result = cli("review", "import", review(db_url, "es-test", name, kind, seed, tmp_path), "--db", db_url)
        assert result.exit_code == 0 and "132 of 132 items rated by" in result.output, result.output
    with open_store(db_url) as store:  # two attentive reviewers are not a community yet
        assert not review_verdict(store, hashes["near"]).accepted
        assert "2 reviewer(s) passed" in review_verdict(store, hashes["near"]).reasons[0]
    result = cli("review", "import", review(db_url, "es-test", "cem", "attentive", 9, tmp_path), "--db", db_url)
    assert result.exit_code == 0, result.output
    with open_store(db_url) as store:
        near, half = review_verdict(store, hashes["near"]), review_verdict(store, hashes["half"])
        assert accepted_hashes(store, list(hashes.values())) == {hashes["near"]}
    assert near.accepted and near.reviewers == 3 and near.entries == 60 and near.mean is not None
    assert near.mean > 2.4 and near.ci_lower is not None and near.ci_lower >= 1.5
    after = _board(db_url)  # the leaderboard now shows the tier review earned, and filters by it
    assert after[hashes["near"]]["quality_tier_shown"] == tier and after[hashes["near"]]["review_accepted"]
    assert set(_board(db_url, "--tier", tier)) == {hashes["near"]}
    assert hashes["near"] not in _board(db_url, "--tier", "functional")
    assert not half.accepted and half.mean is not None and half.mean < 1 and any("below acceptable" in r
                                                                                  for r in half.reasons)
    report = cli("review", "report", "es-test", "--db", db_url, "--json")
    assert report.exit_code == 0, report.output
    data = json.loads(report.stdout)
    outcome = {c["reviewer"]: c["passed"] for c in data["checks"]}
    assert outcome == {"ana": True, "ben": True, "cem": True, "eva": False, "flo": False}
    assert data["agreement"]["reviewers"] == 3 and data["agreement"]["items"] == 120
    assert data["agreement"]["alpha"]["point"] > 0.6 and data["agreement"]["ac2"] > 0.6
    for d in data["adjudication"]:
        values = d["ratings"].values()
        assert max(values) - min(values) >= 2 and set(d["ratings"]) <= {"ana", "ben", "cem"}
    text = cli("review", "report", "es-test", "--db", db_url)
    assert text.exit_code == 0 and "accepted" in text.stdout and "excluded" in text.stdout
    # a second campaign over the same entries adds ratings, not entries: the gate's evidence is per entry
    second = cli("review", "create", "--db", db_url, "--card", hashes["near"], "--card", hashes["half"],
                 "--size", 60, "--seed", 4, "--name", "es-test-2")
    assert second.exit_code == 0, second.output
    (tmp_path / "again").mkdir()
    result = cli("review", "import", review(db_url, "es-test-2", "ana", "attentive", 11, tmp_path / "again"),
                 "--db", db_url)
    assert result.exit_code == 0, result.output
    with open_store(db_url) as store:
        assert review_verdict(store, hashes["near"]).entries == 60
    again = cli("review", "import", tmp_path / "ana.json", "--db", db_url)  # a later save replaces the earlier
    assert again.exit_code == 0 and "replacing 132 earlier" in again.output, again.output
    status = cli("review", "status", "es-test", "--db", db_url)
    assert status.exit_code == 0 and "flo" in status.stdout and "100%" in status.stdout


def test_refusals(verified: dict, sqlite_db: str, tmp_path: Path) -> None:
    db_url = sqlite_db
    hashes = publish(db_url, verified)
    _create(db_url, hashes)
    good = review(db_url, "es-test", "ana", "attentive", 1, tmp_path, fraction=0.5)
    data = json.loads(good.read_text(encoding="utf-8"))

    def attempt(change: dict[str, object], needle: str, name: str) -> None:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({**data, **change}), encoding="utf-8")
        _one_line_error(cli("review", "import", path, "--db", db_url), needle)

    forged = [dict(r) for r in data["ratings"]]
    forged[3]["item"] = "0" * 64
    attempt({"ratings": forged}, "is not an item of campaign", "forged-hash")
    attempt({"token": data["token"] + "x"}, "token is not valid", "bad-token")
    seven = [dict(r) for r in data["ratings"]]
    seven[0]["value"] = 7
    attempt({"ratings": seven}, "rating 7 is not on the 0–3 scale", "seven")
    attempt({"reviewer": "ben"}, "names reviewer 'ben'", "other-reviewer")
    attempt({"ratings": data["ratings"] + data["ratings"][:1]}, "rated twice", "twice")
    attempt({"format": "something-else"}, "not a review result", "format")
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    _one_line_error(cli("review", "import", tmp_path / "broken.json", "--db", db_url), "invalid JSON")
    with open_store(db_url) as store, store.session() as session:  # nothing was written by any refusal
        assert session.scalar(select(func.count()).select_from(ReviewRating)) == 0
    assert cli("review", "import", good, "--db", db_url).exit_code == 0  # the untouched file is accepted
    review(db_url, "es-test", "ana", "attentive", 1, tmp_path / "..")  # exporting again re-issues the token
    _one_line_error(cli("review", "import", good, "--db", db_url), "token is not valid")
    # create: bad cards and options
    _one_line_error(cli("review", "create", "--db", db_url, "--card", "zz"), "6 or more hex digits")
    _one_line_error(cli("review", "create", "--db", db_url, "--card", "abcdef12"), "no published card")
    _one_line_error(cli("review", "create", "--db", db_url, "--card", hashes["near"], "--name", "es-test"),
                    "already exists")
    _one_line_error(cli("review", "create", "--db", db_url, "--card", hashes["near"], "--reference", "x"),
                    "--reference")
    _one_line_error(cli("review", "status", "nope", "--db", db_url), "no review campaign")
    assert truths(db_url)  # the store still holds the campaign


def test_migration_downgrade_one_step(sqlite_db: str) -> None:
    # on PostgreSQL too, through tests/store's downgrade to 0001 and back
    store = open_store(sqlite_db)
    assert table_names(store.engine) >= REVIEW_TABLES
    downgrade(store.engine, "0002")
    names = table_names(store.engine)
    assert not REVIEW_TABLES & names and {"run_cards", "sweeps", "card_links"} <= names
    upgrade(store.engine)
    assert table_names(store.engine) >= REVIEW_TABLES
    store.close()


def test_a_rating_made_before_the_reference_stands(verified: dict, sqlite_db: str) -> None:
    """With the default policy an entry's reference appears once every item of the entry is rated (another
    item of it may be a control): until then a rating may change, from then on the entry's ratings stand.
    With ``--reference never`` no reference is shown and a reviewer may change their mind; ``always`` (a
    reference beside unrated items) is no longer offered."""
    import pytest

    from mt_eval.errors import UserError
    from mt_eval.review.online import online_batch, record_rating

    hashes = publish(sqlite_db, verified)
    refused = cli("review", "create", "--db", sqlite_db, "--card", hashes["near"], "--reference", "always")
    _one_line_error(refused, "--reference must be one of after, never")
    for name, policy in (("after-test", "after"), ("never-test", "never")):
        result = cli("review", "create", "--db", sqlite_db, "--card", hashes["near"], "--card", hashes["half"],
                     "--size", 12, "--seed", 1, "--name", name, "--reference", policy)
        assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
        with open_store(sqlite_db) as store:
            uid = assign(store, name, "ana").uid
            group = online_batch(store, uid, "ana").groups[0]
            first, second = (i.hash for i in group.items)
            record_rating(store, uid, "ana", first, 2)
            record_rating(store, uid, "ana", first, 1)  # the entry is not complete: no reference yet
            batch = online_batch(store, uid, "ana")
            assert not batch.reference_shown(batch.groups[0])
            record_rating(store, uid, "ana", second, 3)
            batch = online_batch(store, uid, "ana")
            assert batch.reference_shown(batch.groups[0]) == (policy == "after")
            if policy == "after":
                with pytest.raises(UserError, match="first ratings stand"):
                    record_rating(store, uid, "ana", first, 3)
            else:
                record_rating(store, uid, "ana", first, 3)
            assert online_batch(store, uid, "ana").rated[first] == (1 if policy == "after" else 3)
