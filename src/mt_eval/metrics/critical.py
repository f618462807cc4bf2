"""Critical-error rates (issue 22 item 2): the share of outputs with a number, a name, a negation or a
stretch of content wrong, and one rate per check.

``critical_error_rate`` extracts every check once per entry (``metrics.critical_checks``) and keeps them
all in its statistics: columns (any flag, 1) and then (flagged, checked) per check in ``FLAGS`` order.
Its value is the share of entries with any flag. Each check's own rate (``number_error_rate`` …) derives
its (flagged, checked) columns from those statistics, so nothing is computed twice, and a check that
does not apply to the pair (no cue list, different scripts) has no checked entry: null on the card,
never a guessed 0. All six are ratio metrics, so CIs, paired tests and breakdowns follow from the
statistics like every other rate, and ``verify`` recomputes them from ``results[]``.

The offending tokens are not statistics (a matrix holds numbers): ``worst_entries`` recomputes them from
a card's ``results[]`` for ``show``, ``report`` and the web run page, for the entries the sealed
per-entry values flag.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mt_eval.languages.card import LanguageCard, language_card
from mt_eval.metrics.base import CURRENT, MetricContext
from mt_eval.metrics.critical_checks import (
    ADD_RATIO,
    FLAGS,
    MIN_CHARS_APART,
    OMIT_RATIO,
    SENTENCE_ADD_RATIO,
    SENTENCE_OMIT_RATIO,
    TYPO_MIN_CHARS,
    VERSION,
    Findings,
    Pair,
    check_entry,
)
from mt_eval.metrics.rates import RatioMetric

PARENT = "critical_error_rate"
# each check's own rate: metric id -> check name (the column pair it reads from the parent's statistics)
FLAG_METRICS: dict[str, str] = {
    "number_error_rate": "numbers",
    "entity_error_rate": "entities",
    "negation_error_rate": "negation",
    "addition_rate": "addition",
    "omission_rate": "omission",
}
WIDTH = 2 + 2 * len(FLAGS)


def _columns(check: str) -> slice:
    start = 2 + 2 * FLAGS.index(check)
    return slice(start, start + 2)


def _row(found: Findings) -> list[float]:
    row = [float(found.any), 1.0]
    for check in FLAGS:
        row += [float(found.flagged(check)), float(found.checked(check))]
    return row


def typo_tolerant(recorded: str | None) -> bool:
    """Whether a card's recorded signature (``CURRENT`` when not rescoring) asks for version 2's typo-tolerant
    matching: a card sealed under version 1 is rescored with exact matching, so it still verifies."""
    return recorded == CURRENT or (recorded is not None and not recorded.startswith("critical:1|"))


def critical_statistics(hypotheses: Sequence[str], ctx: MetricContext, tolerant: bool = True) -> np.ndarray:
    """(n, WIDTH): the parent's statistics, every check of every entry once (memoised on the run's cache:
    the parent and a check's rate scored without it share one pass)."""
    memo = ctx.cache.table(PARENT)
    key = (tolerant, *hypotheses)
    found = memo.get(key)
    if found is None:
        pair = Pair(ctx.target, ctx.source, ctx.has_source, tolerant)
        rows = [_row(check_entry(e.source, h, e.reference, pair, ctx.cache.words))
                for e, h in zip(ctx.entries, hypotheses, strict=True)]
        found = memo[key] = np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), WIDTH)
    return np.array(found, copy=True)


def _card_digest(target: LanguageCard) -> str:
    """The target card's cue lists and number words, which decide the flags: pinned in the signature."""
    text = repr((target.number_words, target.negation_cues, target.negation_prefixes, target.negation_suffixes))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def critical_signature(target: LanguageCard, tolerant: bool) -> str:
    """Pins the definition; version 1 (exact matching) keeps its own signature, as its cards recorded it."""
    version = f"{VERSION}|typo:dl1>={TYPO_MIN_CHARS}" if tolerant else "1"
    return (f"critical:{version}|add:{ADD_RATIO}|omit:{OMIT_RATIO}|sent:{SENTENCE_ADD_RATIO}/"
            f"{SENTENCE_OMIT_RATIO}|apart:{MIN_CHARS_APART}|card:{target.code}:{_card_digest(target)}")


class CriticalErrorRate(RatioMetric):
    """Share of entries with any critical-error flag (lower is better)."""

    id = PARENT
    higher_is_better = False
    cost = 0.8  # seconds per 10k NTREX lines: 0.21 of chrF++ (3.6) measured beside it on NTREX eng-spa (§86)
    tolerant = True  # set by ``prepare``: False rescoring a card sealed under version 1

    def prepare(self, ctx: MetricContext) -> None:
        super().prepare(ctx)
        self.tolerant = typo_tolerant(ctx.recorded_signature(PARENT))

    def signature(self, target: LanguageCard) -> str | None:
        return critical_signature(target, self.tolerant)

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        return critical_statistics(hypotheses, ctx, self.tolerant)


