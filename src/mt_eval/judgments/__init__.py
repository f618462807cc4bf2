"""Human judgments of translations, in one table keyed by (dataset, entry, system[, rater]).

``table.py`` holds the table; ``importers.py`` reads MQM TSV (WMT layout), DA/ESA score files,
SimpEval-style rating sheets and the community review's 0–3 ratings into it.
"""

from mt_eval.judgments.importers import FORMATS, load_judgments, review_judgments
from mt_eval.judgments.table import Judgment, JudgmentTable, Segment

__all__ = ["FORMATS", "Judgment", "JudgmentTable", "Segment", "load_judgments", "review_judgments"]
