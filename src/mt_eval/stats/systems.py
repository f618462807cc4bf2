"""Several systems against a baseline on one set of resamples, each system's sums computed once.

A comparison needs every system's interval (``bootstrap_many``) and every candidate's paired test
against the baseline (``paired_bootstrap_many``). Called separately, those compute the baseline's
resampled sums once per call, and each candidate's twice; the sums (a ``(B, n) @ (n, k)`` product per
system) are most of the work. Here each system's values on the shared resamples are computed once
and serve both its interval and its paired tests, with the same functions as the separate calls
(the percentile interval, sacrebleu's p-value, §8.2's significance rule).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from mt_eval.stats.bootstrap import (
    COMPOSITE,
    Aggregate,
    Combine,
    ConfidenceInterval,
    _apply_combine,
    _interval,
    _lookup,
    combine_point,
    point_value,
    resampled_values,
)
from mt_eval.stats.paired import PairedResult, _bootstrap_result


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
    if len(systems) < 1:
        raise ValueError("need at least one system")
    if combine is not None and COMPOSITE in systems[0]:
        raise ValueError(f"a metric may not be called {COMPOSITE!r} when a composite is requested")
    metrics = list(systems[0])
    if any(list(s) != metrics for s in systems[1:]):
        raise ValueError("systems have different metrics")
    n_rows = counts.shape[0]
    points: list[dict[str, float]] = []
    values: list[dict[str, np.ndarray]] = []
    for stats in systems:
        points.append({m: point_value(stats[m], _lookup(aggregates, m)) for m in metrics})
        values.append(resampled_values(stats, aggregates, counts))
        if combine is not None:
            points[-1][COMPOSITE] = combine_point(combine, {m: points[-1][m] for m in metrics})
            values[-1][COMPOSITE] = _apply_combine(combine, {m: values[-1][m] for m in metrics}, n_rows)
    keys = [*metrics, COMPOSITE] if combine is not None else metrics
    cis = [{m: _interval(p[m], v[m], alpha, seed) for m in keys} for p, v in zip(points, values, strict=True)]
    paired = [
        {m: _bootstrap_result(m, points[0][m], p[m], values[0][m], v[m], alpha, seed) for m in keys}
        for p, v in zip(points[1:], values[1:], strict=True)
    ]
    return cis, paired
