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

from mt_eval.corpus.models import SECRET_SEGMENTS, is_secret
from mt_eval.errors import UserError
from mt_eval.languages import language_card
from mt_eval.review.controls import CONTROL_SHARE, build_controls, control_count
from mt_eval.review.offline import Batch, BatchGroup, BatchItem, ParsedResult
from mt_eval.review.sampling import DEFAULT_SIZE, Candidate, blind_order, entry_order, stratified_sample
from mt_eval.review.standing import own_cards
from mt_eval.store.dataset_models import RegisteredDataset, RegisteredEntry
from mt_eval.store.db import Store
from mt_eval.store.models import Card, ReviewAssignment, ReviewCampaign, Reviewer, ReviewItem, ReviewRating
from mt_eval.store.review_pages import SECRET_REVIEW_SETTING, secret_review_allowed

# when the web page shows an entry's reference: once every item of the entry is rated, or never; the offline
# file never carries it (a reference before rating is a scoring key for a script)
REFERENCE_POLICIES = ("after", "never")
SECRET_REFUSAL = ("these runs hold gold_standard or held_out entries, whose texts reviewers would see; only a "
                  "governance store (review_secret_segments = allow) reviews them")
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


def _registered_secret(session: Session, dataset_sha256: str, cards: list[tuple[int, str, dict[str, Any]]]) -> bool:
    """Whether a card holds an entry that the store's registered dataset puts in a secret segment (a card's
    own ``segment`` fields are the submitter's word; the registered dataset is the store's)."""
    secret = set(session.scalars(
        select(RegisteredEntry.entry_id).join(RegisteredDataset, RegisteredDataset.id == RegisteredEntry.dataset_pk)
        .where(RegisteredDataset.sha256 == dataset_sha256, RegisteredEntry.segment.in_(sorted(SECRET_SEGMENTS)))))
    return any(int(r["entry_id"]) in secret for _, _, c in cards for r in c["results"])


def create_campaign(store: Store, card_refs: Sequence[str], *, size: int = DEFAULT_SIZE, seed: int = 0,
                    name: str | None = None, control_share: float = CONTROL_SHARE,
                    reference_policy: str = "after") -> CampaignSummary:
    """A campaign over the published cards ``card_refs`` (all on one dataset): ``size`` entries sampled
    with ``seed`` (plus a few so that controls taking the place of outputs leave at least ``size`` ×
    cards real outputs), one item per card and entry, some of them controls.

    Every entry point (CLI, web, API) comes here, so the secret-segment rule is applied here: a card with
    gold_standard or held_out entries is refused unless the store is a governance store."""
    if not card_refs:
        raise UserError("give at least one card (--card HASH)")
    if size < 1:
        raise UserError(f"--size must be at least 1, not {size}")
    if not 0 <= control_share <= 0.5:
        raise UserError(f"--controls must be a share between 0 and 0.5, not {control_share}")
    if reference_policy not in REFERENCE_POLICIES:
        raise UserError(f"--reference must be one of {', '.join(REFERENCE_POLICIES)} (a reference shown before "
                        "rating lets a script rate outputs by their distance to it)")
    uid = secrets.token_hex(8)
    allow_secret = secret_review_allowed(store)
    with store.session() as session:
        cards = _cards(session, card_refs)
        datasets = {c["dataset"]["sha256"] for _, _, c in cards}
        if len(datasets) > 1:
            raise UserError("the cards are on different datasets; a campaign compares outputs for the same entries")
        if not allow_secret and (any(is_secret(r) for _, _, c in cards for r in c["results"])
                                 or _registered_secret(session, datasets.pop(), cards)):
            raise UserError(f"refused: {SECRET_REFUSAL}", hint="review them in a governance store "
                            f"(store setting {SECRET_REVIEW_SETTING} = allow) whose reviewers are vetted")
        name = name or f"review-{cards[0][1][:8]}-{uid[:6]}"
        if session.scalar(select(func.count()).where(ReviewCampaign.name == name)):
            raise UserError(f"a campaign named {name!r} already exists")
        results = [{int(r["entry_id"]): r for r in c["results"]} for _, _, c in cards]
        common = sorted(set.intersection(*(set(r) for r in results)))
        if not common:
            raise UserError("the cards share no entry: nothing to compare")
        first = results[0]
        count = control_count(size * len(cards), control_share)
        extra = -(-count // len(cards))  # controls replace outputs: sample enough entries to keep size × cards
        sample = stratified_sample([Candidate(i, int(first[i]["difficulty"]), first[i].get("register"))
                                    for i in common], size + extra, seed)
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
        outputs = {(entry, slot): str(by_entry[entry]["predicted"] or "")
                   for entry in sample for slot, by_entry in enumerate(results)}
        references = {i: str(first[i]["reference"]) for i in sample}
        controls = build_controls(outputs, references, language_card(dataset["target_language"]), count=count,
                                  seed=seed, cards=len(cards))
        in_slot = {(c.entry_id, c.slot): c for c in controls}
        for entry in sample:
            for slot, ((card_id, _, _), by_entry) in enumerate(zip(cards, results, strict=True)):
                control = in_slot.get((entry, slot))
                if control is None:
                    _add_item(session, campaign, by_entry[entry], card_id, OUTPUT, outputs[(entry, slot)], {})
                else:  # the card's slot holds the control: the entry still shows one text per card
                    _add_item(session, campaign, by_entry[entry], None, control.kind, control.text,
                              {**control.detail, "slot": slot})
    kinds = {k: sum(c.kind == k for c in controls) for k in ("control_bad", "control_good")}
    return CampaignSummary(name, uid, [h for _, h, _ in cards], len(sample), len(outputs) - len(controls), kinds)


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
    """The batch for ``reviewer`` (created on first use) with a fresh token; everything the offline page
    needs, and never a reference (the file is the reviewer's to read before rating)."""
    reviewer = reviewer.strip()
    if not reviewer or len(reviewer) > 200:
        raise UserError("--reviewer needs a name of 1 to 200 characters")
    token = secrets.token_urlsafe(24)
    now = datetime.now(UTC)
    with store.session() as session:
        campaign = find_campaign(session, campaign_ref)
        own = own_cards(session, campaign, reviewer)
        if own:
            raise UserError(f"refused: {reviewer!r} submitted card {own[0][:12]} of campaign {campaign.name!r}; "
                            "a reviewer cannot review a card they submitted")
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
        groups = batch_groups(session, campaign, reviewer, with_reference=False)
        return Batch(campaign.name, campaign.uid, reviewer, token, campaign.reference_policy,
                     campaign.source_language, campaign.target_language, groups)


def batch_groups(session: Session, campaign: ReviewCampaign, reviewer: str, *,
                 with_reference: bool = True) -> list[BatchGroup]:
    """``reviewer``'s items of ``campaign`` grouped by entry, in their blind order (the exported batch's
    order, and the web review pages'); ``with_reference`` False leaves every reference out (offline)."""
    items = session.scalars(select(ReviewItem).where(ReviewItem.campaign_id == campaign.id)
                            .order_by(ReviewItem.entry_id, ReviewItem.id)).all()
    by_entry: dict[int, list[ReviewItem]] = {}
    for item in items:
        by_entry.setdefault(item.entry_id, []).append(item)
    groups = []
    for number, entry in enumerate(entry_order(sorted(by_entry), campaign.seed, reviewer), 1):
        shown = by_entry[entry]
        order = blind_order(len(shown), campaign.seed, reviewer, entry)
        groups.append(BatchGroup(number, shown[0].source, shown[0].reference if with_reference else "",
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
