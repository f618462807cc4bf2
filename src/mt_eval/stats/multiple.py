"""Multiple-comparison correction for families of paired tests.

Comparing one baseline against several methods, or one pair on several metrics, runs many tests;
at alpha = 0.05 each, some "significant" differences are expected by chance alone. Holm's
step-down procedure controls the family-wise error rate at alpha under any dependence between the
tests (metrics computed on the same entries are strongly dependent), and is uniformly more
powerful than plain Bonferroni, so it is the default correction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def holm(p_values: Sequence[float], alpha: float = 0.05) -> list[tuple[float, bool]]:
    """Holm–Bonferroni adjusted p-values and rejections, in the order the p-values were given.

    Sorted ascending, the i-th smallest (i = 0..m-1) is multiplied by ``m - i``; a running maximum
    makes the adjusted values monotone in the raw ones, and they are capped at 1. A hypothesis is
    rejected when its adjusted p-value is ``<= alpha``, which is exactly Holm's step-down rule
    (stop at the first ``p_(i) > alpha / (m - i)``). Ties keep their input order (stable sort), so
    tied raw p-values get equal adjusted values.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    ps = [float(p) for p in p_values]
    for p in ps:
        if math.isnan(p) or not 0 <= p <= 1:
            raise ValueError(f"p-values must lie in [0, 1], got {p}")
    m = len(ps)
    order = sorted(range(m), key=ps.__getitem__)
    adjusted = [0.0] * m
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[idx]))
        adjusted[idx] = running
    return [(adj, adj <= alpha) for adj in adjusted]
