"""Paired significance tests between two systems on the same entries (Scoring Spec §8.2).

Both tests reproduce sacrebleu's ``--paired-bs`` and ``--paired-ar`` (sacrebleu 2.x,
``sacrebleu/significance.py``) on our generic sufficient statistics, so a p-value in a run card
means what it means in sacrebleu's output; with the same seed (default 12345, sacrebleu's default)
the resamples and trials are sacrebleu's own, bit for bit.

System ``a`` is the baseline, ``b`` the candidate; ``delta = score_b - score_a`` in the metric's
native units. Both p-values are two-sided: they test ``|delta|``, so the direction in which a
metric improves (``higher_is_better=False`` for TER) does not change the p-value, only how the sign
of ``delta`` reads; ``PairedResult.b_is_better`` does that reading.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np

from mt_eval.stats.bootstrap import (
    COMPOSITE,
    DEFAULT_SEED,
    Aggregate,
    Combine,
    _apply,
    _apply_combine,
    _check_alpha,
    _counts_from_rng,
    _lookup,
    block_rows,
    combine_point,
    percentile_interval,
    point_value,
    resample_counts,
    resampled_sums,
    stack_statistics,
)

PAIRED_BOOTSTRAP = "paired-bootstrap"
APPROXIMATE_RANDOMIZATION = "approximate-randomization"

# Trials per block for approximate randomization are a multiple of 32: numpy draws booleans from a
# 32-bit buffer that it drops at the end of each call, so only aligned blocks reproduce sacrebleu's
# single draw (a test pins this).
_AR_MULTIPLE = 32


@dataclass(frozen=True)
class PairedResult:
    """Outcome of comparing candidate ``b`` against baseline ``a`` on one metric (or the composite).

    ``ci_lower``/``ci_upper`` bound ``delta`` (percentile bootstrap of ``b - a`` on shared
    resamples). ``significant`` follows Scoring Spec §8.2: ``p_value < alpha`` *and* the interval
    excludes zero. ``n_resamples`` counts bootstrap resamples or randomization trials.
    """

    metric: str
    score_a: float
    score_b: float
    delta: float
    ci_lower: float
    ci_upper: float
    p_value: float
    significant: bool
    method: str
    n_resamples: int = 1000
    alpha: float = 0.05
    seed: int = DEFAULT_SEED

    def b_is_better(self, higher_is_better: bool = True) -> bool:
        """Whether ``b`` scored better than ``a`` (not whether significantly; see ``significant``)."""
        return self.delta > 0 if higher_is_better else self.delta < 0

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def sacrebleu_bootstrap_p_value(observed_delta: float, resampled_deltas: np.ndarray) -> float:
    """sacrebleu's paired-bootstrap p-value (``_paired_bs_test`` + ``_compute_p_value``).

    With ``d*`` the absolute score differences on the resamples, the null distribution is ``d*``
    shifted to mean zero, and ``p = (#{d* - mean(d*) > |delta|} + 1) / (B + 1)``. The ``+1`` (from
    multeval) keeps the test from rejecting more often than ``alpha``. One departure from sacrebleu
    (docs/decisions.md §24): when there is no difference at all (observed and every resampled
    difference exactly 0, e.g. a system against itself) p is 1.0, where sacrebleu's strict ``>``
    reports the *smallest* p, 1/(B+1). Everywhere else the number is sacrebleu's, including its
    strict ``>`` for ties of coarse metrics; ``PairedResult.significant`` also requires a non-zero
    delta and an interval excluding zero. Resamples where a metric is undefined (NaN) are left out.
    """
    sample = np.abs(np.asarray(resampled_deltas, dtype=np.float64))
    sample = sample[~np.isnan(sample)]
    if sample.size == 0 or np.isnan(observed_delta):
        return float("nan")
    if observed_delta == 0 and not np.any(sample):
        return 1.0  # nothing differs on any resample: no evidence of a difference whatsoever
    centred = sample - sample.mean()
    return _smoothed_p(centred, abs(observed_delta))


def sacrebleu_ar_p_value(observed_delta: float, trial_deltas: np.ndarray) -> float:
    """sacrebleu's approximate-randomization p-value: ``(#{|d_t| > |delta|} + 1) / (T + 1)``.

    Unlike the bootstrap, the trial differences are not centred: swapping outputs between the two
    systems already simulates the null hypothesis. Identical systems get p = 1.0, as in the bootstrap
    (sacrebleu's strict ``>`` gives them 1/(T+1)).
    """
    sample = np.abs(np.asarray(trial_deltas, dtype=np.float64))
    sample = sample[~np.isnan(sample)]
    if sample.size == 0 or np.isnan(observed_delta):
        return float("nan")
    if observed_delta == 0 and not np.any(sample):
        return 1.0
    return _smoothed_p(sample, abs(observed_delta))


def _smoothed_p(null_sample: np.ndarray, observed: float) -> float:
    count = int(np.count_nonzero(null_sample > observed))
    return (count + 1) / (null_sample.size + 1)


def paired_bootstrap(
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    aggregate: Aggregate,
    *,
    metric: str = "metric",
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = DEFAULT_SEED,
    counts: np.ndarray | None = None,
) -> PairedResult:
    """Paired bootstrap test of one metric: both systems are scored on the same resampled entries."""
    return paired_bootstrap_many(
        {metric: stats_a},
        {metric: stats_b},
        {metric: aggregate},
        n_resamples=n_resamples,
        alpha=alpha,
        seed=seed,
        counts=counts,
    )[metric]


def paired_bootstrap_many(
    stats_a: Mapping[str, np.ndarray],
    stats_b: Mapping[str, np.ndarray],
    aggregates: Mapping[str, Aggregate],
    combine: Combine | None = None,
    *,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = DEFAULT_SEED,
    counts: np.ndarray | None = None,
) -> dict[str, PairedResult]:
    """Paired bootstrap for several metrics, and the composite through ``combine``, on one resample set.

    The composite's resampled score for each system is ``combine`` of that system's metric values
    on the same resample, so its delta, interval and p-value come from the function that produced
    the reported composite.
    """
    _check_alpha(alpha)
    n, width, slices = _check_pair(stats_a, stats_b, combine)
    if counts is None:
        counts = resample_counts(n, n_resamples, seed)
    sums = resampled_sums(counts, _side_by_side(stats_a, stats_b))
    n_rows = counts.shape[0]
    points_a, points_b, values_a, values_b = _score_both(
        stats_a, stats_b, aggregates, slices, width, sums, sums, n_rows
    )
    out = {
        mid: _bootstrap_result(mid, points_a[mid], points_b[mid], values_a[mid], values_b[mid], alpha, seed)
        for mid in slices
    }
    if combine is not None:
        pa, pb = combine_point(combine, points_a), combine_point(combine, points_b)
        va = _apply_combine(combine, values_a, n_rows)
        vb = _apply_combine(combine, values_b, n_rows)
        out[COMPOSITE] = _bootstrap_result(COMPOSITE, pa, pb, va, vb, alpha, seed)
    return out


def approximate_randomization(
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    aggregate: Aggregate,
    *,
    metric: str = "metric",
    n_trials: int = 10000,
    alpha: float = 0.05,
    seed: int = DEFAULT_SEED,
    n_ci_resamples: int = 1000,
) -> PairedResult:
    """Paired approximate randomization test of one metric (sacrebleu ``--paired-ar``)."""
    return approximate_randomization_many(
        {metric: stats_a},
        {metric: stats_b},
        {metric: aggregate},
        n_trials=n_trials,
        alpha=alpha,
        seed=seed,
        n_ci_resamples=n_ci_resamples,
    )[metric]


def approximate_randomization_many(
    stats_a: Mapping[str, np.ndarray],
    stats_b: Mapping[str, np.ndarray],
    aggregates: Mapping[str, Aggregate],
    combine: Combine | None = None,
    *,
    n_trials: int = 10000,
    alpha: float = 0.05,
    seed: int = DEFAULT_SEED,
    n_ci_resamples: int = 1000,
) -> dict[str, PairedResult]:
    """Approximate randomization: in each trial every entry's two outputs swap systems with p = 1/2.

    As in sacrebleu, the swap masks come first from ``default_rng(seed)`` and the bootstrap
    resamples for the interval of ``delta`` (``n_ci_resamples``; ``PairedTest(n_ar_confidence=...)``
    in sacrebleu) continue the same stream. With ``n_ci_resamples=0`` the interval is NaN and ``significant``
    rests on the p-value alone.

    A trial's sums are ``total_b + mask @ (a - b)`` for system a and ``total_a - mask @ (a - b)``
    for b, one matrix product per block of trials.
    """
    _check_alpha(alpha)
    if n_trials < 1:
        raise ValueError(f"n_trials must be at least 1, got {n_trials}")
    n, width, slices = _check_pair(stats_a, stats_b, combine)
    rng = np.random.default_rng(seed)
    stacked = _side_by_side(stats_a, stats_b)
    total_a, total_b = stacked[:, :width].sum(axis=0), stacked[:, width:].sum(axis=0)
    diff = stacked[:, :width] - stacked[:, width:]
    moved = np.empty((n_trials, width), dtype=np.float64)
    step = block_rows(n, multiple=_AR_MULTIPLE)
    for start in range(0, n_trials, step):
        stop = min(n_trials, start + step)
        mask = rng.integers(2, size=(stop - start, n), dtype=bool)
        np.matmul(mask.astype(np.float64), diff, out=moved[start:stop])
    shuffled_a = total_b + moved
    shuffled_b = total_a - moved
    points_a, points_b, trial_a, trial_b = _score_both(
        stats_a, stats_b, aggregates, slices, 0, shuffled_a, shuffled_b, n_trials
    )
    ci_deltas: dict[str, np.ndarray] = {}
    if n_ci_resamples > 0:
        counts = _counts_from_rng(rng, n, n_ci_resamples)
        sums = resampled_sums(counts, stacked)
        _, _, boot_a, boot_b = _score_both(stats_a, stats_b, aggregates, slices, width, sums, sums, n_ci_resamples)
        ci_deltas = {mid: boot_b[mid] - boot_a[mid] for mid in slices}
        if combine is not None:
            ci_deltas[COMPOSITE] = _apply_combine(combine, boot_b, n_ci_resamples) - _apply_combine(
                combine, boot_a, n_ci_resamples
            )
    if combine is not None:
        points_a[COMPOSITE] = combine_point(combine, points_a)
        points_b[COMPOSITE] = combine_point(combine, points_b)
        trial_a[COMPOSITE] = _apply_combine(combine, trial_a, n_trials)
        trial_b[COMPOSITE] = _apply_combine(combine, trial_b, n_trials)
    out: dict[str, PairedResult] = {}
    for mid in points_a:
        delta = points_b[mid] - points_a[mid]
        p = sacrebleu_ar_p_value(delta, trial_a[mid] - trial_b[mid])
        lo, hi = percentile_interval(ci_deltas[mid], alpha) if mid in ci_deltas else (np.nan, np.nan)
        out[mid] = PairedResult(
            mid, points_a[mid], points_b[mid], delta, lo, hi, p,
            is_significant(delta, p, lo, hi, alpha), APPROXIMATE_RANDOMIZATION, n_trials, alpha, seed,
        )  # fmt: skip
    return out


def _bootstrap_result(
    mid: str, point_a: float, point_b: float, va: np.ndarray, vb: np.ndarray, alpha: float, seed: int
) -> PairedResult:
    deltas = vb - va
    delta = point_b - point_a
    p = sacrebleu_bootstrap_p_value(delta, deltas)
    lo, hi = percentile_interval(deltas, alpha)
    return PairedResult(
        mid, point_a, point_b, delta, lo, hi, p, is_significant(delta, p, lo, hi, alpha),
        PAIRED_BOOTSTRAP, int(deltas.shape[0]), alpha, seed,
    )  # fmt: skip


def is_significant(delta: float, p: float, lo: float, hi: float, alpha: float) -> bool:
    """Scoring Spec §8.2: p below alpha and, when an interval exists, the interval excludes zero.

    A zero observed difference is never significant (whatever p a coarse metric's ties produce).
    """
    if delta == 0 or np.isnan(p) or p >= alpha:
        return False
    if np.isnan(lo) or np.isnan(hi):
        return True
    return bool(lo > 0 or hi < 0)


def _check_pair(
    stats_a: Mapping[str, np.ndarray], stats_b: Mapping[str, np.ndarray], combine: Combine | None
) -> tuple[int, int, dict[str, slice]]:
    """Both systems must have the same metrics over the same entries; returns (n, columns, slices)."""
    if list(stats_a) != list(stats_b):
        raise ValueError(f"systems have different metrics: {list(stats_a)} vs {list(stats_b)}")
    if combine is not None and COMPOSITE in stats_a:
        raise ValueError(f"a metric may not be called {COMPOSITE!r} when a composite is requested")
    stacked_a, slices = stack_statistics(stats_a)
    stacked_b, _ = stack_statistics(stats_b)
    if stacked_a.shape != stacked_b.shape:
        raise ValueError(
            f"systems' statistics differ in shape: {stacked_a.shape} vs {stacked_b.shape}; "
            "paired tests need the same entries in the same order"
        )
    return stacked_a.shape[0], stacked_a.shape[1], slices


def _side_by_side(stats_a: Mapping[str, np.ndarray], stats_b: Mapping[str, np.ndarray]) -> np.ndarray:
    """``[a's metrics | b's metrics]`` so both systems' resampled sums take one matrix product."""
    return np.concatenate([stack_statistics(stats_a)[0], stack_statistics(stats_b)[0]], axis=1)


def _score_both(
    stats_a: Mapping[str, np.ndarray],
    stats_b: Mapping[str, np.ndarray],
    aggregates: Mapping[str, Aggregate],
    slices: dict[str, slice],
    offset_b: int,
    sums_a: np.ndarray,
    sums_b: np.ndarray,
    n_rows: int,
) -> tuple[dict[str, float], dict[str, float], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Points and per-row values of every metric for both systems.

    System b's columns sit ``offset_b`` to the right of a's in ``sums_b`` (``width`` when both live
    in one side-by-side matrix, 0 when they come in separate matrices).
    """
    points_a: dict[str, float] = {}
    points_b: dict[str, float] = {}
    values_a: dict[str, np.ndarray] = {}
    values_b: dict[str, np.ndarray] = {}
    for mid, sl in slices.items():
        agg = _lookup(aggregates, mid)
        points_a[mid] = point_value(stats_a[mid], agg)
        points_b[mid] = point_value(stats_b[mid], agg)
        values_a[mid] = _apply(agg, sums_a[:, sl], n_rows)
        values_b[mid] = _apply(agg, sums_b[:, sl.start + offset_b : sl.stop + offset_b], n_rows)
    return points_a, points_b, values_a, values_b
