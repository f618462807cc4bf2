"""Two-stage PLS with one latent component and non-negative weights (AutoMetrics §3.1).

With z-scored predictors X and centred labels y, one-component PLS finds the unit vector w maximising
cov(Xw, y)², which is w ∝ Xᵀy; the latent score t = Xw is regressed on y, β = tᵀy / tᵀt, so ŷ = Xwβ.
Constrained to w ≥ 0 (every candidate is oriented "higher is better" first), maximising the linear
cov(Xw, y) = cᵀw over the non-negative unit sphere gives w = c⁺/‖c⁺‖ (c = Xᵀy, c⁺ its positive part): the
constrained problem has the same closed form, so this is exact, not an approximation. A metric that moves
against people within the training data gets weight 0 instead of a negative weight, which is what keeps the
result a valid profile (weights ≥ 0, summing to 1) and avoids the ±2.3 chrF/chrF++ see-saw that free-sign
regression learned on this data (issue 15).

Stage one fits every candidate and keeps the ``top`` (≤ 5) with the largest |w|; stage two refits on them.

**Labels** (``labels=``): ``"raw"`` regresses on the human scores as given (the paper). ``"rank"`` (what
``calibrate`` uses by default, with ``groups``) first replaces each score by its average rank among the
translations of the same source (``within_ranks``). The statistics the profile is judged by are rank-based
(item-grouped τ, acc23), and MQM penalties are heavy-tailed: a few −25 segments dominate Xᵀy, so on WMT21
zh-en the raw fit gives 0.22 of the profile to FST acceptance (1 on nearly every segment, τ ≈ 0) because it
flags some of those segments. Ranks make the fit invariant to any monotone re-scaling of the judgments
within an item and bound each segment's pull. The solver is unchanged: still the exact non-negative PLS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_SELECTED = 5
LABELS = ("rank", "raw")


@dataclass(frozen=True)
class PLSFit:
    metrics: tuple[str, ...]  # the selected candidates, in the order of ``w``
    w: np.ndarray  # unit weight vector on the z-scored metrics
    beta: float
    mean: np.ndarray
    std: np.ndarray
    first_stage: dict[str, float]  # every candidate's stage-one weight

    @property
    def coefficients(self) -> np.ndarray:
        """Weights on the metrics' own (normalised) units: ŷ = Σ coef·x + const ranks like the fit."""
        return self.w * self.beta / self.std

    def profile_weights(self) -> dict[str, float]:
        """The coefficients scaled to sum to 1: a composite that orders segments exactly as ŷ does."""
        coef = self.coefficients
        total = float(coef.sum())
        return {m: float(c / total) for m, c in zip(self.metrics, coef, strict=True) if c > 0}

    def predict(self, x: np.ndarray) -> np.ndarray:
        return ((x - self.mean) / self.std) @ (self.w * self.beta)


def pls1(x: np.ndarray, y: np.ndarray, *, nonnegative: bool = True) -> tuple[np.ndarray, float]:
    """(w, β) of one-component PLS on already z-scored ``x`` and centred ``y``."""
    c = x.T @ y
    if nonnegative:
        c = np.clip(c, 0.0, None)
    norm = float(np.linalg.norm(c))
    if norm == 0.0:
        raise ValueError("no candidate metric agrees with the human scores on the training data")
    w = c / norm
    t = x @ w
    return w, float(t @ y / (t @ t))


def within(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``values`` (rows × …) minus the mean of their group: what is left is how the translations of one source
    differ from each other."""
    counts = np.maximum(np.bincount(groups), 1).astype(np.float64)  # a code no row has: never indexed, no 0/0
    if values.ndim == 1:
        return values - (np.bincount(groups, weights=values) / counts)[groups]
    means = np.column_stack([np.bincount(groups, weights=c) for c in values.T]) / counts[:, None]
    return values - means[groups]


def within_ranks(y: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each label's average rank (1 = worst, ties share the mean rank) among the rows of its group: what
    item-grouped τ sees of the human scores, and nothing of how far apart they are."""
    order = np.lexsort((y, groups))  # by group, then by score
    g, v = groups[order], y[order]
    start = np.r_[True, (g[1:] != g[:-1]) | (v[1:] != v[:-1])]  # first row of each run of equal (group, score)
    run = np.cumsum(start) - 1
    first = np.flatnonzero(start)
    length = np.diff(np.r_[first, len(v)])
    group_start = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    offset = np.repeat(group_start, np.diff(np.r_[group_start, len(v)]))  # index of each row's group start
    ranks = np.empty(len(y))
    ranks[order] = (first[run] - offset) + (length[run] + 1) / 2.0
    return ranks


def two_stage(x: np.ndarray, y: np.ndarray, names: Sequence[str], *, top: int = MAX_SELECTED,
              nonnegative: bool = True, groups: np.ndarray | None = None, labels: str = "raw") -> PLSFit:
    """Fit on all candidates, keep the ``top`` largest |w| (non-zero), refit on them.

    ``groups`` (an integer item code per row): fit on within-item deviations, each item's mean removed from
    the metrics and the labels, so the weights are learned from what orders translations of the same source
    (what item-grouped τ and acc23 measure) rather than from what separates easy sentences from hard ones.
    ``labels="rank"`` (needs ``groups``) fits on ``within_ranks(y, groups)`` instead of ``y``."""
    if x.ndim != 2 or x.shape[1] != len(names) or x.shape[0] != len(y):
        raise ValueError("x must be (segments × candidates) with one name per column and one label per row")
    if labels not in LABELS:
        raise ValueError(f"labels must be one of {', '.join(LABELS)}, not {labels!r}")
    if labels == "rank":
        if groups is None:
            raise ValueError("rank labels are ranks within a source item: they need groups")
        y = within_ranks(np.asarray(y, dtype=np.float64), groups)
    top = min(top, MAX_SELECTED)
    if groups is not None:
        x, y = within(x, groups), within(y, groups)
    mean, std = x.mean(axis=0), x.std(axis=0)
    keep = std > 0  # a constant column carries no information (and cannot be z-scored)
    if not keep.any():
        raise ValueError("every candidate metric is constant on the training data")
    idx = np.flatnonzero(keep)
    z = (x[:, idx] - mean[idx]) / std[idx]
    yc = y - y.mean()
    w1, _ = pls1(z, yc, nonnegative=nonnegative)
    first = {names[int(i)]: float(v) for i, v in zip(idx, w1, strict=True)}
    ranked = [k for k in np.argsort(-np.abs(w1), kind="stable") if w1[k] != 0][:top]
    chosen = idx[sorted(ranked)]
    w2, beta = pls1(z[:, sorted(ranked)], yc, nonnegative=nonnegative)
    return PLSFit(tuple(names[int(i)] for i in chosen), w2, beta, mean[chosen], std[chosen], first)
