"""Several systems against a baseline on one set of resamples, each system's sums computed once.

A comparison needs every system's interval (``bootstrap_many``) and every candidate's paired test
against the baseline (``paired_bootstrap_many``). Called separately, those compute the baseline's
resampled sums once per call, and each candidate's twice; the sums (a ``(B, n) @ (n, k)`` product per
system) are most of the work. Here every system's statistics sit side by side and take one matrix
product; each system's values on the shared resamples serve both its interval and its paired
tests, with the same functions as the separate calls (the percentile interval, sacrebleu's p-value,
§8.2's significance rule).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from mt_eval.stats.bootstrap import (
    COMPOSITE,
    Aggregate,
    Combine,
    ConfidenceInterval,
    _apply,
    _apply_combine,
    _check_alpha,
    _lookup,
    combine_point,
    percentile_interval,
    point_value,
    resampled_sums,
    stack_statistics,
)
from mt_eval.stats.paired import PAIRED_BOOTSTRAP, PairedResult, is_significant, sacrebleu_bootstrap_p_value


def bootstrap_systems(
    systems: Sequence[Mapping[str, np.ndarray]],
    aggregates: Mapping[str, Aggregate],
    combine: Combine | None,
    *,
    counts: np.ndarray,
    alpha: float,
    seed: int,
) -> tuple[list[dict[str, ConfidenceInterval]], list[dict[str, PairedResult]]]:
    """Each system's CIs, and each candidate's paired bootstrap against ``systems[0]``.

    ``counts`` come from ``resample_counts`` (``seed`` is the seed they were drawn with, recorded in
    every result); every system must have the same metrics over the same entries in the same order.
    The composite (``combine``) is scored per resample from that system's metric values, as in
    ``bootstrap_many`` and ``paired_bootstrap_many``.
    """
    _check_alpha(alpha)
    if len(systems) < 1:
        raise ValueError("need at least one system")
    if combine is not None and COMPOSITE in systems[0]:
        raise ValueError(f"a metric may not be called {COMPOSITE!r} when a composite is requested")
    metrics = list(systems[0])
    if any(list(s) != metrics for s in systems[1:]):
        raise ValueError("systems have different metrics")
    n_rows = counts.shape[0]
    stacked = [stack_statistics(stats) for stats in systems]
    sums = resampled_sums(counts, np.concatenate([block for block, _ in stacked], axis=1))  # one product
    points: list[dict[str, float]] = []
    values: list[dict[str, np.ndarray]] = []
    offset = 0
    for stats, (block, slices) in zip(systems, stacked, strict=True):
        points.append({m: point_value(stats[m], _lookup(aggregates, m)) for m in metrics})
        values.append({m: _apply(_lookup(aggregates, m), sums[:, offset + sl.start : offset + sl.stop], n_rows)
                       for m, sl in slices.items()})  # fmt: skip
        offset += block.shape[1]
        if combine is not None:
            points[-1][COMPOSITE] = combine_point(combine, {m: points[-1][m] for m in metrics})
            values[-1][COMPOSITE] = _apply_combine(combine, {m: values[-1][m] for m in metrics}, n_rows)
    keys = [*metrics, COMPOSITE] if combine is not None else metrics
    deltas = [{m: v[m] - values[0][m] for m in keys} for v in values[1:]]
    bounds = iter(_percentile_intervals([*(v[m] for v in values for m in keys),
                                         *(d[m] for d in deltas for m in keys)], alpha))  # fmt: skip
    cis = [
        {m: ConfidenceInterval(p[m], *next(bounds), "percentile", n_rows, alpha, seed) for m in keys}
        for p in points
    ]
    paired = []
    for p, d in zip(points[1:], deltas, strict=True):
        results = {}
        for m in keys:
            delta, (lo, hi) = p[m] - points[0][m], next(bounds)
            pv = sacrebleu_bootstrap_p_value(delta, d[m])
            significant = is_significant(delta, pv, lo, hi, alpha)
            results[m] = PairedResult(m, points[0][m], p[m], delta, lo, hi, pv, significant, PAIRED_BOOTSTRAP, n_rows,
                                      alpha, seed)  # fmt: skip
        paired.append(results)
    return cis, paired


def _percentile_intervals(samples: Sequence[np.ndarray], alpha: float) -> list[tuple[float, float]]:
    """``percentile_interval`` of each sample, the NaN-free ones in one ``np.quantile`` call (one call
    per sample costs more than the quantiles themselves); equal, value for value (tested)."""
    out: list[tuple[float, float] | None] = [None] * len(samples)
    clean = [i for i, s in enumerate(samples) if not np.isnan(s).any()]
    if clean:
        q = np.quantile(np.stack([np.asarray(samples[i], dtype=np.float64) for i in clean]),
                        [alpha / 2, 1 - alpha / 2], axis=1)  # fmt: skip
        for j, i in enumerate(clean):
            out[i] = (float(q[0, j]), float(q[1, j]))
    return [b if b is not None else percentile_interval(s, alpha) for b, s in zip(out, samples, strict=True)]
