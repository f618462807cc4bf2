"""The meta-evaluation statistics against hand-computed cases, independent brute-force references and their
published properties (Deutsch et al. 2023 for acc23, Thompson et al. 2024 for SPA)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import kendalltau

from mt_eval.calibration import meta


def _brute_acc23(items: list[str], metric: np.ndarray, human: np.ndarray) -> tuple[float, float]:
    """Straight from the definition: for every candidate ε, per item (C + T_hm) / (C + D + T_h + T_m + T_hm)
    with a metric tie when |Δm| ≤ ε, averaged over items; the best ε (the smallest on a tie)."""
    groups: dict[str, list[int]] = {}
    for k, item in enumerate(items):
        groups.setdefault(item, []).append(k)
    gaps = sorted({abs(metric[a] - metric[b]) for idx in groups.values() for a, b in itertools.combinations(idx, 2)})
    best = (-1.0, 0.0)
    for eps in [0.0, *gaps]:
        accs = []
        for idx in groups.values():
            c = d = th = tm = thm = 0
            for a, b in itertools.combinations(idx, 2):
                dm, dh = metric[a] - metric[b], human[a] - human[b]
                mtie, htie = abs(dm) <= eps, dh == 0
                if mtie and htie:
                    thm += 1
                elif htie:
                    th += 1
                elif mtie:
                    tm += 1
                elif dm * dh > 0:
                    c += 1
                else:
                    d += 1
            if c + d + th + tm + thm:
                accs.append((c + thm) / (c + d + th + tm + thm))
        value = float(np.mean(accs))
        if value > best[0] + 1e-12:
            best = (value, eps)
    return best


def test_acc23_hand_computed() -> None:
    """One item, three systems: people tie A and B, both beat C. The metric separates A from B by 0.1, so
    ε = 0.1 turns the only wrong pair into a correct tie: 3/3; no ties gives 2/3, tying all 1/3."""
    human = np.array([0.0, 0.0, -1.0])
    metric = np.array([0.5, 0.4, 0.1])
    est, eps = meta.acc23(["s1"] * 3, metric, human)
    assert est.value == pytest.approx(1.0)
    assert eps == pytest.approx(0.1)
    # a second item where the metric reverses the only pair people order: item average (1 + 0) / 2
    est, _ = meta.acc23(["s1"] * 3 + ["s2"] * 2, np.r_[metric, 0.2, 0.9], np.r_[human, 0.0, -2.0])
    assert est.value == pytest.approx(0.5)


def test_acc23_equals_brute_force_on_random_data() -> None:
    rng = np.random.default_rng(3)
    for _ in range(5):
        items = [f"i{k // 4}" for k in range(40)]
        human = rng.choice([0.0, 0.0, -1.0, -5.0], size=40)  # MQM-like: many exact ties
        metric = np.round(human + rng.normal(0, 2, 40), 1)  # rounding makes metric ties too
        value, eps = _brute_acc23(items, metric, human)
        est, got_eps = meta.acc23(items, metric, human)
        assert est.value == pytest.approx(value)
        assert got_eps == pytest.approx(eps)


def test_acc23_published_properties() -> None:
    """A constant metric scores the share of pairs people tie (every pair is a metric tie); no metric
    scores less, since tying everything is always a candidate ε; the human scores themselves score 1;
    a positive affine transform changes nothing (ε scales with it)."""
    rng = np.random.default_rng(5)
    items = [f"i{k // 5}" for k in range(100)]
    human = rng.choice([0.0, 0.0, -1.0, -2.0, -5.0], size=100)
    a, b = np.triu_indices(5, k=1)
    tie_share = np.mean([np.mean(human[k * 5 + a] == human[k * 5 + b]) for k in range(20)])
    assert meta.acc23(items, np.zeros(100), human)[0].value == pytest.approx(tie_share)
    assert meta.acc23(items, -human, human)[0].value == pytest.approx(tie_share)  # reversed: ties are its best
    assert meta.acc23(items, human, human)[0].value == pytest.approx(1.0)
    noisy = human + rng.normal(0, 1, 100)
    assert meta.acc23(items, noisy, human)[0].value >= tie_share - 1e-12
    assert meta.acc23(items, 3 * noisy + 7, human)[0].value == pytest.approx(meta.acc23(items, noisy, human)[0].value)


def test_tau_per_item_matches_scipy_and_scores_a_tied_metric_zero() -> None:
    rng = np.random.default_rng(7)
    items = [f"i{k // 6}" for k in range(60)]
    human = rng.normal(size=60)
    metric = human + rng.normal(0, 1, 60)
    metric[:6] = 0.5  # the metric ties every system on the first item while people do not
    per_item = meta.item_taus(items, metric, human)
    assert per_item[0] == 0.0
    for k in range(1, 10):
        assert per_item[k] == pytest.approx(kendalltau(metric[k * 6:(k + 1) * 6], human[k * 6:(k + 1) * 6]).statistic)
    counts = meta.item_counts(10, 200, 1)
    est = meta.tau(items, metric, human, counts)
    assert est.value == pytest.approx(np.mean(per_item))
    assert est.low <= est.value <= est.high


def test_soft_pairwise_accuracy() -> None:
    """SPA is 1 when the metric's system-pair p-values are the people's (here: the same scores); a metric
    that reverses clearly separated systems scores near 0."""
    rng = np.random.default_rng(11)
    human = np.arange(4)[:, None] * 0.5 + rng.normal(0, 1, (4, 80))
    same = meta.soft_pairwise_accuracy(human, human, n_resamples=20)
    assert same.value == pytest.approx(1.0)
    reversed_ = meta.soft_pairwise_accuracy(-human, human, n_resamples=20)
    assert reversed_.value < 0.2
    assert 0.0 <= reversed_.low <= reversed_.high <= 1.0
