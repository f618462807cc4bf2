"""Reviewer quality control: do a reviewer's ratings of control items fall below their real ratings?

Each batch hides control items (``controls.py``): a reference with a phrase swapped in from another
entry, which an attentive bilingual reader rates low. Per reviewer, a one-sided Mann-Whitney U test asks
whether the controls' ratings are stochastically *smaller* than the ratings of everything else they
rated (method outputs and the known-good references: comparing with outputs alone would flag a careful
reviewer of a poor method). A reviewer is excluded when p ≥ ``ALPHA`` or when fewer than
``MIN_CONTROLS`` controls were rated (nothing to check them by). Random and constant raters fail.

The test is computed here, not by scipy (a development dependency only): exact when a sample has at
most 8 values and nothing is tied, otherwise the normal approximation with tie and continuity
corrections, the same rule and formulas as ``scipy.stats.mannwhitneyu(x, y, alternative="less")``,
which the tests compare against.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

ALPHA = 0.05
MIN_CONTROLS = 4
EXACT_MAX = 8


@dataclass(frozen=True)
class MannWhitney:
    u: float  # U of the first sample (scipy's statistic)
    p: float  # one-sided: the first sample is stochastically smaller
    method: str  # "exact" or "asymptotic"


def _ranks(values: Sequence[float]) -> list[float]:
    """Average ranks (1-based), ties sharing the mean of their positions."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@lru_cache(maxsize=256)
def _u_frequencies(n1: int, n2: int) -> tuple[int, ...]:
    """How many of the C(n1+n2, n1) arrangements give U = 0, 1, …, n1·n2 (no ties): the coefficients
    of the Gaussian binomial [n1+n2 choose n1], built by the recurrence f(m, n) = f(m−1, n) shifted by n
    + f(m, n−1)."""
    if n1 == 0 or n2 == 0:
        return (1,)
    a = _u_frequencies(n1 - 1, n2)
    b = _u_frequencies(n1, n2 - 1)
    out = [0] * (n1 * n2 + 1)
    for u, count in enumerate(a):
        out[u + n2] += count
    for u, count in enumerate(b):
        out[u] += count
    return tuple(out)


def _exact_sf(u: float, n1: int, n2: int) -> float:
    """P(U ≥ u) under the null, exactly."""
    freq = _u_frequencies(n1, n2)
    start = max(0, math.ceil(u))
    return sum(freq[start:]) / math.comb(n1 + n2, n1)


def mann_whitney_less(x: Sequence[float], y: Sequence[float]) -> MannWhitney:
    """One-sided Mann-Whitney U test that ``x`` tends to be smaller than ``y``."""
    n1, n2 = len(x), len(y)
    if not n1 or not n2:
        raise ValueError("both samples need at least one value")
    ranks = _ranks([*x, *y])
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    u2 = n1 * n2 - u1  # P(U1 ≤ u1) = P(U2 ≥ u2) by symmetry
    ties = [t for t in Counter([*x, *y]).values() if t > 1]
    if (n1 <= EXACT_MAX or n2 <= EXACT_MAX) and not ties:
        return MannWhitney(u1, min(1.0, _exact_sf(u2, n1, n2)), "exact")
    n = n1 + n2
    tie_term = sum(t**3 - t for t in ties)
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    if sigma == 0:  # every value equal: no evidence either way
        return MannWhitney(u1, 1.0, "asymptotic")
    z = (u2 - n1 * n2 / 2 - 0.5) / sigma
    return MannWhitney(u1, min(1.0, 0.5 * math.erfc(z / math.sqrt(2))), "asymptotic")


@dataclass(frozen=True)
class ReviewerCheck:
    """One reviewer's control test and its outcome."""

    reviewer: str
    controls: int
    others: int
    control_mean: float | None
    other_mean: float | None
    p: float | None
    passed: bool
    reason: str
    flags: tuple[str, ...] = ()  # conduct flags (``conduct``), each also in ``reason``


def check_reviewer(reviewer: str, control_ratings: Sequence[int], other_ratings: Sequence[int],
                   *, alpha: float = ALPHA) -> ReviewerCheck:
    """Pass when the controls are rated significantly below the rest (one-sided, ``alpha``)."""
    c, o = list(control_ratings), list(other_ratings)
    c_mean = sum(c) / len(c) if c else None
    o_mean = sum(o) / len(o) if o else None
    if len(c) < MIN_CONTROLS or not o:
        return ReviewerCheck(reviewer, len(c), len(o), c_mean, o_mean, None, False,
                             f"only {len(c)} control item(s) rated (needs {MIN_CONTROLS})")
    p = mann_whitney_less(c, o).p
    passed = p < alpha
    reason = "controls rated below real items" if passed else f"controls not rated below real items (p={p:.3g})"
    return ReviewerCheck(reviewer, len(c), len(o), c_mean, o_mean, p, passed, reason)
