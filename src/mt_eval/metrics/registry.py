"""The metric registry: built-ins by decorator, third-party metrics by entry point.

Plugins register a zero-argument factory under the ``mt_eval.metrics`` entry-point group; the
factory returns an object satisfying ``mt_eval.metrics.base.Metric``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

from mt_eval.languages.card import LanguageCard
from mt_eval.metrics.base import Metric
from mt_eval.metrics.behavioral import CodeSwitching, Consistency, EquivalentMatch, TerminologyAdherence
from mt_eval.metrics.compliance import ComplianceIndex, ComplianceIndexRepaired, RepairEffectiveness
from mt_eval.metrics.hallucination import HallucinationRate
from mt_eval.metrics.rates import ExactMatch, LengthRatio
from mt_eval.metrics.sacre import Bleu, ChrF, ChrFPlusPlus, Ter
from mt_eval.metrics.structural import FstAcceptance, MorphologicalAccuracy, OrthographicAccuracy

Factory = Callable[[], Metric]

_BUILTINS: dict[str, Factory] = {
    "exact_match_rate": ExactMatch,
    "chrf_plus_plus": ChrFPlusPlus,
    "chrf": ChrF,
    "bleu": Bleu,
    "ter": Ter,
    "length_ratio": LengthRatio,
    "fst_acceptance_rate": FstAcceptance,
    "morphological_accuracy": MorphologicalAccuracy,
    "orthographic_accuracy": OrthographicAccuracy,
    "equivalent_match_rate": EquivalentMatch,
    "code_switching_rate": CodeSwitching,
    "terminology_adherence": TerminologyAdherence,
    "consistency_score": Consistency,
    "hallucination_rate": HallucinationRate,
    "compliance_index": ComplianceIndex,
    "compliance_index_repaired": ComplianceIndexRepaired,
    "repair_effectiveness": RepairEffectiveness,
}


def register(metric_id: str) -> Callable[[Factory], Factory]:
    def deco(factory: Factory) -> Factory:
        _BUILTINS[metric_id] = factory
        return factory

    return deco


def _plugins() -> dict[str, Factory]:
    found: dict[str, Factory] = {}
    for ep in entry_points(group="mt_eval.metrics"):
        found[ep.name] = ep.load()
    return found


def available_metrics() -> dict[str, Factory]:
    return {**_BUILTINS, **_plugins()}


def metrics_for(target: LanguageCard, only: list[str] | None = None) -> list[Metric]:
    """Fresh metric instances that apply to the target language (all, or the ``only`` subset)."""
    factories = available_metrics()
    chosen = only or list(factories)
    out: list[Metric] = []
    for metric_id in chosen:
        metric = factories[metric_id]()
        if metric.applies_to(target):
            out.append(metric)
    return out
