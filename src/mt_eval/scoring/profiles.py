"""Scoring Spec §4.2–§4.3 and §5.1 as data: normalisation, weight profiles A/B, tier thresholds.

This table is the code mirror of the spec; ``tests/scoring/test_profiles.py`` checks it against
the spec's text so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from mt_eval.errors import UserError


class Norm(StrEnum):
    NONE = "none"
    DIV100 = "divide by 100"
    INVERT = "1 - value"
    TER = "1 - min(value, 100) / 100"  # calibrated profiles only: TER is an edit rate in percent, unbounded


NORMALISATION: dict[str, Norm] = {
    "exact_match_rate": Norm.NONE,
    "equivalent_match_rate": Norm.NONE,
    "fst_acceptance_rate": Norm.NONE,
    "morphological_accuracy": Norm.NONE,
    "orthographic_accuracy": Norm.NONE,
    "chrf_plus_plus": Norm.DIV100,
    "semantic_score": Norm.NONE,
    "code_switching_rate": Norm.INVERT,
    "hallucination_rate": Norm.INVERT,
    "terminology_adherence": Norm.NONE,
}

PROFILES: dict[str, dict[str, float]] = {
    # Profile A: languages WITH an FST / morphological analyser.
    "A": {
        "fst_acceptance_rate": 0.25,
        "morphological_accuracy": 0.15,
        "chrf_plus_plus": 0.15,
        "semantic_score": 0.15,
        "equivalent_match_rate": 0.10,
        "code_switching_rate": 0.05,
        "terminology_adherence": 0.05,
        "hallucination_rate": 0.05,
        "exact_match_rate": 0.05,
    },
    # Profile B: languages WITHOUT one.
    "B": {
        "semantic_score": 0.25,
        "chrf_plus_plus": 0.25,
        "equivalent_match_rate": 0.15,
        "exact_match_rate": 0.10,
        "code_switching_rate": 0.10,
        "terminology_adherence": 0.05,
        "hallucination_rate": 0.05,
        "orthographic_accuracy": 0.05,
    },
}

# Metrics outside the spec's profiles that a calibrated profile (``calibrated.py``) may weight, each
# mapped to 0–1 with higher better; length_ratio has no direction and is never a candidate.
CALIBRATION_NORMALISATION: dict[str, Norm] = {
    **NORMALISATION,
    "chrf": Norm.DIV100,
    "bleu": Norm.DIV100,
    "ter": Norm.TER,
}

# Metrics that judge the output without the reference: they cannot tell a right sentence from a
# fluent wrong one, so under the anchored composite they only add credit in proportion to adequacy.
REFERENCE_FREE: frozenset[str] = frozenset({
    "fst_acceptance_rate", "code_switching_rate", "hallucination_rate", "terminology_adherence",
    "orthographic_accuracy",
})

# Evaluated top-down, first match wins (§5.1).
TIERS: list[tuple[float, str]] = [
    (0.85, "fluent"),
    (0.70, "deployable"),
    (0.50, "functional"),
    (0.30, "emerging"),
    (0.00, "baseline"),
]

# Every metric key the run-card scores block carries, null until a metric produces it (§3, §9).
SCORE_KEYS: tuple[str, ...] = (
    "exact_match_rate",
    "equivalent_match_rate",
    "chrf_plus_plus",
    "chrf",
    "bleu",
    "ter",
    "length_ratio",
    "fst_acceptance_rate",
    "morphological_accuracy",
    "orthographic_accuracy",
    "semantic_score",
    "comet_score",
    "code_switching_rate",
    "hallucination_rate",
    "terminology_adherence",
    "consistency_score",
    "compliance_index",
    "compliance_index_repaired",
    "repair_effectiveness",
    "critical_error_rate", "number_error_rate", "entity_error_rate", "negation_error_rate", "addition_rate",
    "omission_rate",
)


Weights = Mapping[str, float]
"""A profile as a value: metric id → weight. Composite functions take this, never a key looked up in a global,
so a calibrated profile read from a card is used without being added to ``PROFILES`` (which stays A and B)."""


def weights_of(profile: str) -> Weights:
    """The weights of a built-in profile (``A``/``B``); ``UserError`` for any other key."""
    if profile not in PROFILES:
        raise UserError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})", field="profile")
    return PROFILES[profile]

