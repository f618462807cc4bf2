"""Multi-system comparison: confidence intervals and Holm-corrected paired tests against a baseline.

``compare(cards)`` works from run cards alone (Scoring Spec §8); ``compare_tables`` from metric
tables already in memory. The CLI lives in ``mt_eval.cli.compare``.
"""

from mt_eval.comparison.engine import compare, compare_tables, composite_combine, tables_from_cards
from mt_eval.comparison.model import COMPOSITE, Comparison, MetricSpec, PairedComparison, SystemScores

__all__ = [
    "COMPOSITE",
    "Comparison",
    "MetricSpec",
    "PairedComparison",
    "SystemScores",
    "compare",
    "compare_tables",
    "composite_combine",
    "tables_from_cards",
]
