"""A campaign's stored ratings, and which reviewers count: the quality-control filter that the report
and the gate both apply before anything else (``quality``: degraded controls must be rated below the
rest)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from mt_eval.review.quality import ReviewerCheck, check_reviewer
from mt_eval.store.models import Card, ReviewAssignment, Reviewer, ReviewItem, ReviewRating

BAD = "control_bad"


@dataclass(frozen=True)
class RatingRow:
    """One stored rating with what is needed to analyse it."""

    reviewer: str
    item_id: int
    item_hash: str
    entry_id: int
    card_hash: str | None
    kind: str
    value: int
    seconds: float | None
    comment: str | None


def load_ratings(session: Session, campaign_id: int) -> list[RatingRow]:
    stmt = (select(Reviewer.name, ReviewItem.id, ReviewItem.item_hash, ReviewItem.entry_id, Card.run_card_hash,
                   ReviewItem.kind, ReviewRating.value, ReviewRating.seconds, ReviewRating.comment)
            .join(ReviewAssignment, ReviewAssignment.id == ReviewRating.assignment_id)
            .join(Reviewer, Reviewer.id == ReviewAssignment.reviewer_id)
            .join(ReviewItem, ReviewItem.id == ReviewRating.item_id)
            .outerjoin(Card, Card.id == ReviewItem.card_id)
            .where(ReviewAssignment.campaign_id == campaign_id)
            .order_by(Reviewer.name, ReviewItem.id))  # fmt: skip
    return [RatingRow(*row) for row in session.execute(stmt)]


def reviewer_checks(rows: Sequence[RatingRow]) -> dict[str, ReviewerCheck]:
    """Each reviewer's control test: degraded controls against everything else they rated."""
    by_reviewer: dict[str, list[RatingRow]] = defaultdict(list)
    for r in rows:
        by_reviewer[r.reviewer].append(r)
    return {name: check_reviewer(name, [r.value for r in rs if r.kind == BAD], [r.value for r in rs if r.kind != BAD])
            for name, rs in sorted(by_reviewer.items())}


def included(rows: Sequence[RatingRow]) -> list[RatingRow]:
    """The ratings of reviewers who pass quality control."""
    passed = {name for name, check in reviewer_checks(rows).items() if check.passed}
    return [r for r in rows if r.reviewer in passed]
