"""Rating on the web, one item at a time, into the same tables the offline import writes.

A web reviewer is the ``reviewers`` row of their account's name; their batch is the campaign's
assignment for that row (made by ``campaign.assign``, whose file token the web never needs: the
signed-in session stands in for it). ``record_rating`` checks what ``import_ratings`` checks for a
whole file — the item is the campaign's, its stored text still matches its hash, the reviewer is
assigned — and replaces only that item's earlier rating, so an offline import of the same batch
later still replaces everything, as it always did.

The reference of an entry is shown once *every* item of the entry is rated (``reference_shown``), never
before: the entry's other items may be controls, and a reference beside an unrated item is a key to it.
From then on the entry's ratings stand (a change would be made looking at the reference). A campaign whose
policy is ``never`` shows no reference, and its ratings may change until the batch is imported again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from mt_eval.errors import UserError
from mt_eval.review.campaign import batch_groups, item_hash
from mt_eval.review.offline import MAX_COMMENT, BatchGroup
from mt_eval.store.db import Store
from mt_eval.store.models import ReviewAssignment, ReviewCampaign, Reviewer, ReviewItem, ReviewRating


@dataclass(frozen=True)
class OnlineBatch:
    """A reviewer's campaign as the web shows it: blind groups, and what they rated so far."""

    campaign: ReviewCampaign
    groups: list[BatchGroup]
    rated: dict[str, int]  # item hash → value

    @property
    def total(self) -> int:
        return sum(len(g.items) for g in self.groups)

    def reference_shown(self, group: BatchGroup) -> bool:
        """Whether ``group``'s reference is on the reviewer's page: every item of it rated, and the campaign
        shows references at all (``never`` does not; an old ``always`` campaign is treated as ``after``)."""
        return self.campaign.reference_policy != "never" and all(i.hash in self.rated for i in group.items)

    def next_unrated(self) -> str | None:
        return next((i.hash for g in self.groups for i in g.items if i.hash not in self.rated), None)

    def locate(self, item: str) -> tuple[BatchGroup, int] | None:
        """The group holding ``item`` and its position (1-based) in the reviewer's order."""
        position = 0
        for group in self.groups:
            for candidate in group.items:
                position += 1
                if candidate.hash == item:
                    return group, position
        return None


def _assignment(session: Session, campaign_uid: str, reviewer: str) -> tuple[ReviewCampaign, ReviewAssignment]:
    found = session.execute(
        select(ReviewCampaign, ReviewAssignment)
        .join(ReviewAssignment, ReviewAssignment.campaign_id == ReviewCampaign.id)
        .join(Reviewer, Reviewer.id == ReviewAssignment.reviewer_id)
        .where(ReviewCampaign.uid == campaign_uid, Reviewer.name == reviewer)).first()
    if found is None:  # the same answer for an unknown campaign and someone else's: nothing to learn
        raise LookupError(campaign_uid)
    return found[0], found[1]


def assigned_campaigns(store: Store, reviewer: str) -> list[tuple[str, str, int, int]]:
    """(uid, name, rated, total) of every campaign ``reviewer`` is assigned to."""
    with store.session() as session:
        rows = session.execute(
            select(ReviewCampaign.uid, ReviewCampaign.name, ReviewAssignment.id, ReviewCampaign.id)
            .join(ReviewAssignment, ReviewAssignment.campaign_id == ReviewCampaign.id)
            .join(Reviewer, Reviewer.id == ReviewAssignment.reviewer_id)
            .where(Reviewer.name == reviewer).order_by(ReviewCampaign.created_at)).all()
        out = []
        for uid, name, assignment_id, campaign_id in rows:
            rated = len(session.scalars(select(ReviewRating.id).where(ReviewRating.assignment_id == assignment_id))
                        .all())
            total = len(session.scalars(select(ReviewItem.id).where(ReviewItem.campaign_id == campaign_id)).all())
            out.append((uid, name, rated, total))
        return out


def online_batch(store: Store, campaign_uid: str, reviewer: str) -> OnlineBatch:
    """``reviewer``'s batch of campaign ``campaign_uid``; ``LookupError`` unless they are assigned to it."""
    with store.session() as session:
        campaign, assignment = _assignment(session, campaign_uid, reviewer)
        rated = {h: v for h, v in session.execute(
            select(ReviewItem.item_hash, ReviewRating.value).join(ReviewItem, ReviewItem.id == ReviewRating.item_id)
            .where(ReviewRating.assignment_id == assignment.id))}
        groups = batch_groups(session, campaign, reviewer)
        session.expunge(campaign)
        return OnlineBatch(campaign, groups, rated)


def _entry_rated(session: Session, assignment: ReviewAssignment, item: ReviewItem) -> bool:
    """Whether every item of ``item``'s entry is rated in ``assignment`` (its reference is then shown)."""
    ids = set(session.scalars(select(ReviewItem.id).where(ReviewItem.campaign_id == item.campaign_id,
                                                          ReviewItem.entry_id == item.entry_id)))
    rated = set(session.scalars(select(ReviewRating.item_id).where(ReviewRating.assignment_id == assignment.id,
                                                                   ReviewRating.item_id.in_(list(ids)))))
    return ids <= rated


def record_rating(store: Store, campaign_uid: str, reviewer: str, item: str, value: int, *,
                  comment: str | None = None, seconds: float | None = None) -> None:
    """Store (or replace) ``reviewer``'s rating of one item. ``LookupError`` when the reviewer is not
    assigned to the campaign or the item is not the campaign's; ``UserError`` for a value off the scale."""
    if isinstance(value, bool) or not 0 <= value <= 3:
        raise UserError(f"rating {value!r} is not on the 0–3 scale")
    if comment is not None and len(comment) > MAX_COMMENT:
        raise UserError(f"a comment has at most {MAX_COMMENT} characters")
    if seconds is not None and not 0 <= seconds < 86_400:
        seconds = None  # a clock that jumped is no timing
    with store.session() as session:
        campaign, assignment = _assignment(session, campaign_uid, reviewer)
        found = session.scalars(select(ReviewItem).where(ReviewItem.campaign_id == campaign.id,
                                                         ReviewItem.item_hash == item)).first()
        if found is None:
            raise LookupError(item)
        if item_hash(campaign.uid, found.entry_id, str(found.detail.get("nonce", "")), found.output) != item:
            raise UserError(f"stored item {item[:16]}… no longer matches its hash (the store was edited)")
        rating = session.scalars(select(ReviewRating).where(ReviewRating.assignment_id == assignment.id,
                                                            ReviewRating.item_id == found.id)).first()
        if rating is not None and campaign.reference_policy != "never" and _entry_rated(session, assignment, found):
            # the reference is on screen once the whole entry is rated: a change would be made looking at it
            raise UserError("this entry is rated and its reference has been shown; the first ratings stand "
                            "(add what you noticed in a comment on another item, or ask the admin)")
        if rating is None:
            rating = ReviewRating(assignment_id=assignment.id, item_id=found.id)
            session.add(rating)
        rating.value, rating.comment, rating.seconds = value, comment or None, seconds
        rating.rated_at = datetime.now(UTC)
