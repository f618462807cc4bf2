"""Random tokens and their stored form: a caller gets the token once; the store keeps its SHA-256.

A session id or invitation token has 256 random bits, so a plain (unsalted, fast) hash is enough: there
is nothing to guess by brute force, unlike a password. Comparison is by lookup of the hash, so the
secret itself is never compared byte by byte.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime


def new_token() -> str:
    return secrets.token_urlsafe(32)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def now() -> datetime:
    return datetime.now(UTC)


def aware(moment: datetime) -> datetime:
    """SQLite returns stored times without their zone; every time here is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
