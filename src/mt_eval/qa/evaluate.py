"""Score QA systems against gold data: per-sample values, spec summaries, bootstrap CIs, paired tests.

Every metric is kept per sample, aligned on one ordered list of gold ids, so CNBE pairs each
system with the baseline *by id* (spec §6) and the harness's generic bootstrap (``mt_eval.stats``)
runs on the same values that produce the spec's mean ± std. The values come from, and the
statistics go through, the metric protocol (``qa/measures.py``): ``(value, 1)`` per sample, and a
sample the judge could not score contributes ``(0, 0)``, so it drops out of the semantic mean and
of its resamples alike. Paired tests against the baseline are Holm-corrected across the systems,
one family per metric, with the §8.2 significance rule, exactly as ``mt-eval compare`` does.

A gold question without a prediction is scored as an empty answer (EM 0, F1 0) and counted as
missing — leaving it out would reward systems that skip hard questions (docs/decisions.md §1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mt_eval.errors import UserError
from mt_eval.languages.scripts import language_scripts
from mt_eval.qa.data import GoldItem, Prediction
from mt_eval.qa.judge import JudgeItem, JudgeParseError, SemanticJudge
from mt_eval.qa.measures import (
    METRIC_KEYS,
    TESTED_METRICS,
    TEXT_METRICS,
    QASamples,
    Recorded,
)
from mt_eval.qa.metrics import DEFAULT_RLC_THRESHOLD, cnbe_values, mean_std
from mt_eval.stats import Aggregate, bootstrap_many, holm, is_significant, paired_bootstrap_many, resample_counts
from mt_eval.stats.config import BootstrapConfig

#: Per-sample status of a prediction: answered, no line in the predictions file, or ``null``.
ANSWERED, MISSING, FAILED = "answered", "missing", "null"


@dataclass
class SystemResult:
    """Per-sample values of one system, aligned with ``ids``."""

    name: str
    ids: tuple[str, ...]
    langs: tuple[str, ...]
    predictions: tuple[str, ...]
    status: tuple[str, ...]
    em: np.ndarray
    f1: np.ndarray
    rlc: np.ndarray
    rlc_ok: np.ndarray
    cost: np.ndarray
    cnbe: np.ndarray | None = None
    semantic: np.ndarray | None = None  # NaN where the judge's reply was unusable

    @property
    def missing(self) -> int:
        return self.status.count(MISSING)

    @property
    def failed(self) -> int:
        return self.status.count(FAILED)

    @property
    def semantic_errors(self) -> int:
        return 0 if self.semantic is None else int(np.isnan(self.semantic).sum())

    def values(self, metric: str) -> np.ndarray | None:
        """Per-sample values of one of ``METRIC_KEYS`` (None for CNBE or the judge when not computed)."""
        table = {"em": self.em, "f1": self.f1, "rlc": self.rlc, "rlc_ok": self.rlc_ok, "cost": self.cost,
                 "cnbe": self.cnbe, "semantic_score": self.semantic}
        if metric not in table:
            raise KeyError(f"unknown QA metric {metric!r} (known: {', '.join(table)})")
        return table[metric]

    def metrics(self) -> dict[str, np.ndarray]:
        """Per-sample values of every computed metric, in the spec's order."""
        return {key: v for key in METRIC_KEYS if (v := self.values(key)) is not None}

    def measured(self, metrics: Sequence[str]) -> tuple[dict[str, np.ndarray], dict[str, Aggregate]]:
        """``metrics``' statistics and aggregates under the metric protocol, for ``mt_eval.stats``."""
        recorded = {key: Recorded(key, _values(self, key)) for key in metrics}
        return ({k: m.statistics(self.predictions) for k, m in recorded.items()},
                {k: m.aggregate for k, m in recorded.items()})

    def summary(self) -> dict[str, float]:
        """The spec's metrics.json block for this system, keys in the spec's order."""
        out: dict[str, float] = {}
        for key, values in self.metrics().items():
            mean, std = mean_std(values[~np.isnan(values)])
            out[key], out[f"{key}_std"] = mean, std
        out["n"] = float(len(self.ids))  # the spec writes n as a float ("n": 10.0)
        return out


def sample_lang(item: GoldItem, lang: str | None) -> str:
    """The language a sample is scored in: ``--lang``, else the gold record's own ``lang``."""
    if lang is not None:
        if item.lang is not None and language_scripts(item.lang) != language_scripts(lang):
            raise UserError(
                f"gold language '{item.lang}' contradicts --lang {lang}", entry=item.id, field="lang"
            )
        return lang
    if item.lang is None:
        raise UserError("no language for this question", entry=item.id, hint="pass --lang")
    try:
        language_scripts(item.lang)
    except UserError as exc:
        raise UserError(exc.message, entry=item.id, field="lang", hint=exc.hint) from None
    return item.lang


def select_items(
    gold: Sequence[GoldItem], systems: Mapping[str, Mapping[str, Prediction]], only_predicted: bool
) -> list[GoldItem]:
    """The evaluation set: every gold question, or with ``only_predicted`` those every system answered."""
    if not only_predicted:
        return list(gold)
    items = [g for g in gold if all(g.id in preds for preds in systems.values())]
    if not items:
        raise UserError("no gold question was answered by every system", field="--only-predicted")
    return items


