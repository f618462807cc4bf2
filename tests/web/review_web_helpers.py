"""Helpers of the web review tests: a fresh store with real published cards, accounts and a campaign,
and a form client that reads each page's CSRF token the way a browser would submit it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select
from web_helpers import cli, put_cards, running_server  # noqa: F401  (re-exported for the review browser tests)

from mt_eval.accounts import passwords
from mt_eval.accounts.users import add_account
from mt_eval.store import open_store
from mt_eval.store.models import Card, ReviewItem

if TYPE_CHECKING:
    from starlette.testclient import TestClient

PASSWORD = "correct horse battery staple"
CSRF = re.compile(r'name="csrf" value="([0-9a-f]{64})"')


def publish(db: str, *paths: Path) -> dict[str, str]:
    """Publish ``paths`` (``web_helpers.put_cards``); method name → run_card_hash."""
    put_cards(db, *paths)
    with open_store(db) as store, store.session() as session:
        return {m: h for h, m in session.execute(select(Card.run_card_hash, Card.method_name))}


def make_admin(db: str, name: str = "root") -> None:
    with open_store(db) as store:
        add_account(store, name, "admin", PASSWORD)


def csrf_of(html: str) -> str:
    found = CSRF.search(html)
    assert found, html[:2000]
    return found.group(1)


def sign_in(client: TestClient, name: str, password: str = PASSWORD) -> Any:
    """The login form, then the POST with its token (as a browser does)."""
    token = csrf_of(client.get("/login").text)
    return client.post("/login", data={"csrf": token, "name": name, "password": password}, follow_redirects=False)


def truths(db: str) -> dict[str, tuple[str, str | None]]:
    """item hash → (kind, method name or None): what each item really is (a reviewer cannot see this)."""
    with open_store(db) as store, store.session() as session:
        rows = session.execute(select(ReviewItem.item_hash, ReviewItem.kind, Card.method_name)
                               .outerjoin(Card, Card.id == ReviewItem.card_id)).all()
    return {h: (k, m) for h, k, m in rows}


def attentive(truth: tuple[str, str | None], index: int) -> int:
    """An attentive reviewer's rating: degraded controls 0, references 3, the near system 2–3, the half
    system mostly 1 (varied with ``index``, so the ratings are not all equal)."""
    kind, method = truth
    if kind == "control_good":
        return 3
    if kind == "control_bad":
        return 0
    if method == "half":
        return int(index % 4 != 0)
    return 2 + (index % 3 != 0)


@pytest.fixture(autouse=True, scope="module")
def cheap_hashing() -> Iterator[None]:
    """Cheap argon2 parameters in-process (a hash records its own parameters, so verification is the same
    code; the default cost is asserted in ``tests/accounts``). A served subprocess keeps the defaults."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(passwords, "HASHER", PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1))
        passwords._dummy.cache_clear()
        yield
    passwords._dummy.cache_clear()


def invited_reviewer(db: str, name: str, campaign: str | None = None) -> None:
    """A reviewer account as an admin invites one, with an identity of its own (``NAME@example.org``)
    verified by accepting: the review gate counts only such reviewers (``review.standing``)."""
    from mt_eval.accounts.invitations import accept, invite

    with open_store(db) as store:
        accept(store, invite(store, name, "reviewer", campaign=campaign, by="command line",
                             identity=f"{name}@example.org"), PASSWORD)


def humanise(db: str, reviewer: str, seed: int) -> None:
    """Give ``reviewer``'s stored ratings a person's timing (4–25 s an item, stamps that follow): ratings
    recorded in a loop through the domain are stamped within one second, which quality control flags as a
    script (``review.conduct``)."""
    import random
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import update

    from mt_eval.store.models import ReviewAssignment, Reviewer, ReviewRating

    rng = random.Random(seed)
    at = datetime(2026, 11, 23, 9, tzinfo=UTC) + timedelta(minutes=rng.uniform(0, 600))
    with open_store(db) as store, store.session() as session:
        ids = session.scalars(select(ReviewRating.id).join(ReviewAssignment).join(Reviewer)
                              .where(Reviewer.name == reviewer).order_by(ReviewRating.id)).all()
        for rating_id in ids:
            seconds = round(rng.uniform(4, 25), 3)
            at += timedelta(seconds=seconds)
            session.execute(update(ReviewRating).where(ReviewRating.id == rating_id)
                            .values(seconds=seconds, rated_at=at))
