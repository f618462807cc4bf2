"""The QA metrics under the harness's metric protocol (``metrics/base.py``), as ratio metrics.

Every QA number the spec reports is a mean over samples, which is a ratio metric whose statistics
are ``(value, 1)`` per sample: the corpus value ``Σvalue / Σ1`` is the mean, ``entry_values`` are the
per-sample values, and the bootstrap CIs and paired tests are ``mt_eval.stats``'s, exactly as for an
MT metric. A sample without a value (the judge's reply was unusable: NaN) gets ``(0, 0)``, so it
drops out of the mean and of every resample alike — ``RatioMetric``'s aggregate already returns NaN
for a resample that drew no valued sample, so QA needs no NaN handling of its own.

EM, F1, RLC and RLC_OK are functions of the answer text and are computed through ``statistics``.
An MT metric reads its references from ``MetricContext``; a QA sample has several gold answers and
its own language instead, so QA metrics are bound to their :class:`QASamples` when constructed (as
``bind`` prepares an MT metric for its target) and the context is optional. Cost, CNBE and the
semantic score are not functions of the text (they come from the predictions file, the baseline
and the judge): :class:`Recorded` carries those values through the same protocol.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mt_eval.errors import UserError
from mt_eval.languages import langid
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.rates import RatioMetric
from mt_eval.qa.data import GoldItem
from mt_eval.qa.metrics import DEFAULT_RLC_THRESHOLD, best_exact_match, best_f1, compute_rlc

#: metrics.json / card keys in the spec's order; ``cnbe`` and ``semantic_score`` only when computed.
METRIC_KEYS = ("em", "f1", "rlc", "rlc_ok", "cost", "cnbe", "semantic_score")

#: Metrics that get bootstrap CIs and paired tests (plus semantic_score when judged).
TESTED_METRICS = ("em", "f1", "rlc")


def sample_statistics(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Ratio statistics of per-sample values: ``(value, 1)``, or ``(0, 0)`` where the value is NaN."""
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    ok = ~np.isnan(arr)
    return np.column_stack([np.where(ok, arr, 0.0), ok.astype(np.float64)])


@dataclass(frozen=True)
class QASamples:
    """What the text metrics score answers against: each sample's gold answers and language."""

    items: tuple[GoldItem, ...]
    langs: tuple[str, ...]
    rlc_threshold: float = DEFAULT_RLC_THRESHOLD
    # "script" (spec §3) or "lingua": an answer of 8 words or more that lingua assigns to another language of
    # the same script scores 0 (docs/language-id.md)
    langid: str = langid.SCRIPT

    def rlc(self, answer: str, index: int) -> float:
        lang = self.langs[index]
        value = compute_rlc(answer, lang)
        if self.langid == langid.SCRIPT:
            return value
        if self.langid != langid.LINGUA:
            raise UserError(f"language identification {self.langid!r}: choose {', '.join(langid.BACKENDS)}")
        langid.require()
        return value * (1.0 - langid.other_language_share(answer, lang))


class QAMetric(RatioMetric):
    """A per-sample QA value under the metric protocol; subclasses say how one answer scores."""

    def __init__(self, samples: QASamples) -> None:
        self.samples = samples

    @abstractmethod
    def value(self, answer: str, index: int) -> float:
        """The value of ``answer`` as the reply to sample ``index``."""

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext | None = None) -> np.ndarray:
        """``(value, 1)`` per answer; ``ctx`` is unused because the samples were bound at construction."""
        if len(hypotheses) != len(self.samples.items):
            raise ValueError(f"{self.id}: {len(hypotheses)} answers for {len(self.samples.items)} samples")
        return sample_statistics([self.value(h, i) for i, h in enumerate(hypotheses)])


class ExactMatch(QAMetric):
    """Spec §1 against the best of the gold answers."""

    id = "em"

    def value(self, answer: str, index: int) -> float:
        return best_exact_match(answer, self.samples.items[index].answers)


class F1(QAMetric):
    """Spec §2, tokenised by the sample's language, against the best of the gold answers."""

    id = "f1"

    def value(self, answer: str, index: int) -> float:
        return best_f1(answer, self.samples.items[index].answers, self.samples.langs[index])


class RLC(QAMetric):
    """Spec §3: the share of the answer's letters in the sample language's script(s)."""

    id = "rlc"

    def value(self, answer: str, index: int) -> float:
        return self.samples.rlc(answer, index)


class RLCOk(QAMetric):
    """Spec §4: 1 when RLC reaches the threshold."""

    id = "rlc_ok"

    def value(self, answer: str, index: int) -> float:
        return 1.0 if self.samples.rlc(answer, index) >= self.samples.rlc_threshold else 0.0


class Recorded(RatioMetric):
    """Per-sample values measured outside the answer text (cost, CNBE, the judge's score)."""

    def __init__(self, metric_id: str, values: Sequence[float] | np.ndarray, *, higher_is_better: bool = True) -> None:
        self.id = metric_id
        self.higher_is_better = higher_is_better
        self.values = np.asarray(values, dtype=np.float64)

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext | None = None) -> np.ndarray:
        """The recorded values of the samples ``hypotheses`` answered (one per sample)."""
        if len(hypotheses) != len(self.values):
            raise ValueError(f"{self.id}: {len(hypotheses)} answers for {len(self.values)} recorded values")
        return sample_statistics(self.values)


TEXT_METRICS: tuple[type[QAMetric], ...] = (ExactMatch, F1, RLC, RLCOk)