def score_system(
    name: str,
    items: Sequence[GoldItem],
    predictions: Mapping[str, Prediction],
    *,
    lang: str | None,
    rlc_threshold: float = DEFAULT_RLC_THRESHOLD,
) -> SystemResult:
    """EM, F1, RLC, RLC_OK (through the metric protocol) and cost for every sample of ``items``."""
    samples = QASamples(tuple(items), tuple(sample_lang(item, lang) for item in items), rlc_threshold)
    texts: list[str] = []
    cost: list[float] = []
    status: list[str] = []
    for item in items:
        pred = predictions.get(item.id)
        status.append(MISSING if pred is None else FAILED if pred.prediction is None else ANSWERED)
        texts.append((pred.prediction or "") if pred is not None else "")
        cost.append(pred.cost if pred is not None else 0.0)
    values: dict[str, Any] = {}
    for metric_type in TEXT_METRICS:
        metric = metric_type(samples)
        values[metric.id] = metric.entry_values(metric.statistics(texts))
    return SystemResult(
        name=name, ids=tuple(item.id for item in items), langs=samples.langs, predictions=tuple(texts),
        status=tuple(status), cost=np.array(cost, dtype=np.float64), **values,
    )  # fmt: skip


def apply_cnbe(system: SystemResult, baseline: SystemResult) -> None:
    """Per-sample CNBE of ``system`` against ``baseline``, paired by id."""
    if system.ids != baseline.ids:
        index = {qid: i for i, qid in enumerate(baseline.ids)}
        try:
            order = [index[qid] for qid in system.ids]
        except KeyError as exc:
            raise UserError(f"baseline '{baseline.name}' has no sample '{exc.args[0]}'") from exc
        base_f1 = baseline.f1[order]
    else:
        base_f1 = baseline.f1
    system.cnbe = cnbe_values(system.f1, base_f1, system.cost)


def apply_zero_cost_cnbe(system: SystemResult) -> None:
    """Without a baseline CNBE is still defined when nothing was translated: 0 for every sample."""
    if not np.any(system.cost > 0):
        system.cnbe = np.zeros_like(system.cost)


async def apply_semantic(
    systems: Sequence[SystemResult], items: Sequence[GoldItem], judge: SemanticJudge
) -> None:
    """Judge every system's answers (one batch, so identical answers are asked once)."""
    batch = [
        JudgeItem(item.question, item.answers, text)
        for system in systems
        for item, text in zip(items, system.predictions, strict=True)
    ]
    results = await judge.judge_many(batch)
    n = len(items)
    for k, system in enumerate(systems):
        chunk = results[k * n : (k + 1) * n]
        system.semantic = np.array(
            [np.nan if isinstance(r, JudgeParseError) else r.score for r in chunk], dtype=np.float64
        )


def _values(system: SystemResult, metric: str) -> np.ndarray:
    values = system.values(metric)
    if values is None:
        raise ValueError(f"{system.name}: {metric} was not computed")
    return values


def _tested(system: SystemResult) -> list[str]:
    return [*TESTED_METRICS, *(["semantic_score"] if system.semantic is not None else [])]


def confidence_intervals(system: SystemResult, cfg: BootstrapConfig) -> dict[str, dict[str, float]]:
    """Percentile bootstrap CIs of the mean of each tested metric, on one set of resamples."""
    tested = _tested(system)
    counts = resample_counts(len(system.ids), cfg.n_resamples, cfg.seed)
    stats, aggregates = system.measured(tested)
    cis = bootstrap_many(stats, aggregates, alpha=cfg.alpha, seed=cfg.seed, counts=counts)
    return {m: {"point": ci.point, "ci_lower": ci.ci_lower, "ci_upper": ci.ci_upper} for m, ci in cis.items()}


def paired_tests(
    baseline: SystemResult, system: SystemResult, cfg: BootstrapConfig
) -> dict[str, dict[str, float | bool]]:
    """Paired bootstrap of ``system`` − ``baseline`` on the same resampled samples, per metric
    (uncorrected; :func:`holm_correct` adjusts a family of them)."""
    if baseline.ids != system.ids:
        raise UserError(f"systems '{baseline.name}' and '{system.name}' were scored on different samples")
    tested = [m for m in _tested(system) if baseline.values(m) is not None]
    counts = resample_counts(len(system.ids), cfg.n_resamples, cfg.seed)
    (stats_a, aggregates), (stats_b, _) = baseline.measured(tested), system.measured(tested)
    results = paired_bootstrap_many(stats_a, stats_b, aggregates, alpha=cfg.alpha, seed=cfg.seed, counts=counts)
    return {
        metric: {
            "baseline": res.score_a, "system": res.score_b, "delta": res.delta,
            "ci_lower": res.ci_lower, "ci_upper": res.ci_upper, "p_value": res.p_value,
            "significant": bool(res.significant),
        }
        for metric, res in results.items()
    }


def holm_correct(tests: Mapping[str, dict[str, dict[str, Any]]], alpha: float) -> None:
    """Holm across the systems compared with the baseline, one family per metric (in place).

    Each test gains ``p_adjusted`` and ``significant_uncorrected`` (the raw test's verdict), and
    ``significant`` becomes the §8.2 rule applied to the adjusted p-value — what ``mt-eval compare``
    reports. An undefined (NaN) p-value stays NaN and is never significant.
    """
    metrics = dict.fromkeys(m for per_system in tests.values() for m in per_system)
    for metric in metrics:
        family = [t[metric] for t in tests.values() if metric in t]
        finite = [t for t in family if not np.isnan(float(t["p_value"]))]
        adjusted = holm([float(t["p_value"]) for t in finite], alpha) if finite else []
        for test in family:
            test["significant_uncorrected"] = test["significant"]
            test["p_adjusted"] = float(test["p_value"])
        for test, (p_adj, _) in zip(finite, adjusted, strict=True):
            test["p_adjusted"] = p_adj
        for test in family:
            test["significant"] = is_significant(
                float(test["delta"]), float(test["p_adjusted"]), float(test["ci_lower"]),
                float(test["ci_upper"]), alpha,
            )  # fmt: skip

