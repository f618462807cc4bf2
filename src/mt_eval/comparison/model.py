"""What a comparison returns: typed, frozen, and serialisable to plain JSON.

The fields are flat (a paired result carries its own ``metric``, ``system`` and ``baseline``) so
that ``mt-eval compare --json`` can be read by a script without knowing this module, and every
number needed to reproduce a result (method, resamples, alpha, seed, correction) travels with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from mt_eval.stats import ConfidenceInterval, PairedResult, is_significant

COMPOSITE = "composite"


@dataclass(frozen=True)
class MetricSpec:
    """A compared metric: its id and how to read a difference in it.

    ``higher_is_better`` is ``None`` for a metric with no direction (``length_ratio``: 1.0 is
    ideal), so no report ever calls a longer output "better".
    """

    id: str
    higher_is_better: bool | None
    scale: float


@dataclass(frozen=True)
class SystemScores:
    """One system: its name, where it came from, and each metric's score with its bootstrap CI."""

    name: str
    source: str
    run_id: str
    scores: Mapping[str, ConfidenceInterval]


@dataclass(frozen=True)
class PairedComparison:
    """``system`` against ``baseline`` on one metric (or the composite).

    The first block is :class:`mt_eval.stats.PairedResult` field for field (``score_a`` is the
    baseline, ``delta = score_b - score_a`` in the metric's native units, ``p_value`` the raw
    p-value, ``significant_uncorrected`` its §8.2 verdict). ``p_adjusted`` is the p-value after the
    multiple-comparison correction across all systems compared to the baseline on this metric, and
    ``significant`` (the verdict to report) requires ``p_adjusted < alpha``, an interval of the
    difference that excludes zero and a non-zero difference (§8.2 with the corrected p-value).
    """

    system: str
    baseline: str
    metric: str
    score_a: float
    score_b: float
    delta: float
    ci_lower: float
    ci_upper: float
    p_value: float
    significant_uncorrected: bool
    method: str
    n_resamples: int
    alpha: float
    seed: int
    p_adjusted: float
    correction: str
    significant: bool
    higher_is_better: bool | None

    @classmethod
    def from_result(
        cls, result: PairedResult, *, system: str, baseline: str, p_adjusted: float,
        correction: str, higher_is_better: bool | None,
    ) -> PairedComparison:
        # the same §8.2 rule as the uncorrected test, applied to the corrected p-value
        significant = is_significant(result.delta, p_adjusted, result.ci_lower, result.ci_upper, result.alpha)
        return cls(
            system=system, baseline=baseline, metric=result.metric, score_a=result.score_a,
            score_b=result.score_b, delta=result.delta, ci_lower=result.ci_lower, ci_upper=result.ci_upper,
            p_value=result.p_value, significant_uncorrected=result.significant, method=result.method,
            n_resamples=result.n_resamples, alpha=result.alpha, seed=result.seed, p_adjusted=p_adjusted,
            correction=correction, significant=significant, higher_is_better=higher_is_better,
        )

    @property
    def verdict(self) -> str:
        """``better``/``worse`` (direction-aware), ``higher``/``lower`` for an undirected metric,
        or ``same``; significance is a separate question (see ``significant``)."""
        if self.delta == 0 or math.isnan(self.delta):
            return "same"
        if self.higher_is_better is None:
            return "higher" if self.delta > 0 else "lower"
        return "better" if (self.delta > 0) == self.higher_is_better else "worse"


@dataclass(frozen=True)
class ValueChange:
    """A number the comparison shows for ``system`` that is not the one sealed on its card: ``old`` (the
    card's ``scores[metric]``) became ``new`` for ``reason`` (e.g. a metric the composite leaves out because
    another system has no value for it). ``compare`` lists every one; ``--strict`` refuses to show them."""

    system: str
    metric: str
    old: float | None
    new: float
    reason: str

    def line(self) -> str:
        old = "null" if self.old is None else f"{self.old:.4f}"
        return f"{self.system}: {self.metric} {old} → {self.new:.4f} ({self.reason})"


@dataclass(frozen=True)
class Comparison:
    """Every system's scores and every candidate-vs-baseline test; ``systems[0]`` is the baseline.

    ``n_resamples`` bootstrap resamples give every interval (and the bootstrap p-values);
    ``n_trials`` is the number of approximate-randomisation trials (0 when that test was not run).
    """

    baseline: str
    systems: tuple[SystemScores, ...]
    metrics: tuple[MetricSpec, ...]
    paired: tuple[PairedComparison, ...]
    method: str
    correction: str
    n_resamples: int
    n_trials: int
    alpha: float
    seed: int
    profile: str
    dataset: Mapping[str, Any] = field(default_factory=dict)
    # each shown value that differs from its card's sealed one, with the reason (never silent)
    changes: tuple[ValueChange, ...] = ()

    def metric(self, metric_id: str) -> MetricSpec:
        for spec in self.metrics:
            if spec.id == metric_id:
                return spec
        raise KeyError(metric_id)

    def result(self, system: str, metric: str) -> PairedComparison:
        """The paired result of ``system`` against the baseline on ``metric``."""
        for row in self.paired:
            if row.system == system and row.metric == metric:
                return row
        raise KeyError((system, metric))

    def for_metric(self, metric: str) -> list[PairedComparison]:
        return [row for row in self.paired if row.metric == metric]

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON types; NaN (an undefined value) becomes ``null`` so the output is valid JSON."""
        return _clean(asdict(self))


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value
