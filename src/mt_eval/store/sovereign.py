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
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from mt_eval.errors import UserError
from mt_eval.runcard.io import migrate, read_card_json
from mt_eval.runcard.seal import card_hash
from mt_eval.runcard.signing import SignatureCheck, check_card_signatures
from mt_eval.store.db import Store, StoreError
from mt_eval.store.keys import lookup
from mt_eval.store.models import Card, SovereignRank, SovereignRanking
from mt_eval.store.publish import CardRefused, PublishResult, add_signatures, insert_card
from mt_eval.store.query import ReviewGate

if TYPE_CHECKING:
    from mt_eval.sovereign.ranking import RankedCard, SignedRanking

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
    return _registered_owner(session, valid, organisation, item.path)


def _registered_owner(session: Any, valid: Sequence[str], organisation: str, path: str) -> str:
    """``organisation`` when one of the keys ``valid`` (each made a valid signature) is registered here,
    unrevoked, to it; else ``CardRefused`` saying why not."""
    known = lookup(session, valid)
    active = [known[k] for k in valid if k in known and known[k].active]
    if not active:
        revoked = [k for k in valid if k in known]
        why = f"key {revoked[0]} was revoked" if revoked else f"key {valid[0]} is not registered in this store"
        raise CardRefused(f"refused: {why} (the organisation registers it: mt-eval keys register GOV.pub "
                          f"--submitter {organisation!r})", file=path)  # fmt: skip
    if organisation not in {k.submitter for k in active}:
        raise CardRefused(f"refused: signed by {', '.join(sorted({k.submitter for k in active}))}, but it "
                          f"names the organisation {organisation!r}", file=path)
    return organisation


def publish_sovereign(store: Store, cards: Sequence[str | Path | PendingSovereign], *,
                      gate: ReviewGate | None = None) -> list[PublishResult]:
    """Check every card, then insert the new ones in one transaction (all or nothing), and, given the review
    ``gate`` (``review.gate.accepted_in``), promote the sovereign cards review has accepted meanwhile."""
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
    if gate is not None:
        promote_reviewed(store, gate=gate)
    return results


def _full_hash(card: Mapping[str, Any]) -> str:
    block = card.get("sovereign")
    return str(block.get("full_run_card_hash") or "") if isinstance(block, Mapping) else ""


def promote_reviewed(store: Store, review_store: Store | None = None, *, gate: ReviewGate) -> list[str]:
    """Sovereign cards that the §7.2 review gate accepts become ``community-validated``; returns their hashes.

    Reviewers must read outputs beside sources and references, so a sovereign card is reviewed where
    its texts are: the governance organisation publishes the *full* card in its own private store
    (``review_store``) and runs the ordinary review campaign there. The gate's verdict on the full card
    (``sovereign.full_run_card_hash``, under the public card's seal) then counts for the public card. ``gate``:
    the §7.2 gate (``review.gate.accepted_in``; its rules live in ``review``, above the store)."""

    with store.session() as session:
        rows = session.scalars(select(Card).where(Card.verification_tier == SOVEREIGN)).all()
        full = {r.run_card_hash: _full_hash(r.card) for r in rows}
        if review_store is None:
            accepted = gate(session, [h for h in full.values() if h]) if rows else set()
        else:
            with review_store.session() as private:
                accepted = gate(private, [h for h in full.values() if h]) if rows else set()
        promoted = sorted(h for h, f in full.items() if f in accepted)
        for row in rows:
            if row.run_card_hash in promoted:
                row.verification_tier = COMMUNITY_VALIDATED
        return promoted


@dataclass(frozen=True)
class RankingPublished:
    """What ``publish_ranking`` did: ``inserted`` or ``already published``."""

    path: str
    ranking_sha256: str
    status: str
    organisation: str
    cards: int


def publish_ranking(store: Store, ranking: SignedRanking) -> RankingPublished:
    """Store a governance organisation's signed ranking of its sovereign cards (``sovereign.ranking``): the
    leaderboard then ranks those cards by its clusters (``store.ranking.signed_boards``).

    ``read_ranking`` has checked the seal and the signature by the key the document names; here that key must
    be registered to the organisation it names and unrevoked (as for its public cards), and every card it names
    must be in this store: a sovereign card of that organisation, on the document's dataset and entries, made
    from the full card the ranking tested, all comparable (§4.1). Anything else refuses the whole document
    (``CardRefused``, exit 1) and nothing is written; a replay changes nothing."""
    hashes = [c.run_card_hash for c in ranking.cards]
    try:
        with store.session() as session:
            owner = _registered_owner(session, [ranking.signature.key_id], ranking.organisation, ranking.path)
            found = session.scalar(select(SovereignRanking.id)
                                   .where(SovereignRanking.ranking_sha256 == ranking.sha256))  # fmt: skip
            if found is not None:
                return RankingPublished(ranking.path, ranking.sha256, "already published", owner, len(hashes))
            rows = {r.run_card_hash: r for r in session.scalars(select(Card).where(Card.run_card_hash.in_(hashes)))}
            for line in ranking.cards:
                _check_ranked(rows.get(line.run_card_hash), line, ranking)
            if len({(r.profile, r.composite_rule, r.metric_set) for r in rows.values()}) != 1:
                raise CardRefused("refused: the cards it ranks are not comparable in this store (profile, composite "
                                  "rule or available metrics differ)", file=ranking.path)
            ds = ranking.dataset
            record = SovereignRanking(
                ranking_sha256=ranking.sha256, organisation=owner, key_id=ranking.signature.key_id,
                dataset_sha256=str(ds["sha256"]), entry_ids_sha256=str(ds["entry_ids_sha256"]),
                document=ranking.document, signature=asdict(ranking.signature), published_at=datetime.now(UTC))
            session.add(record)
            session.flush()
            session.add_all(SovereignRank(ranking_id=record.id, card_id=rows[c.run_card_hash].id, cluster=c.cluster,
                                          rank=c.rank) for c in ranking.cards)  # fmt: skip
    except IntegrityError:
        raise StoreError("the ranking was published concurrently by someone else; nothing written, run again") from None
    return RankingPublished(ranking.path, ranking.sha256, "inserted", owner, len(hashes))


def _check_ranked(row: Card | None, line: RankedCard, ranking: SignedRanking) -> None:
    """``CardRefused`` unless ``row`` is the sovereign card ``line`` names, of the ranking's organisation,
    dataset and full card."""
    short = f"card {line.run_card_hash[:12]}…"
    if row is None:
        raise CardRefused(f"refused: {short} is not in this store (publish it first: mt-eval governance publish "
                          "CARD)", file=ranking.path)
    block = row.card.get("sovereign")
    if not isinstance(block, Mapping):
        raise CardRefused(f"refused: {short} is not a sovereign card; a signed ranking places sovereign cards only",
                          file=ranking.path)
    if str(block.get("organisation", "")).strip() != ranking.organisation:
        raise CardRefused(f"refused: {short} is not a card of {ranking.organisation!r}", file=ranking.path)
    if block.get("full_run_card_hash") != line.full_run_card_hash:
        raise CardRefused(f"refused: {short} was not made from the full card the ranking tested", file=ranking.path)
    if (row.dataset_sha256, row.entry_ids_sha256) != (ranking.dataset["sha256"], ranking.dataset["entry_ids_sha256"]):
        raise CardRefused(f"refused: {short} is of another dataset or entries than the ranking", file=ranking.path)
