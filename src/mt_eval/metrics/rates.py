"""Rate metrics: statistics are (numerator, denominator) per entry, value = Σnum / Σden.

Exact match, FST acceptance, code-switching and most behavioural metrics share this shape, so
they all inherit the same aggregate and per-entry values and get CIs and paired tests for free.
"""

from __future__ import annotations

import unicodedata
from abc import abstractmethod
from collections.abc import Sequence

import numpy as np

from mt_eval.languages.card import LanguageCard
from mt_eval.metrics.base import MetricBase, MetricContext


class RatioMetric(MetricBase):
    """Statistics (numerator, denominator) per entry; value = Σnum / Σden. Subclasses that see the
    whole run at once (one analyser pass over every word) implement ``statistics`` directly."""

    cost = 0.05  # seconds per 10k lines (see scoring.extraction): string comparisons are cheap

    @abstractmethod
    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        """(n, 2) float64: numerator and denominator per entry."""

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        num, den = sums[..., 0], sums[..., 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)

    def entry_values(self, stats: np.ndarray) -> np.ndarray | None:
        return self.aggregate(stats)

    def with_entry_values(self, stats: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Each scored entry's numerator set to ``value × denominator`` (a null value keeps its row)."""
        out = np.array(stats, dtype=np.float64, copy=True)
        scored = ~np.isnan(values)
        out[scored, 0] = values[scored] * out[scored, 1]
        return out


class RateMetric(RatioMetric):
    """A ratio metric computed entry by entry through ``pair``."""

    @abstractmethod
    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        """(numerator, denominator) for one entry."""

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        if self.reads_source and not ctx.has_source:
            return np.zeros((len(hypotheses), 2))  # nothing to compare with: null, never a guess
        rows = [self.pair(h, ctx, i) for i, h in enumerate(hypotheses)]
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), 2)


def normalize_text(text: str) -> str:
    """Unicode NFC and whitespace collapsed: what 'exactly matches' means (Benchmark Spec §4.1)."""
    return " ".join(unicodedata.normalize("NFC", text).split())


# Exact and equivalent match weigh each entry by its reference's words (docs/decisions.md §67): one word
# "(Applaus)" counts once, a 20-word sentence twenty times, so a corpus rate (and a significant difference)
# is no longer decided by who copies the short formulaic segments. Cards without this signature were
# scored one entry, one vote and are rescored that way.
MATCH_SIGNATURE = "match:2|weight:reference-words"


class WordWeightedMatch(RateMetric):
    """A 0/1 match per entry with statistics (match × w, w), w = the reference's words (at least 1), under
    ``MATCH_SIGNATURE``; (match, 1) when rescoring a card that recorded none. Per-entry values stay 0/1."""

    weighted = True  # set by ``prepare``

    def prepare(self, ctx: MetricContext) -> None:
        self.weighted = ctx.recorded_signature(self.id) is not None

    def signature(self, target: LanguageCard) -> str | None:
        return MATCH_SIGNATURE if self.weighted else None

    @abstractmethod
    def matches(self, hypothesis: str, ctx: MetricContext, index: int) -> bool:
        """Whether the output matches this entry."""

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        hit = float(self.matches(hypothesis, ctx, index))
        if not self.weighted:
            return hit, 1.0
        weight = float(max(1, len(ctx.cache.words(ctx.entries[index].reference, ctx.target))))
        return hit * weight, weight


class ExactMatch(WordWeightedMatch):
    id = "exact_match_rate"

    def matches(self, hypothesis: str, ctx: MetricContext, index: int) -> bool:
        # with several references, equal to any of them (each is a human translation of the source)
        hyp = normalize_text(hypothesis)
        return any(hyp == normalize_text(ref) for ref in ctx.entries[index].all_references)


class LengthRatio(RateMetric):
    """len(predicted) / len(reference) in characters; corpus value is the ratio of the sums. With several
    references the first (``reference``) is the yardstick, as on the card's ``reference`` field."""

    id = "length_ratio"
    higher_is_better = True  # 1.0 is ideal; not in the composite, so direction is informational

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        return float(len(hypothesis)), float(len(ctx.entries[index].reference))
