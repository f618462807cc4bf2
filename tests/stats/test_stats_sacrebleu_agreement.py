"""Agreement with sacrebleu's own paired tests (``sacrebleu.significance.PairedTest``, what the CLI's
``--paired-bs`` / ``--paired-ar`` call) on real NTREX-128 Spanish with degraded systems.

Same seed: our resamples and swap masks are sacrebleu's, so the p-values coincide; sacrebleu sums
its bootstrap statistics in float32, so a resample lying within rounding of the threshold could in
principle flip, and we allow one count either way. Different seed: the two p-values are independent
Monte-Carlo estimates of the same quantity and must agree within Monte-Carlo error.
"""

from __future__ import annotations

import numpy as np
import pytest
from sacrebleu.significance import PairedTest
from stats_helpers import make_metric, sacre_aggregate

from mt_eval.stats import approximate_randomization, paired_bootstrap

PAIRS = [("a", "b"), ("a", "near_a")]
METRICS = ["chrf", "bleu", "ter"]
N_BS = 1000
N_AR = 2000


@pytest.fixture(scope="module")
def sacrebleu_results(refs, systems, monkeypatch_module):
    """sacrebleu's (score_a, score_b, p) per (test, pair, metric), with its default seed 12345."""
    monkeypatch_module.delenv("SACREBLEU_SEED", raising=False)
    out = {}
    for base, cand in PAIRS:
        named = [(base, systems[base]), (cand, systems[cand])]
        metrics = {m: make_metric(m) for m in METRICS}
        for test, n in (("bs", N_BS), ("ar", N_AR)):
            _, scores = PairedTest(named, metrics, [refs], test_type=test, n_samples=n)()
            names = [k for k in scores if k != "System"]
            for metric, name in zip(METRICS, names, strict=True):
                bl, sys = scores[name]
                out[test, base, cand, metric] = (bl.score, sys.score, sys.p_value)
    return out


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize(("base", "cand"), PAIRS)
def test_paired_bootstrap_agrees_with_sacrebleu(base, cand, metric, stats_cache, sacrebleu_results) -> None:
    agg = sacre_aggregate(make_metric(metric))
    sa, sb = stats_cache[metric, base], stats_cache[metric, cand]
    score_a, score_b, p_sacre = sacrebleu_results["bs", base, cand, metric]
    ours = paired_bootstrap(sa, sb, agg, n_resamples=N_BS)  # default seed = sacrebleu's
    assert (ours.score_a, ours.score_b) == (score_a, score_b)
    assert ours.delta == score_b - score_a
    assert abs(ours.p_value - p_sacre) <= 1 / (N_BS + 1) + 1e-12
    other_seed = paired_bootstrap(sa, sb, agg, n_resamples=N_BS, seed=2024)
    assert abs(other_seed.p_value - p_sacre) <= 0.05 or max(other_seed.p_value, p_sacre) < 0.01


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize(("base", "cand"), PAIRS)
def test_approximate_randomization_agrees_with_sacrebleu(base, cand, metric, stats_cache, sacrebleu_results) -> None:
    agg = sacre_aggregate(make_metric(metric))
    sa, sb = stats_cache[metric, base], stats_cache[metric, cand]
    _, _, p_sacre = sacrebleu_results["ar", base, cand, metric]
    ours = approximate_randomization(sa, sb, agg, n_trials=N_AR, n_ci_resamples=0)
    assert ours.p_value == p_sacre  # integer statistics: identical sums, identical scores
    other_seed = approximate_randomization(sa, sb, agg, n_trials=N_AR, seed=2024, n_ci_resamples=0)
    assert abs(other_seed.p_value - p_sacre) <= 0.05 or max(other_seed.p_value, p_sacre) < 0.01


def test_near_equal_systems_are_a_real_check(stats_cache, sacrebleu_results) -> None:
    """The close pair must give p-values far from the floor, or the agreement above proves little."""
    p_chrf = sacrebleu_results["bs", "a", "near_a", "chrf"][2]
    p_bleu = sacrebleu_results["bs", "a", "near_a", "bleu"][2]
    assert p_chrf > 0.1 and p_bleu > 0.05
    ours = paired_bootstrap(
        stats_cache["chrf", "a"], stats_cache["chrf", "near_a"], sacre_aggregate(make_metric("chrf"))
    )
    assert not ours.significant
    assert ours.ci_lower < 0 < ours.ci_upper
    assert np.isfinite(ours.p_value)


def test_identical_systems_quirk_is_sacrebleus(refs, systems, stats_cache, monkeypatch) -> None:
    """sacrebleu itself reports p = 1/(B+1) for a system against itself; we report 1.0 (decisions §24)
    and, like sacrebleu's reading of it, no significance."""
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    hyps = systems["a"]
    _, scores = PairedTest([("x", hyps), ("y", list(hyps))], {"chrf": make_metric("chrf")}, [refs],
                           test_type="bs", n_samples=200)()  # fmt: skip
    p_sacre = scores["chrF2"][1].p_value
    ours = paired_bootstrap(stats_cache["chrf", "a"], stats_cache["chrf", "a"],
                            sacre_aggregate(make_metric("chrf")), n_resamples=200)  # fmt: skip
    assert p_sacre == pytest.approx(1 / 201) and ours.p_value == 1.0
    assert not ours.significant
