"""The adequacy-anchored composite (docs/decisions.md §22): reference-free credit only for adequate output."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import sacrebleu

from data_paths import MQM_TED
from mt_eval.scoring.composite import (
    ANCHORED_RULE,
    HUMAN_CHRF,
    SPEC_RULE,
    adequacy,
    composite,
    composite_rule,
    length_penalty,
    quality_tier,
)
from mt_eval.scoring.profiles import PROFILES

WA = PROFILES["A"]  # profile A's weights: composite functions take weights, not keys


# Apertium eng→spa on 300 NTREX segments (benchmarks/adversarial.py), and outputs that game the spec rule
APERTIUM = {"chrf_plus_plus": 45.3, "length_ratio": 0.94, "exact_match_rate": 0.02, "fst_acceptance_rate": 0.91,
            "code_switching_rate": 0.01, "hallucination_rate": 0.5}
SHUFFLED = {"chrf_plus_plus": 15.2, "length_ratio": 1.0, "exact_match_rate": 0.0, "fst_acceptance_rate": 0.92,
            "code_switching_rate": 0.0, "hallucination_rate": 0.98}
TRUNCATED = {**APERTIUM, "chrf_plus_plus": 52.9, "length_ratio": 0.48, "fst_acceptance_rate": 0.93}


def test_adequate_output_is_scored_exactly_as_the_spec_says() -> None:
    """A = 1 (chrF++ ≥ HUMAN_CHRF, length ratio 1): the published weights, unchanged, on every profile."""
    for profile in ("A", "B"):
        values = {"chrf_plus_plus": 80.0, "length_ratio": 1.0, "exact_match_rate": 0.3, "fst_acceptance_rate": 0.9,
                  "code_switching_rate": 0.05, "hallucination_rate": 0.1, "orthographic_accuracy": 0.95,
                  "terminology_adherence": 0.7, "equivalent_match_rate": 0.4}
        weights = PROFILES[profile]
        assert composite(values, weights, ANCHORED_RULE) == pytest.approx(composite(values, weights, SPEC_RULE))


def test_gaming_outputs_lose_the_reference_free_weight() -> None:
    assert composite(SHUFFLED, WA, SPEC_RULE) > 0.5  # the problem: "functional" for the wrong sentences
    assert quality_tier(composite(SHUFFLED, WA)) == "baseline"
    assert composite(TRUNCATED, WA, SPEC_RULE) > composite(APERTIUM, WA, SPEC_RULE)  # truncation beat Apertium
    assert composite(TRUNCATED, WA) < composite(APERTIUM, WA)
    assert quality_tier(composite(TRUNCATED, WA)) in ("emerging", "baseline")


@pytest.mark.parametrize("profile", ["A", "B"])
def test_monotone_in_chrf_when_nothing_else_changes(profile: str) -> None:
    chrf = np.linspace(0.0, 100.0, 401)
    values = {**APERTIUM, "chrf_plus_plus": chrf}
    got = np.asarray(composite(values, PROFILES[profile]))
    assert np.all(np.diff(got) >= 0) and got[-1] > got[0]
    for i in (0, 123, 400):  # the vectorised call equals the scalar one
        assert got[i] == pytest.approx(composite({**APERTIUM, "chrf_plus_plus": float(chrf[i])}, PROFILES[profile]))


def test_length_penalty_and_adequacy() -> None:
    assert length_penalty(1.0) == 1.0
    assert length_penalty(0.5) == pytest.approx(np.exp(-1)) == pytest.approx(length_penalty(2.0))
    assert adequacy({"chrf_plus_plus": HUMAN_CHRF, "length_ratio": 1.0}) == 1.0
    assert adequacy({"chrf_plus_plus": 26.0}) == pytest.approx(0.5)  # no length ratio: no length penalty
    assert adequacy({"length_ratio": 1.0}) == 0.0  # no evidence of adequacy: no reference-free credit
    assert composite({"fst_acceptance_rate": 1.0}, WA) == 0.0


def test_cards_name_their_rule_and_old_cards_use_the_spec() -> None:
    assert composite_rule({"composite_rule": ANCHORED_RULE}) == ANCHORED_RULE
    assert composite_rule({}) == SPEC_RULE
    with pytest.raises(ValueError, match="unknown composite rule"):
        composite({"chrf_plus_plus": 50.0}, WA, "made-up")


def test_human_chrf_is_a_second_human_translation_against_the_reference() -> None:
    """HUMAN_CHRF is the chrF++ of TED zh→en ref-B scored against ref-A (WMT21 MQM data): 51.9."""
    with (MQM_TED / "ted_zhen.src_ref_hyp_mqm.tsv").open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE) if r["system"] == "ref-B"]
    score = sacrebleu.corpus_chrf([r["hypothesis"] for r in rows], [[r["reference_refA"] for r in rows]],
                                  word_order=2).score
    assert len(rows) == 529 and abs(score - HUMAN_CHRF) < 0.5
