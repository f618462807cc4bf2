"""Bootstrap confidence intervals over per-entry sufficient statistics (Scoring Spec §8.1).

Every metric reduces to per-entry statistics ``(n, k)`` plus ``aggregate(sums)``, so a bootstrap
resample never needs the texts again: resampling entries with replacement is the same as weighting
each entry's row by how often it was drawn. The resampled sums for *all* resamples are therefore a
single matrix product ``counts (B, n) @ stats (n, k)``, which BLAS does in milliseconds, whereas
gathering ``stats[indices]`` builds a ``(B, n, k)`` array and is two to three orders of magnitude
slower at 10,000 entries.

The counts are drawn once per run and shared by every metric *and* the composite. That is what
makes the composite's interval honest: the composite of resample ``b`` is the composite function
applied to the metric values of that same resample ``b`` (docs/statistics.md), never a
combination of separately computed metric intervals.

Resamples are drawn exactly as sacrebleu draws them (``default_rng(seed).choice(n, (B, n))``), so
with the same seed our resamples are sacrebleu's resamples; the default seed is sacrebleu's
default ``SACREBLEU_SEED`` (12345).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

Aggregate = Callable[[np.ndarray], np.ndarray]
"""Metric value from summed statistics, vectorised over leading axes: ``(B, k) -> (B,)``."""

Combine = Callable[[dict[str, np.ndarray]], np.ndarray]
"""The composite function: metric id -> values ``(B,)`` in, composite values ``(B,)`` out."""

DEFAULT_SEED = 12345
"""sacrebleu's default ``SACREBLEU_SEED``; using it makes our resamples identical to sacrebleu's."""

COMPOSITE = "composite"
"""Key under which ``bootstrap_many`` and ``paired_bootstrap_many`` report the composite."""

# Resamples are processed in blocks of rows so the temporaries (int64 indices, the float64 copy of
# the counts that BLAS needs) stay near this many bytes however many resamples there are. Blocks must
# not be small either: each matrix product wakes BLAS's threads, and many tiny products are slow on
# a busy machine (64-row blocks ran 3-10x slower than 256-row ones with a loaded 2-core box).
_BLOCK_BYTES = 32 * 2**20


def block_rows(n_items: int, multiple: int = 1) -> int:
    """Rows per block for ``n_items`` columns: about ``_BLOCK_BYTES`` of float64, at least 16.

    ``multiple`` rounds the block down to a multiple (approximate randomization needs 32).
    """
    rows = max(16, min(4096, _BLOCK_BYTES // (8 * max(n_items, 1))))
    return max(multiple, rows // multiple * multiple)


@dataclass(frozen=True)
class ConfidenceInterval:
    """A point estimate with its percentile bootstrap interval and what is needed to reproduce it."""

    point: float
    ci_lower: float
    ci_upper: float
    method: str = "percentile"
    n_resamples: int = 1000
    alpha: float = 0.05
    seed: int = DEFAULT_SEED

    @property
    def width(self) -> float:
        return self.ci_upper - self.ci_lower

    def contains(self, value: float) -> bool:
        return self.ci_lower <= value <= self.ci_upper

    def as_dict(self) -> dict[str, float]:
        """The run card's ``confidence_intervals`` entry (Scoring Spec §9)."""
        return {"ci_lower": self.ci_lower, "ci_upper": self.ci_upper}


