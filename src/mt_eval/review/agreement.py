"""Agreement between reviewers on the 0–3 scale: Krippendorff's ordinal α with a bootstrap interval, Gwet's AC2.

Ratings are a ``(reviewers, items)`` array with NaN where a reviewer did not rate an item (the layout of
the ``krippendorff`` package, which the tests compare against). Both coefficients are reported because
review ratings are skewed: when nearly every output is "acceptable", expected disagreement is tiny and
α collapses towards 0 (or below) however well people agree, while AC2's chance term shrinks with the
skew instead (Gwet 2008; Handbook of Inter-Rater Reliability, 4th ed., ch. 4–5).

α's interval resamples *items* (units) with replacement: each item's coincidences are computed once and a
resample is a weighted sum of them (``stats.bootstrap.resample_counts``), so 1,000 resamples cost one
matrix product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mt_eval.stats.bootstrap import ConfidenceInterval, percentile_interval, resample_counts

SCALE = (0, 1, 2, 3)  # reject, gist, acceptable, excellent (Benchmark Spec §7.3)
ALPHA_SEED = 12345


@dataclass(frozen=True)
class Agreement:
    """Agreement on one set of items: α with its interval, AC2, and how much data there was."""

    alpha: ConfidenceInterval | None
    ac2: float | None
    items: int  # items rated by two reviewers or more (the only ones that carry agreement)
    reviewers: int


def _as_matrix(ratings: np.ndarray | list[list[float]], q: int) -> np.ndarray:
    data = np.asarray(ratings, dtype=np.float64)
    if data.ndim != 2:
        raise ValueError("ratings must be a (reviewers, items) array")
    seen = data[~np.isnan(data)]
    if seen.size and (np.any(seen < 0) or np.any(seen >= q) or np.any(seen != np.round(seen))):
        raise ValueError(f"ratings must be integers 0..{q - 1} or NaN")
    return data


def _counts(data: np.ndarray, q: int) -> np.ndarray:
    """``(items, q)``: how many reviewers gave each item each value."""
    counts = np.zeros((data.shape[1], q), dtype=np.float64)
    for value in range(q):
        counts[:, value] = np.sum(data == value, axis=0)
    return counts


def _unit_coincidences(counts: np.ndarray) -> np.ndarray:
    """Each pairable item's coincidence matrix, flattened: ``(items, q*q)`` (Krippendorff 2011, §C)."""
    m = counts.sum(axis=1)
    pairable = m >= 2
    c = counts[pairable]
    outer = c[:, :, None] * c[:, None, :]
    outer -= np.einsum("ij,jk->ijk", c, np.eye(c.shape[1]))  # a value does not pair with itself
    outer /= (m[pairable] - 1)[:, None, None]
    return outer.reshape(len(c), -1)


def _ordinal_delta(marginals: np.ndarray) -> np.ndarray:
    """Squared ordinal distances from value marginals ``(..., q)`` → ``(..., q, q)``:
    δ²(c, k) = (Σ_{g=c..k} n_g − (n_c + n_k)/2)²."""
    cum = np.cumsum(marginals, axis=-1)
    q = marginals.shape[-1]
    lo, hi = np.minimum.outer(np.arange(q), np.arange(q)), np.maximum.outer(np.arange(q), np.arange(q))
    before = np.where(lo > 0, np.take(cum, np.maximum(lo - 1, 0), axis=-1), 0.0)
    span = np.take(cum, hi, axis=-1) - before
    return (span - (np.take(marginals, lo, axis=-1) + np.take(marginals, hi, axis=-1)) / 2) ** 2


def _alpha_from_coincidences(flat: np.ndarray, q: int) -> np.ndarray:
    """α for each row of summed coincidences ``(..., q*q)``; NaN where there is no variation."""
    o = flat.reshape(*flat.shape[:-1], q, q)
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    delta = _ordinal_delta(n_c)
    observed = np.sum(o * delta, axis=(-2, -1))
    expected = np.sum(n_c[..., :, None] * n_c[..., None, :] * delta, axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1) * observed / expected, np.nan)


