"""Bootstrap CIs: resampling scheme, agreement with a naive implementation, composite, edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from stats_helpers import make_metric, sacre_aggregate

from mt_eval.stats import (
    COMPOSITE,
    ConfidenceInterval,
    bootstrap,
    bootstrap_ci,
    bootstrap_many,
    percentile_interval,
    point_value,
    resample_counts,
    resampled_sums,
    resampled_values,
)


def rate(sums: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums[..., 0] / sums[..., 1]


def naive_bootstrap(stats: np.ndarray, aggregate, n_resamples: int, seed: int) -> np.ndarray:
    """The textbook (and sacrebleu's) way: gather resampled rows by index, sum, aggregate."""
    idx = np.random.default_rng(seed).choice(stats.shape[0], size=(n_resamples, stats.shape[0]))
    return aggregate(stats[idx].sum(axis=1))


# --- resampling scheme -------------------------------------------------------------------------


@pytest.fixture(params=["default-blocks", "tiny-blocks"])
def blocks(request, monkeypatch) -> None:
    """Also run with the smallest blocks, so 200 resamples span 13 blocks, the last one ragged."""
    if request.param == "tiny-blocks":
        monkeypatch.setattr(bootstrap, "_BLOCK_BYTES", 1)
        assert bootstrap.block_rows(301) == 16


@pytest.mark.usefixtures("blocks")
@pytest.mark.parametrize("n", [1, 7, 301])
def test_counts_are_histograms_of_sacrebleus_indices(n: int) -> None:
    counts = resample_counts(n, 200, seed=12345)
    idx = np.random.default_rng(12345).choice(n, size=(200, n), replace=True)
    expected = np.stack([np.bincount(row, minlength=n) for row in idx])
    assert counts.dtype == np.int32
    assert np.array_equal(counts, expected)
    assert (counts.sum(axis=1) == n).all()


@pytest.mark.usefixtures("blocks")
def test_resampled_sums_equal_gathered_sums() -> None:
    rng = np.random.default_rng(0)
    stats = rng.integers(0, 50, size=(133, 5)).astype(np.float64)
    counts = resample_counts(133, 150, seed=3)
    idx = np.random.default_rng(3).choice(133, size=(150, 133))
    assert np.array_equal(resampled_sums(counts, stats), stats[idx].sum(axis=1))


def test_resample_counts_rejects_empty() -> None:
    with pytest.raises(ValueError, match="empty"):
        resample_counts(0, 10)
    with pytest.raises(ValueError, match="n_resamples"):
        resample_counts(5, 0)


# --- single-metric intervals on real data ------------------------------------------------------


@pytest.mark.parametrize("metric", ["chrf", "bleu", "ter"])
def test_ci_matches_naive_bootstrap_and_contains_point(metric, stats_cache, systems, refs) -> None:
    stats = stats_cache[metric, "a"]
    agg = sacre_aggregate(make_metric(metric))
    ci = bootstrap_ci(stats, agg, n_resamples=300, seed=11)
    assert ci.point == make_metric(metric).corpus_score(systems["a"], [refs]).score
    lower, upper = np.quantile(naive_bootstrap(stats, agg, 300, 11), [0.025, 0.975])
    assert ci.ci_lower == pytest.approx(lower, abs=1e-9)
    assert ci.ci_upper == pytest.approx(upper, abs=1e-9)
    assert ci.ci_lower < ci.point < ci.ci_upper
    assert (ci.method, ci.n_resamples, ci.alpha, ci.seed) == ("percentile", 300, 0.05, 11)


@pytest.mark.parametrize("metric", ["chrf", "bleu", "ter"])
def test_seeds(metric, stats_cache) -> None:
    stats = stats_cache[metric, "b"]
    agg = sacre_aggregate(make_metric(metric))
    first = bootstrap_ci(stats, agg, n_resamples=500, seed=1)
    assert bootstrap_ci(stats, agg, n_resamples=500, seed=1) == first
    other = bootstrap_ci(stats, agg, n_resamples=500, seed=2)
    assert other.point == first.point
    assert other != first
    assert abs(other.ci_lower - first.ci_lower) < first.width
    assert abs(other.ci_upper - first.ci_upper) < first.width


def test_perfect_output_gives_zero_width_ci(stats_cache) -> None:
    ci = bootstrap_ci(stats_cache["chrf", "ref"], sacre_aggregate(make_metric("chrf")), n_resamples=200)
    assert ci.point == ci.ci_lower == ci.ci_upper == 100.0
    assert ci.width == 0.0


def test_constant_rate_gives_zero_width_ci() -> None:
    stats = np.tile([1.0, 2.0], (50, 1))
    ci = bootstrap_ci(stats, rate)
    assert (ci.point, ci.ci_lower, ci.ci_upper) == (0.5, 0.5, 0.5)


def test_rate_ci_close_to_normal_approximation() -> None:
    """A sanity anchor independent of sacrebleu: a proportion's CI ~ p ± 1.96·sqrt(p(1-p)/n)."""
    n = 2000
    hits = (np.arange(n) % 10 < 3).astype(np.float64)
    stats = np.column_stack([hits, np.ones(n)])
    ci = bootstrap_ci(stats, rate, n_resamples=2000, seed=5)
    half = 1.96 * np.sqrt(0.3 * 0.7 / n)
    assert ci.point == pytest.approx(0.3)
    assert ci.ci_lower == pytest.approx(0.3 - half, abs=0.004)
    assert ci.ci_upper == pytest.approx(0.3 + half, abs=0.004)


def test_undefined_resamples_are_left_out() -> None:
    # Only 3 of 40 entries have a denominator, so some resamples have 0/0.
    stats = np.zeros((40, 2))
    stats[:3] = [[1, 1], [0, 1], [1, 1]]
    values = resampled_values({"r": stats}, {"r": rate}, resample_counts(40, 1000))["r"]
    assert np.isnan(values).any()
    ci = bootstrap_ci(stats, rate)
    assert 0.0 <= ci.ci_lower <= ci.point <= ci.ci_upper <= 1.0
    assert percentile_interval(np.full(4, np.nan)) == pytest.approx((np.nan, np.nan), nan_ok=True)


# --- several metrics and the composite -----------------------------------------------------------


def normalised(values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {
        "chrf": values["chrf"] / 100,
        "ter": 1 - np.minimum(values["ter"] / 100, 1),
        "em": values["em"],
    }


def weighted_composite(values: dict[str, np.ndarray]) -> np.ndarray:
    n = normalised(values)
    return (0.5 * n["chrf"] + 0.3 * n["ter"] + 0.2 * n["em"]) / 1.0


def worst_of(values: dict[str, np.ndarray]) -> np.ndarray:
    n = normalised(values)
    return np.minimum(np.minimum(n["chrf"], n["ter"]), n["em"])


@pytest.fixture(scope="module")
def run(stats_cache, systems, refs):
    em = np.array([[float(h == r), 1.0] for h, r in zip(systems["b"], refs, strict=True)])
    stats = {"chrf": stats_cache["chrf", "b"], "ter": stats_cache["ter", "b"], "em": em}
    aggs = {"chrf": sacre_aggregate(make_metric("chrf")), "ter": sacre_aggregate(make_metric("ter")), "em": rate}
    return stats, aggs


def test_many_equals_single_metric_cis_on_shared_counts(run) -> None:
    stats, aggs = run
    many = bootstrap_many(stats, aggs, n_resamples=400, seed=9)
    counts = resample_counts(300, 400, seed=9)
    for mid in stats:
        single = bootstrap_ci(stats[mid], aggs[mid], n_resamples=400, seed=9)
        assert many[mid] == single
        assert bootstrap_ci(stats[mid], aggs[mid], counts=counts, seed=9) == single
    assert COMPOSITE not in many


@pytest.mark.parametrize("combine", [weighted_composite, worst_of])
def test_composite_ci_comes_from_the_combine_function(run, combine) -> None:
    stats, aggs = run
    cis = bootstrap_many(stats, aggs, combine, n_resamples=400, seed=9)
    comp = cis[COMPOSITE]
    # Recompute independently: naive resampling, per-metric values, the same combine on each resample.
    values = {mid: naive_bootstrap(stats[mid], aggs[mid], 400, 9) for mid in stats}
    lower, upper = np.quantile(combine(values), [0.025, 0.975])
    point = combine({mid: np.array([point_value(stats[mid], aggs[mid])]) for mid in stats})[0]
    assert comp.point == pytest.approx(point, abs=1e-12)
    assert comp.ci_lower == pytest.approx(lower, abs=1e-12)
    assert comp.ci_upper == pytest.approx(upper, abs=1e-12)
    assert comp.contains(comp.point)
    assert comp.width > 0


def test_composite_ci_is_not_a_combination_of_metric_cis(run) -> None:
    """The reference implementation's bug was to build the composite's CI some other way.

    Feeding per-metric bounds through the composite, or using another combining function, gives a
    different interval; only the resample-wise composite is reported.
    """
    stats, aggs = run
    comp = bootstrap_many(stats, aggs, weighted_composite, n_resamples=400, seed=9)
    reported = (comp[COMPOSITE].ci_lower, comp[COMPOSITE].ci_upper)
    bounds = {mid: np.array([comp[mid].ci_lower, comp[mid].ci_upper]) for mid in stats}
    assert not np.allclose(weighted_composite(bounds), reported, rtol=0, atol=1e-4)
    other = bootstrap_many(stats, aggs, worst_of, n_resamples=400, seed=9)[COMPOSITE]
    assert not np.allclose((other.ci_lower, other.ci_upper), reported, rtol=0, atol=1e-4)


def test_as_dict_is_the_run_card_shape() -> None:
    ci = ConfidenceInterval(80.65, 78.2, 83.1)
    assert ci.as_dict() == {"ci_lower": 78.2, "ci_upper": 83.1}


# --- misuse fails loudly -------------------------------------------------------------------------


def test_errors() -> None:
    stats = np.ones((10, 2))
    with pytest.raises(ValueError, match="disagree"):
        bootstrap_many({"x": stats, "y": np.ones((9, 2))}, {"x": rate, "y": rate})
    with pytest.raises(ValueError, match="no aggregate"):
        bootstrap_many({"x": stats}, {})
    with pytest.raises(ValueError, match="composite"):
        bootstrap_many({COMPOSITE: stats}, {COMPOSITE: rate}, lambda v: v[COMPOSITE])
    with pytest.raises(ValueError, match="alpha"):
        bootstrap_ci(stats, rate, alpha=1.5)
    with pytest.raises(ValueError, match="shape"):
        bootstrap_ci(stats, lambda s: s)
    with pytest.raises(ValueError, match="shape"):
        bootstrap_ci(np.ones(10), rate)
    with pytest.raises(ValueError, match="do not match"):
        resampled_sums(np.ones((3, 4)), stats)
    with pytest.raises(ValueError, match="combine returned"):
        bootstrap_many({"x": stats}, {"x": rate}, lambda v: np.zeros(3))
