"""Paired tests: p-value definitions, symmetry, significance rule, composite, AR scheme, misuse."""

from __future__ import annotations

import numpy as np
import pytest
from stats_helpers import make_metric, sacre_aggregate

from mt_eval.stats import (
    COMPOSITE,
    approximate_randomization,
    approximate_randomization_many,
    bootstrap,
    paired_bootstrap,
    paired_bootstrap_many,
    sacrebleu_ar_p_value,
    sacrebleu_bootstrap_p_value,
)
from mt_eval.stats.paired import APPROXIMATE_RANDOMIZATION, PAIRED_BOOTSTRAP, PairedResult


def rate(sums: np.ndarray) -> np.ndarray:
    return sums[..., 0] / sums[..., 1]


def rate_stats(hits: np.ndarray) -> np.ndarray:
    return np.column_stack([hits.astype(np.float64), np.ones(len(hits))])


# --- the p-value formulas, by hand ---------------------------------------------------------------


def test_bootstrap_p_value_by_hand() -> None:
    # |d*| = 1,2,3,4 (signs do not matter), mean 2.5, centred -1.5,-0.5,0.5,1.5; only 1.5 > 0.5.
    assert sacrebleu_bootstrap_p_value(-0.5, np.array([1.0, -2.0, 3.0, 4.0])) == pytest.approx(2 / 5)
    # Strictly greater: nothing exceeds the largest centred value, p = 1/(B+1).
    assert sacrebleu_bootstrap_p_value(1.5, np.array([1.0, 2.0, 3.0, 4.0])) == pytest.approx(1 / 5)
    assert np.isnan(sacrebleu_bootstrap_p_value(1.0, np.array([np.nan])))


def test_ar_p_value_by_hand() -> None:
    # Not centred: |d| > 0.3 for 0.7 and 0.9.
    assert sacrebleu_ar_p_value(-0.3, np.array([0.1, -0.7, 0.3, 0.9])) == pytest.approx(3 / 5)
    # No difference at all: p = 1 (sacrebleu's strict > would give the smallest p, 1/10).
    assert sacrebleu_ar_p_value(0.0, np.zeros(9)) == 1.0
    assert sacrebleu_bootstrap_p_value(0.0, np.zeros(9)) == 1.0
    # a zero observed difference with varying resamples is sacrebleu's formula as usual
    assert sacrebleu_ar_p_value(0.0, np.array([0.0, 0.5, -0.5, 0.0])) == pytest.approx(3 / 5)


# --- behaviour on real data ----------------------------------------------------------------------


@pytest.mark.parametrize("metric", ["chrf", "bleu", "ter"])
def test_system_against_itself(metric, stats_cache) -> None:
    """A system against itself: p = 1.0 (sacrebleu's strict > gives 1/(B+1)), never significant."""
    stats = stats_cache[metric, "a"]
    agg = sacre_aggregate(make_metric(metric))
    for result in (
        paired_bootstrap(stats, stats, agg, n_resamples=200),
        approximate_randomization(stats, stats, agg, n_trials=200, n_ci_resamples=100),
        approximate_randomization(stats, stats, agg, n_trials=200, n_ci_resamples=0),
    ):
        assert result.delta == 0.0
        assert result.p_value == 1.0
        assert not result.significant
    assert result.ci_lower != result.ci_lower  # NaN: no interval requested
    boot = paired_bootstrap(stats, stats, agg, n_resamples=200)
    assert boot.ci_lower == boot.ci_upper == 0.0


@pytest.mark.parametrize("metric", ["chrf", "bleu", "ter"])
def test_swapping_systems_negates_delta_keeps_p(metric, stats_cache) -> None:
    """Two-sided: the p-value depends on |delta| only, whichever way the metric improves."""
    sa, sb = stats_cache[metric, "a"], stats_cache[metric, "near_a"]
    agg = sacre_aggregate(make_metric(metric))
    ab = paired_bootstrap(sa, sb, agg, n_resamples=300, seed=4)
    ba = paired_bootstrap(sb, sa, agg, n_resamples=300, seed=4)
    assert ba.delta == -ab.delta
    assert ba.p_value == ab.p_value
    assert ba.ci_lower == pytest.approx(-ab.ci_upper, abs=1e-9)
    assert ba.ci_upper == pytest.approx(-ab.ci_lower, abs=1e-9)


