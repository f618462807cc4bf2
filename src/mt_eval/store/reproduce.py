"""The store's side of ``reproduce``: find the card, record each attempt, raise the verification tier.

Benchmark Spec §9.4: a card is "Self-benchmarked" when published and "GDS Verified" once
maintainers reproduced it independently. Every attempt is kept (``reproductions``: the re-run
card's hash, the verdict, every metric's comparison), a failed one too, so a card that verified
once and later failed shows both; the card's tier only ever goes up, to ``gds-verified``, when an
attempt verifies. A tier above it (community-validated) is never lowered.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from mt_eval.errors import UserError
from mt_eval.runcard.reproduce import Reproduction
from mt_eval.store.db import Store, open_store
from mt_eval.store.models import Card
from mt_eval.store.models import Reproduction as ReproductionRow
from mt_eval.store.publish import SELF_BENCHMARKED, CardRefused, publish, read_for_publish

GDS_VERIFIED = "gds-verified"
MIN_PREFIX = 6


def stored_card(store: Store, prefix: str) -> dict[str, Any]:
    """The stored card whose ``run_card_hash`` starts with ``prefix`` (6+ hex digits, unambiguous)."""
    wanted = prefix.strip().lower()
    if len(wanted) < MIN_PREFIX or any(c not in "0123456789abcdef" for c in wanted):
        raise UserError(f"{prefix!r} is neither a run card file nor a run_card_hash (6 or more hex digits)")
    with store.session() as session:
        stmt = select(Card.run_card_hash, Card.card).where(Card.run_card_hash.startswith(wanted, autoescape=True))
        found = session.execute(stmt.limit(2)).all()
    if not found:
        raise UserError(f"no card in the store has a run_card_hash starting with {wanted}")
    if len(found) > 1:
        raise UserError(f"{wanted} is the start of several cards' hashes: give more digits")
    return dict(found[0][1])


def card_to_reproduce(ref: str, db: str | None) -> tuple[dict[str, Any], bool]:
    """(the card, whether it is in a store) for ``ref``: a card file, verified first (or, with ``db``,
    published there, so the attempt is recorded against the card the store keeps), or a stored card's hash
    prefix."""
    from mt_eval.runcard.io import load_card
    from mt_eval.runcard.verify import verify_card

    path = Path(ref)
    if path.exists():
        if db is None:
            card = load_card(path)
            if problems := verify_card(card, path):
                raise CardRefused(f"does not verify, so there is nothing to reproduce: {problems[0]}", file=str(path))
            return card, False
        pending = read_for_publish(path)
        with open_store(db) as store:  # the card the store keeps: its own rescoring when the file's differs
            (done,) = publish(store, [pending])
            return stored_card(store, done.run_card_hash), True
    with open_store(db) as store:
        return stored_card(store, ref), True


def record(db: str | None, result: Reproduction) -> str:
    """Store one attempt; on a verified one raise the card to ``gds-verified``. Returns the card's tier."""
    with open_store(db) as store, store.session() as session:
        card = session.scalar(select(Card).where(Card.run_card_hash == result.published_hash))
        if card is None:
            raise UserError(f"card {result.published_hash[:12]} is not in the store")
        session.add(ReproductionRow(card_id=card.id, reproduced_hash=str(result.card["run_card_hash"]),
                                    verified=result.verified, differences=result.differences(),
                                    created_at=datetime.now(UTC)))  # fmt: skip
        if result.verified and card.verification_tier == SELF_BENCHMARKED:
            card.verification_tier = GDS_VERIFIED
        return card.verification_tier
