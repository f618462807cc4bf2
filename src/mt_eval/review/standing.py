"""Who stands as a reviewer of the community: the people the review gate may count (issue 21, the sybils).

A reviewer is known to a campaign by name (the ``reviewers`` row an offline batch or a web account
rates under). They count toward the gate only when the account of that name

1. is a reviewer account made by accepting an invitation from an admin (``accounts.invited_by``: the
   admin's account name, or ``command line`` for the store's operator, who holds the database itself);
2. carries an identity that accepting the invitation verified (``identity``, ``verified_at``), distinct
   from every other counted reviewer's (the store keeps one account per identity; checked here again);
3. is not disabled (an admin who disables a sybil stops its ratings counting, without deleting them);
4. did not submit any card of the campaign (``own_cards``: the card's submitter, or a signer of it, is
   the reviewer's name or identity). ``review.campaign.assign`` and ``accounts.invitations.invite``
   refuse such an assignment; this is the check for one made before, or a submitter renamed later.

A name typed into ``review export`` with no such account can still rate (their ratings are kept and
shown), but is not counted: one operator typing three names is not three people.
"""

from __future__ import annotations

import contextlib

from sqlalchemy import select
from sqlalchemy.orm import Session

from mt_eval.errors import UserError
from mt_eval.review.identity import normal_identity
from mt_eval.store.models import Account, Card, CardSignature, ReviewAssignment, ReviewCampaign, Reviewer

OPERATOR = "command line"  # ``invited_by`` of an invitation made with ``mt-eval accounts invite``


def _forms(text: str | None) -> set[str]:
    """The ways ``text`` may name a person: as written (case-folded) and as a normal identity."""
    if not text or not text.strip():
        return set()
    forms = {text.strip().casefold()}
    with contextlib.suppress(UserError):  # a submitter name that is no e-mail address or ORCID iD
        forms.add(normal_identity(text))
    return forms


def own_cards(session: Session, campaign: ReviewCampaign, reviewer: str, identity: str | None = None) -> list[str]:
    """The hashes of ``campaign``'s cards that ``reviewer`` (or the person with ``identity``, by default
    their account's) submitted or signed."""
    if identity is None:
        identity = session.scalar(select(Account.identity).where(Account.name == reviewer))
    person = _forms(reviewer) | _forms(identity)
    listed: object = dict(campaign.settings).get("cards")
    hashes = [str(h) for h in listed] if isinstance(listed, list) else []
    if not hashes:
        return []
    rows = session.execute(select(Card.id, Card.run_card_hash, Card.submitter)
                           .where(Card.run_card_hash.in_(hashes))).all()
    signers: dict[int, set[str]] = {}
    for card_id, signer in session.execute(select(CardSignature.card_id, CardSignature.signer)
                                           .where(CardSignature.card_id.in_([r[0] for r in rows]))):
        signers.setdefault(card_id, set()).update(_forms(signer))
    return [h for card_id, h, submitter in rows if person & (_forms(submitter) | signers.get(card_id, set()))]


def campaign_standing(session: Session, campaign_id: int) -> dict[str, str | None]:
    """Every reviewer assigned to the campaign → why they do not count, or None when they do."""
    campaign = session.get(ReviewCampaign, campaign_id)
    if campaign is None:
        return {}
    names = session.scalars(select(Reviewer.name).join(ReviewAssignment, ReviewAssignment.reviewer_id == Reviewer.id)
                            .where(ReviewAssignment.campaign_id == campaign_id).order_by(Reviewer.name)).all()
    accounts = {a.name: a for a in session.scalars(select(Account).where(Account.name.in_(list(names))))}
    admins = set(session.scalars(select(Account.name).where(Account.role == "admin", Account.disabled_at.is_(None))))
    seen: dict[str, str] = {}
    out: dict[str, str | None] = {}
    for name in names:
        account = accounts.get(name)
        if account is None or account.role != "reviewer" or not account.invited_by:
            out[name] = "not invited by an admin (no reviewer account made from an invitation)"
        elif account.invited_by != OPERATOR and account.invited_by not in admins:
            out[name] = f"invited by {account.invited_by!r}, who is not an active admin"
        elif not account.identity or account.verified_at is None:
            out[name] = "no verified identity (invited without an e-mail address or ORCID iD)"
        elif account.disabled_at is not None:
            out[name] = "account disabled"
        elif account.identity in seen:
            out[name] = f"same identity as {seen[account.identity]}"
        elif own_cards(session, campaign, name, account.identity):
            out[name] = "submitted a card of this campaign"
        else:
            out[name] = None
        if account is not None and account.identity:
            seen.setdefault(account.identity, name)
    return out
