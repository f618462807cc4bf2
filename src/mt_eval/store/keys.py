"""The store's submitter keys: which Ed25519 key speaks for which submitter, and whether cards must be signed.

A signature proves only that the holder of *some* key signed a card; anyone can make a key and call
it "alice". The store's registry (``submitter_keys``) is the binding an operator vouches for: this key
belongs to this submitter, from ``registered_at`` until ``revoked_at``. A revoked key stays listed
(cards it signed keep their history) but no longer counts as evidence, and cannot be registered again
(a compromised key must be replaced, not revived).

``require_signatures`` (a row of ``store_settings``, so every client of the store obeys it) makes
``publish`` refuse a card unless it carries a valid signature from a registered, unrevoked key.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from mt_eval.errors import UserError
from mt_eval.runcard.signing import MAX_SIGNER, PublicKey, SignatureCheck
from mt_eval.store.db import Store
from mt_eval.store.models import StoreSetting, SubmitterKey

REQUIRE_SIGNATURES = "require_signatures"


@dataclass(frozen=True)
class KeyInfo:
    """A registered key as the store holds it."""

    key_id: str
    submitter: str
    public_key: str
    registered_at: datetime
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


def _utc(when: datetime | None) -> datetime | None:
    """SQLite gives times back without their zone; they were written in UTC."""
    return when.replace(tzinfo=UTC) if when is not None and when.tzinfo is None else when


def _info(row: SubmitterKey) -> KeyInfo:
    return KeyInfo(row.key_id, row.submitter, row.public_key, _utc(row.registered_at) or row.registered_at,
                   _utc(row.revoked_at))


def register_key(store: Store, public: PublicKey, submitter: str) -> tuple[KeyInfo, bool]:
    """Register ``public`` for ``submitter``; ``(key, False)`` when it already was (nothing changes).

    Refused: a key registered to another submitter, a revoked key, a submitter name that is empty or
    longer than the column."""
    name = submitter.strip()
    if not name or len(name) > MAX_SIGNER or not name.isprintable():
        raise UserError(f"--submitter must be a printable name of 1 to {MAX_SIGNER} characters")
    with store.session() as session:
        row = session.get(SubmitterKey, public.key_id)
        if row is not None:
            if row.revoked_at is not None:
                raise UserError(f"key {public.key_id} was revoked; a revoked key is not registered again",
                                hint="make a new key: mt-eval keys new")
            if row.submitter != name:
                raise UserError(f"key {public.key_id} is registered to {row.submitter!r}, not {name!r}")
            return _info(row), False
        row = SubmitterKey(key_id=public.key_id, submitter=name, public_key=public.b64,
                           registered_at=datetime.now(UTC), revoked_at=None)
        session.add(row)
        session.flush()
        return _info(row), True


def revoke_key(store: Store, kid: str) -> KeyInfo:
    """Mark the key revoked now (it stays listed); refused when unknown or already revoked."""
    with store.session() as session:
        row = session.get(SubmitterKey, kid)
        if row is None:
            raise UserError(f"no registered key {kid!r} in this store", hint="mt-eval keys list")
        if row.revoked_at is not None:
            raise UserError(f"key {kid} was already revoked on {_utc(row.revoked_at):%Y-%m-%d %H:%M} UTC")
        row.revoked_at = datetime.now(UTC)
        session.flush()
        return _info(row)


def list_keys(store: Store) -> list[KeyInfo]:
    """Every registered key, revoked ones too, by submitter then registration time."""
    with store.session() as session:
        rows = session.scalars(select(SubmitterKey).order_by(SubmitterKey.submitter, SubmitterKey.registered_at))
        return [_info(r) for r in rows]


def lookup(session: Session, key_ids: Iterable[str]) -> dict[str, KeyInfo]:
    """The registered keys among ``key_ids``."""
    ids = sorted(set(key_ids))
    if not ids:
        return {}
    return {r.key_id: _info(r) for r in session.scalars(select(SubmitterKey).where(SubmitterKey.key_id.in_(ids)))}


def lookup_keys(store: Store, key_ids: Iterable[str]) -> dict[str, KeyInfo]:
    """:func:`lookup` in a session of its own (``verify --db``, ``keys check --db``)."""
    with store.session() as session:
        return lookup(session, key_ids)


def signatures_required(session: Session) -> bool:
    row = session.get(StoreSetting, REQUIRE_SIGNATURES)
    return row is not None and row.value == "on"


def require_signatures(store: Store, on: bool | None = None) -> bool:
    """Set (``on`` given) and return the store's ``require_signatures`` setting."""
    with store.session() as session:
        if on is not None:
            row = session.get(StoreSetting, REQUIRE_SIGNATURES)
            if row is None:
                session.add(StoreSetting(name=REQUIRE_SIGNATURES, value="on" if on else "off"))
            else:
                row.value = "on" if on else "off"
            session.flush()
        return signatures_required(session)


@dataclass(frozen=True)
class Accepted:
    """What the registry says of a card's valid signatures: the registered, unrevoked keys among them."""

    keys: list[KeyInfo]

    @property
    def submitters(self) -> list[str]:
        return sorted({k.submitter for k in self.keys})


def accept(session: Session, checks: Sequence[SignatureCheck], *, submitter: str | None,
           required: bool) -> tuple[Accepted, str | None]:
    """The registered, unrevoked keys that validly signed the card, and the why-not when the card is
    refused (``None``: accepted). Invalid signatures were refused before (``publish``); with
    ``--submitter``, a card signed by registered keys must be signed by one of that submitter's."""
    valid = [c.signature.key_id for c in checks if c.valid]
    known = lookup(session, valid)
    active = [known[k] for k in valid if k in known and known[k].active]
    accepted = Accepted(active)
    if submitter is not None and active and submitter not in accepted.submitters:
        return accepted, (f"signed by registered keys of {', '.join(accepted.submitters)}, "
                          f"not of the submitter {submitter!r}")
    if not required:
        return accepted, None
    if not checks:
        return accepted, "this store requires signatures and the card has none (mt-eval sign CARD --key KEY)"
    if not active:
        revoked = [k for k in valid if k in known]
        why = (f"key {revoked[0]} was revoked" if revoked else
               f"key {valid[0] if valid else '?'} is not registered in this store")
        return accepted, f"this store requires a signature by a registered, unrevoked key: {why}"
    return accepted, None
