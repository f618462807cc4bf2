"""Power analysis (stats/power.py) checked against a simulation and against closed forms.

The simulation draws paired systems with a known difference and runs this package's own paired bootstrap
(Scoring Spec §8.2, sacrebleu's test) on each draw: at Δ = the reported MDD the detection rate must be the
requested power, at Δ = 0 about α, at half the MDD far below the power.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from stats_helpers import make_metric, sacre_aggregate, sacre_stats

from mt_eval.stats.bootstrap import resample_counts
from mt_eval.stats.paired import paired_bootstrap
from mt_eval.stats.power import minimum_detectable_difference, z_sum

N, SD, RHO = 400, 15.0, 0.7


def mean_stats(scores: np.ndarray) -> np.ndarray:
    """A mean-type metric's statistics: (score, 1) per entry."""
    return np.column_stack([scores, np.ones_like(scores)])


def mean_aggregate(sums: np.ndarray) -> np.ndarray:
    return np.asarray(sums[..., 0] / sums[..., 1])


def draw_pair(rng: np.random.Generator, delta: float, n: int = N) -> tuple[np.ndarray, np.ndarray]:
    cov = SD**2 * np.array([[1.0, RHO], [RHO, 1.0]])
    a, b = rng.multivariate_normal([50.0, 50.0 + delta], cov, size=n).T
    return mean_stats(a), mean_stats(b)


def detection_rate(delta: float, trials: int = 200) -> float:
    rng = np.random.default_rng(7)
    counts = resample_counts(N, 500, seed=11)  # shared resamples: each trial draws fresh systems
    hits = 0
    for _ in range(trials):
        a, b = draw_pair(rng, delta)
        hits += paired_bootstrap(a, b, mean_aggregate, n_resamples=500, counts=counts).significant
    return hits / trials


@pytest.fixture(scope="module")
def pilot() -> tuple[float, float]:
    """The MDD measured from one pilot pair (Δ = 0), and from its baseline alone with ρ assumed."""
    a, b = draw_pair(np.random.default_rng(3), 0.0)
    measured = minimum_detectable_difference(a, mean_aggregate, candidate=b)
    assumed = minimum_detectable_difference(a, mean_aggregate, correlation=RHO)
    assert measured.measured and not assumed.measured
    assert measured.correlation == pytest.approx(RHO, abs=0.06)
    return measured.mdd, assumed.mdd


def test_mdd_matches_the_closed_form_for_a_mean() -> None:
    """For a mean, SE(Δ) is sd·sqrt(2(1−ρ)/n): the true values of the simulation, and scipy's normal quantiles."""
    a, _ = draw_pair(np.random.default_rng(5), 0.0, n=2000)
    result = minimum_detectable_difference(a, mean_aggregate, correlation=RHO, n_resamples=2000)
    exact = (sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * SD * math.sqrt(2 * (1 - RHO) / 2000)
    assert z_sum(0.05, 0.8) == pytest.approx(sps.norm.ppf(0.975) + sps.norm.ppf(0.8))
    assert result.mdd == pytest.approx(exact, rel=0.08)


def test_detection_rate_at_the_mdd_is_the_requested_power(pilot: tuple[float, float]) -> None:
    measured, assumed = pilot
    assert assumed == pytest.approx(measured, rel=0.1)  # the assumed ρ is the true one: same answer
    rate = detection_rate(measured)
    assert abs(rate - 0.8) < 0.1, rate


def test_no_difference_is_detected_at_about_alpha_and_half_the_mdd_rarely(pilot: tuple[float, float]) -> None:
    """The opposite claims fail: a test set cannot 'resolve' half its MDD, and no difference is rarely found."""
    measured, _ = pilot
    assert detection_rate(0.0) < 0.1
    assert detection_rate(measured / 2) < 0.5  # normal theory: 0.29


def test_a_smaller_corpus_resolves_less_as_one_over_sqrt_n() -> None:
    a, _ = draw_pair(np.random.default_rng(9), 0.0, n=1000)
    full = minimum_detectable_difference(a, mean_aggregate, n_resamples=2000)
    quarter = minimum_detectable_difference(a, mean_aggregate, n_entries=250, n_resamples=2000)
    assert quarter.mdd == pytest.approx(2 * full.mdd, rel=0.1)
    assert quarter.baseline_entries == 1000 and quarter.n_entries == 250
    assert full.entries_for(full.mdd / 2) == pytest.approx(4000, rel=0.01)


def test_stricter_alpha_and_higher_power_need_larger_differences() -> None:
    a, _ = draw_pair(np.random.default_rng(1), 0.0, n=200)
    base = minimum_detectable_difference(a, mean_aggregate).mdd
    assert minimum_detectable_difference(a, mean_aggregate, alpha=0.01).mdd > base
    assert minimum_detectable_difference(a, mean_aggregate, power=0.9).mdd > base
    assert minimum_detectable_difference(a, mean_aggregate, correlation=0.0).mdd > base
    with pytest.raises(ValueError):
        minimum_detectable_difference(a, mean_aggregate, power=1.0)
    with pytest.raises(ValueError):
        minimum_detectable_difference(a[:1], mean_aggregate)


def test_chrf_mdd_on_real_text_is_a_positive_few_points(refs: list[str], systems: dict[str, list[str]]) -> None:
    """chrF++ through sacrebleu's own statistics: a ratio of sums, bootstrapped as a whole."""
    metric = make_metric("chrf")
    a = sacre_stats(metric, systems["a"][:150], refs[:150])
    b = sacre_stats(metric, systems["b"][:150], refs[:150])
    near = sacre_stats(metric, systems["near_a"][:150], refs[:150])
    unlike = minimum_detectable_difference(a, sacre_aggregate(metric), candidate=b, n_resamples=200)
    alike = minimum_detectable_difference(a, sacre_aggregate(metric), candidate=near, n_resamples=200)
    assert 0.3 < unlike.mdd < 10
    # two systems failing on the same entries (near_a is a with every tenth line changed) are told apart more
    # finely than two that fail differently: the paired test's whole point
    assert alike.correlation > 0.8 > unlike.correlation and alike.mdd < unlike.mdd / 2
