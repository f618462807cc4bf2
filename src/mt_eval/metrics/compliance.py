"""Compliance metrics (Scoring Spec §2.5): quality gates, not in the composite.

``compliance_index`` = 0.6 · placeholder integrity + 0.2 · quote compliance + 0.2 · casing
compliance, each in [0, 1] and 1 when there is nothing to check. It is computed on the raw output
and (``compliance_index_repaired``) on the output after the post-translation hooks;
``repair_effectiveness`` is violations repaired / raw violations (corpus rate, null when the raw
output had none). Violations: each missing placeholder, each quote character the card does not
allow, each Latin-script word in a caseless non-Latin target.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mt_eval.languages.card import LanguageCard
from mt_eval.languages.words import word_scripts, words
from mt_eval.metrics.base import Level, MetricContext
from mt_eval.metrics.hooks import ALL_QUOTES, PLACEHOLDER, Hook, apply_hooks, available_hooks
from mt_eval.metrics.rates import RateMetric


@dataclass(frozen=True)
class Compliance:
    placeholders: float
    quotes: float
    casing: float
    violations: int

    @property
    def index(self) -> float:
        return 0.6 * self.placeholders + 0.2 * self.quotes + 0.2 * self.casing


def check(output: str, source: str, card: LanguageCard) -> Compliance:
    wanted = Counter(PLACEHOLDER.findall(source))
    have = Counter(PLACEHOLDER.findall(output))
    kept = sum(min(n, have[ph]) for ph, n in wanted.items())
    total = sum(wanted.values())
    quote_chars = [ch for ch in output if ch in ALL_QUOTES and ch != "'"]
    bad_quotes = sum(1 for ch in quote_chars if ch not in card.quotes)
    latin_words = 0
    ws = words(PLACEHOLDER.sub(" ", output), card)
    if card.caseless and "Latn" not in card.scripts:
        latin_words = sum(1 for w in ws if "Latn" in word_scripts(w.text))
    return Compliance(
        placeholders=kept / total if total else 1.0,
        quotes=1 - bad_quotes / len(quote_chars) if quote_chars else 1.0,
        casing=1 - latin_words / len(ws) if ws else 1.0,
        violations=(total - kept) + bad_quotes + latin_words,
    )


class ComplianceIndex(RateMetric):
    """Mean per-entry compliance index of the raw output: statistics (index, 1)."""

    id = "compliance_index"

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        return check(hypothesis, ctx.entries[index].source, ctx.target).index, 1.0


class _Repaired(RateMetric):
    """Looks the hooks up once per run: entry-point discovery reads every installed dist-info."""

    _hooks: dict[str, Hook] | None = None

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        self._hooks = available_hooks()
        try:
            return super().statistics(hypotheses, ctx)
        finally:
            self._hooks = None

    def repaired(self, hypothesis: str, source: str, ctx: MetricContext) -> str:
        return apply_hooks(hypothesis, source, ctx.target, self._hooks)


class ComplianceIndexRepaired(_Repaired):
    """The same index after the post-translation hooks (``mt_eval.metrics.hooks``)."""

    id = "compliance_index_repaired"

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        source = ctx.entries[index].source
        return check(self.repaired(hypothesis, source, ctx), source, ctx.target).index, 1.0


class RepairEffectiveness(_Repaired):
    """Violations the hooks repaired / raw violations; corpus-level (per entry it is often 0/0)."""

    id = "repair_effectiveness"
    level = Level.CORPUS

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        source = ctx.entries[index].source
        raw = check(hypothesis, source, ctx.target).violations
        fixed = check(self.repaired(hypothesis, source, ctx), source, ctx.target).violations
        return float(max(0, raw - fixed)), float(raw)

    def entry_values(self, stats: np.ndarray) -> np.ndarray | None:
        return None
