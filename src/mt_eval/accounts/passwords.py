"""Password hashing with argon2id (``argon2-cffi``'s defaults: RFC 9106's low-memory profile).

``verify`` of an unknown account still runs one argon2 verification against a fixed dummy hash, so the
time taken does not tell whether an account exists.
"""

from __future__ import annotations

from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from mt_eval.errors import UserError

MIN_LENGTH = 12
MAX_LENGTH = 1024  # argon2 takes any length; an unbounded one is a way to burn the server's time
HASHER = PasswordHasher()


def check_rules(password: str) -> None:
    if len(password) < MIN_LENGTH:
        raise UserError(f"a password needs at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise UserError(f"a password has at most {MAX_LENGTH} characters")


def hash_password(password: str) -> str:
    check_rules(password)
    return HASHER.hash(password)


@lru_cache(maxsize=1)
def _dummy() -> str:
    return HASHER.hash("not a password of anyone: only spends the time a real check would")


def verify(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches the ``stored`` hash (``None``: no such account, always False)."""
    if len(password) > MAX_LENGTH:
        return False
    try:
        return HASHER.verify(stored or _dummy(), password) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False
