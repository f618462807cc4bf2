"""Session fixtures for the statistics tests: NTREX-128 text, degraded systems, their statistics."""

from __future__ import annotations

import numpy as np
import pytest
from stats_helpers import N_LINES, NTREX, drop_every_third, make_metric, sacre_stats, swap_first_words


@pytest.fixture(scope="session")
def refs() -> list[str]:
    path = NTREX / "newstest2019-ref.spa.txt"
    return path.read_text(encoding="utf-8").splitlines()[:N_LINES]


@pytest.fixture(scope="session")
def systems(refs: list[str]) -> dict[str, list[str]]:
    """``a`` heavy degradation, ``b`` mild one, ``near_a`` differs from ``a`` in every tenth line only."""
    return {
        "a": [drop_every_third(s) for s in refs],
        "b": [swap_first_words(i, s) for i, s in enumerate(refs)],
        "near_a": [drop_every_third(s, 1 if i % 10 == 0 else 2) for i, s in enumerate(refs)],
    }


@pytest.fixture(scope="session")
def stats_cache(refs: list[str], systems: dict[str, list[str]]) -> dict[tuple[str, str], np.ndarray]:
    """Statistics per (metric, system), extracted once: TER extraction is the slow part."""
    out: dict[tuple[str, str], np.ndarray] = {}
    for metric in ("chrf", "bleu", "ter"):
        for name, hyps in [*systems.items(), ("ref", refs)]:
            out[metric, name] = sacre_stats(make_metric(metric), hyps, refs)
    return out
