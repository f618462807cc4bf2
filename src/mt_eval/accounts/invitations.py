"""Invitations: an admin names the account (and, for a reviewer, a campaign); the invitee sets a password.

The token is shown once (in the link) and stored as its SHA-256. It is single use and expires
(``LIFETIME`` by default). Accepting makes the account, assigns a reviewer to the campaign
(``review.campaign.assign``: the same assignment an offline batch gets) and marks the invitation used,
in that order; an unknown, used and expired token are refused alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from mt_eval.accounts.tokens import aware, digest, new_token, now
from mt_eval.accounts.users import check_name, check_role, create
from mt_eval.errors import UserError
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


def invite(store: Store, name: str, role: str, *, campaign: str | None = None, by: str | None = None,
           lifetime: timedelta = LIFETIME) -> str:
    """A new invitation; returns the token (shown once)."""
    name, role = check_name(name), check_role(role)
    if lifetime <= timedelta(0):
        raise UserError("an invitation must be valid for some time")
    token = new_token()
    moment = now()
    with store.session() as session:
        if session.scalars(select(Account.id).where(Account.name == name)).first() is not None:
            raise UserError(f"an account named {name!r} already exists")
        campaign_id = None
        if campaign:
            from mt_eval.review.campaign import find_campaign

            if role != "reviewer":
                raise UserError("only a reviewer is invited to a campaign")
            campaign_id = find_campaign(session, campaign).id
        session.add(Invitation(token_sha256=digest(token), name=name, role=role, campaign_id=campaign_id,
                               created_by=by, created_at=moment, expires_at=moment + lifetime))
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
        return Invited(found.name, found.role, name, aware(found.expires_at))


def accept(store: Store, token: str, password: str) -> int:
    """Make the invited account with ``password``; its id. ``LookupError`` for a token not (or no longer) live."""
    with store.session() as session:
        found = _live(session, token)
        if found is None:
            raise LookupError(REFUSED)
        account = create(session, found.name, found.role, password)
        found.used_at = now()
        campaign = session.scalar(select(ReviewCampaign.uid).where(ReviewCampaign.id == found.campaign_id))
        account_id = account.id
    if campaign:
        from mt_eval.review.campaign import assign

        assign(store, campaign, found.name)
    return account_id
