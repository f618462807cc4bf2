"""One QA evaluation run, from file paths to a :class:`QAReport` — what both CLI commands call.

Kept apart from the CLI so the same run is scriptable (and testable) without typer, and apart
from ``evaluate.py`` so the per-sample maths stays free of file handling and network set-up.
Configuration errors (unknown language, missing API key, bad baseline name) are raised before
any file is scored or any request is sent.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.languages.scripts import language_scripts
from mt_eval.providers.cache import DEFAULT_CACHE, ResponseCache
from mt_eval.providers.openai_compat import (
    Endpoint,
    OpenAICompatClient,
    RetryPolicy,
    resolve_endpoint,
)
from mt_eval.qa.data import load_gold, load_predictions
from mt_eval.qa.evaluate import (
    SystemResult,
    apply_cnbe,
    apply_semantic,
    apply_zero_cost_cnbe,
    score_system,
    select_items,
)
from mt_eval.qa.judge import SemanticJudge
from mt_eval.qa.metrics import DDOF, DEFAULT_RLC_THRESHOLD
from mt_eval.qa.report import CORRECTIONS, Correction, QAReport, build_report
from mt_eval.stats.config import BootstrapConfig


@dataclass(frozen=True)
class JudgeConfig:
    """Where and how to ask the semantic judge; absent means no semantic_score at all."""

    model: str
    provider: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    cache_path: str | None = DEFAULT_CACHE  # the LLM methods' response cache
    concurrency: int = 8
    temperature: float = 0.0
    timeout_s: float = 60.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)


@dataclass(frozen=True)
class RunOptions:
    lang: str | None = None
    rlc_threshold: float = DEFAULT_RLC_THRESHOLD
    only_predicted: bool = False
    bootstrap: BootstrapConfig = field(default_factory=BootstrapConfig)
    judge: JudgeConfig | None = None
    correction: Correction = "holm"


def parse_system_spec(spec: str) -> tuple[str, Path]:
    """``NAME=PRED.jsonl`` → (name, path)."""
    name, sep, path = spec.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise UserError(f"expected SYSTEM=PREDICTIONS.jsonl, got '{spec}'", field="systems")
    return name.strip(), Path(path.strip())


def run_qa(
    gold_path: str | Path,
    systems: Sequence[tuple[str, Path]],
    options: RunOptions,
    *,
    baseline: str | None = None,
    report: Sequence[str] | None = None,
) -> QAReport:
    """Score ``systems`` against the gold data; ``report`` names the systems shown (default all).

    With a ``baseline`` every system gets CNBE against it and paired tests against it; without
    one CNBE is reported only for systems that translated nothing (where it is 0 by definition).
    """
    names = [name for name, _ in systems]
    if len(set(names)) != len(names):
        raise UserError("system names must be unique", field="systems")
    if baseline is not None and baseline not in names:
        raise UserError(f"baseline '{baseline}' is not one of the systems: {', '.join(names)}", field="baseline")
    if not 0.0 <= options.rlc_threshold <= 1.0:
        raise UserError("must be between 0 and 1", field="rlc-threshold")
    if not 0.0 < options.bootstrap.alpha < 1.0:
        raise UserError("must be strictly between 0 and 1", field="alpha")
    if options.correction not in CORRECTIONS:
        raise UserError(f"unknown correction '{options.correction}' (use holm or none)", field="correction")
    if options.lang is not None:
        language_scripts(options.lang)
    endpoint = _judge_endpoint(options.judge)

    gold = load_gold(gold_path)
    predictions = {name: load_predictions(path, gold) for name, path in systems}
    items = select_items(gold.items, predictions, options.only_predicted)
    results = {
        name: score_system(
            name, items, preds, lang=options.lang, rlc_threshold=options.rlc_threshold
        )
        for name, preds in predictions.items()
    }
    base = results[baseline] if baseline is not None else None
    for result in results.values():
        if base is not None:
            apply_cnbe(result, base)
        else:
            apply_zero_cost_cnbe(result)
    if options.judge is not None and endpoint is not None:
        asyncio.run(_judge(list(results.values()), items, options.judge, endpoint))

    return build_report(
        items, results, baseline=baseline, shown=report or names, bootstrap=options.bootstrap,
        correction=options.correction,
        config=_config(gold_path, len(gold.items), len(items), systems, baseline, options, endpoint),
    )  # fmt: skip


def _judge_endpoint(judge: JudgeConfig | None) -> Endpoint | None:
    if judge is None:
        return None
    if judge.concurrency < 1:
        raise UserError("must be at least 1", field="judge-concurrency")
    return resolve_endpoint(judge.provider, judge.base_url, judge.api_key_env)


async def _judge(
    systems: list[SystemResult], items: Sequence[Any], cfg: JudgeConfig, endpoint: Endpoint
) -> None:
    cache = ResponseCache(cfg.cache_path) if cfg.cache_path else None
    try:
        async with OpenAICompatClient(
            endpoint, concurrency=cfg.concurrency, timeout_s=cfg.timeout_s, retry=cfg.retry
        ) as client:
            judge = SemanticJudge(client, cfg.model, temperature=cfg.temperature, cache=cache)
            await apply_semantic(systems, items, judge)
    finally:
        if cache is not None:
            cache.close()


def _sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _config(
    gold_path: str | Path,
    n_gold: int,
    n_scored: int,
    systems: Sequence[tuple[str, Path]],
    baseline: str | None,
    options: RunOptions,
    endpoint: Endpoint | None,
) -> dict[str, Any]:
    """What is needed to reproduce the numbers (never the API key)."""
    judge: Mapping[str, Any] | None = None
    if options.judge is not None and endpoint is not None:
        judge = {
            "model": options.judge.model,
            "base_url": endpoint.base_url,
            "temperature": options.judge.temperature,
        }
    return {
        "gold": {"path": str(gold_path), "sha256": _sha256(gold_path), "questions": n_gold},
        "scored_questions": n_scored,
        "systems": {name: {"path": str(p), "sha256": _sha256(p)} for name, p in systems},
        "baseline": baseline,
        "lang": options.lang,
        "rlc_threshold": options.rlc_threshold,
        "only_predicted": options.only_predicted,
        "std_ddof": DDOF,
        "bootstrap": {
            "n_resamples": options.bootstrap.n_resamples,
            "alpha": options.bootstrap.alpha,
            "seed": options.bootstrap.seed,
        },
        "correction": options.correction,
        "judge": judge,
    }
