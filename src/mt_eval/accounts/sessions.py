"""Server-side sessions: the browser holds a random id, the store its SHA-256, the account and an expiry.

A session exists before sign-in too (no account): the login and invitation forms need one for their
CSRF token. Signing in never upgrades that session; it ends it and starts a new one with a new id
(session fixation: an id planted in a victim's browser before sign-in is worthless after it).

CSRF: the synchronizer token of a form is HMAC-SHA256 keyed by the session id over a fixed label. Only
the holder of the session cookie can compute it (the store has only the id's hash), and it changes
with every session, so a token seen in one session is refused in another.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select

from mt_eval.accounts.tokens import aware, digest, new_token, now
from mt_eval.store.db import Store
from mt_eval.store.models import Account, AccountSession

SIGNED_IN = timedelta(hours=12)
ANONYMOUS = timedelta(hours=1)


@dataclass(frozen=True)
class Visitor:
    """Who a session belongs to: ``account`` and ``role`` are None before sign-in."""

    session_id: str
    account: str | None
    role: str | None

    @property
    def csrf(self) -> str:
        return csrf_token(self.session_id)


def csrf_token(session_id: str) -> str:
    return hmac.new(session_id.encode("utf-8"), b"mt-eval csrf v1", hashlib.sha256).hexdigest()


def csrf_ok(session_id: str, token: str | None) -> bool:
    return bool(token) and hmac.compare_digest(csrf_token(session_id), str(token))


def start(store: Store, account_id: int | None = None) -> str:
    """A new session (for ``account_id``, or anonymous); its id, shown once. Expired sessions go first."""
    session_id = new_token()
    moment = now()
    with store.session() as session:
        session.execute(delete(AccountSession).where(AccountSession.expires_at < moment))
        session.add(AccountSession(id_sha256=digest(session_id), account_id=account_id, created_at=moment,
                                   expires_at=moment + (SIGNED_IN if account_id else ANONYMOUS)))
    return session_id


def visitor(store: Store, session_id: str | None) -> Visitor | None:
    """The live session with id ``session_id``; None when unknown, expired or its account is disabled."""
    if not session_id or len(session_id) > 200:
        return None
    with store.session() as session:
        row = session.execute(select(AccountSession, Account)
                              .outerjoin(Account, Account.id == AccountSession.account_id)
                              .where(AccountSession.id_sha256 == digest(session_id))).first()
    if row is None or aware(row[0].expires_at) <= now():
        return None
    account: Account | None = row[1]
    if row[0].account_id is not None and (account is None or account.disabled_at is not None):
        return None
    return Visitor(session_id, account.name if account else None, account.role if account else None)


def end(store: Store, session_id: str) -> None:
    with store.session() as session:
        session.execute(delete(AccountSession).where(AccountSession.id_sha256 == digest(session_id)))