def test_lower_is_better_reading(stats_cache) -> None:
    ter = paired_bootstrap(
        stats_cache["ter", "a"], stats_cache["ter", "b"], sacre_aggregate(make_metric("ter")), metric="ter"
    )
    assert ter.delta < 0  # b has far fewer edits
    assert ter.b_is_better(higher_is_better=False)
    assert not ter.b_is_better(higher_is_better=True)
    assert ter.significant and ter.ci_upper < 0
    assert (ter.metric, ter.method, ter.n_resamples, ter.seed) == ("ter", PAIRED_BOOTSTRAP, 1000, 12345)


def test_delta_ci_matches_naive_paired_resampling(stats_cache) -> None:
    sa, sb = stats_cache["chrf", "a"], stats_cache["chrf", "near_a"]
    agg = sacre_aggregate(make_metric("chrf"))
    result = paired_bootstrap(sa, sb, agg, n_resamples=300, seed=8)
    idx = np.random.default_rng(8).choice(len(sa), size=(300, len(sa)))
    deltas = agg(sb[idx].sum(1)) - agg(sa[idx].sum(1))
    lower, upper = np.quantile(deltas, [0.025, 0.975])
    assert (result.ci_lower, result.ci_upper) == pytest.approx((lower, upper), abs=1e-9)
    assert result.p_value == sacrebleu_bootstrap_p_value(result.delta, deltas)
    assert paired_bootstrap(sa, sb, agg, n_resamples=300, seed=8) == result


# --- the significance rule (Scoring Spec §8.2) ---------------------------------------------------


def test_significance_needs_small_p_and_interval_excluding_zero() -> None:
    n = 400
    base = rate_stats(np.arange(n) % 2 == 0)  # 50 %
    better = rate_stats((np.arange(n) % 2 == 0) | (np.arange(n) % 7 == 1))  # ~57 %
    tiny = base.copy()
    tiny[1, 0] = 1.0  # one more hit: 50.25 %
    clear = paired_bootstrap(base, better, rate)
    assert clear.p_value < 0.05 and clear.ci_lower > 0 and clear.significant
    close = paired_bootstrap(base, tiny, rate)
    assert close.p_value >= 0.05 and not close.significant


def test_bootstrap_p_can_disagree_with_interval() -> None:
    """sacrebleu's centred p-value and the percentile interval are different criteria; both must hold."""
    result = PairedResult("m", 1.0, 1.1, 0.1, 0.01, 0.2, 0.06, False, PAIRED_BOOTSTRAP)
    assert result.ci_lower > 0 and not result.significant


# --- composite through combine -------------------------------------------------------------------


