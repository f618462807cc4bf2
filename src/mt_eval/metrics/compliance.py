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
from dataclasses import dataclass

import numpy as np

from mt_eval.languages.card import LanguageCard
from mt_eval.languages.words import word_scripts, words
from mt_eval.metrics.base import Level, MetricContext
from mt_eval.metrics.cache import RunCache
from mt_eval.metrics.hooks import ALL_QUOTES, PLACEHOLDER, apply_hooks
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


_QUOTES = tuple(q for q in ALL_QUOTES if q != "'")  # the apostrophe is never judged


def check(output: str, source: str, card: LanguageCard, cache: RunCache | None = None) -> Compliance:
    """The three compliance components of one output; ``cache`` (the run's) memoises its words."""
    wanted = Counter(PLACEHOLDER.findall(source))
    have = Counter(PLACEHOLDER.findall(output))
    kept = sum(min(n, have[ph]) for ph, n in wanted.items())
    total = sum(wanted.values())
    counts = [(q, output.count(q)) for q in _QUOTES if q in output]
    n_quotes = sum(n for _, n in counts)
    bad_quotes = sum(n for q, n in counts if q not in card.quotes)
    casing, latin_words = 1.0, 0
    if card.caseless and "Latn" not in card.scripts:  # elsewhere casing is 1 - 0/n = 1: no words needed
        text = PLACEHOLDER.sub(" ", output)
        ws = cache.words(text, card) if cache is not None else words(text, card)
        latin_words = sum(1 for w in ws if "Latn" in word_scripts(w.text))
        casing = 1 - latin_words / len(ws) if ws else 1.0
    return Compliance(
        placeholders=kept / total if total else 1.0,
        quotes=1 - bad_quotes / n_quotes if n_quotes else 1.0,
        casing=casing,
        violations=(total - kept) + bad_quotes + latin_words,
    )


def _checked(output: str, source: str, ctx: MetricContext) -> Compliance:
    """``check`` memoised per run: the raw output is checked for two metrics, the repaired for two."""
    memo: dict[tuple[str, str], Compliance] = ctx.cache.table(f"compliance:{ctx.target.code}")
    found = memo.get((output, source))
    if found is None:
        found = memo[output, source] = check(output, source, ctx.target, ctx.cache)
    return found


def _repaired(hypothesis: str, source: str, ctx: MetricContext) -> str:
    """The output after the post-translation hooks, memoised per run."""
    memo: dict[tuple[str, str], str] = ctx.cache.table(f"repaired:{ctx.target.code}")
    found = memo.get((hypothesis, source))
    if found is None:
        found = memo[hypothesis, source] = apply_hooks(hypothesis, source, ctx.target)
    return found


class ComplianceIndex(RateMetric):
    """Mean per-entry compliance index of the raw output: statistics (index, 1)."""

    id = "compliance_index"
    reads_source = True  # placeholder integrity counts the source's placeholders

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        return _checked(hypothesis, ctx.entries[index].source, ctx).index, 1.0


class ComplianceIndexRepaired(RateMetric):
    """The same index after the post-translation hooks (``mt_eval.metrics.hooks``)."""

    id = "compliance_index_repaired"
    reads_source = True  # placeholder integrity counts the source's placeholders

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        source = ctx.entries[index].source
        return _checked(_repaired(hypothesis, source, ctx), source, ctx).index, 1.0


class RepairEffectiveness(RateMetric):
    """Violations the hooks repaired / raw violations; corpus-level (per entry it is often 0/0)."""

    id = "repair_effectiveness"
    reads_source = True  # placeholder integrity counts the source's placeholders
    level = Level.CORPUS

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        source = ctx.entries[index].source
        raw = _checked(hypothesis, source, ctx).violations
        fixed = _checked(_repaired(hypothesis, source, ctx), source, ctx).violations
        return float(max(0, raw - fixed)), float(raw)

    def entry_values(self, stats: np.ndarray) -> np.ndarray | None:
        return None
