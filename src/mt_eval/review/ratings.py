"""A campaign's stored ratings, and which reviewers count: the filter that the report and the gate both
apply before anything else. A reviewer counts when their degraded controls are rated below the rest
(``quality``), nothing in how they rated looks scripted (``conduct``) and, for the gate and the report,
they stand as a reviewer of the community (``standing``: invited by an admin, a verified identity of their
own, not a submitter of a card of the campaign)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from mt_eval.review.conduct import conduct_flags
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
    rated_at: datetime | None = None


def load_ratings(session: Session, campaign_id: int) -> list[RatingRow]:
    stmt = (select(Reviewer.name, ReviewItem.id, ReviewItem.item_hash, ReviewItem.entry_id, Card.run_card_hash,
                   ReviewItem.kind, ReviewRating.value, ReviewRating.seconds, ReviewRating.comment,
                   ReviewRating.rated_at)
            .join(ReviewAssignment, ReviewAssignment.id == ReviewRating.assignment_id)
            .join(Reviewer, Reviewer.id == ReviewAssignment.reviewer_id)
            .join(ReviewItem, ReviewItem.id == ReviewRating.item_id)
            .outerjoin(Card, Card.id == ReviewItem.card_id)
            .where(ReviewAssignment.campaign_id == campaign_id)
            .order_by(Reviewer.name, ReviewItem.id))  # fmt: skip
    return [RatingRow(*row[:9], rated_at=row[9]) for row in session.execute(stmt)]


def reviewer_checks(rows: Sequence[RatingRow], standing: Mapping[str, str | None] | None = None
                    ) -> dict[str, ReviewerCheck]:
    """Each reviewer's control test (degraded controls against everything else they rated), with the
    conduct flags and, given ``standing`` (reviewer → why they do not count, or None), their standing.
    A reviewer passes only when all three say so; the reason lists every problem."""
    by_reviewer: dict[str, list[RatingRow]] = defaultdict(list)
    for r in rows:
        by_reviewer[r.reviewer].append(r)
    flags = conduct_flags(rows)
    out = {}
    for name, rs in sorted(by_reviewer.items()):
        check = check_reviewer(name, [r.value for r in rs if r.kind == BAD], [r.value for r in rs if r.kind != BAD])
        problems = ([] if check.passed else [check.reason]) + flags.get(name, [])
        if standing is not None and standing.get(name, "not an assigned reviewer"):
            problems.append(str(standing.get(name, "not an assigned reviewer")))
        out[name] = replace(check, passed=not problems, reason="; ".join(problems) or check.reason,
                            flags=tuple(flags.get(name, [])))
    return out


def included(rows: Sequence[RatingRow], standing: Mapping[str, str | None] | None = None) -> list[RatingRow]:
    """The ratings of reviewers who pass quality control (and stand, given ``standing``)."""
    passed = {name for name, check in reviewer_checks(rows, standing).items() if check.passed}
    return [r for r in rows if r.reviewer in passed]


def counted_ratings(session: Session, campaign_id: int) -> list[RatingRow]:
    """The ratings the gate counts in one campaign: reviewers who pass quality control and stand."""
    from mt_eval.review.standing import campaign_standing

    return included(load_ratings(session, campaign_id), campaign_standing(session, campaign_id))
