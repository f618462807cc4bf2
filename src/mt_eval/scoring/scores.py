"""The run-card ``scores`` block: corpus values, counts, composite, tier and breakdowns.

Statistics are computed once per metric for the whole run; every group (difficulty,
provenance, register, segment) is the same aggregate over a subset of the same rows.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mt_eval.corpus.models import Entry
from mt_eval.metrics.base import Metric, MetricContext
from mt_eval.metrics.cache import RunCache
from mt_eval.scoring.composite import ANCHORED_2, CRITICAL, DEFAULT_RULE, composite, quality_tier
from mt_eval.scoring.profiles import SCORE_KEYS, Weights

# Count fields that sit beside a rate (Scoring Spec §9): key -> (metric id, stats column).
COUNT_KEYS = {
    "exact_matches": ("exact_match_rate", 0),
    "equivalent_matches": ("equivalent_match_rate", 0),
    "fst_accepted": ("fst_acceptance_rate", 0),
}

MATCH_COUNTS = frozenset({"exact_matches", "equivalent_matches"})

BREAKDOWNS: dict[str, Callable[[Entry], object]] = {
    "by_difficulty": lambda e: e.difficulty,
    "by_provenance": lambda e: e.provenance.value,
    "by_register": lambda e: e.register.value if e.register else "unspecified",
    "by_segment": lambda e: e.segment.value,
}


@dataclass
class MetricTable:
    """Every metric's per-entry statistics for one run, computed exactly once."""

    metrics: dict[str, Metric]
    stats: dict[str, np.ndarray]
    errors: np.ndarray  # bool (n,)
    entries: Sequence[Entry] = field(default_factory=list)
    cache: RunCache = field(default_factory=RunCache)  # the run's words and analyses, for per-entry details

    @classmethod
    def compute(
        cls, metrics: Sequence[Metric], hypotheses: Sequence[str], ctx: MetricContext, errors: np.ndarray
    ) -> MetricTable:
        from mt_eval.scoring.extraction import extract_statistics

        stats = extract_statistics(metrics, hypotheses, ctx)
        return cls({m.id: m for m in metrics}, stats, errors, ctx.entries, ctx.cache)

    def values(self, rows: np.ndarray | None = None) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for metric_id, metric in self.metrics.items():
            stats = self.stats[metric_id] if rows is None else self.stats[metric_id][rows]
            out[metric_id] = _finite(float(metric.aggregate(stats.sum(axis=0))))
        return out

    def entry_values(self, metric_id: str) -> np.ndarray | None:
        return self.metrics[metric_id].entry_values(self.stats[metric_id])


def _finite(value: float) -> float | None:
    return None if np.isnan(value) else value


def group_scores(table: MetricTable, profile: Weights, rows: np.ndarray | None = None,
                 rule: str = DEFAULT_RULE) -> dict[str, Any]:
    """Fields shared by the top level and every breakdown group."""
    n = len(table.errors) if rows is None else len(rows)
    errors = table.errors if rows is None else table.errors[rows]
    values = table.values(rows)
    block: dict[str, Any] = {"total": n, "evaluated": int(n - errors.sum()), "errors": int(errors.sum())}
    for key in SCORE_KEYS:
        block[key] = values.get(key)
    for key, value in values.items():  # plugin metrics: reported beside the spec's own keys
        block.setdefault(key, value)
    for count_key, (metric_id, column) in COUNT_KEYS.items():
        if metric_id in table.stats:
            stats = table.stats[metric_id] if rows is None else table.stats[metric_id][rows]
            # match counts are entries with a match: the numerator is weighted by reference words (§67)
            counted = stats[:, column] > 0 if count_key in MATCH_COUNTS else stats[:, column]
            block[count_key] = int(counted.sum())
        else:
            block[count_key] = None
    score = composite(values, profile, rule)
    block["composite"] = float(score) if score is not None else None
    # anchored-2: a tier above functional needs the critical-error rate under its threshold (§67)
    block["quality_tier"] = quality_tier(block["composite"], values.get(CRITICAL) if rule == ANCHORED_2 else None)
    return block


def group_rows(table: MetricTable, name: str) -> dict[str, np.ndarray]:
    key = BREAKDOWNS[name]
    groups: dict[str, list[int]] = {}
    for i, entry in enumerate(table.entries):
        groups.setdefault(str(key(entry)), []).append(i)
    return {k: np.asarray(idx) for k, idx in sorted(groups.items())}


def breakdowns(table: MetricTable, profile: Weights, rule: str = DEFAULT_RULE,
               keep: Collection[str] = ()) -> dict[str, dict[str, dict[str, Any]]]:
    """Each breakdown the run's entries carry: one whose entries all fall in one group is left out, since
    that group is the whole run again (plain-text input gives every entry the schema's defaults, difficulty 3,
    development, corpus, no register, and a one-row table presented them as a finding). ``keep``: breakdowns
    built whatever their groups (``verify`` rebuilding a card written before, which carries one-group ones)."""
    out = {}
    for name in BREAKDOWNS:
        groups = group_rows(table, name)
        if len(groups) > 1 or name in keep:
            out[name] = {k: group_scores(table, profile, rows, rule) for k, rows in groups.items()}
    return out
