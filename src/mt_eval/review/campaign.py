"""Review campaigns in the store: create one from published cards, hand a batch to a reviewer, take
the ratings back.

``create_campaign`` samples entries (``sampling``), copies each card's texts for them from the card's
``results[]`` (source, output, reference), adds control items (``controls``) and gives every item a hash
over (campaign, entry, a per-item nonce, output text), so a result file can only name items that exist
and a changed text is caught. Nothing a reviewer receives names a method or a card: items are known to
them by hash alone.

``assign`` creates (or re-issues) a reviewer's batch: a fresh random token goes into the exported file
and only its SHA-256 is stored, so a leaked store cannot be used to forge results. Re-issuing replaces
the token (an older file of that reviewer is then refused). ``import_ratings`` checks the token, every
item hash and every value before writing anything, and replaces that batch's earlier ratings.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from mt_eval.errors import UserError
from mt_eval.languages import language_card
from mt_eval.review.controls import CONTROL_SHARE, build_controls, control_count
from mt_eval.review.offline import Batch, BatchGroup, BatchItem, ParsedResult
from mt_eval.review.sampling import DEFAULT_SIZE, Candidate, blind_order, entry_order, stratified_sample
from mt_eval.store.db import Store
from mt_eval.store.models import Card, ReviewAssignment, ReviewCampaign, Reviewer, ReviewItem, ReviewRating

REFERENCE_POLICIES = ("after", "always", "never")  # when the page shows the reference: after rating by default
OUTPUT = "output"
MIN_PREFIX = 6


@dataclass(frozen=True)
class CampaignSummary:
    """What ``create_campaign`` made."""

    name: str
    uid: str
    cards: list[str]
    entries: int
    outputs: int
    controls: dict[str, int] = field(default_factory=dict)


def item_hash(uid: str, entry_id: int, nonce: str, output: str) -> str:
    """The item's identity: SHA-256 over campaign uid, entry, nonce and the exact output text."""
    return hashlib.sha256("\x1f".join((uid, str(entry_id), nonce, output)).encode("utf-8")).hexdigest()


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _cards(session: Session, prefixes: Sequence[str]) -> list[tuple[int, str, dict[str, Any]]]:
    """(id, run_card_hash, card) for each hash or hash prefix, in the order given; one line per problem."""
    found: list[tuple[int, str, dict[str, Any]]] = []
    for prefix in prefixes:
        wanted = prefix.strip().lower()
        if len(wanted) < MIN_PREFIX or any(c not in "0123456789abcdef" for c in wanted):
            raise UserError(f"--card {prefix!r}: give a run_card_hash or its first {MIN_PREFIX} or more hex digits")
        stmt = select(Card.id, Card.run_card_hash, Card.card).where(Card.run_card_hash.startswith(wanted))
        rows = session.execute(stmt.limit(2)).all()
        if not rows:
            raise UserError(f"--card {prefix}: no published card's run_card_hash starts with it")
        if len(rows) > 1:
            raise UserError(f"--card {prefix}: several cards' hashes start with it; give more digits")
        if any(rows[0][1] == h for _, h, _ in found):
            raise UserError(f"--card {prefix}: the same card is given twice")
        found.append((rows[0][0], rows[0][1], dict(rows[0][2])))
    return found


