"""1000 resamples over 10,000 entries for six metrics plus the composite: every interval is well formed.

The speed is measured, never asserted here (a wall-clock bound fails on a loaded machine and passes a
regression on a fast one): ``benchmarks/bench_scoring.py`` times ``bootstrap_many`` and
``benchmarks/bench_paired.py`` the paired tests, each as a ratio against sacrebleu in the same run.
"""

from __future__ import annotations

import numpy as np

from mt_eval.stats import bootstrap_many, paired_bootstrap_many

N_ENTRIES = 10_000


def chrf_like(sums: np.ndarray) -> np.ndarray:
    """chrF-shaped aggregate over 8 orders of (hyp, ref, match) triples: mean F2 of the orders."""
    s = sums.reshape(*sums.shape[:-1], 8, 3)
    with np.errstate(invalid="ignore", divide="ignore"):
        prec = np.where(s[..., 0] > 0, s[..., 2] / s[..., 0], 0.0)
        rec = np.where(s[..., 1] > 0, s[..., 2] / s[..., 1], 0.0)
        f = np.where(prec + rec > 0, 5 * prec * rec / (4 * prec + rec), 0.0)
    return 100 * f.mean(axis=-1)


def bleu_like(sums: np.ndarray) -> np.ndarray:
    sys_len, ref_len = sums[..., 0], sums[..., 1]
    prec = np.maximum(sums[..., 2:6], 1e-9) / np.maximum(sums[..., 6:10], 1)
    bp = np.exp(np.minimum(0.0, 1 - ref_len / sys_len))
    return 100 * bp * np.exp(np.log(prec).mean(axis=-1))


def ratio(sums: np.ndarray) -> np.ndarray:
    return sums[..., 0] / sums[..., 1]


def synthetic(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = N_ENTRIES
    hyp = rng.integers(20, 200, size=(n, 8, 1)).astype(np.float64)
    ref = hyp + rng.integers(-5, 6, size=(n, 8, 1))
    match = np.minimum(hyp, ref) * rng.uniform(0.3, 1.0, size=(n, 8, 1))
    lens = rng.integers(5, 60, size=(n, 2)).astype(np.float64)
    totals = np.maximum(lens[:, :1] - np.arange(4), 0)
    correct = np.floor(totals * rng.uniform(0.2, 0.9, size=(n, 4)))
    return {
        "chrf_plus_plus": np.concatenate([hyp, ref, np.round(match)], axis=2).reshape(n, 24),
        "bleu": np.column_stack([lens, correct, totals]),
        "ter": np.column_stack([rng.integers(0, 20, n), lens[:, 1]]).astype(np.float64),
        "exact_match_rate": np.column_stack([rng.random(n) < 0.3, np.ones(n)]).astype(np.float64),
        "fst_acceptance_rate": np.column_stack([rng.integers(0, 10, n), np.full(n, 10)]).astype(np.float64),
        "semantic_score": np.column_stack([rng.random(n), np.ones(n)]),
    }


AGGREGATES = {
    "chrf_plus_plus": chrf_like,
    "bleu": bleu_like,
    "ter": ratio,
    "exact_match_rate": ratio,
    "fst_acceptance_rate": ratio,
    "semantic_score": ratio,
}


def composite(v: dict[str, np.ndarray]) -> np.ndarray:
    weights = {"fst_acceptance_rate": 0.25, "chrf_plus_plus": 0.15, "semantic_score": 0.15}
    weights["exact_match_rate"] = 0.05
    norm = {**v, "chrf_plus_plus": v["chrf_plus_plus"] / 100}
    return sum(w * norm[m] for m, w in weights.items()) / sum(weights.values())


def test_bootstrap_many_at_scale() -> None:
    cis = bootstrap_many(synthetic(0), AGGREGATES, composite, n_resamples=1000)
    assert len(cis) == 7
    assert all(ci.ci_lower <= ci.point <= ci.ci_upper for ci in cis.values())


def test_paired_bootstrap_many_at_scale() -> None:
    results = paired_bootstrap_many(synthetic(0), synthetic(1), AGGREGATES, composite, n_resamples=1000)
    assert len(results) == 7
