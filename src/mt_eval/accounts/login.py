"""Signing in, with a rate limit per account name and per client address.

A failed attempt is recorded under both keys; once a key has ``ACCOUNT_LIMIT`` (per name) or
``ADDRESS_LIMIT`` (per address) failures within ``WINDOW``, attempts on it are refused without checking
the password until the window has passed. The name is counted whether or not an account has it, and a
refusal reads the same for both, so neither the lockout nor its message tells an attacker which names
exist; an unknown name and a wrong password give one answer (``WRONG``), and both spend one argon2
verification (``passwords.verify``). A success clears the name's failures (the address's stay).
"""

from __future__ import annotations

from datetime import timedelta
from enum import Enum

from sqlalchemy import delete, func, select

from mt_eval.accounts.passwords import verify
from mt_eval.accounts.tokens import now
from mt_eval.accounts.users import AccountInfo, info
from mt_eval.store.db import Store
from mt_eval.store.models import Account, LoginAttempt

WINDOW = timedelta(minutes=15)
ACCOUNT_LIMIT = 5
ADDRESS_LIMIT = 20


class Outcome(Enum):
    OK = "ok"
    WRONG = "The account name or the password is wrong."
    LOCKED = "Too many failed sign-ins for this account or address: try again in 15 minutes."


def _keys(name: str, address: str) -> tuple[str, str]:
    return f"account:{name.strip().lower()[:200]}", f"address:{address[:100]}"


def sign_in(store: Store, name: str, password: str, address: str) -> tuple[Outcome, AccountInfo | None]:
    """(outcome, the account on success).

    The attempt is recorded and committed *before* the password is checked, and the limit counts it: many
    guesses sent at once each see the others, so they cannot all pass a count taken before any of them
    was written. A success then takes its own rows back (and the name's earlier failures)."""
    account_key, address_key = _keys(name, address)
    moment = now()
    with store.session() as session:
        session.execute(delete(LoginAttempt).where(LoginAttempt.at < moment - WINDOW))
        attempt = [LoginAttempt(key=account_key, at=moment), LoginAttempt(key=address_key, at=moment)]
        session.add_all(attempt)
        session.flush()
        address_row = attempt[1].id

    with store.session() as session:
        def failures(key: str) -> int:
            return int(session.scalar(select(func.count()).select_from(LoginAttempt).where(LoginAttempt.key == key))
                       or 0)

        if failures(account_key) > ACCOUNT_LIMIT or failures(address_key) > ADDRESS_LIMIT:
            return Outcome.LOCKED, None  # this attempt counted, and more than the limit came before it
        account = session.scalars(select(Account).where(Account.name == name.strip())).first()
        usable = account is not None and account.disabled_at is None
        if verify(account.password_hash if account is not None else None, password) and usable and account:
            session.execute(delete(LoginAttempt).where(LoginAttempt.key == account_key))
            session.execute(delete(LoginAttempt).where(LoginAttempt.id == address_row))
            return Outcome.OK, info(account)
        return Outcome.WRONG, None
