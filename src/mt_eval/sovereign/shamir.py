"""Shamir secret sharing over GF(256), byte by byte (the arithmetic of ``custody``).

Each byte of the secret is the constant term of its own random polynomial of degree ``threshold - 1``
over GF(2^8) (the AES field: x^8 + x^4 + x^3 + x + 1, 0x11B); share ``x`` holds every polynomial's value
at ``x`` (1..255, never 0, which is the secret). Any ``threshold`` shares give the secret back by
Lagrange interpolation at 0; fewer give every secret of the same length with equal probability, so a
share alone (or ``threshold - 1`` of them) says nothing about the identity but its length.

Written here rather than taken from a package: it is forty lines, pycryptodome's ``Shamir`` splits
16-byte secrets only (an age identity is 74 characters), and the tests check the field against an
independently written multiply and the interpolation on known vectors.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping

POLYNOMIAL = 0x11B  # x^8 + x^4 + x^3 + x + 1 (AES)
GENERATOR = 0x03  # a primitive element of that field: its powers are the 255 non-zero bytes


def _tables() -> tuple[list[int], list[int]]:
    """Antilog (``EXP[i] = 3^i``, doubled in length so a sum of two logs needs no modulo) and log tables."""
    exp, log = [0] * 510, [0] * 256
    value = 1
    for i in range(255):
        exp[i] = exp[i + 255] = value
        log[value] = i
        value ^= value << 1  # value * 3 = value * 2 + value
        if value & 0x100:
            value ^= POLYNOMIAL
    return exp, log


EXP, LOG = _tables()


def mul(a: int, b: int) -> int:
    """a · b in GF(256)."""
    return 0 if a == 0 or b == 0 else EXP[LOG[a] + LOG[b]]


def div(a: int, b: int) -> int:
    """a / b in GF(256) (``b`` non-zero)."""
    if b == 0:
        raise ZeroDivisionError("division by zero in GF(256)")
    return 0 if a == 0 else EXP[LOG[a] - LOG[b] + 255]


def _evaluate(coefficients: list[int], x: int) -> int:
    """The polynomial (constant term first) at ``x``, by Horner's rule."""
    value = 0
    for c in reversed(coefficients):
        value = mul(value, x) ^ c
    return value


def split(secret: bytes, xs: Iterable[int], threshold: int) -> dict[int, bytes]:
    """Shares of ``secret`` at the points ``xs`` (distinct, 1..255): any ``threshold`` of them rebuild it."""
    points = list(xs)
    if len(set(points)) != len(points) or not all(1 <= x <= 255 for x in points):
        raise ValueError("share points must be distinct and in 1..255")
    if not 1 <= threshold <= len(points):
        raise ValueError("the threshold must be between 1 and the number of shares")
    shares: dict[int, bytearray] = {x: bytearray() for x in points}
    for byte in secret:
        coefficients = [byte, *secrets.token_bytes(threshold - 1)]
        for x in points:
            shares[x].append(_evaluate(coefficients, x))
    return {x: bytes(data) for x, data in shares.items()}


def combine(shares: Mapping[int, bytes]) -> bytes:
    """The secret from shares ``{x: bytes}``: the Lagrange interpolation of each byte's points at 0.

    With fewer shares than the threshold the result is a secret, just not this one: the caller checks
    what it rebuilt (``custody`` compares the rebuilt identity's public key with the recorded one)."""
    points = list(shares)
    lengths = {len(data) for data in shares.values()}
    if not points or len(lengths) != 1 or len(set(points)) != len(points) or 0 in points:
        raise ValueError("shares must be non-empty, of one length, at distinct non-zero points")
    # basis polynomial of x_j at 0: prod over m != j of x_m / (x_m - x_j); subtraction is XOR here
    weights = {}
    for xj in points:
        weight = 1
        for xm in points:
            if xm != xj:
                weight = mul(weight, div(xm, xm ^ xj))
        weights[xj] = weight
    secret = bytearray()
    for i in range(lengths.pop()):
        value = 0
        for x, data in shares.items():
            value ^= mul(data[i], weights[x])
        secret.append(value)
    return bytes(secret)