def resample_counts(n_items: int, n_resamples: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """How often each entry is drawn in each bootstrap resample: int32 array ``(B, n)``.

    Row ``b`` is the histogram of ``np.random.default_rng(seed).choice(n, (B, n))[b]``, i.e. of
    sacrebleu's own resample indices. The indices are drawn in blocks of rows, which yields the same
    stream as one call (numpy's bounded int64 draw keeps no buffer between calls; a test pins this),
    so memory stays at one block of indices plus the int32 counts.

    Counts rather than indices because ``counts @ stats`` turns the resampled sums of every metric
    into one matrix product.
    """
    if n_items < 1:
        raise ValueError(f"cannot resample an empty corpus (n_items={n_items})")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    return _counts_from_rng(np.random.default_rng(seed), n_items, n_resamples)


def _counts_from_rng(rng: np.random.Generator, n_items: int, n_resamples: int) -> np.ndarray:
    counts = np.empty((n_resamples, n_items), dtype=np.int32)
    step = block_rows(n_items)
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        # Generator.choice(n, size, replace=True) is exactly integers(0, n, size) in int64.
        idx = rng.integers(0, n_items, size=(stop - start, n_items), dtype=np.int64)
        for row, draws in enumerate(idx, start):
            counts[row] = np.bincount(draws, minlength=n_items)
    return counts


def resampled_sums(counts: np.ndarray, stats: np.ndarray) -> np.ndarray:
    """Statistics summed over each resample: ``counts (B, n) @ stats (n, k) -> (B, k)`` in float64.

    Done block by block so the float64 copy of the counts that BLAS needs never exceeds one block.
    """
    stats = _as_stats(stats)
    counts = np.asarray(counts)
    if counts.ndim != 2 or counts.shape[1] != stats.shape[0]:
        raise ValueError(f"counts {counts.shape} do not match statistics for {stats.shape[0]} entries")
    out = np.empty((counts.shape[0], stats.shape[1]), dtype=np.float64)
    step = block_rows(stats.shape[0])
    for start in range(0, counts.shape[0], step):
        stop = min(counts.shape[0], start + step)
        np.matmul(counts[start:stop].astype(np.float64), stats, out=out[start:stop])
    return out


def percentile_interval(values: np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """The ``alpha/2`` and ``1 - alpha/2`` quantiles (numpy's default linear interpolation).

    Resamples on which a metric is undefined (NaN, e.g. a rate whose denominator was never drawn)
    are left out rather than poisoning the interval; if none is defined the bounds are NaN.
    """
    _check_alpha(alpha)
    values = np.asarray(values, dtype=np.float64)
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return float("nan"), float("nan")
    lower, upper = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    return float(lower), float(upper)


def point_value(stats: np.ndarray, aggregate: Aggregate) -> float:
    """The corpus value: ``aggregate`` of the statistics summed over all entries."""
    stats = _as_stats(stats)
    return float(_apply(aggregate, stats.sum(axis=0)[None, :], 1)[0])


def bootstrap_ci(
    stats: np.ndarray,
    aggregate: Aggregate,
    *,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = DEFAULT_SEED,
    counts: np.ndarray | None = None,
) -> ConfidenceInterval:
    """Percentile bootstrap CI of one metric's corpus value.

    Pass ``counts`` (from ``resample_counts``) to reuse one run's resamples across metrics; ``seed``
    is then only recorded, so pass the seed the counts were drawn with.
    """
    stats = _as_stats(stats)
    if counts is None:
        counts = resample_counts(stats.shape[0], n_resamples, seed)
    values = _apply(aggregate, resampled_sums(counts, stats), counts.shape[0])
    return _interval(point_value(stats, aggregate), values, alpha, seed)


def resampled_values(
    stats_by_metric: Mapping[str, np.ndarray],
    aggregates: Mapping[str, Aggregate],
    counts: np.ndarray,
) -> dict[str, np.ndarray]:
    """Each metric's value on each resample, ``id -> (B,)``, from one shared set of counts.

    All metrics' statistics are stacked side by side so the resampled sums take a single matrix
    product however many metrics there are.
    """
    stacked, slices = stack_statistics(stats_by_metric)
    sums = resampled_sums(counts, stacked)
    return {mid: _apply(_lookup(aggregates, mid), sums[:, sl], counts.shape[0]) for mid, sl in slices.items()}


def bootstrap_many(
    stats_by_metric: Mapping[str, np.ndarray],
    aggregates: Mapping[str, Aggregate],
    combine: Combine | None = None,
    *,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = DEFAULT_SEED,
    counts: np.ndarray | None = None,
) -> dict[str, ConfidenceInterval]:
    """CIs for several metrics of one run from the same resamples, plus the composite's.

    The composite's point is ``combine`` of the metrics' points and its interval the percentiles
    of ``combine`` applied to the metrics' values on each resample: the same function both times,
    so the reported interval is the interval of the reported score. ``combine`` receives arrays of
    shape ``(1,)`` for the point and ``(B,)`` for the resamples.
    """
    if combine is not None and COMPOSITE in stats_by_metric:
        raise ValueError(f"a metric may not be called {COMPOSITE!r} when a composite is requested")
    n = _common_length(stats_by_metric)
    if counts is None:
        counts = resample_counts(n, n_resamples, seed)
    points = {mid: point_value(s, _lookup(aggregates, mid)) for mid, s in stats_by_metric.items()}
    values = resampled_values(stats_by_metric, aggregates, counts)
    out = {mid: _interval(points[mid], values[mid], alpha, seed) for mid in stats_by_metric}
    if combine is not None:
        point = combine_point(combine, points)
        out[COMPOSITE] = _interval(point, _apply_combine(combine, values, counts.shape[0]), alpha, seed)
    return out


def combine_point(combine: Combine, points: Mapping[str, float]) -> float:
    """The composite of point values, through the same vectorised ``combine`` as the resamples."""
    arrays = {mid: np.array([v], dtype=np.float64) for mid, v in points.items()}
    return float(_apply_combine(combine, arrays, 1)[0])


def stack_statistics(stats_by_metric: Mapping[str, np.ndarray]) -> tuple[np.ndarray, dict[str, slice]]:
    """Side-by-side ``(n, sum k)`` matrix of several metrics' statistics and each metric's columns."""
    _common_length(stats_by_metric)
    blocks: list[np.ndarray] = []
    slices: dict[str, slice] = {}
    col = 0
    for mid, stats in stats_by_metric.items():
        block = _as_stats(stats)
        slices[mid] = slice(col, col + block.shape[1])
        col += block.shape[1]
        blocks.append(block)
    return np.concatenate(blocks, axis=1), slices


def _interval(point: float, values: np.ndarray, alpha: float, seed: int) -> ConfidenceInterval:
    lower, upper = percentile_interval(values, alpha)
    return ConfidenceInterval(point, lower, upper, "percentile", int(values.shape[0]), alpha, seed)


def _apply(aggregate: Aggregate, sums: np.ndarray, n_rows: int) -> np.ndarray:
    """Call a metric's aggregate and insist on one float per row, so a wrong shape fails loudly."""
    values = np.asarray(aggregate(sums), dtype=np.float64)
    if values.shape != (n_rows,):
        raise ValueError(f"aggregate returned shape {values.shape} for sums {sums.shape}; expected ({n_rows},)")
    return values


def _apply_combine(combine: Combine, values: Mapping[str, np.ndarray], n_rows: int) -> np.ndarray:
    out = np.asarray(combine(dict(values)), dtype=np.float64)
    if out.shape != (n_rows,):
        raise ValueError(f"combine returned shape {out.shape}; expected ({n_rows},)")
    return out


def _as_stats(stats: np.ndarray) -> np.ndarray:
    arr = np.asarray(stats, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"statistics must have shape (n_entries >= 1, k >= 1), got {arr.shape}")
    return arr


def _common_length(stats_by_metric: Mapping[str, np.ndarray]) -> int:
    if not stats_by_metric:
        raise ValueError("no metric statistics given")
    lengths = {mid: np.shape(s)[0] if np.ndim(s) else 0 for mid, s in stats_by_metric.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"metrics disagree on the number of entries: {lengths}")
    return next(iter(lengths.values()))


def _lookup(aggregates: Mapping[str, Aggregate], mid: str) -> Aggregate:
    try:
        return aggregates[mid]
    except KeyError:
        raise ValueError(f"no aggregate given for metric {mid!r}") from None


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
