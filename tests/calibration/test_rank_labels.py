"""Within-item rank labels (``calibrate``'s default fit): against scipy's ``rankdata``, the closed form computed
here from it, and the properties that motivate them — invariance to monotone re-scaling of the judgments
within an item, and a heavy-tailed outlier no longer buying weight for a metric that only flags it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import rankdata

from mt_eval.calibration.matrix import Matrix
from mt_eval.calibration.pls import two_stage, within, within_ranks
from mt_eval.calibration.report import Settings, calibrate

NAMES = ["a", "b", "c"]


def _items(n_items: int = 60, systems: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows grouped by item (shuffled, so groups are not contiguous), MQM-like integer labels with ties."""
    rng = np.random.default_rng(seed)
    groups = rng.permutation(np.repeat(np.arange(n_items), systems))
    latent = rng.normal(size=len(groups))
    x = np.column_stack([latent + rng.normal(0, s, len(groups)) for s in (0.7, 1.0, 3.0)])
    y = -np.clip(np.round(2 - 2 * latent + rng.normal(0, 1, len(groups))), 0, None)  # ≤ 0, many exact 0s
    return x, y, groups


def test_within_ranks_equal_scipy_rankdata_per_item() -> None:
    _, y, groups = _items()
    ranks = within_ranks(y, groups)
    for k in np.unique(groups):
        rows = np.flatnonzero(groups == k)
        assert np.array_equal(ranks[rows], rankdata(y[rows], method="average"))
    assert np.array_equal(within_ranks(np.array([-5.0, 0.0, 0.0, -1.0, 3.0]), np.array([0, 0, 0, 1, 1])),
                          [1.0, 2.5, 2.5, 1.0, 2.0])


def test_rank_fit_is_the_non_negative_pls_closed_form_on_scipy_ranks() -> None:
    """w ∝ (Zᵀr)⁺ with Z the within-item z-scored metrics and r the within-item-centred scipy ranks."""
    x, y, groups = _items()
    fit = two_stage(x, y, NAMES, groups=groups, labels="rank")
    r = np.empty(len(y))
    for k in np.unique(groups):
        rows = np.flatnonzero(groups == k)
        r[rows] = rankdata(y[rows]) - rankdata(y[rows]).mean()
    xw = within(x, groups)
    z = (xw - xw.mean(0)) / xw.std(0)
    c = np.clip(z.T @ r, 0, None)
    assert np.allclose(fit.w, c / np.linalg.norm(c))
    assert not np.allclose(fit.w, two_stage(x, y, NAMES, groups=groups).w)  # raw labels give another fit


def test_rank_fit_ignores_monotone_rescaling_of_the_judgments_raw_fit_does_not() -> None:
    x, y, groups = _items(seed=1)
    stretched = -np.expm1(-y)  # strictly increasing: the same order within every item, other distances
    a = two_stage(x, y, NAMES, groups=groups, labels="rank")
    b = two_stage(x, stretched, NAMES, groups=groups, labels="rank")
    assert np.allclose(a.w, b.w)
    raw_a = two_stage(x, y, NAMES, groups=groups)
    raw_b = two_stage(x, stretched, NAMES, groups=groups)
    assert not np.allclose(raw_a.w, raw_b.w, atol=1e-3)


def test_an_outlier_flag_loses_its_weight_under_rank_labels() -> None:
    """A metric that is 1 everywhere except on a few catastrophic (−25) translations, and orders nothing else,
    gets a large share of the raw fit (the covariance is dominated by −25) — on WMT21 zh-en FST acceptance
    got 0.22 that way — and a much smaller one when the labels are ranks."""
    rng = np.random.default_rng(2)
    n_items, systems = 80, 8
    groups = np.repeat(np.arange(n_items), systems)
    quality = rng.normal(size=n_items * systems)
    y = -np.clip(np.round(1 - quality), 0, 5)
    disaster = rng.random(len(y)) < 0.04
    y[disaster] = -25.0
    good = quality + rng.normal(0, 1.0, len(y))
    flag = np.where(disaster, 0.0, 1.0)
    x = np.column_stack([good, flag])
    raw = two_stage(x, y, ["good", "flag"], groups=groups).w  # on the z-scored metrics: comparable shares
    ranked = two_stage(x, y, ["good", "flag"], groups=groups, labels="rank").w
    assert raw[1] / raw.sum() > 0.5
    assert ranked[1] / ranked.sum() < raw[1] / raw.sum() / 2


def test_bad_label_options_are_refused() -> None:
    x, y, groups = _items()
    with pytest.raises(ValueError, match="need groups"):
        two_stage(x, y, NAMES, labels="rank")
    with pytest.raises(ValueError, match="labels must be one of"):
        two_stage(x, y, NAMES, groups=groups, labels="zscore")


def _matrix() -> Matrix:
    x, y, groups = _items(40, 6, seed=4)
    n = len(y)
    return Matrix("en-de", [f"i{g}" for g in groups], [f"s{k % 6}" for k in range(n)], y, [{} for _ in range(n)],
                  {"chrf": x[:, 0], "chrf_plus_plus": x[:, 1], "ter": x[:, 2]}, spec=np.zeros(n))


def test_calibrate_uses_rank_labels_by_default_and_says_so_on_the_profile() -> None:
    quick = Settings(folds=2, seeds=0, n_resamples=20, spa=False)
    m = _matrix()
    default = calibrate(m, name="r", scale="mqm", s=quick)
    paper = calibrate(m, name="r", scale="mqm", s=replace(quick, labels="raw"))
    glob = calibrate(m, name="r", scale="mqm", s=replace(quick, within_items=False))
    labels = [r.profile.definition["trained_on"]["labels"] for r in (default, paper, glob)]
    assert labels == ["rank", "raw", "raw"]  # the global fit is the paper's plain PLS
    groups = np.asarray([int(i[1:]) for i in m.items])
    expected = two_stage(m.x(list(m.candidates)), m.human, list(m.candidates), groups=groups, labels="rank")
    assert default.profile.weights == pytest.approx(expected.profile_weights(), abs=1e-6)
    assert default.profile.weights != pytest.approx(paper.profile.weights, abs=1e-4)
