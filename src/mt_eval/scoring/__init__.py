"""Normalisation, weight profiles, composite, tiers, cost, speed and breakdowns."""

from mt_eval.scoring.composite import composite, cost_adjusted, effective_weights, quality_tier

__all__ = ["composite", "cost_adjusted", "effective_weights", "quality_tier"]
