"""Morphological analysers behind one interface (HFST optimized-lookup and Apertium lttoolbox)."""

from mt_eval.analyzers.base import Analyser
from mt_eval.analyzers.registry import analyser_for, analyser_status, open_analyser, require_analyser

__all__ = ["Analyser", "analyser_for", "analyser_status", "open_analyser", "require_analyser"]