def test_paired_composite_uses_combine_on_each_resample(stats_cache) -> None:
    aggs = {"chrf": sacre_aggregate(make_metric("chrf")), "bleu": sacre_aggregate(make_metric("bleu"))}
    sa = {m: stats_cache[m, "a"] for m in aggs}
    sb = {m: stats_cache[m, "near_a"] for m in aggs}

    def combine(v: dict[str, np.ndarray]) -> np.ndarray:
        return 0.7 * v["chrf"] / 100 + 0.3 * np.sqrt(v["bleu"] / 100)

    results = paired_bootstrap_many(sa, sb, aggs, combine, n_resamples=300, seed=2)
    assert set(results) == {"chrf", "bleu", COMPOSITE}
    for mid in aggs:
        assert results[mid] == paired_bootstrap(sa[mid], sb[mid], aggs[mid], metric=mid, n_resamples=300, seed=2)
    comp = results[COMPOSITE]
    points_a = {m: np.array([results[m].score_a]) for m in aggs}
    points_b = {m: np.array([results[m].score_b]) for m in aggs}
    assert comp.score_a == pytest.approx(combine(points_a)[0], abs=1e-15)
    assert comp.delta == pytest.approx(combine(points_b)[0] - combine(points_a)[0], abs=1e-15)
    idx = np.random.default_rng(2).choice(300, size=(300, 300))
    va = {m: aggs[m](sa[m][idx].sum(1)) for m in aggs}
    vb = {m: aggs[m](sb[m][idx].sum(1)) for m in aggs}
    deltas = combine(vb) - combine(va)
    assert (comp.ci_lower, comp.ci_upper) == pytest.approx(tuple(np.quantile(deltas, [0.025, 0.975])))
    assert comp.p_value == pytest.approx(sacrebleu_bootstrap_p_value(comp.delta, deltas))

    ar = approximate_randomization_many(sa, sb, aggs, combine, n_trials=300, n_ci_resamples=100)
    assert ar[COMPOSITE].method == APPROXIMATE_RANDOMIZATION
    assert ar[COMPOSITE].delta == comp.delta


# --- approximate randomization scheme ------------------------------------------------------------


@pytest.mark.parametrize("block_bytes", [None, 1])
@pytest.mark.parametrize("n", [7, 301])
def test_ar_uses_sacrebleus_swap_masks(n: int, block_bytes: int | None, monkeypatch) -> None:
    """Blockwise mask draws must equal sacrebleu's single ``integers(2, (T, n), bool)`` draw.

    With ``block_bytes=1`` the 200 trials run in blocks of 32, the last one ragged.
    """
    if block_bytes is not None:
        monkeypatch.setattr(bootstrap, "_BLOCK_BYTES", block_bytes)
        assert bootstrap.block_rows(n, multiple=32) == 32
    rng = np.random.default_rng(1)
    sa = rate_stats(rng.random(n) < 0.4)
    sb = rate_stats(rng.random(n) < 0.5)
    trials = 200  # several blocks plus a ragged one
    result = approximate_randomization(sa, sb, rate, n_trials=trials, seed=31, n_ci_resamples=50)
    gen = np.random.default_rng(31)
    pos = gen.integers(2, size=(trials, n), dtype=bool)
    shuf_a = pos @ sa + ~pos @ sb
    shuf_b = ~pos @ sa + pos @ sb
    expected_p = sacrebleu_ar_p_value(result.delta, rate(shuf_a) - rate(shuf_b))
    assert result.p_value == expected_p
    idx = gen.choice(n, size=(50, n))
    deltas = rate(sb[idx].sum(1)) - rate(sa[idx].sum(1))
    assert (result.ci_lower, result.ci_upper) == pytest.approx(tuple(np.quantile(deltas, [0.025, 0.975])))


def test_ar_without_interval() -> None:
    sa = rate_stats(np.arange(200) % 2 == 0)
    sb = rate_stats(np.arange(200) % 5 != 0)
    result = approximate_randomization(sa, sb, rate, n_trials=500, n_ci_resamples=0)
    assert np.isnan(result.ci_lower) and np.isnan(result.ci_upper)
    assert result.p_value < 0.05 and result.significant


# --- misuse --------------------------------------------------------------------------------------


def test_errors() -> None:
    s = np.ones((10, 2))
    with pytest.raises(ValueError, match="same entries"):
        paired_bootstrap(s, np.ones((9, 2)), rate)
    with pytest.raises(ValueError, match="different metrics"):
        paired_bootstrap_many({"x": s}, {"y": s}, {"x": rate, "y": rate})
    with pytest.raises(ValueError, match="n_trials"):
        approximate_randomization(s, s, rate, n_trials=0)
    with pytest.raises(ValueError, match="composite"):
        paired_bootstrap_many({COMPOSITE: s}, {COMPOSITE: s}, {COMPOSITE: rate}, lambda v: v[COMPOSITE])
