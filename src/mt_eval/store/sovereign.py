"""Publishing sovereign cards: accepted on the governance organisation's signature, stored without entries.

An ordinary card is re-verified on the way in (every score rebuilt from its ``results[]``). A sovereign
card (``mt_eval.sovereign.public_card``) has no results to rebuild from: its texts stay with the
governance organisation. What stands in for re-scoring is the organisation's word, checked:

* the card's seal holds (``run_card_hash`` over the card as published), it carries a ``sovereign``
  block and no entry results, no statistics reference;
* its detached ``.sig`` holds a valid signature by a key registered in this store (``keys register``,
  as a submitter registers) and not revoked, whose registered owner is the card's
  ``sovereign.organisation``; when the block names its governance key (``governance_key_id``, under
  the seal), the signature must be by exactly that key. Any invalid signature refuses the card.

It is stored with its metrics and no per-entry rows (no drill-down, nothing to export per entry) and
no statistics, under verification tier ``sovereign`` ("sovereign — awaiting review") until the §7.2
review gate (``review.gate``) accepts its full card, reviewed where the texts are (the organisation's
private store); ``promote_reviewed`` then makes it ``community-validated``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from mt_eval.errors import UserError
from mt_eval.runcard.io import migrate, read_card_json
from mt_eval.runcard.seal import card_hash
from mt_eval.runcard.signing import SignatureCheck, check_card_signatures
from mt_eval.store.db import Store, StoreError
from mt_eval.store.keys import lookup
from mt_eval.store.models import Card
from mt_eval.store.publish import CardRefused, PublishResult, add_signatures, insert_card

SOVEREIGN = "sovereign"
COMMUNITY_VALIDATED = "community-validated"


def verification_label(tier: str) -> str:
    """How a verification tier is shown: a sovereign card is "awaiting review" until the gate accepts it."""
    return f"{SOVEREIGN} — awaiting review" if tier == SOVEREIGN else tier


@dataclass(frozen=True)
class PendingSovereign:
    """A sovereign card read from disk, its seal checked, with its (valid) signatures."""

    path: str
    card: dict[str, Any]
    signatures: tuple[SignatureCheck, ...]

    @property
    def block(self) -> Mapping[str, Any]:
        block = self.card["sovereign"]
        assert isinstance(block, Mapping)
        return block


def read_sovereign(path: str | Path) -> PendingSovereign:
    """The sovereign card at ``path``, checked as far as it can be without the store's keys."""
    p = Path(path)
    data = read_card_json(p)
    if not isinstance(data.get("sovereign"), Mapping):
        raise UserError("not a sovereign card (no sovereign block); publish an ordinary card with: mt-eval "
                        "publish CARD --db …", file=str(p))
    card = migrate(data, file=str(p))
    digest = card.get("run_card_hash")
    if not isinstance(digest, str) or card_hash(card) != digest:
        raise CardRefused("refused: the card's seal does not hold (changed after sealing)", file=str(p))
    if card.get("results") or card.get("statistics"):
        raise CardRefused("refused: a sovereign card carries no entry results and no statistics", file=str(p))
    organisation = card["sovereign"].get("organisation")
    if not isinstance(organisation, str) or not organisation.strip():
        raise CardRefused("refused: sovereign.organisation is missing", file=str(p))
    checks = check_card_signatures(p, digest)
    for check in checks:
        if not check.valid:
            raise CardRefused(f"refused: signature by key {check.signature.key_id} is invalid ({check.problem})",
                              file=str(p))
    if not checks:
        raise CardRefused("refused: a sovereign card needs the governance key's signature beside it (<card>.sig)",
                          file=str(p))
    return PendingSovereign(str(p), card, tuple(checks))


def _signer_in(session: Any, item: PendingSovereign) -> str:
    """The registered organisation that vouches for the card, or ``CardRefused`` saying why none does."""
    organisation = str(item.block["organisation"]).strip()
    named = item.block.get("governance_key_id")
    valid = [c.signature.key_id for c in item.signatures if named is None or c.signature.key_id == named]
    if not valid:
        raise CardRefused(f"refused: not signed by the governance key the card names ({named})", file=item.path)
    known = lookup(session, valid)
    active = [known[k] for k in valid if k in known and known[k].active]
    if not active:
        revoked = [k for k in valid if k in known]
        why = f"key {revoked[0]} was revoked" if revoked else f"key {valid[0]} is not registered in this store"
        raise CardRefused(f"refused: {why} (the organisation registers it: mt-eval keys register GOV.pub "
                          f"--submitter {organisation!r})", file=item.path)  # fmt: skip
    if organisation not in {k.submitter for k in active}:
        raise CardRefused(f"refused: signed by {', '.join(sorted({k.submitter for k in active}))}, but the card "
                          f"names the organisation {organisation!r}", file=item.path)
    return organisation


def publish_sovereign(store: Store, cards: Sequence[str | Path | PendingSovereign]) -> list[PublishResult]:
    """Check every card, then insert the new ones in one transaction (all or nothing), and promote the
    sovereign cards review has accepted meanwhile."""
    pending = [c if isinstance(c, PendingSovereign) else read_sovereign(c) for c in cards]
    results: list[PublishResult] = []
    now = datetime.now(UTC)
    try:
        with store.session() as session:
            for item in pending:
                owner = _signer_in(session, item)
                digest = str(item.card["run_card_hash"])
                found = session.scalar(select(Card.id).where(Card.run_card_hash == digest))
                if found is not None or any(r.run_card_hash == digest for r in results):
                    results.append(PublishResult(item.path, digest, "already published", (owner,)))
                    continue
                row = insert_card(session, item.card, None, submitter=owner, published_at=now,
                                  verification_tier=SOVEREIGN, entries=False)
                add_signatures(session, row.id, item.signatures)
                results.append(PublishResult(item.path, digest, "inserted", (owner,)))
    except IntegrityError:
        raise StoreError("a card was published concurrently by someone else; nothing written, run again") from None
    promote_reviewed(store)
    return results


def _full_hash(card: Mapping[str, Any]) -> str:
    block = card.get("sovereign")
    return str(block.get("full_run_card_hash") or "") if isinstance(block, Mapping) else ""


def promote_reviewed(store: Store, review_store: Store | None = None) -> list[str]:
    """Sovereign cards that the §7.2 review gate accepts become ``community-validated``; returns their hashes.

    Reviewers must read outputs beside sources and references, so a sovereign card is reviewed where
    its texts are: the governance organisation publishes the *full* card in its own private store
    (``review_store``) and runs the ordinary review campaign there. The gate's verdict on the full card
    (``sovereign.full_run_card_hash``, under the public card's seal) then counts for the public card."""
    from mt_eval.review.gate import accepted_in  # review reads the store; imported here, not at load

    with store.session() as session:
        rows = session.scalars(select(Card).where(Card.verification_tier == SOVEREIGN)).all()
        full = {r.run_card_hash: _full_hash(r.card) for r in rows}
        if review_store is None:
            accepted = accepted_in(session, [h for h in full.values() if h]) if rows else set()
        else:
            with review_store.session() as private:
                accepted = accepted_in(private, [h for h in full.values() if h]) if rows else set()
        promoted = sorted(h for h, f in full.items() if f in accepted)
        for row in rows:
            if row.run_card_hash in promoted:
                row.verification_tier = COMMUNITY_VALIDATED
        return promoted
