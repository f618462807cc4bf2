"""Two-stage non-negative PLS against its closed form, scikit-learn's PLSRegression, and the profile rules."""

from __future__ import annotations

import numpy as np
import pytest

from mt_eval.calibration.pls import two_stage, within


def _data(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    x = np.column_stack([latent + rng.normal(0, s, n) for s in (0.5, 1.0, 2.0)]) * [10, 1, 0.1] + [50, 0, 3]
    return x, 2 * latent + rng.normal(0, 1, n)


def test_one_component_equals_closed_form_and_scikit_learn() -> None:
    x, y = _data()
    fit = two_stage(x, y, ["a", "b", "c"], top=5)
    z = (x - x.mean(0)) / x.std(0)
    w = z.T @ (y - y.mean())
    assert np.allclose(fit.w, w / np.linalg.norm(w))
    pytest.importorskip("sklearn")  # a dev dependency only: the runtime needs none
    from sklearn.cross_decomposition import PLSRegression

    ref = PLSRegression(n_components=1, scale=True).fit(x, y)
    assert np.allclose(np.abs(ref.x_weights_[:, 0]), fit.w)
    assert np.allclose(ref.predict(x).ravel(), fit.predict(x) + y.mean())


def test_weights_are_non_negative_and_a_valid_profile() -> None:
    """An anti-correlated candidate gets weight 0 (free-sign PLS would give it a negative one); the profile
    weights sum to 1 and rank segments exactly as the fitted prediction does."""
    x, y = _data()
    rng = np.random.default_rng(1)
    bad = -y + rng.normal(0, 1, len(y))
    fit = two_stage(np.column_stack([x, bad]), y, ["a", "b", "c", "bad"])
    assert "bad" not in fit.metrics and fit.first_stage["bad"] == 0.0
    weights = fit.profile_weights()
    assert all(v >= 0 for v in weights.values()) and sum(weights.values()) == pytest.approx(1.0)
    composite = x[:, [0, 1, 2]] @ np.array([weights[m] for m in ("a", "b", "c")])
    assert np.array_equal(np.argsort(composite), np.argsort(fit.predict(x)))


def test_two_stages_keep_at_most_five_and_drop_noise() -> None:
    x, y = _data(500, 2)
    rng = np.random.default_rng(4)
    noise = rng.normal(size=(500, 4)) * 0.01 + np.outer(y, [0.0005, 0.0004, 0.0003, 0.0002])
    fit = two_stage(np.column_stack([x, noise]), y, ["a", "b", "c", "n1", "n2", "n3", "n4"], top=5)
    assert len(fit.metrics) == 5 and {"a", "b", "c"} <= set(fit.metrics)
    assert len(two_stage(np.column_stack([x, noise]), y, list("abcdefg"), top=2).metrics) == 2


def test_within_item_fit_ignores_item_offsets() -> None:
    """Adding a constant per item to a metric (an easy sentence scores high for every system) changes nothing
    in the within-item fit: it is not information about which translation is better."""
    x, y = _data(300, 5)
    groups = np.repeat(np.arange(30), 10)
    shifted = x + np.outer(np.random.default_rng(6).normal(0, 5, 30)[groups], [1, 0, 0])
    a = two_stage(x, y, ["a", "b", "c"], groups=groups)
    b = two_stage(shifted, y, ["a", "b", "c"], groups=groups)
    assert np.allclose(a.w, b.w)
    assert np.allclose(within(np.array([1.0, 3.0, 10.0]), np.array([0, 0, 1])), [-1.0, 1.0, 0.0])


def test_refuses_when_nothing_agrees() -> None:
    x, y = _data()
    with pytest.raises(ValueError, match="agrees"):
        two_stage(-x, y, ["a", "b", "c"])
