"""Agreement of a metric with human judgments: Kendall's τ_b, and its item-grouped average.

Item-grouped (WMT's "group by item") compares, for every source segment, the ranking of the
systems by the metric with their ranking by people, then averages over segments: it asks whether
the metric orders *translations of the same sentence* as people do, which is what a leaderboard
needs, without rewarding a metric for knowing that some sentences are harder than others.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np


def kendall_tau_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """τ_b = (C − D) / sqrt((n0 − n1)(n0 − n2)), ties in either variable handled; NaN when either is constant.

    O(n²) over pairs, which is what a handful of systems per segment needs (scipy agrees: tested).
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("x and y must be 1-D and of the same length")
    i, j = np.triu_indices(len(a), k=1)
    da = np.sign(a[i] - a[j])
    db = np.sign(b[i] - b[j])
    concordant_minus_discordant = float(np.sum(da * db))
    untied_a = float(np.count_nonzero(da))
    untied_b = float(np.count_nonzero(db))
    if untied_a == 0 or untied_b == 0:
        return float("nan")
    return concordant_minus_discordant / float(np.sqrt(untied_a * untied_b))


def item_grouped_tau(items: Sequence[Hashable], metric: Sequence[float], human: Sequence[float]) -> tuple[float, int]:
    """Mean τ_b over items (segments) of the systems' metric scores against their human scores.

    Returns (mean τ, number of items where τ is defined); items where the metric or the people gave
    every system the same score have no ranking to agree with and are left out.
    """
    groups: dict[Hashable, list[int]] = {}
    for k, item in enumerate(items):
        groups.setdefault(item, []).append(k)
    m = np.asarray(metric, dtype=np.float64)
    h = np.asarray(human, dtype=np.float64)
    taus = [kendall_tau_b(m[idx], h[idx]) for idx in groups.values() if len(idx) >= 2]
    defined = [t for t in taus if not np.isnan(t)]
    return (float(np.mean(defined)) if defined else float("nan")), len(defined)
