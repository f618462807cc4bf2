"""Score QA systems against gold data: per-sample values, spec summaries, bootstrap CIs, paired tests.

Every metric is kept per sample, aligned on one ordered list of gold ids, so CNBE pairs each
system with the baseline *by id* (spec §6) and the harness's generic bootstrap (``mt_eval.stats``)
runs on the same values that produce the spec's mean ± std. A mean metric's sufficient statistics
are ``(value, 1)`` per sample; a sample the judge could not score contributes ``(0, 0)``, so it
drops out of the semantic mean and of its resamples alike.

A gold question without a prediction is scored as an empty answer (EM 0, F1 0) and counted as
missing — leaving it out would reward systems that skip hard questions (DESIGN decision 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mt_eval.errors import UserError
from mt_eval.languages.scripts import language_scripts
from mt_eval.qa.data import GoldItem, Prediction
from mt_eval.qa.judge import JudgeItem, JudgeParseError, SemanticJudge
from mt_eval.qa.metrics import (
    DEFAULT_RLC_THRESHOLD,
    best_exact_match,
    best_f1,
    cnbe_values,
    compute_rlc,
    mean_std,
)
from mt_eval.stats import bootstrap_ci, paired_bootstrap, resample_counts
from mt_eval.stats.config import BootstrapConfig

#: Metrics that get bootstrap CIs and paired tests (plus semantic_score when judged).
TESTED_METRICS = ("em", "f1", "rlc")


@dataclass
class SystemResult:
    """Per-sample values of one system, aligned with ``ids``."""

    name: str
    ids: tuple[str, ...]
    langs: tuple[str, ...]
    predictions: tuple[str, ...]
    em: np.ndarray
    f1: np.ndarray
    rlc: np.ndarray
    rlc_ok: np.ndarray
    cost: np.ndarray
    cnbe: np.ndarray | None = None
    semantic: np.ndarray | None = None  # NaN where the judge's reply was unusable
    missing: int = 0
    failed: int = 0
    semantic_errors: int = 0

    def values(self, metric: str) -> np.ndarray | None:
        return self.semantic if metric == "semantic_score" else getattr(self, metric)

    def summary(self) -> dict[str, float]:
        """The spec's metrics.json block for this system, keys in the spec's order."""
        out: dict[str, float] = {}
        for key in ("em", "f1", "rlc", "rlc_ok", "cost", "cnbe", "semantic_score"):
            values = self.values(key)
            if values is None:
                continue
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
    """EM, F1, RLC, RLC_OK and cost for every sample of ``items``."""
    langs = [sample_lang(item, lang) for item in items]
    texts: list[str] = []
    cost: list[float] = []
    missing = failed = 0
    for item in items:
        pred = predictions.get(item.id)
        if pred is None:
            missing += 1
        elif pred.prediction is None:
            failed += 1
        texts.append((pred.prediction or "") if pred is not None else "")
        cost.append(pred.cost if pred is not None else 0.0)
    rlc = np.array([compute_rlc(t, lg) for t, lg in zip(texts, langs, strict=True)])
    return SystemResult(
        name=name,
        ids=tuple(item.id for item in items),
        langs=tuple(langs),
        predictions=tuple(texts),
        em=np.array([best_exact_match(t, item.answers) for t, item in zip(texts, items, strict=True)]),
        f1=np.array([best_f1(t, item.answers, lg) for t, item, lg in zip(texts, items, langs, strict=True)]),
        rlc=rlc,
        rlc_ok=(rlc >= rlc_threshold).astype(np.float64),
        cost=np.array(cost, dtype=np.float64),
        missing=missing,
        failed=failed,
    )


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
        system.semantic_errors = sum(isinstance(r, JudgeParseError) for r in chunk)


def _mean_stats(values: np.ndarray) -> np.ndarray:
    """(value, 1) per sample; a NaN (unjudged) sample becomes (0, 0) and so counts nowhere."""
    ok = ~np.isnan(values)
    return np.column_stack([np.where(ok, values, 0.0), ok.astype(np.float64)])


def _mean_aggregate(sums: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(sums[..., 0] / sums[..., 1], dtype=np.float64)


def _tested(system: SystemResult) -> list[str]:
    return [*TESTED_METRICS, *(["semantic_score"] if system.semantic is not None else [])]


def confidence_intervals(system: SystemResult, cfg: BootstrapConfig) -> dict[str, dict[str, float]]:
    """Percentile bootstrap CIs of the mean of each tested metric."""
    counts = resample_counts(len(system.ids), cfg.n_resamples, cfg.seed)
    out: dict[str, dict[str, float]] = {}
    for metric in _tested(system):
        values = system.values(metric)
        assert values is not None
        ci = bootstrap_ci(
            _mean_stats(values), _mean_aggregate, n_resamples=cfg.n_resamples, alpha=cfg.alpha,
            seed=cfg.seed, counts=counts,
        )  # fmt: skip
        out[metric] = {"point": ci.point, "ci_lower": ci.ci_lower, "ci_upper": ci.ci_upper}
    return out


def paired_tests(
    baseline: SystemResult, system: SystemResult, cfg: BootstrapConfig
) -> dict[str, dict[str, float | bool]]:
    """Paired bootstrap of ``system`` − ``baseline`` on the same resampled samples, per metric."""
    if baseline.ids != system.ids:
        raise UserError(f"systems '{baseline.name}' and '{system.name}' were scored on different samples")
    counts = resample_counts(len(system.ids), cfg.n_resamples, cfg.seed)
    out: dict[str, dict[str, float | bool]] = {}
    for metric in _tested(system):
        a, b = baseline.values(metric), system.values(metric)
        if a is None or b is None:
            continue
        res = paired_bootstrap(
            _mean_stats(a), _mean_stats(b), _mean_aggregate, metric=metric,
            n_resamples=cfg.n_resamples, alpha=cfg.alpha, seed=cfg.seed, counts=counts,
        )  # fmt: skip
        out[metric] = {
            "baseline": res.score_a, "system": res.score_b, "delta": res.delta,
            "ci_lower": res.ci_lower, "ci_upper": res.ci_upper, "p_value": res.p_value,
            "significant": bool(res.significant),
        }  # fmt: skip
    return out
