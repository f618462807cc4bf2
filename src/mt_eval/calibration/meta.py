"""Meta-evaluation of a metric against human scores, each statistic with a bootstrap CI over items.

*Items* are source segments: every statistic compares translations of the same source only, and the
bootstrap resamples whole items (the systems' scores on one sentence are not independent).

* ``tau``: item-grouped Kendall τ_b (``stats.agreement.kendall_tau_b``), the mean over items of τ_b between
  the systems' metric scores and their human scores. An item people do not rank (every system scored the
  same) is left out; an item the metric does not rank while people do counts τ = 0, not "undefined":
  otherwise a metric that rarely varies (per-segment exact match) is averaged over the few items where it
  does, and on the WMT21 TED data it then "wins" with τ 0.19 ± 0.26 on 10 % of the items.
* ``acc23``: pairwise accuracy with tie calibration (Deutsch, Foster & Freitag 2023, "Ties Matter"; the
  ``acc23`` variant of ``KendallWithTiesOpt`` in google-research/mt-metrics-eval, averaged by item as in
  WMT23/24). For each pair of translations of one source, with C concordant, D discordant, T_h tied by
  people only, T_m tied by the metric only and T_hm tied by both: acc = (C + T_hm) / (C + D + T_h + T_m +
  T_hm). The metric ties a pair when its scores differ by at most ε, and ε is chosen to maximise the
  item-averaged accuracy (one ε for all items). Without that, a metric that never ties is wrong on every
  pair people tie: 59–61 % of WMT21 en-de MQM scores are exactly 0.
* ``spa``: soft pairwise accuracy (Thompson et al. 2024, WMT24): for each pair of systems, the one-sided
  p-value that the first is better, from a paired permutation test over items, under the metric and under
  people; SPA = mean over pairs of 1 − |p_metric − p_human|.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mt_eval.stats.agreement import kendall_tau_b


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float]:
        return {"value": self.value, "low": self.low, "high": self.high}


def interval(samples: np.ndarray, value: float, alpha: float) -> Estimate:
    finite = samples[np.isfinite(samples)]
    if not len(finite):
        return Estimate(value, float("nan"), float("nan"))
    low, high = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    return Estimate(value, float(low), float(high))


def _groups(items: Sequence[object]) -> tuple[np.ndarray, int]:
    """Integer item codes in first-seen order, and how many items."""
    codes: dict[object, int] = {}
    out = np.asarray([codes.setdefault(i, len(codes)) for i in items], dtype=np.int64)
    return out, len(codes)


def item_counts(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """(resamples × items) multiplicities of a bootstrap over items, shared by every metric compared."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_items, size=(n_resamples, n_items))
    return np.stack([np.bincount(d, minlength=n_items) for d in draws]) if n_resamples else np.zeros((0, n_items))


def item_taus(items: Sequence[object], metric: np.ndarray, human: np.ndarray) -> np.ndarray:
    """τ_b per item: NaN where people tie every system or the item has one system; 0 where only the metric
    ties them all."""
    codes, n = _groups(items)
    out = np.full(n, np.nan)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n + 1))
    for k in range(n):
        idx = order[bounds[k]:bounds[k + 1]]
        if len(idx) >= 2 and np.ptp(human[idx]) > 0:
            out[k] = kendall_tau_b(metric[idx], human[idx]) if np.ptp(metric[idx]) > 0 else 0.0
    return out


def tau_samples(items: Sequence[object], metric: np.ndarray, human: np.ndarray,
                counts: np.ndarray) -> tuple[float, np.ndarray]:
    """Item-grouped Kendall τ_b and its value in each bootstrap resample (``counts`` from ``item_counts``)."""
    per_item = item_taus(items, metric, human)
    defined = np.isfinite(per_item)
    value = float(np.mean(per_item[defined])) if defined.any() else float("nan")
    filled = np.where(defined, per_item, 0.0)
    weights = counts * defined
    with np.errstate(invalid="ignore", divide="ignore"):
        return value, (weights @ filled) / weights.sum(axis=1)


def tau(items: Sequence[object], metric: np.ndarray, human: np.ndarray, counts: np.ndarray,
        alpha: float = 0.05) -> Estimate:
    """Item-grouped Kendall τ_b with its bootstrap interval."""
    value, samples = tau_samples(items, metric, human, counts)
    return interval(samples, value, alpha)


@dataclass(frozen=True)
class Pairs:
    """Every within-item pair of translations, sorted by the metric's absolute difference."""

    item: np.ndarray  # item code of each pair
    gap: np.ndarray  # |metric_a − metric_b|, ascending
    concordant: np.ndarray  # metric and people order the pair the same way (neither ties)
    human_tie: np.ndarray
    pairs_in_item: np.ndarray  # per item code
    n_items: int


def pairs(items: Sequence[object], metric: np.ndarray, human: np.ndarray) -> Pairs:
    codes, n = _groups(items)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n + 1))
    item, gap, conc, htie = [], [], [], []
    per_item = np.zeros(n)
    for k in range(n):
        idx = order[bounds[k]:bounds[k + 1]]
        i, j = np.triu_indices(len(idx), k=1)
        a, b = idx[i], idx[j]
        dm, dh = metric[a] - metric[b], human[a] - human[b]
        per_item[k] = len(a)
        item.append(np.full(len(a), k))
        gap.append(np.abs(dm))
        conc.append(np.sign(dm) * np.sign(dh) > 0)
        htie.append(dh == 0)
    g = np.concatenate(gap) if gap else np.zeros(0)
    s = np.argsort(g, kind="stable")
    return Pairs(np.concatenate(item)[s], g[s], np.concatenate(conc)[s], np.concatenate(htie)[s], per_item, n)