class FlagRate(RatioMetric):
    """One check's rate: entries it flags over entries it could check."""

    check = ""
    higher_is_better = False
    cost = 0.01  # derived: a slice of the parent's statistics
    derives_from = PARENT
    tolerant = True  # as the parent's

    def prepare(self, ctx: MetricContext) -> None:
        super().prepare(ctx)
        self.tolerant = typo_tolerant(ctx.recorded_signature(PARENT))

    def signature(self, target: LanguageCard) -> str | None:
        return critical_signature(target, self.tolerant)

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        return critical_statistics(hypotheses, ctx, self.tolerant)[:, _columns(self.check)]

    def derive(self, computed: Mapping[str, np.ndarray], ctx: MetricContext) -> np.ndarray | None:
        return np.array(computed[PARENT][:, _columns(self.check)], copy=True)


class NumberErrorRate(FlagRate):
    id, check = "number_error_rate", "numbers"


class EntityErrorRate(FlagRate):
    id, check = "entity_error_rate", "entities"
    reads_source = True  # names are the source's and the reference's shared tokens: null without sources


class NegationErrorRate(FlagRate):
    id, check = "negation_error_rate", "negation"


class AdditionRate(FlagRate):
    id, check = "addition_rate", "addition"


class OmissionRate(FlagRate):
    id, check = "omission_rate", "omission"


METRICS = (CriticalErrorRate, NumberErrorRate, EntityErrorRate, NegationErrorRate, AdditionRate, OmissionRate)


@dataclass(frozen=True)
class FlaggedEntry:
    """One flagged entry as a report shows it: its id, the flags raised and their offending tokens."""

    entry_id: str
    flags: dict[str, list[str]]
    predicted: str

    @property
    def label(self) -> str:
        return "; ".join(f"{flag}: {' '.join(tokens)}" for flag, tokens in self.flags.items())


def worst_entries(card: Mapping[str, Any], limit: int = 10,
                  keep: Callable[[Mapping[str, Any]], bool] | None = None) -> tuple[int, list[FlaggedEntry]]:
    """(flagged entries, the ``limit`` with most flags first) from a card's ``results[]``: the entries its
    sealed per-entry ``critical_error_rate`` flags, their tokens recomputed with the card's languages.
    ``keep``: which results may be counted and shown (the web: none of the secret segments)."""
    results = [r for r in card.get("results") or [] if isinstance(r, Mapping) and (keep is None or keep(r))]
    flagged = [r for r in results if (r.get("metrics") or {}).get(PARENT)]
    if not flagged:
        return 0, []
    dataset = card.get("dataset") or {}
    target = language_card(str(dataset.get("target_language", "und")))
    source = language_card(str(dataset.get("source_language", "und")))
    recorded = ((card.get("metrics") or {}).get(PARENT) or {}).get("signature")
    pair = Pair(target, source, any(r.get("source") for r in results), typo_tolerant(recorded))
    rows = []
    for r in flagged:
        output = "" if r.get("error") else str(r.get("predicted") or "")
        found = check_entry(str(r.get("source") or ""), output, str(r.get("reference") or ""), pair)
        rows.append(FlaggedEntry(str(r.get("entry_id")), found.offending(), output))
    rows.sort(key=lambda e: -len(e.flags))  # stable: ties keep the corpus order
    return len(flagged), rows[:limit]


def critical_summary(card: Mapping[str, Any]) -> str | None:
    """One line: each rate with its interval, a check the pair cannot run said as 'not checked'; None when the
    card predates the critical-error metrics."""
    if PARENT not in (card.get("metrics") or {}):
        return None
    scores = card.get("scores") or {}
    cis = scores.get("confidence_intervals") or {}
    parts = []
    for key in (PARENT, *FLAG_METRICS):
        value, ci = scores.get(key), cis.get(key)
        name = key.removesuffix("_rate").replace("_", " ")
        if not isinstance(value, int | float):
            parts.append(f"{name}: not checked{_why_not(key, card)}")
        else:
            interval = f" [{ci['ci_lower']:.3f}, {ci['ci_upper']:.3f}]" if isinstance(ci, Mapping) else ""
            parts.append(f"{name} {value:.3f}{interval}")
    return "; ".join(parts)


def _why_not(key: str, card: Mapping[str, Any]) -> str:
    """Why a check has no value on the card: the reason a report gives instead of a number."""
    dataset = card.get("dataset") or {}
    if key == "negation_error_rate":
        return f" (no negation cue list on the {dataset.get('target_language')} language card)"
    if key == "entity_error_rate":
        return " (no sources, or source and target do not share a cased script: names are not transliterated)"
    return ""


def critical_view(card: Mapping[str, Any], limit: int = 20,
                  keep: Callable[[Mapping[str, Any]], bool] | None = None) -> dict[str, Any] | None:
    """What the web run page and its API show: the summary line, how many of the kept entries are flagged, and
    the worst of them (id, flags with tokens, output); None for a card scored before the metrics."""
    summary = critical_summary(card)
    if summary is None:
        return None
    count, worst = worst_entries(card, limit, keep)
    shown = sum(1 for r in card.get("results") or [] if isinstance(r, Mapping) and (keep is None or keep(r)))
    return {"summary": summary, "flagged": count, "of": shown,
            "worst": [{"entry_id": w.entry_id, "flags": w.flags, "predicted": w.predicted} for w in worst]}
