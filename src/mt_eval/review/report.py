"""Reading a campaign's ratings back: progress, reviewer quality control, agreement, adjudication.

Quality control runs first and everything after it uses only the reviewers who pass it (``quality``):
agreement (Krippendorff's ordinal α with its interval, Gwet's AC2) over the real outputs — controls
are left out, being easy by design they would inflate agreement — and the adjudication list: outputs
whose ratings spread over three or more of the four scale points (max − min ≥ ``ADJUDICATION_SPAN``,
e.g. one reviewer says reject and another acceptable), the disagreements a person should settle.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from mt_eval.review.agreement import Agreement, agreement
from mt_eval.review.campaign import OUTPUT, find_campaign
from mt_eval.review.gate import ReviewVerdict, review_verdicts
from mt_eval.review.quality import ReviewerCheck
from mt_eval.review.ratings import RatingRow, included, load_ratings, reviewer_checks
from mt_eval.review.standing import campaign_standing
from mt_eval.store.db import Store
from mt_eval.store.models import ReviewAssignment, ReviewCampaign, Reviewer, ReviewItem

ADJUDICATION_SPAN = 2


@dataclass(frozen=True)
class ReviewerProgress:
    name: str
    rated: int
    total: int
    imported_at: datetime | None
    median_seconds: float | None


@dataclass(frozen=True)
class CampaignStatus:
    name: str
    uid: str
    created_at: datetime
    target_language: str
    reference_policy: str
    cards: list[str]
    methods: dict[str, str]  # card hash → method name (for the report; never in a reviewer's batch)
    entries: int
    outputs: int
    controls: int
    reviewers: list[ReviewerProgress]


def _status(session: Session, campaign: ReviewCampaign, rows: Sequence[RatingRow]) -> CampaignStatus:
    items = session.execute(select(ReviewItem.entry_id, ReviewItem.kind)
                            .where(ReviewItem.campaign_id == campaign.id)).all()
    assigned = session.execute(select(Reviewer.name, ReviewAssignment.imported_at)
                               .join(Reviewer, Reviewer.id == ReviewAssignment.reviewer_id)
                               .where(ReviewAssignment.campaign_id == campaign.id).order_by(Reviewer.name)).all()
    progress = []
    for name, imported_at in assigned:
        mine = [r for r in rows if r.reviewer == name]
        times = [r.seconds for r in mine if r.seconds is not None]
        progress.append(ReviewerProgress(name, len(mine), len(items), imported_at,
                                         statistics.median(times) if times else None))
    outputs = sum(k == OUTPUT for _, k in items)
    settings: dict[str, Any] = dict(campaign.settings)
    return CampaignStatus(campaign.name, campaign.uid, campaign.created_at, campaign.target_language,
                          campaign.reference_policy, [str(h) for h in settings.get("cards", [])],
                          {str(k): str(v) for k, v in settings.get("methods", {}).items()},
                          len({e for e, _ in items}), outputs, len(items) - outputs, progress)


def campaign_status(store: Store, campaign_ref: str) -> CampaignStatus:
    with store.session() as session:
        campaign = find_campaign(session, campaign_ref)
        return _status(session, campaign, load_ratings(session, campaign.id))


@dataclass(frozen=True)
class Disagreement:
    entry_id: int
    item_hash: str
    card_hash: str | None
    ratings: dict[str, int]
    comments: dict[str, str]


@dataclass(frozen=True)
class CampaignReport:
    status: CampaignStatus
    checks: list[ReviewerCheck]
    agreement: Agreement
    adjudication: list[Disagreement]
    verdicts: list[ReviewVerdict]  # per card of the campaign, over every campaign it is in


def rating_matrix(rows: Sequence[RatingRow]) -> np.ndarray:
    """``(reviewers, items)`` of the real outputs' ratings, NaN where a reviewer did not rate an item."""
    reviewers = sorted({r.reviewer for r in rows})
    items = sorted({r.item_id for r in rows if r.kind == OUTPUT})
    matrix = np.full((len(reviewers), len(items)), np.nan)
    rix, iix = {n: i for i, n in enumerate(reviewers)}, {n: i for i, n in enumerate(items)}
    for r in rows:
        if r.kind == OUTPUT:
            matrix[rix[r.reviewer], iix[r.item_id]] = r.value
    return matrix


def disagreements(rows: Sequence[RatingRow], span: int = ADJUDICATION_SPAN) -> list[Disagreement]:
    by_item: dict[int, list[RatingRow]] = defaultdict(list)
    for r in rows:
        if r.kind == OUTPUT:
            by_item[r.item_id].append(r)
    out = []
    for rs in by_item.values():
        values = [r.value for r in rs]
        if len(values) >= 2 and max(values) - min(values) >= span:
            out.append(Disagreement(rs[0].entry_id, rs[0].item_hash, rs[0].card_hash,
                                    {r.reviewer: r.value for r in rs},
                                    {r.reviewer: r.comment for r in rs if r.comment}))
    return sorted(out, key=lambda d: (d.entry_id, d.item_hash))


def campaign_report(store: Store, campaign_ref: str, *, n_resamples: int = 1000) -> CampaignReport:
    """Quality control, agreement among the reviewers who pass it, the adjudication list, and the
    §7.2 gate verdict of each card (over every campaign it is in)."""
    with store.session() as session:
        campaign = find_campaign(session, campaign_ref)
        rows = load_ratings(session, campaign.id)
        status = _status(session, campaign, rows)
        standing = campaign_standing(session, campaign.id)
    checks = reviewer_checks(rows, standing)
    kept = included(rows, standing)
    verdicts = review_verdicts(store, status.cards)
    return CampaignReport(status, list(checks.values()), agreement(rating_matrix(kept), n_resamples=n_resamples),
                          disagreements(kept), [verdicts[h] for h in status.cards])


def report_json(report: CampaignReport) -> dict[str, object]:
    """The report as plain JSON data (times as ISO 8601), for ``review report --json`` and the web pages."""
    import dataclasses

    def plain(value: object) -> object:
        if isinstance(value, datetime):
            return value.isoformat()
        if isinstance(value, float) and value != value:  # NaN is not JSON
            return None
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        return value

    return dict(plain(dataclasses.asdict(report)))  # type: ignore[call-overload]
