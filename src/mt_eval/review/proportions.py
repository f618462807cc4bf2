"""Confidence intervals for a proportion: the Wilson score interval.

The gate's reject share is a proportion of a few dozen entries (``gate.MIN_ENTRIES`` is 30); the
normal-approximation ("Wald") interval p ± z·√(p(1−p)/n) collapses to [0, 0] at 0 rejects and leaves
[0, 1] elsewhere, so the report gives Wilson's interval (Wilson 1927; Brown, Cai & DasGupta 2001
recommend it for small n), which stays inside [0, 1] and is not degenerate at 0 or n.
"""

from __future__ import annotations

import math
from statistics import NormalDist


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The two-sided Wilson score interval of ``successes`` out of ``n`` trials.

    With p = successes/n and z the normal quantile of (1 + confidence)/2:
    centre (p + z²/2n) / (1 + z²/n), half-width z/(1 + z²/n) · √(p(1−p)/n + z²/4n²).
    """
    if n <= 0:
        raise ValueError(f"a proportion needs at least one trial (n = {n})")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n ({successes} of {n})")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (got {confidence})")
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    p = successes / n
    scale = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / scale
    half = z / scale * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # at 0 or n successes one bound is exactly 0 or 1; the float arithmetic can miss it by an ulp
    return (0.0 if successes == 0 else max(0.0, centre - half), 1.0 if successes == n else min(1.0, centre + half))
