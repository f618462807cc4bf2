"""Reviewer quality control: the Mann-Whitney test against scipy, and simulated reviewers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from mt_eval.review.quality import MIN_CONTROLS, check_reviewer, mann_whitney_less


@pytest.mark.parametrize("seed", range(4))
def test_p_value_equals_scipy_exact_and_asymptotic(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for trial in range(60):
        n1, n2 = int(rng.integers(1, 14)), int(rng.integers(1, 40))
        if trial % 3 == 0:  # ratings: many ties → normal approximation with tie correction
            x, y = rng.integers(0, 4, n1).astype(float), rng.integers(0, 4, n2).astype(float)
        else:  # continuous: exact when a sample has ≤ 8 values
            x, y = rng.normal(size=n1), rng.normal(0.4, size=n2)
        ours = mann_whitney_less(list(x), list(y))
        ref = mannwhitneyu(x, y, alternative="less")
        if np.isnan(ref.pvalue):  # scipy: every value tied
            assert ours.p == 1.0
            continue
        assert ours.u == pytest.approx(ref.statistic)
        assert ours.p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)


def test_exact_branch_is_used_for_small_samples() -> None:
    ours = mann_whitney_less([0.1, 0.2, 0.3], [0.5, 0.6, 0.7, 0.8])
    assert ours.method == "exact" and ours.p == pytest.approx(1 / 35)  # the one most extreme of C(7,3)


def simulate(kind: str, rng: np.random.Generator, controls: int = 14, outputs: int = 200) -> tuple[list, list]:
    """(control ratings, other ratings) of a simulated reviewer over a real-sized batch: ``outputs``
    method outputs whose true quality is spread over the scale, degraded controls (truly 0–1) and
    known-good references (truly 3)."""
    true_out = rng.choice([0, 1, 2, 3], outputs, p=[0.15, 0.25, 0.35, 0.25])
    true_bad = rng.choice([0, 1], controls)
    true_good = np.full(controls // 2, 3)

    def rate(truth: np.ndarray) -> list[int]:
        if kind == "attentive":  # right within one point, 80 % exactly right
            slip = rng.choice([-1, 0, 1], len(truth), p=[0.1, 0.8, 0.1])
            return [int(v) for v in np.clip(truth + slip, 0, 3)]
        if kind == "random":
            return [int(v) for v in rng.integers(0, 4, len(truth))]
        return [3] * len(truth)  # always-3

    return rate(true_bad), rate(true_out) + rate(true_good)


@pytest.mark.parametrize(("kind", "passes"), [("attentive", True), ("random", False), ("always-3", False)])
def test_simulated_reviewers(kind: str, passes: bool) -> None:
    outcomes = []
    for seed in range(20):
        controls, others = simulate(kind, np.random.default_rng(seed))
        outcomes.append(check_reviewer(kind, controls, others).passed)
    if passes:
        assert all(outcomes)
    else:  # a random reviewer passes by chance at most at the test's level (5 %): allow 1 in 20
        assert sum(outcomes) <= 1


def test_too_few_controls_is_not_a_pass() -> None:
    check = check_reviewer("x", [0] * (MIN_CONTROLS - 1), [3] * 50)
    assert not check.passed and check.p is None and "needs" in check.reason
