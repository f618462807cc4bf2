"""The metric registry: built-ins by decorator, third-party metrics by entry point.

Plugins register a zero-argument factory under the ``mt_eval.metrics`` entry-point group (scanned
once per process, ``mt_eval.plugins``); the factory returns an object satisfying
``mt_eval.metrics.base.Metric``. Every instance passes through ``as_metric`` once, when
``metrics_for`` creates it: a ``MetricBase`` subclass as it is, any other object checked for the
protocol's required members (a ``UserError`` names the missing ones) and wrapped in
``PluginMetric``, which gives it the optional members' defaults. Scoring code can then call every
protocol member without probing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from mt_eval import plugins
from mt_eval.errors import UserError
from mt_eval.languages.card import LanguageCard
from mt_eval.metrics.base import Level, Metric, MetricBase, MetricContext, Status
from mt_eval.metrics.behavioral import CodeSwitching, Consistency, EquivalentMatch, TerminologyAdherence
from mt_eval.metrics.comet import CometScore
from mt_eval.metrics.compliance import ComplianceIndex, ComplianceIndexRepaired, RepairEffectiveness
from mt_eval.metrics.critical import METRICS as CRITICAL_METRICS
from mt_eval.metrics.hallucination import HallucinationRate
from mt_eval.metrics.rates import ExactMatch, LengthRatio
from mt_eval.metrics.sacre import Bleu, ChrF, ChrFPlusPlus, Ter
from mt_eval.metrics.semantic import SemanticScore
from mt_eval.metrics.spbleu import SpBleu
from mt_eval.metrics.structural import FstAcceptance, MorphologicalAccuracy, OrthographicAccuracy

Factory = Callable[[], Any]

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
    **{m.id: m for m in CRITICAL_METRICS},  # critical_error_rate and one rate per check (metrics/critical.py)
}

# Metrics that run only when a run asks for them, built from that run's configuration: ``semantic_score``
# needs an embedding model (``--semantic BACKEND``), so without the option it is not scored at all (null on
# the card, no model loaded) and a card keeps exactly the metrics it had before the metric existed.
# ``comet_score`` likewise needs a local COMET checkpoint (``--comet-model PATH``, ``metrics.comet.CometConfig``).
OPT_IN: dict[str, Callable[[Any], Metric]] = {
    "semantic_score": SemanticScore,
    "comet_score": CometScore,
    "spbleu": SpBleu,  # BLEU on FLORES-200 SentencePiece pieces: needs the model file (``metrics.spbleu.SpmConfig``)
}

# What a metric must provide itself; cost, derives_from, shares_analyses, reads_source, bind, prepare, signature
# and derive have defaults.
REQUIRED = ("id", "scale", "higher_is_better", "level", "status",
            "applies_to", "statistics", "aggregate", "entry_values")  # fmt: skip


class PluginMetric(MetricBase):
    """A protocol-satisfying object that does not inherit ``MetricBase``, completed with its defaults.

    The optional members are looked up once, here, so that the scoring code never has to ask
    whether a metric has them.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.id = str(inner.id)
        self.scale = float(inner.scale)
        self.higher_is_better = bool(inner.higher_is_better)
        self.level = Level(inner.level)
        self.status = Status(inner.status)
        self.cost = float(getattr(inner, "cost", MetricBase.cost))
        self.derives_from = getattr(inner, "derives_from", None)
        self.shares_analyses = bool(getattr(inner, "shares_analyses", False))
        self.reads_source = bool(getattr(inner, "reads_source", False))
        self._bind = getattr(inner, "bind", None)
        self._prepare = getattr(inner, "prepare", None)
        self._signature = getattr(inner, "signature", None)
        self._derive = getattr(inner, "derive", None)

    def applies_to(self, target: LanguageCard) -> bool:
        return bool(self.inner.applies_to(target))

    def bind(self, target: LanguageCard) -> None:
        if self._bind is not None:
            self._bind(target)

    def prepare(self, ctx: MetricContext) -> None:
        if self._prepare is not None:
            self._prepare(ctx)
        else:
            self.bind(ctx.target)

    def signature(self, target: LanguageCard) -> str | None:
        return None if self._signature is None else self._signature(target)

    def derive(self, computed: Mapping[str, np.ndarray], ctx: MetricContext) -> np.ndarray | None:
        return None if self._derive is None else self._derive(computed, ctx)

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        return np.asarray(self.inner.statistics(hypotheses, ctx), dtype=np.float64)

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        return np.asarray(self.inner.aggregate(sums))

    def entry_values(self, stats: np.ndarray) -> np.ndarray | None:
        return self.inner.entry_values(stats)


def as_metric(metric_id: str, obj: Any) -> Metric:
    """``obj`` as a complete ``Metric``: checked, and wrapped unless it inherits ``MetricBase``."""
    if not isinstance(obj, MetricBase):
        missing = [name for name in REQUIRED if not hasattr(obj, name)]
        if missing:
            raise UserError(
                f"metric '{metric_id}' ({type(obj).__module__}.{type(obj).__qualname__}) lacks "
                f"{', '.join(missing)} of the mt_eval.metrics.base.Metric protocol",
                hint="subclass mt_eval.metrics.base.MetricBase (or metrics.rates.RateMetric), "
                "which supplies the defaults; see docs/plugins.md",
            )
        obj = PluginMetric(obj)
    if obj.id != metric_id:
        raise UserError(f"metric registered as '{metric_id}' has id '{obj.id}'",
                        hint="the entry-point name must equal the metric's id (its run-card key)")
    return obj


def source_metrics(target: LanguageCard) -> list[str]:
    """Ids of the applicable metrics that read the source text: null in a run without sources."""
    return [m.id for m in metrics_for(target) if m.reads_source]


def register(metric_id: str) -> Callable[[Factory], Factory]:
    def deco(factory: Factory) -> Factory:
        _BUILTINS[metric_id] = factory
        return factory

    return deco


def available_metrics() -> dict[str, Factory]:
    """Built-ins, then plugins (a plugin with a built-in's name replaces it)."""
    return {**_BUILTINS, **plugins.plugins(plugins.METRICS)}


def metrics_for(target: LanguageCard, only: list[str] | None = None,
                configured: Mapping[str, Any] | None = None) -> list[Metric]:
    """Fresh metric instances that apply to the target language (all, or the ``only`` subset), plus each
    opt-in metric given a configuration in ``configured`` (``{"semantic_score": SemanticConfig}``)."""
    factories = available_metrics()
    chosen = only or list(factories)
    out: list[Metric] = []
    for metric_id in chosen:
        if metric_id in OPT_IN and metric_id not in factories:
            continue  # an opt-in metric named in ``only``: created below when configured
        metric = as_metric(metric_id, factories[metric_id]())
        if metric.applies_to(target):
            out.append(metric)
    for metric_id, config in (configured or {}).items():
        if config is not None and (only is None or metric_id in only):
            metric = as_metric(metric_id, OPT_IN[metric_id](config))
            if metric.applies_to(target):
                out.append(metric)
    return out
