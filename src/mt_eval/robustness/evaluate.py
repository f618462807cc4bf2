"""Sensitivity and stability of every metric and the composite on one run card (AutoMetrics §3.2).

The card's outputs (``system="outputs"``, the default) or its references (``"references"``: a perfect
system) are perturbed entry by entry (``robustness.perturb``) and every variant is scored with the one
scoring pipeline, exactly as ``score`` would. Per entry, each metric's value is normalised to 0–1 with
higher better (value / scale, inverted for TER-like metrics, clipped), and then:

* sensitivity = share of the entries a degradation changed whose score *drops* (s_worse < s_orig);
* stability = 1 − mean |s_orig − s_same| over the entries an edit changed.

The composite is computed per entry from the per-entry values under the card's profile and composite
rule. Metrics without per-entry values (BLEU) are measured on the sentence level of their own corpus
formula (the aggregate of one entry's statistics). Why the outputs by default: the paper perturbs the
outputs being evaluated, and a metric's response to damage depends on how good the text already is; the
references variant gives every metric its best case (a perfect output can only drop).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mt_eval.analyzers.registry import analyser_for
from mt_eval.corpus.models import Dataset
from mt_eval.errors import UserError
from mt_eval.languages.card import LanguageCard, language_card
from mt_eval.methods.base import Translation
from mt_eval.metrics.base import Metric
from mt_eval.metrics.opt_in import OptInMetric
from mt_eval.metrics.semantic import SemanticScore
from mt_eval.robustness.perturb import DEGRADATIONS, EDITS, PerturbContext, Rule
from mt_eval.runcard.io import load_card
from mt_eval.runcard.rescore import dataset_from_card, semantic_config, target_card
from mt_eval.scoring.calibrated import card_weights
from mt_eval.scoring.composite import composite, composite_rule
from mt_eval.scoring.pipeline import score_outputs
from mt_eval.scoring.profiles import Weights, weights_of
from mt_eval.scoring.scores import MetricTable

SYSTEMS = ("outputs", "references")
COMPOSITE = "composite"
TOLERANCE = 1e-9  # a drop smaller than this is rounding, not a drop


@dataclass(frozen=True)
class Cell:
    value: float | None  # sensitivity or stability; None: no entry to measure it on
    n: int  # the entries it was measured on


@dataclass
class RobustnessReport:
    card: str
    system: str
    entries: int
    metrics: list[str]
    sensitivity: dict[str, dict[str, Cell]]  # metric -> degradation -> cell
    stability: dict[str, dict[str, Cell]]  # metric -> edit -> cell
    skipped: dict[str, str] = field(default_factory=dict)  # perturbation -> why it was not run

    @property
    def degradations(self) -> list[str]:
        return [d for d in DEGRADATIONS if d not in self.skipped]

    @property
    def edits(self) -> list[str]:
        return [e for e in EDITS if e not in self.skipped]

    @staticmethod
    def pooled(cells: Mapping[str, Cell]) -> Cell:
        """Over every (entry, perturbation) pair: the n-weighted mean of the cells."""
        measured = [c for c in cells.values() if c.value is not None and c.n]
        n = sum(c.n for c in measured)
        return Cell(sum(c.value * c.n for c in measured if c.value is not None) / n if n else None, n)

    def to_dict(self) -> dict[str, Any]:
        def cells(block: Mapping[str, Mapping[str, Cell]]) -> dict[str, Any]:
            return {m: {p: {"value": c.value, "n": c.n} for p, c in row.items()} for m, row in block.items()}

        return {"card": self.card, "system": self.system, "entries": self.entries, "metrics": self.metrics,
                "degradations": self.degradations, "edits": self.edits, "skipped": self.skipped,
                "sensitivity": cells(self.sensitivity), "stability": cells(self.stability),
                "overall": {m: {"sensitivity": self.pooled(self.sensitivity[m]).value,
                                "stability": self.pooled(self.stability[m]).value} for m in self.metrics}}


def normalised(metric: Metric, stats: np.ndarray) -> np.ndarray:
    """Per-entry values on 0–1, higher better (NaN where the metric has no value for an entry)."""
    raw = per_entry(metric, stats)
    value = raw / metric.scale
    return np.clip(value if metric.higher_is_better else 1.0 - value, 0.0, 1.0)


def per_entry(metric: Metric, stats: np.ndarray) -> np.ndarray:
    values = metric.entry_values(stats)
    return np.asarray(metric.aggregate(stats) if values is None else values, dtype=np.float64)


def entry_scores(table: MetricTable, profile: Weights, rule: str) -> dict[str, np.ndarray]:
    """Every metric's normalised per-entry values, and the per-entry composite (already 0–1)."""
    out = {m.id: normalised(m, table.stats[m.id]) for m in table.metrics.values()}
    raw = {m.id: per_entry(m, table.stats[m.id]) for m in table.metrics.values()}
    # entry by entry: an entry re-normalises over the metrics it has a value for, as a card's composite does
    rows = [composite({k: float(v[i]) for k, v in raw.items() if np.isfinite(v[i])}, profile, rule)
            for i in range(len(table.errors))]
    out[COMPOSITE] = np.asarray([np.nan if v is None else float(v) for v in rows])
    return out


