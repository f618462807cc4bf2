"""A reviewer's identity: the address an admin sends the invitation to, in one normal form per person.

Accepting an invitation proves control of the identity it was sent to (the link is the proof), so an
account made that way carries a *verified* identity, and the store keeps one account per identity (a
unique index). Two spellings of one mailbox must not make two reviewers, so an e-mail address is
lower-cased and loses its ``+tag`` (``Ana.Ruiz+mt@Uni.es`` and ``ana.ruiz@uni.es`` are one person); an
ORCID iD (``orcid:0000-0002-1825-0097``) is checked by its ISO 7064 check digit. The normal form is what
is stored and compared; nothing else about the person is kept.
"""

from __future__ import annotations

import re

from mt_eval.errors import UserError

EMAIL = re.compile(r"^[^@\s]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}"
                   r"[A-Za-z0-9])?)+$")
ORCID = re.compile(r"^(?:orcid:|https?://orcid\.org/)?(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dX])$", re.IGNORECASE)
MAX_LENGTH = 320


def orcid_check_digit(digits: str) -> str:
    """The ISO 7064 11,2 check character of the first 15 digits of an ORCID iD."""
    total = 0
    for d in digits:
        total = (total + int(d)) * 2
    result = (12 - total % 11) % 11
    return "X" if result == 10 else str(result)


def normal_identity(raw: str) -> str:
    """``raw`` as stored: ``orcid:NNNN-NNNN-NNNN-NNNN`` or a lower-case e-mail address without ``+tag``;
    ``UserError`` for anything else."""
    text = raw.strip()
    if not text or len(text) > MAX_LENGTH:
        raise UserError("identity: give the reviewer's e-mail address or ORCID iD (at most 320 characters)")
    found = ORCID.fullmatch(text)
    if found:
        digits = "".join(found.groups()).upper()
        if orcid_check_digit(digits[:15]) != digits[15]:
            raise UserError(f"identity {text!r}: not an ORCID iD (its check digit is wrong)")
        return "orcid:" + "-".join(digits[i:i + 4] for i in range(0, 16, 4))
    if not EMAIL.fullmatch(text):
        raise UserError(f"identity {text[:60]!r}: give an e-mail address (name@example.org) or an ORCID iD")
    local, domain = text.rsplit("@", 1)
    return f"{local.split('+', 1)[0].lower()}@{domain.lower()}"
