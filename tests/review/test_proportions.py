"""The Wilson score interval against hand values and against its definition as the set of proportions
π that a score test at the same level does not reject (|p̂ − π| ≤ z·√(π(1−π)/n)), solved here as the
quadratic's roots, a different route from the closed form in ``review.proportions``."""

from __future__ import annotations

import math

import pytest

from mt_eval.review.gate import judge
from mt_eval.review.proportions import wilson_interval

Z95 = 1.959963984540054  # the 0.975 normal quantile (tables: 1.95996)


def score_test_roots(k: int, n: int, z: float) -> tuple[float, float]:
    """Roots of (p̂ − π)² = z²π(1−π)/n, i.e. (1 + z²/n)π² − (2p̂ + z²/n)π + p̂² = 0."""
    p = k / n
    a, b, c = 1 + z * z / n, -(2 * p + z * z / n), p * p
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def test_the_published_example() -> None:
    """81 of 263 at 95 %: [0.2553, 0.3662] (Wikipedia's "Binomial proportion confidence interval",
    after Wallis 2013)."""
    lower, upper = wilson_interval(81, 263)
    assert (round(lower, 4), round(upper, 4)) == (0.2553, 0.3662)


@pytest.mark.parametrize(("k", "n", "confidence"), [(81, 263, 0.95), (3, 30, 0.95), (1, 7, 0.9), (29, 30, 0.99),
                                                     (15, 30, 0.95)])
def test_matches_the_score_test_roots(k: int, n: int, confidence: float) -> None:
    z = {0.9: 1.6448536269514722, 0.95: Z95, 0.99: 2.5758293035489004}[confidence]
    assert wilson_interval(k, n, confidence) == pytest.approx(score_test_roots(k, n, z), abs=1e-12)


def test_ends_are_not_degenerate() -> None:
    """0 of 30 rejects: Wald gives [0, 0]; Wilson gives [0, z²/(n + z²)] = [0, 0.1135]."""
    assert wilson_interval(0, 30) == (0.0, pytest.approx(Z95**2 / (30 + Z95**2)))
    assert round(wilson_interval(0, 30)[1], 4) == 0.1135
    assert wilson_interval(30, 30) == (pytest.approx(30 / (30 + Z95**2)), 1.0)


@pytest.mark.parametrize(("k", "n", "confidence"), [(1, 0, 0.95), (-1, 10, 0.95), (11, 10, 0.95), (1, 10, 1.0)])
def test_bad_inputs_are_refused(k: int, n: int, confidence: float) -> None:
    with pytest.raises(ValueError):
        wilson_interval(k, n, confidence)


def test_the_gate_reports_the_reject_share_with_its_interval() -> None:
    """4 of 40 entries with a mean below 1: share 10 %, interval as the formula gives."""
    means = [0.5] * 4 + [2.5] * 36
    verdict = judge("h" * 64, means, reviewers=3)
    assert verdict.reject_share == pytest.approx(0.1)
    assert (verdict.reject_lower, verdict.reject_upper) == pytest.approx(score_test_roots(4, 40, Z95))
    assert round(verdict.reject_lower or 0, 4) == 0.0396 and round(verdict.reject_upper or 0, 4) == 0.2305


def test_the_terminal_report_shows_the_interval() -> None:
    from mt_eval.render.review import _verdict_row

    row = _verdict_row(judge("h" * 64, [0.5] * 4 + [2.5] * 36, reviewers=3), "near")
    assert "10% [4%, 23%]" in row
