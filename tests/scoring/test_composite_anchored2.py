"""The ``anchored-2`` composite (docs/decisions.md §67): word order, near misses, critical errors, old rules kept."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import pytest
import sacrebleu

from data_paths import MQM_TED, NTREX
from mt_eval.scoring.composite import (
    ACCEPTANCE_SATURATION,
    ANCHORED_2,
    ANCHORED_RULE,
    CRITICAL_TIER_THRESHOLD,
    DEFAULT_RULE,
    HUMAN_ORDER,
    SPEC_RULE,
    adequacy_inputs,
    composite,
    quality_tier,
    word_order,
)
from mt_eval.scoring.profiles import PROFILES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from adversarial import permuted, typos

WA = PROFILES["A"]  # profile A's weights: composite functions take weights, not keys


# corpus values measured on NTREX eng→spa lines 401–700 (benchmarks/adversarial.py's classes, scored by the pipeline)
REFERENCES = {"exact_match_rate": 1.0, "chrf_plus_plus": 100.0, "bleu": 100.0, "length_ratio": 1.0,
              "fst_acceptance_rate": 0.941, "code_switching_rate": 0.003, "hallucination_rate": 0.024,
              "orthographic_accuracy": 1.0, "critical_error_rate": 0.0}
PERMUTED = {**REFERENCES, "exact_match_rate": 0.0, "chrf_plus_plus": 62.304, "bleu": 5.489,
            "critical_error_rate": 0.017}
TYPOS = {**REFERENCES, "exact_match_rate": 0.004, "chrf_plus_plus": 91.849, "bleu": 80.447,
         "fst_acceptance_rate": 0.858, "critical_error_rate": 0.02}
APERTIUM = {"exact_match_rate": 0.02, "chrf_plus_plus": 45.3, "bleu": 21.0, "length_ratio": 0.94,
            "fst_acceptance_rate": 0.91, "code_switching_rate": 0.01, "hallucination_rate": 0.0}


def test_the_default_is_the_new_rule_and_the_old_ones_stay_computable() -> None:
    assert DEFAULT_RULE == ANCHORED_2
    # anchored-1 is exactly what it was: reference-free terms × min(1, chrF++/52) × length penalty, nothing else
    values = {**PERMUTED, "chrf_plus_plus": 40.0}
    a = 40.0 / 52.0
    expected = (0.25 * 0.941 * a + 0.15 * 0.40 + 0.05 * (1 - 0.003) * a + 0.05 * (1 - 0.024) * a
                + 0.05 * 1.0 * 0.0) / 0.55
    assert composite(values, WA, ANCHORED_RULE) == pytest.approx(expected)
    assert adequacy_inputs(SPEC_RULE) == ()
    assert set(adequacy_inputs(ANCHORED_2)) == {"chrf_plus_plus", "length_ratio", "bleu", "critical_error_rate"}


def test_worked_example() -> None:
    """Apertium-like values, worked by hand: A = 45.3/52 × exp(1 − 1/0.94); order = min(1, 21.0/45.3/0.5) = 0.927;
    FST credit min(1, 0.91/0.85) = 1; hallucination credit min(1, 1/0.95) = 1; exact credit max(0.02, 0.453 × order);
    then × (1 − critical rate 0.2)."""
    o = 21.0 / 45.3 / HUMAN_ORDER
    a = 45.3 / 52 * np.exp(1 - 1 / 0.94) * o
    expected = (0.25 * 1.0 * a + 0.15 * 0.453 + 0.05 * 0.99 * a + 0.05 * 1.0 * a + 0.05 * 0.453 * o) / 0.55 * 0.8
    assert composite({**APERTIUM, "critical_error_rate": 0.2}, WA) == pytest.approx(expected)
    assert ACCEPTANCE_SATURATION < 0.91


def test_permuted_words_fall_typos_do_not() -> None:
    assert composite(PERMUTED, WA, ANCHORED_RULE) > 0.75  # the issue: permuted references were "deployable"
    assert composite(PERMUTED, WA) < 0.4 < composite(APERTIUM, WA)
    assert quality_tier(composite(PERMUTED, WA)) in ("emerging", "baseline")
    assert composite(REFERENCES, WA) == pytest.approx(1.0, abs=1e-3)
    assert composite(REFERENCES, WA) - composite(TYPOS, WA) < 0.05
    assert composite(REFERENCES, WA, ANCHORED_RULE) - composite(TYPOS, WA, ANCHORED_RULE) > 0.1  # before


def test_word_order_needs_bleu_and_is_one_without_it() -> None:
    assert word_order({"chrf_plus_plus": 60.0}) == 1.0  # one entry: BLEU is corpus-level only
    assert word_order({"chrf_plus_plus": 0.0, "bleu": 0.0}) == 0.0
    got = word_order({"chrf_plus_plus": np.array([60.0, 60.0]), "bleu": np.array([3.0, 60.0])})
    assert got == pytest.approx([0.1, 1.0])


def test_hallucination_credit_saturates_at_the_human_level() -> None:
    """Apertium's own dictionaries define hallucination_rate (0.000); human references score 0.02–0.05. Below
    0.05 both get full credit, so the metric no longer ranks Apertium above people."""
    base = {**REFERENCES, "chrf_plus_plus": 60.0, "bleu": 30.0, "exact_match_rate": 0.0}
    assert composite({**base, "hallucination_rate": 0.0}, WA) == composite({**base, "hallucination_rate": 0.05}, WA)
    assert composite({**base, "hallucination_rate": 0.5}, WA) < composite(base, WA)
    assert composite({**base, "hallucination_rate": 0.0}, WA, ANCHORED_RULE) > composite(
        {**base, "hallucination_rate": 0.05}, WA, ANCHORED_RULE)


def test_critical_errors_scale_the_composite_and_cap_the_tier() -> None:
    clean = composite(REFERENCES, WA)
    assert composite({**REFERENCES, "critical_error_rate": 0.25}, WA) == pytest.approx(0.75 * clean)
    assert composite({**REFERENCES, "critical_error_rate": None}, WA) == clean  # not measured: no factor
    assert quality_tier(0.9) == "fluent"
    assert quality_tier(0.9, CRITICAL_TIER_THRESHOLD) == "functional"
    assert quality_tier(0.9, CRITICAL_TIER_THRESHOLD - 0.01) == "fluent"
    assert quality_tier(0.4, 0.9) == "emerging"  # the cap only lowers
    resampled = composite({**REFERENCES, "critical_error_rate": np.array([0.0, 0.5])}, WA)
    assert np.asarray(resampled) == pytest.approx([clean, clean / 2])


def test_human_order_is_a_second_human_translation() -> None:
    """HUMAN_ORDER is BLEU / chrF++ of TED zh→en ref-B against ref-A (sacrebleu): 26.7 / 51.9 = 0.51."""
    with (MQM_TED / "ted_zhen.src_ref_hyp_mqm.tsv").open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE) if r["system"] == "ref-B"]
    hyps, refs = [r["hypothesis"] for r in rows], [[r["reference_refA"] for r in rows]]
    ratio = sacrebleu.corpus_bleu(hyps, refs).score / sacrebleu.corpus_chrf(hyps, refs, word_order=2).score
    assert abs(ratio - HUMAN_ORDER) < 0.02


def test_order_ratio_on_real_lines() -> None:
    """BLEU/chrF++ (sacrebleu) of the benchmark's permuted and misspelt NTREX references: the order term's inputs."""
    refs = (NTREX / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[400:500]
    for make, low, high in ((permuted, 0.0, 0.25), (typos, 0.9, 1.01)):
        hyps = [make(i, t) for i, t in enumerate(refs)]
        bleu = sacrebleu.corpus_bleu(hyps, [refs]).score
        chrf = sacrebleu.corpus_chrf(hyps, [refs], word_order=2).score
        order = word_order({"bleu": bleu, "chrf_plus_plus": chrf})
        assert low <= order <= high, (make.__name__, bleu, chrf)


def test_semantic_score_needs_the_words_in_order_too() -> None:
    """e5 embeddings of permuted words stay close to the reference's, so under anchored-2 semantic_score is
    scaled by the word-order term (Apertium: semantic 0.707 on NTREX eng→cat lines 401–700)."""
    permuted_sem = {**PERMUTED, "semantic_score": 0.73}
    apertium_sem = {**APERTIUM, "semantic_score": 0.707, "critical_error_rate": 0.227}
    assert composite(permuted_sem, WA) < composite(apertium_sem, WA) - 0.05
    assert composite({**REFERENCES, "semantic_score": 1.0}, WA) == pytest.approx(1.0, abs=1e-3)
    o = word_order(PERMUTED)  # = A × O here: chrF++ 62.3 > 52 and length ratio 1
    expected = (0.25 * 1.0 * o + 0.15 * 0.62304 + 0.15 * 0.73 * o + 0.05 * 0.997 * o + 0.05 * 1.0 * o
                + 0.05 * 0.62304 * o) / 0.70 * (1 - 0.017)
    assert composite(permuted_sem, WA) == pytest.approx(expected)
