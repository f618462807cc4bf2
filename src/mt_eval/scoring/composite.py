"""The composite (Scoring Spec §4.1, anchored in adequacy: docs/decisions.md §22) and tiers (§5.1).

One function serves the point estimate and every bootstrap resample: it accepts scalars or
NumPy arrays of resampled values, so the composite's CI can never come from different code than
the composite itself (the reference implementation's bug).

Two rules exist, and a card names the one it was scored with (``composite_rule``):

* ``spec-4.1``: the spec's weighted mean, re-normalised over the available metrics. Cards written
  before the anchored rule carry no ``composite_rule`` and are verified with it.
* ``anchored-1`` (the default): reference-free metrics (FST acceptance, code-switching,
  hallucination, terminology, orthography) earn their weight only in proportion to the output's
  adequacy ``A = min(1, chrF++ / HUMAN_CHRF) × length_penalty(length_ratio)``. Fluent text in the
  right language that says something else (shuffled references, a constant sentence, a fabricated
  paragraph) or says half of it (truncation) no longer collects the reference-free weight, which
  re-normalisation inflates to 45 % when semantic and morphological metrics are missing. With
  adequate output (A = 1) the rule *is* the spec's formula with the published weights.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from mt_eval.metrics.judges.cards import is_judge_id
from mt_eval.scoring.profiles import CALIBRATION_NORMALISATION, REFERENCE_FREE, TIERS, Norm, Weights

SPEC_RULE = "spec-4.1"
ANCHORED_RULE = "anchored-1"
ANCHORED_2 = "anchored-2"
RULES = (SPEC_RULE, ANCHORED_RULE, ANCHORED_2)
DEFAULT_RULE = ANCHORED_2

# chrF++ of an independent human translation scored against the reference: WMT21 TED zh→en, ref-B
# against ref-A, is 51.9 (tests/data/mqm-ted; tests/scoring/test_composite_anchor.py recomputes it).
# Output at least this close to the reference is as adequate as a second human translation.
HUMAN_CHRF = 52.0


# --- anchored-2 (docs/decisions.md §67) ---------------------------------------------------------------
# BLEU / chrF++ of a second human translation against the reference (TED zh→en ref-B vs ref-A: 26.7 / 51.9
# = 0.51). BLEU counts word n-grams in order and chrF++ mostly characters, so their ratio falls for scrambled
# words (permuted NTREX references: 5.0 / 62.2 = 0.08) and stays for typos (90.1 / 95.7 = 0.94).
HUMAN_ORDER = 0.5
# Reference-free credit saturates at what human references score: they are not perfect on these checks,
# and a system whose own dictionaries define a check (Apertium: hallucination 0.000) must not beat them on it.
HUMAN_HALLUCINATION = 0.05  # entry-level rate of NTREX human references (§25: 0.025–0.050)
# Analyser acceptance of NTREX human references is 0.94 (eng→spa lines 401–700; names, numbers, rare
# words fail); a typo in one word of eight takes it to 0.84. Credit is full from 0.85: misspelling is not
# the failure to write the language that the analyser is there to catch (the source copied: 0.3).
ACCEPTANCE_SATURATION = 0.85
MATCHES = frozenset({"exact_match_rate", "equivalent_match_rate"})
ORDER_BLIND = frozenset({"semantic_score"})  # reference-based, order-insensitive: scaled by word order only
CRITICAL_TIER_THRESHOLD = 0.10  # a tier above functional needs fewer entries with a critical error
FUNCTIONAL = 0.50
CRITICAL = "critical_error_rate"


def word_order(values: Mapping[str, float | np.ndarray | None]) -> float | np.ndarray:
    """min(1, (BLEU / chrF++) / HUMAN_ORDER); 1 without BLEU (a single entry: BLEU is corpus-level only)."""
    bleu, chrf = values.get("bleu"), values.get("chrf_plus_plus")
    if not (_available(bleu) and _available(chrf)):
        return 1.0
    b, c = np.asarray(bleu, dtype=np.float64), np.asarray(chrf, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(c > 0, np.minimum(1.0, b / np.where(c > 0, c, 1.0) / HUMAN_ORDER), 0.0)
    return float(out) if out.ndim == 0 else out


def credit(metric_id: str, value: float | np.ndarray, values: Mapping[str, float | np.ndarray | None],
           order: float | np.ndarray) -> float | np.ndarray:
    """``normalise`` under ``anchored-2``: hallucination and analyser acceptance saturate at the human
    references' level, and an exact or equivalent match earns at least chrF++/100 × word order (a near miss,
    one typo in twenty words, is not a full miss; an exact match still earns more than any near one).
    ``order``: ``word_order(values)``, computed once by the caller (per bootstrap resample, not per metric)."""
    if metric_id == "hallucination_rate":
        return np.minimum(1.0, (1.0 - value) / (1.0 - HUMAN_HALLUCINATION))
    if metric_id == "fst_acceptance_rate":
        return np.minimum(1.0, value / ACCEPTANCE_SATURATION)
    chrf = values.get("chrf_plus_plus")
    if metric_id in MATCHES and _available(chrf):
        assert chrf is not None
        # near in characters and in word order: permuted words are no near miss
        return np.maximum(value, np.asarray(chrf, dtype=np.float64) / 100.0 * order)
    return normalise(metric_id, value)


def critical_share(values: Mapping[str, float | np.ndarray | None]) -> float | np.ndarray:
    """The critical-error rate, 0 when it was not measured: an entry with a critical error (a number, a name or
    a negation not preserved, content added or left out) is unusable, so the composite keeps 1 − this share."""
    rate = values.get(CRITICAL)
    if not _available(rate):
        return 0.0
    out = np.asarray(rate, dtype=np.float64)
    return float(out) if out.ndim == 0 else out


def adequacy_inputs(rule: str) -> tuple[str, ...]:
    """What a rule reads besides the profile's weighted metrics (so a comparison's composite is the card's)."""
    if rule == ANCHORED_RULE:
        return ("chrf_plus_plus", "length_ratio")
    if rule == ANCHORED_2:
        return ("chrf_plus_plus", "length_ratio", "bleu", CRITICAL)
    return ()


