"""Invitations: an admin names the account (and, for a reviewer, a campaign and the identity the link is
sent to); the invitee sets a password.

The token is shown once (in the link) and stored as its SHA-256. It is single use and expires
(``LIFETIME`` by default). Accepting makes the account, records on it who invited it (``invited_by``: the
admin's account name, or ``command line`` for the store's operator) and the identity the link was sent to,
now verified (``identity``, ``verified_at``: ``identity.py``), assigns a reviewer to the campaign
(``review.campaign.assign``: the same assignment an offline batch gets) and marks the invitation used, in
that order; an unknown, used and expired token are refused alike. One identity, one account: an identity
already held, or promised by a live invitation to another name, is refused (the review gate counts
people, not names: ``review.standing``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from mt_eval.accounts.tokens import aware, digest, new_token, now
from mt_eval.accounts.users import check_name, check_role, create
from mt_eval.errors import UserError
from mt_eval.review.identity import normal_identity
from mt_eval.store.db import Store
from mt_eval.store.models import Account, Invitation, ReviewCampaign

LIFETIME = timedelta(days=7)
REFUSED = "This invitation is not valid: it was used, has expired, or never existed."


@dataclass(frozen=True)
class Invited:
    """An invitation as its page shows it."""

    name: str
    role: str
    campaign: str | None
    expires_at: datetime
    identity: str | None = None


def _identity_taken(session: Session, identity: str, name: str) -> bool:
    """Whether an account, or a live invitation for another name, already has ``identity``."""
    if session.scalars(select(Account.id).where(Account.identity == identity)).first() is not None:
        return True
    pending = session.scalars(select(Invitation).where(Invitation.identity == identity,
                                                       Invitation.used_at.is_(None))).all()
    return any(p.name != name and aware(p.expires_at) > now() for p in pending)


def invite(store: Store, name: str, role: str, *, campaign: str | None = None, by: str | None = None,
           identity: str | None = None, lifetime: timedelta = LIFETIME) -> str:
    """A new invitation; returns the token (shown once). ``by`` is who invites (recorded on the account);
    ``identity`` the e-mail address or ORCID iD the link is sent to (a reviewer needs one to count)."""
    name, role = check_name(name), check_role(role)
    if lifetime <= timedelta(0):
        raise UserError("an invitation must be valid for some time")
    normal = normal_identity(identity) if identity else None
    token = new_token()
    moment = now()
    with store.session() as session:
        if session.scalars(select(Account.id).where(Account.name == name)).first() is not None:
            raise UserError(f"an account named {name!r} already exists")
        if normal and _identity_taken(session, normal, name):
            raise UserError(f"identity {normal!r} already belongs to another account or invitation: one person, "
                            "one account")
        campaign_id = None
        if campaign:
            from mt_eval.review.campaign import find_campaign
            from mt_eval.review.standing import own_cards

            if role != "reviewer":
                raise UserError("only a reviewer is invited to a campaign")
            found = find_campaign(session, campaign)
            own = own_cards(session, found, name, normal)
            if own:
                raise UserError(f"refused: {name!r} submitted card {own[0][:12]} of campaign {found.name!r}; a "
                                "reviewer cannot review a card they submitted")
            campaign_id = found.id
        session.add(Invitation(token_sha256=digest(token), name=name, role=role, campaign_id=campaign_id,
                               created_by=by, identity=normal, created_at=moment, expires_at=moment + lifetime))
    return token


def _live(session: Session, token: str) -> Invitation | None:
    found = session.scalars(select(Invitation).where(Invitation.token_sha256 == digest(token[:200]))).first()
    if found is None or found.used_at is not None or aware(found.expires_at) <= now():
        return None
    return found


def invitation(store: Store, token: str) -> Invited | None:
    """The live invitation with ``token``; None when unknown, used or expired."""
    with store.session() as session:
        found = _live(session, token)
        if found is None:
            return None
        name = session.scalar(select(ReviewCampaign.name).where(ReviewCampaign.id == found.campaign_id))
        return Invited(found.name, found.role, name, aware(found.expires_at), found.identity)


def accept(store: Store, token: str, password: str) -> int:
    """Make the invited account with ``password``; its id. ``LookupError`` for a token not (or no longer) live."""
    with store.session() as session:
        found = _live(session, token)
        if found is None:
            raise LookupError(REFUSED)
        if found.identity and _identity_taken(session, found.identity, found.name):
            raise UserError(f"identity {found.identity!r} already belongs to another account")
        account = create(session, found.name, found.role, password)
        found.used_at = now()
        # who invited whom, and the identity the link was sent to: verified by this acceptance
        account.invited_by = found.created_by
        account.identity = found.identity
        account.verified_at = found.used_at if found.identity else None
        campaign = session.scalar(select(ReviewCampaign.uid).where(ReviewCampaign.id == found.campaign_id))
        account_id = account.id
    if campaign:
        from mt_eval.review.campaign import assign

        assign(store, campaign, found.name)
    return account_id
