"""Confidence intervals on the card: every metric and the composite, from one mechanism."""

from __future__ import annotations

import numpy as np
import pytest

from mt_eval.corpus.models import Entry
from mt_eval.languages import language_card
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.registry import metrics_for
from mt_eval.scoring.composite import composite
from mt_eval.scoring.intervals import BootstrapConfig, scores_with_intervals
from mt_eval.scoring.profiles import PROFILES
from mt_eval.scoring.scores import MetricTable
from mt_eval.stats import resample_counts

N = 120


@pytest.fixture(scope="module")
def table(ntrex_dir) -> MetricTable:
    refs = (ntrex_dir / "newstest2019-ref.ita.txt").read_text(encoding="utf-8").splitlines()[:N]
    hyps = [" ".join(r.split()[: 2 + i % 9]) if i % 5 else r for i, r in enumerate(refs)]
    entries = [Entry(id=i + 1, source="-", reference=r, difficulty=1 + i % 5) for i, r in enumerate(refs)]
    ctx = MetricContext(entries, language_card("it"), language_card("en"))
    return MetricTable.compute(metrics_for(ctx.target), hyps, ctx, np.zeros(N, dtype=bool))


def test_every_metric_and_the_composite_has_an_interval_containing_its_score(table):
    scores = scores_with_intervals(table, PROFILES["B"], BootstrapConfig(1000, 0.05, 7))
    cis = scores["confidence_intervals"]
    assert (cis["method"], cis["n_resamples"], cis["alpha"], cis["seed"]) == ("percentile", 1000, 0.05, 7)
    for metric_id in ("chrf_plus_plus", "chrf", "bleu", "ter", "exact_match_rate", "length_ratio", "composite"):
        lo, hi = cis[metric_id]["ci_lower"], cis[metric_id]["ci_upper"]
        assert lo <= scores[metric_id] <= hi and lo < hi, metric_id
    for group in scores["by_difficulty"].values():
        gci = group["confidence_intervals"]["chrf_plus_plus"]
        assert gci["ci_lower"] <= group["chrf_plus_plus"] <= gci["ci_upper"]
    assert all(set(g["confidence_intervals"]) >= {"composite", "bleu"} for g in scores["by_difficulty"].values())
    assert "by_provenance" not in scores  # every entry "corpus": one group, the whole run again


def test_composite_interval_is_the_composite_function_on_each_resample(table):
    """Recompute the composite CI by hand from the same resamples: it must match exactly."""
    config = BootstrapConfig(500, 0.1, 11)
    got = scores_with_intervals(table, PROFILES["B"], config)["confidence_intervals"]["composite"]
    counts = resample_counts(N, config.n_resamples, config.seed).astype(np.float64)
    # metrics without a value on the whole run (no gold, no variants…) are left out, as on the card
    available = [m for m, v in table.values().items() if v is not None]
    values = {m: table.metrics[m].aggregate(counts @ table.stats[m]) for m in available}
    resampled = composite(values, PROFILES["B"])
    assert isinstance(resampled, np.ndarray)
    lo, hi = np.percentile(resampled, [5, 95])
    assert got == {"ci_lower": pytest.approx(lo, abs=1e-12), "ci_upper": pytest.approx(hi, abs=1e-12)}
    # a different weighting would give a different interval: the test can fail
    other = composite({"chrf_plus_plus": values["chrf_plus_plus"]}, PROFILES["B"])
    assert not np.allclose(np.percentile(other, [5, 95]), [lo, hi])


def test_same_seed_same_intervals_other_seed_moves_less_than_width(table):
    a = scores_with_intervals(table, PROFILES["B"], BootstrapConfig(1000, 0.05, 1))["confidence_intervals"]
    b = scores_with_intervals(table, PROFILES["B"], BootstrapConfig(1000, 0.05, 1))["confidence_intervals"]
    c = scores_with_intervals(table, PROFILES["B"], BootstrapConfig(1000, 0.05, 2))["confidence_intervals"]
    assert a == b
    for metric_id in ("chrf_plus_plus", "bleu", "composite"):
        width = a[metric_id]["ci_upper"] - a[metric_id]["ci_lower"]
        for bound in ("ci_lower", "ci_upper"):
            assert abs(a[metric_id][bound] - c[metric_id][bound]) < width