def normalise(metric_id: str, value: float | np.ndarray) -> float | np.ndarray:
    # the spec's table and what calibrated profiles may weight; a generated judge is already 0–1, higher better
    rule = Norm.NONE if is_judge_id(metric_id) else CALIBRATION_NORMALISATION[metric_id]
    if rule is Norm.DIV100:
        return value / 100.0
    if rule is Norm.INVERT:
        return 1.0 - value
    if rule is Norm.TER:
        return 1.0 - np.minimum(value, 100.0) / 100.0
    return value


def _available(value: object) -> bool:
    if value is None:
        return False
    return not (isinstance(value, float) and np.isnan(value))


def effective_weights(available: set[str], profile: Weights) -> dict[str, float]:
    """Target weights re-normalised over the metrics that have a value (§4.3 worked example)."""
    weights = {m: w for m, w in profile.items() if m in available}
    total = sum(weights.values())
    return {m: w / total for m, w in weights.items()} if total > 0 else {}


OMISSION_RATIO = 0.8  # output this much shorter than the reference, in characters: content is missing
ADDITION_RATIO = 1.25  # this much longer: content was added (or repeated)


def length_warnings(scores: Mapping[str, object], per_entry: np.ndarray | None) -> list[str]:
    """Omissions and additions, said in words on the card (truncated or thinned-out output keeps a high
    chrF++ on what it does say; the length ratio is what shows it)."""
    ratio = scores.get("length_ratio")
    if not isinstance(ratio, float) or scores.get("evaluated") == 0:
        return []
    short = int(np.sum(per_entry < 0.5)) if per_entry is not None else 0
    n = len(per_entry) if per_entry is not None else 0
    if ratio < OMISSION_RATIO:
        return [f"omissions: the outputs are {ratio:.0%} of the references' length in characters (length_ratio "
                f"{ratio:.2f} < {OMISSION_RATIO}); {short} of {n} entries are under half their reference's length"]
    if ratio > ADDITION_RATIO:
        return [f"additions: the outputs are {ratio:.0%} of the references' length in characters (length_ratio "
                f"{ratio:.2f} > {ADDITION_RATIO})"]
    return []


def composite_rule(card: Mapping[str, object]) -> str:
    """The rule a card was scored with: its ``composite_rule``, or the spec's for cards written before it."""
    rule = card.get("composite_rule")
    return str(rule) if rule else SPEC_RULE


def length_penalty(length_ratio: float | np.ndarray) -> float | np.ndarray:
    """exp(1 − max(r, 1/r)): BLEU's brevity penalty, applied to padding too (1 at r = 1, 0.37 at r = ½ or 2)."""
    r = np.clip(np.asarray(length_ratio, dtype=np.float64), 1e-9, None)
    out = np.exp(1.0 - np.maximum(r, 1.0 / r))
    return float(out) if out.ndim == 0 else out


