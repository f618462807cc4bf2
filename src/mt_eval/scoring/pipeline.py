"""Scoring one run, in one place: outputs → metric statistics → the card's ``scores`` block.

``run`` and ``score`` (through ``api.runs.evaluate_card``), ``verify`` and ``compare`` (through
``runcard.rescore``) all score with these two functions, so a number on a card, its verification
and its comparison can never come from different code.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from mt_eval.corpus.models import Dataset
from mt_eval.languages.card import UNDETERMINED, LanguageCard
from mt_eval.methods.base import Translation
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.opt_in import OptInMetric, in_order
from mt_eval.metrics.registry import OPT_IN, metrics_for, source_metrics
from mt_eval.scoring.composite import DEFAULT_RULE
from mt_eval.scoring.egress import refuse_remote_on_secret
from mt_eval.scoring.intervals import scores_with_intervals
from mt_eval.scoring.limits import refuse_overlong
from mt_eval.scoring.profiles import Weights
from mt_eval.scoring.scores import MetricTable
from mt_eval.stats.config import BootstrapConfig


def score_outputs(
    dataset: Dataset,
    translations: Sequence[Translation],
    target: LanguageCard,
    source: LanguageCard,
    *,
    only: list[str] | None = None,
    terminology: Mapping[str, tuple[str, ...]] | None = None,
    recorded: Mapping[str, str | None] | None = None,
    opt_in: Sequence[OptInMetric] = (),
) -> tuple[MetricTable, list[str]]:
    """Every applicable metric's per-entry statistics (or the ``only`` subset), and the scored outputs.

    A failed entry is scored as an empty output (docs/decisions.md §1): excluding it would reward
    flaky methods. A dataset without sources (``score`` from references and outputs alone) leaves the
    metrics that read the source null. ``recorded``: the signatures of the card being rescored.
    ``opt_in``: the opt-in metrics to score beside the built-ins (``metrics.opt_in``: ``semantic_score`` with its
    embedding backend, ``comet_score`` with its checkpoint, generated LLM judges); one not given is not scored
    (null on the card, no model loaded). They are scored in ``metrics.opt_in.SECTIONS`` order.
    No metric with egress ``remote`` may score a secret entry (``scoring.egress``): refused before any is scored.
    """
    hypotheses = ["" if t.error else t.text for t in translations]
    errors = np.asarray([t.error is not None for t in translations], dtype=bool)
    refuse_overlong(hypotheses, dataset.entries)  # one line, before any metric runs (scoring/limits.py)
    ctx = MetricContext(entries=dataset.entries, target=target, source=source, terminology=terminology,
                        has_source=has_sources(dataset), recorded=recorded)
    # ``only`` may name opt-in metrics; the built-ins it names (all when None, none when it names opt-in ones only)
    named = [i for i in only if i not in {m.id for m in opt_in} | set(OPT_IN)] if only else only
    metrics = metrics_for(target, named) if named or not only else []
    metrics += [m for m in in_order(opt_in) if m.applies_to(target) and (not only or m.id in only)]
    refuse_remote_on_secret(metrics, dataset.entries)
    for metric in metrics:  # here: a model (e5, torch) must not first start in a forked extraction worker
        metric.prefetch(hypotheses, ctx)
    return MetricTable.compute(metrics, hypotheses, ctx, errors), hypotheses


def has_sources(dataset: Dataset) -> bool:
    """False for a dataset loaded from references alone: every entry's source is empty (a corpus or a
    text pair with sources never has an empty one, the loaders refuse it)."""
    return any(e.source for e in dataset.entries)


def source_warnings(dataset: Dataset, target: LanguageCard, source: LanguageCard) -> list[str]:
    """What a run without sources cannot measure, said on the card (``warnings``) and why."""
    if has_sources(dataset):
        return []
    null = source_metrics(target) + (["code_switching_rate"] if source.code == UNDETERMINED else [])
    return [f"no source text (scored from references and outputs alone): {', '.join(null)} are null, since they "
            "compare the output with the source" + (" or its language" if source.code == UNDETERMINED else "")]


def quality_scores(table: MetricTable, profile: Weights, bootstrap: BootstrapConfig,
                   rule: str = DEFAULT_RULE, keep: Collection[str] = ()) -> dict[str, Any]:
    """The card's ``scores`` quality block: values, counts, composite (under ``rule``), tier, breakdowns
    (those the entries carry; ``keep``: also these, whatever their groups), intervals."""
    return scores_with_intervals(table, profile, bootstrap, rule, keep)
