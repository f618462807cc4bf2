"""Helpers for the statistics tests: sacrebleu's metrics as stand-ins for the Metric protocol.

sacrebleu already works on per-sentence sufficient statistics, so ``_extract_corpus_statistics``
gives the ``(n, k)`` matrix and ``_compute_score_from_stats`` the aggregate (looped over rows: slow
but exactly sacrebleu's arithmetic). Real text comes from the NTREX-128 copy in
``tests/data/ntrex128``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.metrics.base import Metric as SacreMetric

from data_paths import NTREX as NTREX  # re-exported for conftest

N_LINES = 300


def sacre_aggregate(metric: SacreMetric) -> Callable[[np.ndarray], np.ndarray]:
    """sacrebleu's score from summed statistics, over any leading axes: (..., k) -> (...)."""

    def aggregate(sums: np.ndarray) -> np.ndarray:
        sums = np.asarray(sums, dtype=np.float64)
        flat = sums.reshape(-1, sums.shape[-1])
        scores = [metric._compute_score_from_stats(list(row)).score for row in flat]
        return np.array(scores, dtype=np.float64).reshape(sums.shape[:-1])

    return aggregate


def sacre_stats(metric: SacreMetric, hyps: list[str], refs: list[str]) -> np.ndarray:
    return np.asarray(metric._extract_corpus_statistics(hyps, [refs]), dtype=np.float64)


def make_metric(name: str) -> SacreMetric:
    return {"chrf": CHRF, "bleu": BLEU, "ter": TER}[name]()


def drop_every_third(line: str, offset: int = 2) -> str:
    """System A: a heavy, deterministic degradation (every third word removed)."""
    return " ".join(w for i, w in enumerate(line.split()) if i % 3 != offset)


def swap_first_words(index: int, line: str) -> str:
    """System B: a mild degradation: the first two words swapped in every tenth sentence."""
    words = line.split()
    if index % 10 == 0 and len(words) > 1:
        words[0], words[1] = words[1], words[0]
    return " ".join(words)
