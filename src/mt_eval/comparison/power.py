"""``mt-eval power``'s inputs: a baseline card's per-entry statistics for one metric, and the corpus size.

The arithmetic is ``stats.power`` (which never sees a card or a metric); here the card is read as
``compare`` reads it (the sealed statistics sidecar when the card vouches for it, else a rebuild from
``results[]``), so the variance is the one the run was scored with.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from mt_eval.comparison.engine import StatisticsFallbackWarning, tables_from_cards
from mt_eval.comparison.loading import load_for_compare
from mt_eval.errors import UserError
from mt_eval.runcard.statistics import StoredStatistics
from mt_eval.scoring.scores import MetricTable
from mt_eval.stats.power import (
    DEFAULT_ALPHA,
    DEFAULT_CORRELATION,
    DEFAULT_POWER,
    DEFAULT_RESAMPLES,
    PowerResult,
    minimum_detectable_difference,
)

DEFAULT_METRIC = "chrf_plus_plus"


def power_from_cards(
    baseline: Path,
    metric: str = DEFAULT_METRIC,
    *,
    n_entries: int | None = None,
    versus: Path | None = None,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
    correlation: float = DEFAULT_CORRELATION,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 12345,
) -> tuple[PowerResult, str | None]:
    """The MDD of ``metric`` for a corpus of ``n_entries`` (default: the baseline's), from the ``baseline``
    card's statistics, and ``versus``'s paired with them when given; plus a note when statistics were rebuilt."""
    from mt_eval.metrics.registry import available_metrics

    if metric not in available_metrics():
        raise UserError(f"no metric {metric!r}", field="metric", hint="mt-eval metrics list shows the metric ids")
    paths = [baseline, *([versus] if versus is not None else [])]
    loaded = [load_for_compare(p) for p in paths]
    notes = [x.fallback for x in loaded if x.fallback]
    if versus is None:  # one card: compare's own reading of it, without the two-card comparability checks
        tables = [_table(loaded[0].card, loaded[0].statistics, metric)]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StatisticsFallbackWarning)
            tables = tables_from_cards([x.card for x in loaded], sources=[str(p) for p in paths], only=[metric],
                                       statistics=[x.statistics for x in loaded])
    if metric not in tables[0].stats:
        raise UserError(f"{baseline}: no {metric} statistics on this card (the metric does not apply to its "
                        "target language, or is an opt-in metric it was not scored with)", field="metric",
                        hint="choose a metric the card's scores show, e.g. chrf_plus_plus")
    aggregate = tables[0].metrics[metric].aggregate
    try:
        result = minimum_detectable_difference(
            tables[0].stats[metric], aggregate, n_entries=n_entries,
            candidate=tables[1].stats[metric] if versus is not None else None, correlation=correlation,
            alpha=alpha, power=power, n_resamples=n_resamples, seed=seed)
    except ValueError as exc:
        raise UserError(f"power: {exc}", file=str(baseline)) from None
    return result, "; ".join(notes) or None


def _table(card: dict[str, Any], stored: StoredStatistics | None, metric: str) -> MetricTable:
    from mt_eval.metrics.registry import metrics_for
    from mt_eval.runcard.rescore import configured_metrics, table_from_card, target_card

    if stored is None:
        return table_from_card(card, only=[metric])
    target = target_card(card)
    return stored.table(metrics_for(target, [metric], configured_metrics(card)), target)