def _best(p: Pairs, item_weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """acc23 at the best ε for each row of ``item_weight`` (resamples × items), and that ε.

    A pair contributes w = item weight / pairs in its item: [concordant] while the metric separates it
    (gap > ε), [people tie it] once the metric ties it (gap ≤ ε). Sorting pairs by gap makes the
    accuracy at every candidate ε (each distinct gap) one cumulative sum."""
    with np.errstate(invalid="ignore", divide="ignore"):
        w = item_weight[:, p.item] / p.pairs_in_item[p.item]
    norm = (item_weight * (p.pairs_in_item > 0)).sum(axis=1)
    base = (w * p.concordant).sum(axis=1)
    steps = np.cumsum(w * (p.human_tie.astype(float) - p.concordant), axis=1)
    last = np.flatnonzero(np.r_[p.gap[1:] != p.gap[:-1], True])  # the last pair of each distinct gap
    values = base[:, None] + steps[:, last]
    eps = p.gap[last]
    if p.gap[0] > 0:  # ε = 0 ties nothing: the untied accuracy is a candidate too
        values = np.hstack([base[:, None], values])
        eps = np.r_[0.0, eps]
    pick = np.argmax(values, axis=1)  # first maximum: the smallest ε
    with np.errstate(invalid="ignore", divide="ignore"):
        return values[np.arange(len(pick)), pick] / norm, eps[pick]


def acc23_samples(items: Sequence[object], metric: np.ndarray, human: np.ndarray,
                  counts: np.ndarray | None = None) -> tuple[float, float, np.ndarray]:
    """Tie-calibrated pairwise accuracy (item-averaged), its calibrated ε, and its value in each resample
    (ε re-optimised in every resample: the statistic is defined with its own ε)."""
    p = pairs(items, metric, human)
    if not len(p.gap):
        return float("nan"), float("nan"), np.full(0 if counts is None else len(counts), np.nan)
    value, eps = _best(p, np.ones((1, p.n_items)))
    samples = np.concatenate([_best(p, chunk)[0] for chunk in np.array_split(counts, max(1, len(counts) // 50))]) \
        if counts is not None and len(counts) else np.zeros(0)
    return float(value[0]), float(eps[0]), samples


def tie_floor(items: Sequence[object], human: np.ndarray) -> float:
    """The acc23 no metric can go below: that of a metric tying every pair (ε above every gap), i.e. the
    item-averaged share of pairs people tie. Tying everything is always one of acc23's candidates, so where
    people tie many pairs (59–61 % of WMT21 en-de MQM scores are 0) a metric whose separated pairs are
    concordant less often than people tie gets exactly this value: WMT21 TED en-de's 13 systems give 0.4803
    for every candidate metric (docs/calibration.md), whatever the metric."""
    p = pairs(items, human, human)
    if not len(p.gap):
        return float("nan")
    w = 1.0 / p.pairs_in_item[p.item]
    return float((w * p.human_tie).sum() / (p.pairs_in_item > 0).sum())


def acc23(items: Sequence[object], metric: np.ndarray, human: np.ndarray, counts: np.ndarray | None = None,
          alpha: float = 0.05) -> tuple[Estimate, float]:
    """Tie-calibrated pairwise accuracy with its bootstrap interval, and the calibrated ε."""
    value, eps, samples = acc23_samples(items, metric, human, counts)
    return interval(samples, value, alpha), eps


def _p_values(scores: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """One-sided permutation p-values that system a beats system b, for every pair a < b.

    ``scores``: (systems × items); ``signs``: (permutations × items) of ±1 — swapping the two systems'
    scores on an item flips the sign of its difference."""
    a, b = np.triu_indices(scores.shape[0], k=1)
    diffs = scores[a] - scores[b]  # (pairs × items)
    observed = diffs.mean(axis=1)
    permuted = diffs @ signs.T / scores.shape[1]  # (pairs × permutations)
    return (1 + (permuted >= observed[:, None] - 1e-12).sum(axis=1)) / (signs.shape[0] + 1)


def soft_pairwise_accuracy(metric: np.ndarray, human: np.ndarray, *, n_permutations: int = 1000,
                           n_resamples: int = 100, alpha: float = 0.05, seed: int = 12345) -> Estimate:
    """SPA from (systems × items) matrices of complete data, with a bootstrap over items (each resample
    with fresh permutations: coarser, 200, to keep it quick)."""
    if metric.shape[0] < 2 or metric.shape[1] < 2:
        return Estimate(float("nan"), float("nan"), float("nan"))
    rng = np.random.default_rng(seed)

    def spa(m: np.ndarray, h: np.ndarray, perms: int) -> float:
        signs = rng.choice(np.array([-1.0, 1.0]), size=(perms, m.shape[1]))
        return float(np.mean(1.0 - np.abs(_p_values(m, signs) - _p_values(h, signs))))

    value = spa(metric, human, n_permutations)
    n = metric.shape[1]
    samples = np.asarray([spa(metric[:, idx], human[:, idx], 200)
                          for idx in (rng.integers(0, n, n) for _ in range(n_resamples))])
    return interval(samples, value, alpha)
