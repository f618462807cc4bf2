"""Multi-system comparison: confidence intervals and Holm-corrected paired tests against a baseline.

``compare(cards)`` works from run cards alone (Scoring Spec §8), reading the statistics stored with
each card where it can (``load_for_compare``); ``compare_tables`` from metric tables already in
memory. The CLI lives in ``mt_eval.cli.compare``.
"""

from mt_eval.comparison.engine import (
    StatisticsFallbackWarning,
    compare,
    compare_tables,
    composite_combine,
    tables_from_cards,
)
from mt_eval.comparison.loading import LoadedCard, load_for_compare
from mt_eval.comparison.model import (
    COMPOSITE,
    Comparison,
    MetricSpec,
    PairedComparison,
    SystemScores,
    ValueChange,
)

__all__ = [
    "COMPOSITE",
    "Comparison",
    "LoadedCard",
    "MetricSpec",
    "PairedComparison",
    "StatisticsFallbackWarning",
    "SystemScores",
    "ValueChange",
    "compare",
    "compare_tables",
    "composite_combine",
    "load_for_compare",
    "tables_from_cards",
]
