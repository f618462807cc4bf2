"""Kendall τ_b and the item-grouped average, against scipy and hand counts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import kendalltau

from mt_eval.stats.agreement import item_grouped_tau, kendall_tau_b


def test_hand_example() -> None:
    # pairs: (1,2):+,+ (1,3):+,+ (2,3):+,- → C=2, D=1, no ties → τ = 1/3
    assert kendall_tau_b([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == -1.0


@pytest.mark.parametrize("seed", range(20))
def test_equals_scipy_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 15))
    x = rng.integers(0, 4, n).astype(float)  # many ties
    y = x + rng.normal(0, 1.5, n).round()
    expected = kendalltau(x, y, variant="b").statistic
    got = kendall_tau_b(x, y)
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected, abs=1e-12)


def test_constant_has_no_tau() -> None:
    assert math.isnan(kendall_tau_b([1, 1, 1], [1, 2, 3]))


def test_item_grouped_averages_per_item() -> None:
    items = ["a", "a", "a", "b", "b", "b", "c", "c"]
    metric = [1, 2, 3, 1, 2, 3, 5, 5]
    human = [1, 2, 3, 3, 2, 1, 0, 1]  # a: +1, b: −1, c: metric constant → left out
    tau, n = item_grouped_tau(items, metric, human)
    assert (tau, n) == (0.0, 2)
