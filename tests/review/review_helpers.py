"""Simulated reviewers for the store tests: a result file as the offline page saves it, with ratings
chosen from what each item really is (looked up in the store, which a real reviewer cannot see), timed
like a person (seconds per item spread over 2–20 s, time stamps that follow them), by an account an admin
invited with an identity of its own (``invited``), unless a test says otherwise."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from sqlalchemy import select
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.review.campaign import assign
from mt_eval.review.offline import RESULT_FORMAT, Batch
from mt_eval.store import open_store
from mt_eval.store.models import Account, Card, ReviewItem
from store_fixtures import register_corpus

runner = CliRunner()
ADMIN = "root"
PASSWORD = "correct horse battery staple"


def cli(*args: object) -> object:
    """``mt-eval ARGS`` in-process; the result has ``exit_code``, ``stdout``, ``stderr``, ``output``."""
    return runner.invoke(app, [str(a) for a in args])


def publish(db: str, verified: dict[str, object]) -> dict[str, str]:
    """Publish the verified cards into ``db`` (as ``mt-eval publish`` does); their run_card_hash by kind."""
    from mt_eval.store import open_store
    from mt_eval.store.publish import publish as publish_cards

    register_corpus(db)  # publish rescores against the registered dataset (the same call again is a no-op)
    with open_store(db) as store:
        publish_cards(store, list(verified.values()))  # type: ignore[arg-type]
    return {k: str(p.card["run_card_hash"]) for k, p in verified.items()}  # type: ignore[attr-defined]


def truths(db: str) -> dict[str, tuple[str, str | None]]:
    """item hash → (kind, the card's method name or None for a control)."""
    with open_store(db) as store, store.session() as session:
        rows = session.execute(select(ReviewItem.item_hash, ReviewItem.kind, Card.method_name)
                               .outerjoin(Card, Card.id == ReviewItem.card_id)).all()
    return {h: (k, m) for h, k, m in rows}


def rate(kind: str, truth: tuple[str, str | None], rng: np.random.Generator) -> int:
    """A simulated reviewer's rating: ``attentive`` rates by true quality (near: 2–3, half: 0–1,
    degraded controls: 0–1, references: 3), ``random`` anything, ``always-3`` 3."""
    if kind == "random":
        return int(rng.integers(0, 4))
    if kind == "always-3":
        return 3
    item_kind, method = truth
    if item_kind == "control_good":
        return 3
    if item_kind == "control_bad" or method == "half":
        return int(rng.choice([0, 1], p=[0.6, 0.4]))
    return int(rng.choice([2, 3], p=[0.3, 0.7]))


def invited(db: str, name: str, *, campaign: str | None = None, identity: str | None = None) -> None:
    """A reviewer account as the admin ``root`` invites one (made first if missing), with ``identity``
    (default ``NAME@example.org``) verified by accepting the invitation."""
    from mt_eval.accounts.invitations import accept, invite
    from mt_eval.accounts.users import add_account

    with open_store(db) as store:
        with store.session() as session:
            has_admin = session.scalars(select(Account.id).where(Account.name == ADMIN)).first() is not None
        if not has_admin:
            add_account(store, ADMIN, "admin", PASSWORD)
        token = invite(store, name, "reviewer", campaign=campaign, by=ADMIN, identity=identity or f"{name}@example.org")
        accept(store, token, PASSWORD)


def _has_account(db: str, name: str) -> bool:
    with open_store(db) as store, store.session() as session:
        return session.scalars(select(Account.id).where(Account.name == name)).first() is not None


def result_for(batch: Batch, kind: str, db: str, seed: int, *, fraction: float = 1.0) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    known = truths(db)
    items = [i for g in batch.groups for i in g.items]
    items = items[: int(len(items) * fraction)]
    at = datetime(2026, 11, 23, 9, tzinfo=UTC) + timedelta(minutes=float(rng.uniform(0, 600)))
    ratings = []
    for i in items:
        seconds = round(float(rng.uniform(2, 20)), 3)
        at += timedelta(seconds=seconds)
        ratings.append({"item": i.hash, "value": rate(kind, known[i.hash], rng), "comment": None,
                        "seconds": seconds, "rated_at": at.isoformat()})
    return {"format": RESULT_FORMAT, "campaign": batch.uid, "reviewer": batch.reviewer, "token": batch.token,
            "ratings": ratings}


def review(db: str, campaign: str, reviewer: str, kind: str, seed: int, folder: Path, *, account: bool = True,
           **kw: float) -> Path:
    """Export ``reviewer``'s batch, fill it in as ``kind`` would and write the result file (``account``: as
    an invited reviewer account, made if missing)."""
    if account and not _has_account(db, reviewer):
        invited(db, reviewer)
    with open_store(db) as store:
        batch = assign(store, campaign, reviewer)
    path = folder / f"{reviewer}.json"
    path.write_text(json.dumps(result_for(batch, kind, db, seed, **kw)), encoding="utf-8")
    return path