def create_campaign(store: Store, card_refs: Sequence[str], *, size: int = DEFAULT_SIZE, seed: int = 0,
                    name: str | None = None, control_share: float = CONTROL_SHARE,
                    reference_policy: str = "after") -> CampaignSummary:
    """A campaign over the published cards ``card_refs`` (all on one dataset): ``size`` entries sampled
    with ``seed``, one item per card and entry, plus controls."""
    if not card_refs:
        raise UserError("give at least one card (--card HASH)")
    if size < 1:
        raise UserError(f"--size must be at least 1, not {size}")
    if not 0 <= control_share <= 0.5:
        raise UserError(f"--controls must be a share between 0 and 0.5, not {control_share}")
    if reference_policy not in REFERENCE_POLICIES:
        raise UserError(f"--reference must be one of {', '.join(REFERENCE_POLICIES)}")
    uid = secrets.token_hex(8)
    with store.session() as session:
        cards = _cards(session, card_refs)
        datasets = {c["dataset"]["sha256"] for _, _, c in cards}
        if len(datasets) > 1:
            raise UserError("the cards are on different datasets; a campaign compares outputs for the same entries")
        name = name or f"review-{cards[0][1][:8]}-{uid[:6]}"
        if session.scalar(select(func.count()).where(ReviewCampaign.name == name)):
            raise UserError(f"a campaign named {name!r} already exists")
        results = [{int(r["entry_id"]): r for r in c["results"]} for _, _, c in cards]
        common = sorted(set.intersection(*(set(r) for r in results)))
        if not common:
            raise UserError("the cards share no entry: nothing to compare")
        first = results[0]
        sample = stratified_sample([Candidate(i, int(first[i]["difficulty"]), first[i].get("register"))
                                    for i in common], size, seed)
        dataset = cards[0][2]["dataset"]
        campaign = ReviewCampaign(
            uid=uid, name=name, dataset_sha256=dataset["sha256"], source_language=dataset["source_language"],
            target_language=dataset["target_language"], seed=seed, size=size, control_share=control_share,
            reference_policy=reference_policy, settings={
                "cards": [h for _, h, _ in cards],
                "methods": {h: str(c.get("method", {}).get("name", "")) for _, h, c in cards}},
            created_at=datetime.now(UTC))
        session.add(campaign)
        session.flush()
        for entry in sample:
            for (card_id, _, _), by_entry in zip(cards, results, strict=True):
                _add_item(session, campaign, by_entry[entry], card_id, OUTPUT, by_entry[entry]["predicted"], {})
        references = {i: str(first[i]["reference"]) for i in sample}
        count = control_count(len(sample) * len(cards), control_share)
        controls = build_controls(references, language_card(dataset["target_language"]), count=count, seed=seed)
        for control in controls:
            _add_item(session, campaign, first[control.entry_id], None, control.kind, control.text, control.detail)
    kinds = {k: sum(c.kind == k for c in controls) for k in ("control_bad", "control_good")}
    return CampaignSummary(name, uid, [h for _, h, _ in cards], len(sample), len(sample) * len(cards), kinds)


def _add_item(session: Session, campaign: ReviewCampaign, result: dict[str, Any], card_id: int | None,
              kind: str, output: str, detail: dict[str, object]) -> None:
    nonce = secrets.token_hex(8)
    entry = int(result["entry_id"])
    session.add(ReviewItem(
        campaign_id=campaign.id, entry_id=entry, card_id=card_id, kind=kind, source=str(result["source"]),
        output=output, reference=str(result["reference"]), difficulty=int(result["difficulty"]),
        register=result.get("register"), item_hash=item_hash(campaign.uid, entry, nonce, output),
        detail={**detail, "nonce": nonce}))


def find_campaign(session: Session, ref: str) -> ReviewCampaign:
    """A campaign by name or uid."""
    found = session.scalars(select(ReviewCampaign).where(
        (ReviewCampaign.name == ref) | (ReviewCampaign.uid == ref))).first()
    if found is None:
        raise UserError(f"no review campaign named {ref!r} in the store")
    return found


def assign(store: Store, campaign_ref: str, reviewer: str) -> Batch:
    """The batch for ``reviewer`` (created on first use) with a fresh token; everything the page needs."""
    reviewer = reviewer.strip()
    if not reviewer or len(reviewer) > 200:
        raise UserError("--reviewer needs a name of 1 to 200 characters")
    token = secrets.token_urlsafe(24)
    now = datetime.now(UTC)
    with store.session() as session:
        campaign = find_campaign(session, campaign_ref)
        person = session.scalars(select(Reviewer).where(Reviewer.name == reviewer)).first()
        if person is None:
            person = Reviewer(name=reviewer, created_at=now)
            session.add(person)
            session.flush()
        assignment = session.scalars(select(ReviewAssignment).where(
            ReviewAssignment.campaign_id == campaign.id, ReviewAssignment.reviewer_id == person.id)).first()
        if assignment is None:
            session.add(ReviewAssignment(campaign_id=campaign.id, reviewer_id=person.id,
                                         token_sha256=token_hash(token), created_at=now))
        else:
            assignment.token_sha256 = token_hash(token)  # re-issued: an older file of this batch is refused
        return Batch(campaign.name, campaign.uid, reviewer, token, campaign.reference_policy,
                     campaign.source_language, campaign.target_language, batch_groups(session, campaign, reviewer))


