"""Agreement statistics against independent references: the ``krippendorff`` package, Krippendorff's
and Gwet's published worked example, and AC2 computed by hand from its formula."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from mt_eval.review.agreement import agreement, alpha_interval, gwet_ac2, krippendorff_alpha_ordinal, ordinal_weights

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", §C: 4 observers, 12 units, values
# 1–5 (shifted to 0–4 here), missing values. The same data is irrCAC's ``cac.raw4raters`` (Gwet, Handbook
# of Inter-Rater Reliability, 4th ed., p. 120).
KRIPPENDORFF_2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]) - 1


def test_alpha_matches_published_example() -> None:
    # Krippendorff (2011) reports α_ordinal = 0.815 for these data.
    assert krippendorff_alpha_ordinal(KRIPPENDORFF_2011, q=5) == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha_ordinal(KRIPPENDORFF_2011, q=5) == pytest.approx(
        krippendorff.alpha(KRIPPENDORFF_2011, level_of_measurement="ordinal"), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_alpha_matches_krippendorff_package_with_missing_values(seed: int) -> None:
    rng = np.random.default_rng(seed)
    reviewers, items = int(rng.integers(2, 6)), int(rng.integers(10, 80))
    truth = rng.integers(0, 4, items)
    noise = rng.integers(-1, 2, (reviewers, items)) * (rng.random((reviewers, items)) < 0.3 + 0.1 * seed)
    data = np.clip(truth + noise, 0, 3).astype(float)
    data[rng.random(data.shape) < 0.25] = NAN
    expected = krippendorff.alpha(data, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3])
    assert krippendorff_alpha_ordinal(data) == pytest.approx(expected, abs=1e-10)


def test_alpha_interval_is_reproducible_and_brackets_the_point() -> None:
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 4, 120)
    data = np.clip(truth + rng.integers(-1, 2, (3, 120)), 0, 3).astype(float)
    a, b = alpha_interval(data), alpha_interval(data)
    assert a == b and a is not None
    assert a.ci_lower < a.point < a.ci_upper and a.width < 0.4
    assert alpha_interval(data, seed=7) != a  # the seed is used


def test_ac1_matches_gwet_published_value() -> None:
    # irrCAC README / Handbook: gwet.ac1.raw(cac.raw4raters) gives AC1 = 0.7754 (identity weights).
    assert gwet_ac2(KRIPPENDORFF_2011, q=5, weights=np.eye(5)) == pytest.approx(0.7754, abs=5e-5)


def test_ordinal_weights_are_irrcac_ordinal_weights() -> None:
    # irrCAC's weighting vignette prints ordinal.weights(1:3) = [[1, .667, 0], [.667, 1, .667], [0, .667, 1]]
    assert ordinal_weights(3) == pytest.approx(np.array([[1, 2 / 3, 0], [2 / 3, 1, 2 / 3], [0, 2 / 3, 1]]))


def test_ac2_by_hand() -> None:
    # Two reviewers, four items on 0–3: (3,3), (2,3), (0,1), (2,2). Ordinal weights for q = 4:
    # M(d) = C(d+1, 2) = 0, 1, 3, 6 → w(d) = 1 − M/6 = 1, 5/6, 1/2, 0.
    # p_a: per item Σ_k r_k (r*_k − 1) / (r (r − 1)) with r = 2:
    #   (3,3): 2·(2−1)/2 = 1;  (2,3): [1·(1+5/6−1) + 1·(1+5/6−1)]/2 = 5/6;  (0,1): 5/6;  (2,2): 1
    #   p_a = (1 + 5/6 + 5/6 + 1) / 4 = 11/12
    # π = mean of r_k/r: value 0: 1/8, 1: 1/8, 2: 3/8, 3: 3/8; Σπ(1−π) = 2·(7/64) + 2·(15/64) = 44/64
    # Σ w = 4·1 + 6·5/6 + 4·1/2 + 2·0 = 11; p_e = 11/(4·3) · 44/64 = 121/192
    # AC2 = (11/12 − 121/192) / (1 − 121/192) = (176 − 121)/(192 − 121) = 55/71
    data = [[3, 2, 0, 2], [3, 3, 1, 2]]
    assert gwet_ac2(data) == pytest.approx(55 / 71, abs=1e-12)


def test_skewed_ratings_collapse_alpha_but_not_ac2() -> None:
    # 3 reviewers, 100 outputs nearly all "acceptable": they agree on 97 of them. α has no variance to
    # explain and collapses; AC2 reports the agreement. This is why both are shown.
    data = np.full((3, 100), 2.0)
    data[0, :3] = [3, 1, 3]
    report = agreement(data, n_resamples=200)
    assert report.alpha is not None and report.alpha.point < 0.1
    assert report.ac2 is not None and report.ac2 > 0.95


def test_refuses_values_off_the_scale() -> None:
    with pytest.raises(ValueError, match=r"integers 0\.\.3"):
        krippendorff_alpha_ordinal([[0, 1, 7], [0, 1, 2]])
    assert agreement(np.full((2, 3), NAN)).alpha is None
