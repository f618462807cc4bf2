"""The composite (Scoring Spec §4.1) and tiers (§5.1).

One function serves the point estimate and every bootstrap resample: it accepts scalars or
NumPy arrays of resampled values, so the composite's CI can never come from different code than
the composite itself (the reference implementation's bug).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from mt_eval.scoring.profiles import NORMALISATION, PROFILES, TIERS, Norm


def normalise(metric_id: str, value: float | np.ndarray) -> float | np.ndarray:
    rule = NORMALISATION[metric_id]
    if rule is Norm.DIV100:
        return value / 100.0
    if rule is Norm.INVERT:
        return 1.0 - value
    return value


def _available(value: object) -> bool:
    if value is None:
        return False
    return not (isinstance(value, float) and np.isnan(value))


def effective_weights(available: set[str], profile: str) -> dict[str, float]:
    """Target weights re-normalised over the metrics that have a value (§4.3 worked example)."""
    weights = {m: w for m, w in PROFILES[profile].items() if m in available}
    total = sum(weights.values())
    return {m: w / total for m, w in weights.items()} if total > 0 else {}


def composite(values: Mapping[str, float | np.ndarray | None], profile: str) -> float | np.ndarray | None:
    """Σ w·normalised(v) / Σ w over available metrics; None when no weighted metric is available."""
    num: float | np.ndarray = 0.0
    den = 0.0
    for metric_id, weight in PROFILES[profile].items():
        value = values.get(metric_id)
        if not _available(value):
            continue
        assert value is not None
        num = num + weight * normalise(metric_id, value)
        den += weight
    if den == 0:
        return None
    return num / den


def quality_tier(score: float | None) -> str:
    if score is None or np.isnan(score):
        return "unscored"
    for threshold, name in TIERS:
        if score >= threshold:
            return name
    return "baseline"  # negative composites cannot occur; keep the label total anyway


# Benchmark Spec §5 and §7.2: no method reaches Deployable or above on metrics alone; until a
# community review of the run passes, such a tier is shown as awaiting review and counts as this.
REVIEW_GATED = ("deployable", "fluent")
UNREVIEWED_CAP = "functional"


def effective_tier(tier: str, reviewed: bool = False) -> str:
    """The tier that counts (ranking, filters, colours): capped at functional until reviewed."""
    return UNREVIEWED_CAP if tier in REVIEW_GATED and not reviewed else tier


def tier_label(tier: str, reviewed: bool = False) -> str:
    """How a tier is shown to people: "deployable — awaiting review" until a review passes."""
    return f"{tier} — awaiting review" if tier in REVIEW_GATED and not reviewed else tier


def cost_adjusted(score: float | None, cost_per_entry_usd: float | None) -> float | None:
    """§6.3 with the denominator floored at 1 (DESIGN decision 3); None when cost is 0 or unknown."""
    if score is None or not cost_per_entry_usd:
        return None
    return score / max(1.0, float(np.log2(1 + cost_per_entry_usd * 1000)))