def batch_groups(session: Session, campaign: ReviewCampaign, reviewer: str) -> list[BatchGroup]:
    """``reviewer``'s items of ``campaign`` grouped by entry, in their blind order (the exported batch's
    order, and the web review pages')."""
    items = session.scalars(select(ReviewItem).where(ReviewItem.campaign_id == campaign.id)
                            .order_by(ReviewItem.entry_id, ReviewItem.id)).all()
    by_entry: dict[int, list[ReviewItem]] = {}
    for item in items:
        by_entry.setdefault(item.entry_id, []).append(item)
    groups = []
    for number, entry in enumerate(entry_order(sorted(by_entry), campaign.seed, reviewer), 1):
        shown = by_entry[entry]
        order = blind_order(len(shown), campaign.seed, reviewer, entry)
        groups.append(BatchGroup(number, shown[0].source, shown[0].reference,
                                 [BatchItem(shown[i].item_hash, shown[i].output) for i in order]))
    return groups


@dataclass(frozen=True)
class ImportSummary:
    campaign: str
    reviewer: str
    ratings: int
    items: int
    replaced: int


def import_ratings(store: Store, result: ParsedResult, *, file: str | None = None) -> ImportSummary:
    """Store one reviewer's ratings after checking the token and every item hash (all or nothing)."""
    with store.session() as session:
        campaign = session.scalars(select(ReviewCampaign).where(ReviewCampaign.uid == result.campaign)).first()
        if campaign is None:
            raise UserError(f"campaign {result.campaign!r} is not in this store", file=file)
        found = session.execute(
            select(ReviewAssignment, Reviewer.name).join(Reviewer, Reviewer.id == ReviewAssignment.reviewer_id)
            .where(ReviewAssignment.campaign_id == campaign.id,
                   ReviewAssignment.token_sha256 == token_hash(result.token))).first()
        if found is None:
            raise UserError(f"refused: the reviewer token is not valid for campaign {campaign.name!r} "
                            "(a wrong or re-issued token)", file=file)
        assignment, reviewer = found
        if result.reviewer != reviewer:
            raise UserError(f"refused: the file names reviewer {result.reviewer!r} but its token is "
                            f"{reviewer!r}'s", file=file)
        items = {i.item_hash: i for i in session.scalars(
            select(ReviewItem).where(ReviewItem.campaign_id == campaign.id))}
        for rating in result.ratings:
            item = items.get(rating.item)
            if item is None:
                raise UserError(f"refused: item {rating.item[:16]}… is not an item of campaign {campaign.name!r} "
                                "(changed or forged)", file=file)
            if item_hash(campaign.uid, item.entry_id, str(item.detail.get("nonce", "")), item.output) != item.item_hash:
                raise UserError(f"refused: stored item {rating.item[:16]}… no longer matches its hash "
                                "(the store was edited)", file=file)
        replaced = session.scalar(select(func.count()).select_from(ReviewRating)
                                  .where(ReviewRating.assignment_id == assignment.id)) or 0
        session.execute(delete(ReviewRating).where(ReviewRating.assignment_id == assignment.id))
        for rating in result.ratings:
            session.add(ReviewRating(assignment_id=assignment.id, item_id=items[rating.item].id, value=rating.value,
                                     comment=rating.comment, seconds=rating.seconds, rated_at=rating.rated_at))
        assignment.imported_at = datetime.now(UTC)
        return ImportSummary(campaign.name, reviewer, len(result.ratings), len(items), int(replaced))
