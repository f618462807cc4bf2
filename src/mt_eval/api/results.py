"""The typed result of ``mt_eval.score``/``evaluate``: what a researcher reads, and the card behind it.

Everything is read from the sealed card (``EvalResult.from_card``), never computed beside it, so the
numbers a notebook prints are the card's numbers: ``result["bleu"]`` is ``card["scores"]["bleu"]``.
The result is frozen and its mappings are read-only; the card itself stays a plain dict for those who
pass it on (``compare``, ``publish``), and its seal (``run_card_hash``) shows any later edit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from mt_eval.errors import UserError
from mt_eval.runcard.io import write_card

__all__ = ["EntryScore", "EvalResult", "MetricScore"]

Interval = tuple[float, float]


@dataclass(frozen=True)
class MetricScore:
    """One metric over the whole run: its value, its bootstrap interval and what it means."""

    metric: str
    value: float | None
    """In the metric's own units (chrF++, BLEU, TER 0–100; rates 0–1); None where it does not apply."""
    ci: Interval | None
    """(lower, upper) percentile bootstrap interval at 1 − ``EvalResult.alpha``; None without one."""
    higher_is_better: bool | None
    """The direction the card's metric table records (None where it records none)."""
    weight: float | None = None
    """Its weight in the composite (None: not in it)."""


@dataclass(frozen=True)
class EntryScore:
    """One entry: its texts and each entry-level metric's value (corpus-level ones, BLEU and TER's
    corpus form, have none per entry)."""

    entry_id: int
    source: str
    reference: str
    hypothesis: str
    error: str | None
    values: Mapping[str, float | None]
    composite: float | None


@dataclass(frozen=True, repr=False)
class EvalResult:
    """A scored run: ``result["chrf_plus_plus"]``, ``result.metrics["bleu"].ci``, ``result.entries[0]``."""

    system: str
    """The method's name (``apertium:eng-spa``, or ``score(..., system=…)``)."""
    dataset: str
    """The dataset's id."""
    metrics: Mapping[str, MetricScore]
    composite: MetricScore
    tier: str
    """The composite's quality tier (Scoring Spec §5.1)."""
    entries: tuple[EntryScore, ...]
    errors: int
    """Entries whose method failed (scored as empty output)."""
    alpha: float | None
    """The intervals cover 1 − alpha (None: the run drew no intervals)."""
    warnings: tuple[str, ...]
    card: dict[str, Any] = field(repr=False, compare=False)
    """The full sealed run card, as ``mt-eval run`` writes it."""
    path: Path | None = None
    """Where the card was written (None: in memory only, ``write=False``)."""

    def __repr__(self) -> str:  # the headline figures: the full repr of 200 entries would drown a notebook
        shown = ", ".join(f"{m}={_num(self[m])}" for m in ("chrf_plus_plus", "bleu", "ter") if m in self.metrics)
        return (f"EvalResult(system={self.system!r}, dataset={self.dataset!r}, entries={len(self.entries)}, "
                f"{shown + ', ' if shown else ''}composite={_num(self.composite.value)}, tier={self.tier!r})")

    def __getitem__(self, metric: str) -> float | None:
        """The value of ``metric`` (or ``"composite"``); a metric not reported is a KeyError naming those that are."""
        if metric == "composite":
            return self.composite.value
        try:
            return self.metrics[metric].value
        except KeyError:
            raise KeyError(f"{metric!r} is not in this result (it has {', '.join(self.metrics)})") from None

    @property
    def run_card_hash(self) -> str:
        return str(self.card.get("run_card_hash", ""))

    def save(self, path: str | Path) -> Path:
        """Write the card (as ``mt-eval run -o`` would, without a statistics sidecar when the run kept none:
        ``compare`` and ``verify`` then rebuild the statistics from ``results[]``)."""
        if self.card.get("statistics"):
            raise UserError("this card references a statistics sidecar; copy the written card instead",
                            file=str(self.path), hint="the sidecar's name is sealed into the card")
        return write_card(self.card, Path(path))

    def summary(self) -> str:
        """One line per metric with a value: ``chrf_plus_plus  46.27  [40.03, 52.01]``."""
        lines = [f"{self.system} on {self.dataset}: composite {_num(self.composite.value)} ({self.tier})"]
        for m in self.metrics.values():
            if m.value is not None:
                ci = f"  [{_num(m.ci[0])}, {_num(m.ci[1])}]" if m.ci else ""
                lines.append(f"  {m.metric:<26} {_num(m.value)}{ci}")
        return "\n".join(lines)

    @classmethod
    def from_card(cls, card: dict[str, Any], path: Path | None = None,
                  metrics: Sequence[str] | None = None) -> EvalResult:
        """The result a sealed card holds; ``metrics`` limits the metrics reported (default: every metric
        the card scored; one it did not score, not applying to the language, is reported as None)."""
        scores = card["scores"]
        info: Mapping[str, Any] = card.get("metrics") or {}
        intervals: Mapping[str, Any] = scores.get("confidence_intervals") or {}
        shown = list(info) if metrics is None else list(metrics)  # a metric the run did not score: None

        def score(metric: str, higher: bool | None, weight: float | None) -> MetricScore:
            ci = intervals.get(metric)
            bounds = (ci["ci_lower"], ci["ci_upper"]) if isinstance(ci, Mapping) else None
            return MetricScore(metric, scores.get(metric), bounds if bounds and None not in bounds else None,
                               higher, weight)

        reported = {m: score(m, (info.get(m) or {}).get("higher_is_better"), (info.get(m) or {}).get("weight"))
                    for m in shown}
        wanted = set(shown)
        entries = tuple(
            EntryScore(r["entry_id"], r["source"], r["reference"], r["predicted"], r.get("error"),
                       MappingProxyType({k: v for k, v in (r.get("metrics") or {}).items() if k in wanted}),
                       (r.get("metrics") or {}).get("composite"))
            for r in card["results"]
        )
        return cls(
            system=str(card["method"]["name"]), dataset=str(card["dataset"]["id"]),
            metrics=MappingProxyType(reported), composite=score("composite", True, None),
            tier=str(scores.get("quality_tier")), entries=entries, errors=int(scores.get("errors") or 0),
            alpha=intervals.get("alpha") if intervals.get("n_resamples") else None,
            warnings=tuple(card.get("warnings") or ()), card=card, path=path,
        )


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"
