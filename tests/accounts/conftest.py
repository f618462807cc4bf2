"""Cheap argon2 parameters for these tests: a hash records its own parameters, so verification is the
same code either way, and the default cost (64 MiB, t=3: ~0.3 s on a shared test machine) is asserted
once, on the command that makes the first admin (``test_the_accounts_commands``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from argon2 import PasswordHasher

from mt_eval.accounts import passwords

CHEAP = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1)


@pytest.fixture(autouse=True, scope="module")
def cheap_hashing() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(passwords, "HASHER", CHEAP)
        passwords._dummy.cache_clear()
        yield
    passwords._dummy.cache_clear()