def krippendorff_alpha_ordinal(ratings: np.ndarray | list[list[float]], q: int = len(SCALE)) -> float:
    """Krippendorff's α with the ordinal metric; NaN when fewer than two pairable values vary."""
    data = _as_matrix(ratings, q)
    units = _unit_coincidences(_counts(data, q))
    if not len(units):
        return float("nan")
    return float(_alpha_from_coincidences(units.sum(axis=0), q))


def alpha_interval(ratings: np.ndarray | list[list[float]], *, q: int = len(SCALE), n_resamples: int = 1000,
                   seed: int = ALPHA_SEED, alpha: float = 0.05) -> ConfidenceInterval | None:
    """Ordinal α with a percentile interval from resampling items; None without two pairable items."""
    data = _as_matrix(ratings, q)
    units = _unit_coincidences(_counts(data, q))
    if len(units) < 2:
        return None
    point = float(_alpha_from_coincidences(units.sum(axis=0), q))
    resampled = _alpha_from_coincidences(resample_counts(len(units), n_resamples, seed) @ units, q)
    lower, upper = percentile_interval(resampled, alpha)
    return ConfidenceInterval(point, lower, upper, n_resamples=n_resamples, alpha=alpha, seed=seed)


def ordinal_weights(q: int) -> np.ndarray:
    """Gwet's ordinal weights: 1 − C(|k−l|+1, 2) / max, as ``irrCAC::ordinal.weights``."""
    d = np.abs(np.subtract.outer(np.arange(q), np.arange(q))) + 1
    m = d * (d - 1) / 2
    return 1.0 - m / m.max()


def gwet_ac2(ratings: np.ndarray | list[list[float]], q: int = len(SCALE), weights: np.ndarray | None = None) -> float:
    """Gwet's AC2 for several raters with missing ratings (Handbook, 4th ed., §5; irrCAC's gwet.ac1.raw).

    With r_ik reviewers putting item i in category k, r_i = Σ_k r_ik, r*_ik = Σ_l w_kl r_il:
    p_a = mean over items with r_i ≥ 2 of Σ_k r_ik (r*_ik − 1) / (r_i (r_i − 1));
    π_k = mean over rated items of r_ik / r_i;  p_e = Σ_kl w_kl / (q (q − 1)) · Σ_k π_k (1 − π_k);
    AC2 = (p_a − p_e) / (1 − p_e). Identity weights give AC1.
    """
    w = ordinal_weights(q) if weights is None else np.asarray(weights, dtype=np.float64)
    counts = _counts(_as_matrix(ratings, q), q)
    r = counts.sum(axis=1)
    counts, r = counts[r > 0], r[r > 0]
    many = r >= 2
    if not many.any():
        return float("nan")
    weighted = counts @ w.T
    pa = float(np.mean(np.sum(counts[many] * (weighted[many] - 1), axis=1) / (r[many] * (r[many] - 1))))
    pi = np.mean(counts / r[:, None], axis=0)
    pe = float(w.sum() / (q * (q - 1)) * np.sum(pi * (1 - pi)))
    return (pa - pe) / (1 - pe) if pe != 1 else float("nan")


def agreement(ratings: np.ndarray | list[list[float]], *, n_resamples: int = 1000) -> Agreement:
    """α (with interval) and AC2 on a ``(reviewers, items)`` array of 0–3 ratings."""
    data = _as_matrix(ratings, len(SCALE))
    pairable = int(np.sum(np.sum(~np.isnan(data), axis=0) >= 2)) if data.size else 0
    ci = alpha_interval(data, n_resamples=n_resamples) if pairable >= 2 else None
    ac2 = gwet_ac2(data) if pairable else float("nan")
    return Agreement(alpha=ci, ac2=None if np.isnan(ac2) else ac2, items=pairable, reviewers=data.shape[0])
