"""The Metric protocol: per-entry sufficient statistics plus one aggregate function.

Borrowing sacrebleu's idea and making it universal: every metric turns each (prediction, entry)
pair into a small vector of sufficient statistics; the corpus value is ``aggregate`` of the
statistics summed over entries. Per-entry values, corpus values, bootstrap CIs, paired tests,
breakdowns and the composite's CI are then generic code written once, and no statistic is ever
computed twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from mt_eval.corpus.models import Entry
    from mt_eval.languages.card import LanguageCard


class Level(StrEnum):
    ENTRY = "entry"
    CORPUS = "corpus"
    BOTH = "both"


class Status(StrEnum):
    """Scoring Spec §3."""

    IMPLEMENTED = "implemented"
    PARTIAL = "partial"
    PLANNED = "planned"
    PROPOSED = "proposed"


@dataclass(frozen=True)
class MetricContext:
    """What a metric may look at besides the outputs: the entries and the target language card."""

    entries: Sequence[Entry]
    target: LanguageCard
    source: LanguageCard
    # source term -> accepted target terms (``--terminology FILE``); None: terminology metrics are null
    terminology: Mapping[str, tuple[str, ...]] | None = None


@runtime_checkable
class Metric(Protocol):
    id: str  # the run-card key (Scoring Spec §9)
    scale: float  # native scale: 100 for chrF++/BLEU/TER, 1 for rates; composite divides by it
    higher_is_better: bool
    level: Level
    status: Status

    def applies_to(self, target: LanguageCard) -> bool: ...

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        """Per-entry sufficient statistics, shape (n_entries, k), float64."""
        ...

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        """Value from statistics summed over entries; vectorised: (..., k) -> (...)."""
        ...

    def entry_values(self, stats: np.ndarray) -> np.ndarray | None:
        """Per-entry values (n,), or None for corpus-only metrics such as BLEU."""
        ...
