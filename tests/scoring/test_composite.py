"""Composite, re-normalisation and tiers against the Scoring Spec's own text and examples."""

from __future__ import annotations

import re

import numpy as np
import pytest

from data_paths import SPEC
from mt_eval.scoring.composite import (
    FLOORED_FORMULA,
    SPEC_RULE,
    composite,
    cost_adjusted,
    effective_weights,
    quality_tier,
)
from mt_eval.scoring.profiles import NORMALISATION, PROFILES

# §4.3 of the Scoring Specification (000_6f8a5b337f178754.txt), copied verbatim into the repository.
SPEC_4_3 = SPEC / "scoring-spec-4.3.txt"


def test_worked_example_effective_weights():
    """§4.3: with only FST, chrF++ and EM available the weights become 0.556 / 0.333 / 0.111."""
    w = effective_weights({"fst_acceptance_rate", "chrf_plus_plus", "exact_match_rate"}, PROFILES["A"])
    assert round(w["fst_acceptance_rate"], 3) == 0.556
    assert round(w["chrf_plus_plus"], 3) == 0.333
    assert round(w["exact_match_rate"], 3) == 0.111
    assert sum(w.values()) == pytest.approx(1.0)


def test_composite_renormalises_and_normalises():
    """The spec's rule (§4.1); the anchored default is tested in test_composite_anchor.py."""
    values = {"fst_acceptance_rate": 0.9, "chrf_plus_plus": 60.0, "exact_match_rate": 0.2, "bleu": 99.0}
    expected = (0.25 * 0.9 + 0.15 * 0.60 + 0.05 * 0.2) / 0.45  # BLEU is not weighted
    assert composite(values, PROFILES["A"], SPEC_RULE) == pytest.approx(expected)
    # inverted metrics: 0% code-switching counts as 1.0
    assert composite({"code_switching_rate": 0.0}, PROFILES["B"], SPEC_RULE) == pytest.approx(1.0)
    assert composite({"hallucination_rate": 0.25}, PROFILES["B"], SPEC_RULE) == pytest.approx(0.75)
    # nothing weighted available -> unscored
    assert composite({"bleu": 50.0, "chrf_plus_plus": None}, PROFILES["B"]) is None


def test_composite_is_vectorised_for_bootstrap():
    """The same function scores resampled arrays; element i equals the scalar call on sample i."""
    chrf = np.array([40.0, 55.0, 70.0])
    em = np.array([0.1, 0.2, 0.3])
    got = composite({"chrf_plus_plus": chrf, "exact_match_rate": em}, PROFILES["B"])
    assert isinstance(got, np.ndarray)
    for i in range(3):
        assert got[i] == composite({"chrf_plus_plus": float(chrf[i]), "exact_match_rate": float(em[i])}, PROFILES["B"])


@pytest.mark.parametrize(
    ("score", "tier"),
    [(0.0, "baseline"), (0.2999999, "baseline"), (0.30, "emerging"), (0.4999, "emerging"), (0.50, "functional"),
     (0.70, "deployable"), (0.8499, "deployable"), (0.85, "fluent"), (1.0, "fluent"), (None, "unscored")],
)
def test_tier_boundaries(score, tier):
    assert quality_tier(score) == tier


def test_profiles_sum_to_one():
    for weights in PROFILES.values():
        assert sum(weights.values()) == pytest.approx(1.0)


def test_profiles_mirror_the_spec_text():
    """The code table equals the §4.3 tables as printed in the spec (the SSOT)."""
    text = SPEC_4_3.read_text(encoding="utf-8")
    a_start = text.index("Profile A: Languages WITH FST")
    b_start = text.index("Profile B: Languages WITHOUT FST")
    b_end = text.index("Note on weight evolution")
    row = re.compile(r"^([a-z_]+)(0\.\d\d)", re.M)
    spec_a = {m: float(w) for m, w in row.findall(text[a_start:b_start])}
    spec_b = {m: float(w) for m, w in row.findall(text[b_start:b_end])}
    assert spec_a == PROFILES["A"]
    assert spec_b == PROFILES["B"]
    for metric_id in {*spec_a, *spec_b}:
        assert metric_id in NORMALISATION


def test_cost_adjusted_floored_denominator():
    """docs/decisions.md §3 (the formula of cards without cost.cost_adjusted_formula): never above the
    composite; absent when the cost is zero or unknown. The current formula: tests/scoring/test_cost_adjusted.py."""
    assert cost_adjusted(0.6, 0.00001, FLOORED_FORMULA) == pytest.approx(0.6)  # raw formula would give 41.8
    assert cost_adjusted(0.6, 0.027603, FLOORED_FORMULA) == pytest.approx(0.6 / np.log2(1 + 27.603))
    assert cost_adjusted(0.6, 0.0) is None
    assert cost_adjusted(0.6, None) is None
    assert cost_adjusted(None, 0.1) is None
