"""Which of the numbers a comparison shows differ from the ones sealed on the cards, and why.

A comparison recomputes every value from per-entry statistics, and its composite from only the metrics
every compared card has a value for (one function must score every system and every resample). So a card
whose composite used a metric another card lacks (a glossary's ``terminology_adherence``, a detector's
``code_switching_rate``, ``semantic_score``) is shown with another composite than the sealed one. That is
legitimate, but never silent (issue 22): each changed value becomes a ``ValueChange`` naming the metric,
old → new and the reason; ``mt-eval compare`` prints them on stderr and ``--strict`` refuses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from mt_eval.comparison.model import COMPOSITE, Comparison, ValueChange
from mt_eval.scoring.calibrated import card_weights
from mt_eval.scoring.composite import adequacy_inputs
from mt_eval.scoring.profiles import Weights
from mt_eval.scoring.scores import MetricTable

# a shown value within this of the sealed one is the same number (card scores are plain JSON floats)
TOLERANCE = 1e-9


def sealed_changes(result: Comparison, cards: Sequence[Mapping[str, Any]], tables: Sequence[MetricTable],
                   rebuilt: Sequence[bool], rule: str) -> tuple[ValueChange, ...]:
    """Every (system, metric) whose shown point value is not the card's ``scores[metric]``, with its reason."""
    values = [t.values() for t in tables]
    names = [s.name for s in result.systems]
    out: list[ValueChange] = []
    for i, (system, card) in enumerate(zip(result.systems, cards, strict=True)):
        scores = card.get("scores") or {}
        for metric, ci in system.scores.items():
            old = scores.get(metric)
            if _same(ci.point, old):
                continue
            if metric == COMPOSITE:
                reason = _composite_reason(scores, card_weights(card), rule, values, names, i)
            elif rebuilt[i]:
                reason = "rebuilt from results[] by this harness, which scores it differently"
            else:
                reason = "the stored statistics aggregate to another value"
            out.append(ValueChange(system.name, metric, _number(old), float(ci.point), reason))
    return tuple(out)


def _composite_reason(scores: Mapping[str, Any], weights: Weights, rule: str,
                      values: Sequence[Mapping[str, float | None]], names: Sequence[str], index: int) -> str:
    """The metrics this card's composite used that the comparison's cannot, and which systems lack them."""
    extra = adequacy_inputs(rule)
    used = [m for m, v in scores.items() if v is not None and (m in weights or m in extra)]
    left_out = []
    for metric in used:
        lacking = [names[j] for j, v in enumerate(values) if j != index and v.get(metric) is None]
        if lacking:
            left_out.append(f"{metric}, which {', '.join(lacking)} has no value for")
    if left_out:
        return "recomputed without " + "; without ".join(left_out)
    return "recomputed from the statistics over the metrics every card has"


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _same(point: float, recorded: object) -> bool:
    number = _number(recorded)
    if math.isnan(point):
        return number is None
    return number is not None and math.isclose(point, number, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
