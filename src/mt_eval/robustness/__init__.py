"""Metric robustness (AutoMetrics §3.2): sensitivity to degraded translations, stability under edits that keep
their quality, for every metric and the composite, scored with the one scoring pipeline."""

from mt_eval.robustness.evaluate import Cell, RobustnessReport, robustness
from mt_eval.robustness.perturb import DEGRADATIONS, EDITS

__all__ = ["DEGRADATIONS", "EDITS", "Cell", "RobustnessReport", "robustness"]