def _cell(orig: np.ndarray, changed: np.ndarray, applied: np.ndarray, degradation: bool) -> Cell:
    rows = applied & np.isfinite(orig) & np.isfinite(changed)
    n = int(rows.sum())
    if not n:
        return Cell(None, 0)
    if degradation:
        return Cell(float(np.mean(changed[rows] < orig[rows] - TOLERANCE)), n)
    return Cell(float(1.0 - np.mean(np.abs(orig[rows] - changed[rows]))), n)


class Scorer:
    """Scores one set of outputs for the card's dataset with the same pipeline as ``score``."""

    def __init__(self, card: Mapping[str, Any], dataset: Dataset, only: list[str] | None,
                 extra: Sequence[OptInMetric]) -> None:
        self.card, self.dataset, self.only, self.extra = card, dataset, only, extra
        self.target: LanguageCard = target_card(card)
        self.source = language_card(card["dataset"]["source_language"])
        # the card's own weights (a calibrated card's from its block), never a key looked up in a global
        self.profile = card_weights(card) if "profile" in card else weights_of(self.target.profile)
        self.rule = composite_rule(card)

    def __call__(self, outputs: Sequence[str | None]) -> dict[str, np.ndarray]:
        translations = [Translation(e.id, "" if o is None else o, None if o is not None else "error")
                        for e, o in zip(self.dataset.entries, outputs, strict=True)]
        config = semantic_config(self.card)
        opt_in = [*([SemanticScore(config)] if config else []), *self.extra]
        table, _ = score_outputs(self.dataset, translations, self.target, self.source, only=self.only, opt_in=opt_in)
        return entry_scores(table, self.profile, self.rule)


def _subset(dataset: Dataset, limit: int | None) -> Dataset:
    if limit is None:
        return dataset
    if limit < 1:
        raise UserError(f"--limit must be at least 1, not {limit}", field="limit")
    return Dataset(info=dataset.info, entries=dataset.entries[:limit], sha256=dataset.sha256)


def chosen_metrics(requested: Sequence[str] | None, extra: Sequence[OptInMetric]) -> list[str] | None:
    """``-m`` as metric ids (repeatable or comma-separated), checked; the extra metrics always included."""
    if not requested:
        return None
    from mt_eval.metrics.registry import OPT_IN, available_metrics

    known = {*available_metrics(), *OPT_IN}
    names = [n.strip() for item in requested for n in item.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UserError(f"unknown metric {', '.join(map(repr, unknown))} (mt-eval metrics list shows them)",
                        field="metrics")
    return [*dict.fromkeys(names), *(m.id for m in extra)]


def robustness(card_path: Path, *, system: str = "outputs", only: list[str] | None = None,
               limit: int | None = None, extra: Sequence[OptInMetric] = ()) -> RobustnessReport:
    """Sensitivity to every degradation and stability under every edit, per metric and for the composite."""
    if system not in SYSTEMS:
        raise UserError(f"--system {system!r}: choose {' or '.join(SYSTEMS)}", field="system")
    card = load_card(card_path)
    if not isinstance(card.get("results"), list) or not card["results"]:
        raise UserError("the card has no per-entry results to perturb", file=str(card_path))
    try:
        dataset = _subset(dataset_from_card(card), limit)
        results = card["results"][: len(dataset.entries)]
        base: list[str | None] = ([None if r.get("error") else str(r["predicted"]) for r in results]
                                  if system == "outputs" else [e.reference for e in dataset.entries])
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"not a run card with per-entry results: {exc}", file=str(card_path)) from exc
    score = Scorer(card, dataset, chosen_metrics(only, extra), extra)
    ctx = PerturbContext(analyser_for(score.target) if score.target.analyser else None)
    skipped = {} if ctx.analyser else {"fst_invalid_word": f"no analyser for {score.target.name}"}
    orig = score(base)
    metrics = [m for m in orig if np.isfinite(orig[m]).any()]  # null on this card (no terminology…): no row

    def measure(rules: Mapping[str, Rule], degradation: bool) -> dict[str, dict[str, Cell]]:
        block: dict[str, dict[str, Cell]] = {m: {} for m in metrics}
        for name, rule in rules.items():
            if name in skipped:
                continue
            changed = [None if t is None else rule(t, e, ctx) for t, e in zip(base, dataset.entries, strict=True)]
            applied = np.asarray([c is not None for c in changed])
            if not applied.any():
                skipped[name] = "changed no entry"
                continue
            variant = score([c if c is not None else t for c, t in zip(changed, base, strict=True)])
            for m in metrics:
                block[m][name] = _cell(orig[m], variant[m], applied, degradation)
        return block

    sensitivity = measure(DEGRADATIONS, True)
    stability = measure(EDITS, False)
    return RobustnessReport(str(card.get("run_id") or card_path), system, len(dataset.entries), metrics,
                            sensitivity, stability, skipped)

