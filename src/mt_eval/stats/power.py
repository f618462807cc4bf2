"""Power analysis: the smallest difference a test set of a given size can resolve (issue 24 item 5).

A community with 150 sentences wants to know, before comparing two systems, whether a 1-point chrF++
gain could ever be told from noise. The answer depends on how much the metric moves from one sample
of entries to another, which is what the paired bootstrap of Scoring Spec §8.2 measures. Here:

1. The baseline's per-entry sufficient statistics are resampled: ``n`` entries drawn with replacement
   (``n`` the size of the corpus asked about, which may differ from the baseline's own corpus), and the
   metric's own aggregate computed on each resample. Their standard deviation is the corpus score's
   standard error at that size (a corpus metric such as chrF++ is a ratio of sums, not a mean, so the
   bootstrap rather than a per-entry standard deviation / sqrt(n)).
2. A paired test looks at Δ = candidate − baseline on the same resamples. With the candidate's score as
   variable as the baseline's and a correlation ρ between the two over resamples (two systems find the
   same entries hard), ``SE(Δ) = SE · sqrt(2 (1 − ρ))``. ρ is measured from a second card when one is
   given (the bootstrap standard deviation of Δ itself is used then), else assumed (``DEFAULT_CORRELATION``).
3. The minimum detectable difference of a two-sided test at level α with power 1 − β is the normal
   approximation ``MDD = (z(1 − α/2) + z(1 − β)) · SE(Δ)``; tests/stats/test_power.py checks it by
   simulation (paired systems drawn with Δ = MDD are detected at about the requested rate by this
   package's own paired bootstrap).

This module knows statistics and an aggregate function only, never a metric or a card.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from mt_eval.stats.bootstrap import DEFAULT_SEED, Aggregate, _apply, _as_stats, _check_alpha, resampled_sums

DEFAULT_POWER = 0.8  # the conventional 1 − β (Cohen)
DEFAULT_ALPHA = 0.05  # §8.2's level
DEFAULT_RESAMPLES = 1000
DEFAULT_CORRELATION = 0.5
"""ρ between two systems' resampled scores when no second card measures it. Measured values for two MT
systems on one test set are often higher (0.81 for Apertium against the same outputs with every third
word dropped, NTREX eng-spa, 200 entries); 0.5 is the cautious middle: it reports a larger MDD than most
real pairs would show, never a smaller one unless the systems' errors are nearly independent."""


@dataclass(frozen=True)
class PowerResult:
    """What a test set of ``n_entries`` can resolve on one metric (in the metric's own units)."""

    n_entries: int  # the corpus size the MDD is for
    baseline_entries: int  # entries in the baseline the variance came from
    baseline_score: float
    standard_error: float  # of one system's corpus score at n_entries
    correlation: float  # ρ used (measured when ``measured``)
    measured: bool  # True: SE(Δ) from a second system's paired resamples, not from an assumed ρ
    delta_standard_error: float  # SE(Δ)
    alpha: float
    power: float
    n_resamples: int
    mdd: float  # minimum detectable difference

    @property
    def relative_mdd(self) -> float:
        """The MDD as a fraction of the baseline's score (nan for a zero score)."""
        return self.mdd / abs(self.baseline_score) if self.baseline_score else math.nan

    def entries_for(self, difference: float) -> int:
        """Entries needed to detect ``difference`` at the same α and power (SE shrinks as 1/sqrt(n))."""
        if difference <= 0:
            raise ValueError("the difference must be positive")
        return max(1, math.ceil(self.n_entries * (self.mdd / difference) ** 2))


def z_sum(alpha: float, power: float) -> float:
    """``z(1 − α/2) + z(power)``: 2.80 at α 0.05 and power 0.8."""
    _check_alpha(alpha)
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be strictly between 0 and 1, got {power}")
    normal = NormalDist()
    return normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)


def draw_counts(n_source: int, n_draw: int, n_resamples: int, seed: int) -> np.ndarray:
    """``(B, n_source)`` counts: each row ``n_draw`` entries drawn with replacement from ``n_source``."""
    if n_source < 2:
        raise ValueError("the baseline needs at least two entries to have a variance")
    if n_draw < 2:
        raise ValueError(f"the corpus needs at least two entries, got {n_draw}")
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_draw, np.full(n_source, 1.0 / n_source), size=n_resamples).astype(np.int32)


def minimum_detectable_difference(
    baseline: np.ndarray,
    aggregate: Aggregate,
    *,
    n_entries: int | None = None,
    candidate: np.ndarray | None = None,
    correlation: float = DEFAULT_CORRELATION,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PowerResult:
    """The MDD for a corpus of ``n_entries`` (default: the baseline's own size) from the baseline's per-entry
    statistics ``(n, k)``; with ``candidate`` (a second system's statistics on the same entries, same order)
    SE(Δ) and ρ are measured on paired resamples instead of assuming ``correlation``."""
    stats = _as_stats(baseline)
    n_base = stats.shape[0]
    size = n_base if n_entries is None else n_entries
    if not -1.0 <= correlation < 1.0:
        raise ValueError(f"the correlation must be in [-1, 1), got {correlation}")
    if n_resamples < 100:
        raise ValueError(f"at least 100 resamples are needed for a standard error, got {n_resamples}")
    z = z_sum(alpha, power)
    counts = draw_counts(n_base, size, n_resamples, seed)
    base_scores = _apply(aggregate, resampled_sums(counts, stats), n_resamples)
    point = float(_apply(aggregate, stats.sum(axis=0)[None, :], 1)[0])
    se = float(np.nanstd(base_scores, ddof=1))
    rho, se_delta, measured = correlation, se * math.sqrt(2 * (1 - correlation)), False
    if candidate is not None:
        other = _as_stats(candidate)
        if other.shape[0] != n_base:
            raise ValueError(f"the candidate has {other.shape[0]} entries, the baseline {n_base}")
        cand_scores = _apply(aggregate, resampled_sums(counts, other), n_resamples)
        ok = ~(np.isnan(base_scores) | np.isnan(cand_scores))
        se_delta = float(np.std(cand_scores[ok] - base_scores[ok], ddof=1))
        rho = float(np.corrcoef(base_scores[ok], cand_scores[ok])[0, 1]) if se > 0 else 1.0
        measured = True
    return PowerResult(n_entries=size, baseline_entries=n_base, baseline_score=point, standard_error=se,
                       correlation=rho, measured=measured, delta_standard_error=se_delta, alpha=alpha,
                       power=power, n_resamples=n_resamples, mdd=z * se_delta)
