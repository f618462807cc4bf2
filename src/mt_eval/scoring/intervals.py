"""Bootstrap confidence intervals for every metric and the composite (Scoring Spec §8.1).

All metrics and the composite of one group share one set of resamples; the composite's
interval comes from ``composite`` itself applied to each resample's metric values.
"""

from __future__ import annotations

import copy
from collections.abc import Collection
from typing import Any

import numpy as np

from mt_eval.scoring.composite import DEFAULT_RULE, composite
from mt_eval.scoring.profiles import Weights
from mt_eval.scoring.scores import MetricTable, breakdowns, group_rows, group_scores
from mt_eval.stats import bootstrap_many
from mt_eval.stats.config import BootstrapConfig

__all__ = ["BootstrapConfig", "confidence_intervals", "scores_with_intervals"]


def confidence_intervals(
    table: MetricTable, profile: Weights, config: BootstrapConfig, rows: np.ndarray | None = None,
    rule: str = DEFAULT_RULE,
) -> dict[str, Any]:
    """``{method, n_resamples, alpha, seed, <metric_id>: {ci_lower, ci_upper}, composite: {...}}``."""
    out = config.header()
    if config.n_resamples <= 0:
        return out
    stats = {m: (s if rows is None else s[rows]) for m, s in table.stats.items()}
    if not stats or len(next(iter(stats.values()))) < 2:
        return out  # one entry cannot be resampled meaningfully
    available = {m for m, v in table.values(rows).items() if v is not None}

    def combine(values: dict[str, np.ndarray]) -> np.ndarray:
        result = composite({m: v for m, v in values.items() if m in available}, profile, rule)
        return np.full(len(next(iter(values.values()))), np.nan) if result is None else np.asarray(result)

    aggregates = {m: metric.aggregate for m, metric in table.metrics.items()}
    cis = bootstrap_many(stats, aggregates, combine, n_resamples=config.n_resamples, alpha=config.alpha,
                         seed=config.seed)
    for metric_id, ci in cis.items():
        if metric_id in available or (metric_id == "composite" and not np.isnan(ci.point)):
            out[metric_id] = ci.as_dict()
    return out


# Breakdowns whose groups also carry intervals (Scoring Spec §8 asks for difficulty and provenance).
GROUPS_WITH_INTERVALS = ("by_difficulty", "by_provenance")


def scores_with_intervals(table: MetricTable, profile: Weights, config: BootstrapConfig,
                          rule: str = DEFAULT_RULE, keep: Collection[str] = ()) -> dict[str, Any]:
    """The whole ``scores`` quality block: values, counts, composite, tier, breakdowns (those the entries
    carry, and ``keep``: ``scores.breakdowns``) and CIs."""
    scores = group_scores(table, profile, rule=rule)
    scores.update(breakdowns(table, profile, rule, keep))
    whole = confidence_intervals(table, profile, config, rule=rule)
    scores["confidence_intervals"] = whole
    for name in (n for n in GROUPS_WITH_INTERVALS if n in scores):
        for key, rows in group_rows(table, name).items():
            # a group holding every entry (a corpus without difficulty or provenance annotations) has
            # exactly the whole run's intervals: same rows, same seed, same resamples
            every = len(rows) == len(table.errors)
            cis = copy.deepcopy(whole) if every else confidence_intervals(table, profile, config, rows, rule)
            scores[name][key]["confidence_intervals"] = cis
    return scores