def adequacy(values: Mapping[str, float | np.ndarray | None]) -> float | np.ndarray:
    """A = min(1, chrF++ / HUMAN_CHRF) × length_penalty(length_ratio); 0 without chrF++ (no evidence of
    adequacy, so no reference-free credit), no length penalty without a length ratio."""
    chrf = values.get("chrf_plus_plus")
    if not _available(chrf):
        return 0.0
    assert chrf is not None
    a = np.minimum(1.0, np.asarray(chrf, dtype=np.float64) / HUMAN_CHRF)
    ratio = values.get("length_ratio")
    if _available(ratio):
        assert ratio is not None
        a = a * length_penalty(ratio)
    return float(a) if np.ndim(a) == 0 else a


def composite(values: Mapping[str, float | np.ndarray | None], profile: Weights,
              rule: str = DEFAULT_RULE) -> float | np.ndarray | None:
    """Σ w·normalised(v) / Σ w over available metrics, reference-free terms scaled by adequacy under the
    anchored rules (and, under ``anchored-2``, by word order, the whole by 1 − the critical-error rate);
    None when no weighted metric is available."""
    if rule not in RULES:
        raise ValueError(f"unknown composite rule {rule!r} (known: {', '.join(RULES)})")
    scale: float | np.ndarray = 1.0
    order: float | np.ndarray = 1.0
    if rule == ANCHORED_RULE:
        scale = adequacy(values)
    elif rule == ANCHORED_2:
        order = word_order(values)
        scale = adequacy(values) * order
    num: float | np.ndarray = 0.0
    den = 0.0
    for metric_id, weight in profile.items():
        value = values.get(metric_id)
        if not _available(value):
            continue
        assert value is not None
        norm = credit(metric_id, value, values, order) if rule == ANCHORED_2 else normalise(metric_id, value)
        term = weight * norm
        if metric_id in REFERENCE_FREE:
            term = term * scale
        elif metric_id in ORDER_BLIND:  # sentence embeddings barely see word order: permuted words keep them
            term = term * order
        num = num + term
        den += weight
    if den == 0:
        return None
    if rule == ANCHORED_2:
        return num / den * (1.0 - critical_share(values))
    return num / den


def quality_tier(score: float | None, critical_error_rate: float | None = None) -> str:
    """§5.1's tier of a composite; under ``anchored-2`` (which passes the run's critical-error rate) a tier
    above functional also needs that rate under ``CRITICAL_TIER_THRESHOLD``."""
    if score is None or np.isnan(score):
        return "unscored"
    for threshold, name in TIERS:
        if score >= threshold:
            if critical_error_rate is not None and critical_error_rate >= CRITICAL_TIER_THRESHOLD \
                    and threshold > FUNCTIONAL:
                return "functional"
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


# The cost-adjusted score's formulas, by the name a card records in ``cost.cost_adjusted_formula``. §6.3's
# composite / log2(1 + 1000c) explodes below $0.001 per entry; the floor (decisions §3) made it the composite
# there, where sentence MT with current models costs, so it ranked nothing. log2(2 + 1000c) is 1 at zero cost,
# strictly decreasing, never above the composite, and within 5 % of §6.3 from $0.01 per entry up (decisions).
COST_ADJUSTED_FORMULA = "composite / log2(2 + 1000 × cost_per_entry_usd)"
FLOORED_FORMULA = "composite / max(1, log2(1 + 1000 × cost_per_entry_usd))"  # cards without a recorded formula
COST_ADJUSTED_FORMULAS = {
    COST_ADJUSTED_FORMULA: lambda c: float(np.log2(2 + c * 1000)),
    FLOORED_FORMULA: lambda c: max(1.0, float(np.log2(1 + c * 1000))),
}


def cost_adjusted(score: float | None, cost_per_entry_usd: float | None,
                  formula: str = COST_ADJUSTED_FORMULA) -> float | None:
    """§6.3's secondary ranking under ``formula`` (a key of ``COST_ADJUSTED_FORMULAS``: the current one, or the
    floored one an older card was written with); None when the cost is 0 or unknown."""
    if score is None or not cost_per_entry_usd:
        return None
    return score / COST_ADJUSTED_FORMULAS[formula](cost_per_entry_usd)
