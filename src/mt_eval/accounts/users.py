"""Accounts: add, find, list, disable. A reviewer account's ratings are stored under the ``reviewers``
row of the same name (made when they are first assigned to a campaign)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from mt_eval.accounts import ROLES
from mt_eval.accounts.passwords import hash_password
from mt_eval.accounts.tokens import now
from mt_eval.errors import UserError
from mt_eval.store.db import Store
from mt_eval.store.models import Account, AccountSession

NAME = re.compile(r"^[\w.@+-]{1,100}$")


@dataclass(frozen=True)
class AccountInfo:
    """An account as pages and the command line show it (never its hash)."""

    id: int
    name: str
    role: str
    created_at: datetime
    disabled: bool


def info(account: Account) -> AccountInfo:
    return AccountInfo(account.id, account.name, account.role, account.created_at, account.disabled_at is not None)


def check_name(name: str) -> str:
    name = name.strip()
    if not NAME.fullmatch(name):
        raise UserError(f"account name {name[:60]!r}: use 1 to 100 letters, digits or . _ @ + -")
    return name


def check_role(role: str) -> str:
    if role not in ROLES:
        raise UserError(f"role {role!r}: choose one of {', '.join(ROLES)}")
    return role


def create(session: Session, name: str, role: str, password: str) -> Account:
    """A new account in ``session`` (the caller's transaction)."""
    name, role = check_name(name), check_role(role)
    if session.scalars(select(Account.id).where(Account.name == name)).first() is not None:
        raise UserError(f"an account named {name!r} already exists")
    account = Account(name=name, role=role, password_hash=hash_password(password), created_at=now())
    session.add(account)
    session.flush()
    return account


def add_account(store: Store, name: str, role: str, password: str) -> AccountInfo:
    with store.session() as session:
        return info(create(session, name, role, password))


def list_accounts(store: Store) -> list[AccountInfo]:
    with store.session() as session:
        return [info(a) for a in session.scalars(select(Account).order_by(Account.name))]


def disable_account(store: Store, name: str) -> AccountInfo:
    """Disable an account and end its sessions at once (its ratings stay)."""
    with store.session() as session:
        account = session.scalars(select(Account).where(Account.name == name)).first()
        if account is None:
            raise UserError(f"no account named {name!r}")
        account.disabled_at = account.disabled_at or now()
        session.execute(delete(AccountSession).where(AccountSession.account_id == account.id))
        return info(account)
