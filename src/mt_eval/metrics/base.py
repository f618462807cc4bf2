"""The Metric protocol: per-entry sufficient statistics plus one aggregate function.

Borrowing sacrebleu's idea and making it universal: every metric turns each (prediction, entry)
pair into a small vector of sufficient statistics; the corpus value is ``aggregate`` of the
statistics summed over entries. Per-entry values, corpus values, bootstrap CIs, paired tests,
breakdowns and the composite's CI are then generic code written once, and no statistic is ever
computed twice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from mt_eval.metrics.cache import RunCache

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
    """What a metric may look at besides the outputs: the entries and the target language card,
    and the run's shared memo (``cache``: each output's words, repeated checks), which lives and
    dies with this context."""

    entries: Sequence[Entry]
    target: LanguageCard
    source: LanguageCard
    # source term -> accepted target terms (``--terminology FILE``); None: terminology metrics are null
    terminology: Mapping[str, tuple[str, ...]] | None = None
    cache: RunCache = field(default_factory=RunCache, compare=False, repr=False)
    # False when the run was scored from references and outputs alone (``score`` without a source file):
    # metrics that read the source (code-switching, hallucination, terminology, placeholders) are null
    has_source: bool = True
    # rescoring a card: the signature it recorded per metric id, so a metric whose definition changed
    # rebuilds the card's own numbers (None: not rescoring, every metric scores its current definition)
    recorded: Mapping[str, str | None] | None = None

    def recorded_signature(self, metric_id: str) -> str | None:
        """The signature the card being rescored recorded for ``metric_id`` (None: written before the
        metric pinned its definition), or ``CURRENT`` when not rescoring or the card lacks the metric."""
        if self.recorded is None or metric_id not in self.recorded:
            return CURRENT
        return self.recorded[metric_id]


CURRENT = "current"


@runtime_checkable
class Metric(Protocol):
    """Everything the scoring code uses of a metric; nothing is probed with ``getattr``/``hasattr``.

    Built-ins inherit ``MetricBase``, which supplies the optional members; a plugin object that
    does not inherit it is checked and given the same defaults once, by the registry
    (``metrics.registry.as_metric``), so the rest of the code can rely on every member existing.
    """

    id: str  # the run-card key (Scoring Spec §9)
    scale: float  # native scale: 100 for chrF++/BLEU/TER, 1 for rates; composite divides by it
    higher_is_better: bool
    level: Level
    status: Status
    cost: float  # extraction time, in seconds per 10,000 NTREX lines; large runs balance two cores by it
    derives_from: str | None  # id of the metric whose statistics ``derive`` reads, if any
    # reads the run's shared word analyses (``structural.analysed_words``): extracted in the parent
    # process, where those analyses are kept for the run card's per-entry ``fst_analysis``
    shares_analyses: bool
    # compares the output with the entry's source text: null when a run has no sources (``score`` from
    # references and outputs alone), and listed as such on the card
    reads_source: bool
    # how far a per-entry value may move when recomputed on another machine: 0 for a bit-exact metric; a
    # model run on floating-point kernels (semantic_score, comet_score) drifts a little between CPUs
    recompute_tolerance: float

    def applies_to(self, target: LanguageCard) -> bool: ...

    def bind(self, target: LanguageCard) -> None:
        """Prepare for the target language (build a scorer) before ``statistics``/``aggregate``;
        called in the parent process too, since a worker may have extracted the statistics."""
        ...

    def prepare(self, ctx: MetricContext) -> None:
        """Prepare for this run in the scoring process (``bind`` plus what depends on the entries, such as
        sacrebleu's reference count); called before any statistics are extracted."""
        ...

    def signature(self, target: LanguageCard) -> str | None:
        """What pins the metric's exact configuration (sacrebleu signature, analyser file); None."""
        ...

    def prefetch(self, hypotheses: Sequence[str], ctx: MetricContext) -> None:
        """Heavy work done once in the scoring process before extraction may fork into workers (a model
        loaded, every text embedded): native engines such as e5 or torch must not first start in a fork."""
        ...

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        """Per-entry sufficient statistics, shape (n_entries, k), float64."""
        ...

    def derive(self, computed: Mapping[str, np.ndarray], ctx: MetricContext) -> np.ndarray | None:
        """Statistics sliced from ``computed[self.derives_from]``, or None: compute them yourself."""
        ...

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        """Value from statistics summed over entries; vectorised: (..., k) -> (...)."""
        ...

    def entry_values(self, stats: np.ndarray) -> np.ndarray | None:
        """Per-entry values (n,), or None for corpus-only metrics such as BLEU."""
        ...

    def with_entry_values(self, stats: np.ndarray, values: np.ndarray) -> np.ndarray:
        """``stats`` made to carry ``values`` (n,) as the per-entry values: what ``verify`` scores with when
        a card's recorded values are within ``recompute_tolerance`` of its own recomputation."""
        ...


class MetricBase(ABC):
    """The defaults every built-in metric shares: a plain metric of cost 1 that applies to every
    language, needs no preparation, has no signature, derives nothing and reads no shared analyses.
    Subclasses implement ``statistics``, ``aggregate`` and ``entry_values``."""

    id = ""
    scale = 1.0
    higher_is_better = True
    level = Level.BOTH
    status = Status.IMPLEMENTED
    cost = 1.0
    derives_from: str | None = None
    shares_analyses = False
    reads_source = False
    recompute_tolerance = 0.0

    def applies_to(self, target: LanguageCard) -> bool:
        return True

    def bind(self, target: LanguageCard) -> None:  # noqa: B027 - a no-op default, not abstract
        """Nothing to prepare by default."""

    def prepare(self, ctx: MetricContext) -> None:
        """``bind`` to the run's target language by default."""
        self.bind(ctx.target)

    def signature(self, target: LanguageCard) -> str | None:
        return None

    def prefetch(self, hypotheses: Sequence[str], ctx: MetricContext) -> None:  # noqa: B027 - a no-op default
        """Nothing to load ahead by default."""

    def derive(self, computed: Mapping[str, np.ndarray], ctx: MetricContext) -> np.ndarray | None:
        return None

    @abstractmethod
    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        """Per-entry sufficient statistics, shape (n_entries, k), float64."""

    @abstractmethod
    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        """Value from statistics summed over entries; vectorised: (..., k) -> (...)."""

    @abstractmethod
    def entry_values(self, stats: np.ndarray) -> np.ndarray | None:
        """Per-entry values (n,), or None for corpus-only metrics."""

    def with_entry_values(self, stats: np.ndarray, values: np.ndarray) -> np.ndarray:
        """A bit-exact metric (tolerance 0) has nothing to adopt: its statistics as they are."""
        return stats
