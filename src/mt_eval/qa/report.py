"""A QA run's results as data: the report object, metrics.json and the per-sample rows.

``metrics.json`` keeps the spec's ``{"metrics": {system: {...}}}`` block untouched and adds sibling
sections (bootstrap CIs, Holm-corrected paired tests, coverage, config). The console text lives in
``mt_eval.render.qa``; this module stays free of rendering so the card verifier can rebuild the
same sections from a card's per-sample values with the same code.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mt_eval.qa.data import GoldItem
from mt_eval.qa.evaluate import SystemResult, confidence_intervals, holm_correct, paired_tests
from mt_eval.stats.config import BootstrapConfig

Correction = Literal["holm", "none"]
CORRECTIONS: tuple[Correction, ...] = ("holm", "none")


@dataclass
class QAReport:
    """Everything one ``qa score`` / ``qa compare`` run produced."""

    systems: dict[str, SystemResult]  # reported systems, in command-line order
    baseline: SystemResult | None
    confidence_intervals: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    paired_tests: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    items: tuple[GoldItem, ...] = ()  # the evaluated questions, aligned with every system's ids
    correction: Correction = "holm"

    def scored(self) -> dict[str, SystemResult]:
        """Every scored system: the reported ones plus the baseline when it is not reported."""
        out = dict(self.systems)
        if self.baseline is not None:
            out.setdefault(self.baseline.name, self.baseline)
        return out


def build_report(
    items: Sequence[GoldItem],
    results: Mapping[str, SystemResult],
    *,
    baseline: str | None,
    shown: Sequence[str],
    bootstrap: BootstrapConfig,
    correction: Correction,
    config: dict[str, Any],
) -> QAReport:
    """CIs for the shown systems and, with a baseline, paired tests against it, Holm-corrected
    across the systems per metric (``correction="holm"``) as ``mt-eval compare`` does."""
    base = results[baseline] if baseline is not None else None
    systems = {name: results[name] for name in shown}
    cis = {name: confidence_intervals(r, bootstrap) for name, r in systems.items()}
    paired: dict[str, dict[str, dict[str, Any]]] = {}
    if base is not None:
        paired = {name: paired_tests(base, r, bootstrap) for name, r in systems.items() if name != baseline}
        if correction == "holm":
            holm_correct(paired, bootstrap.alpha)
    return QAReport(systems, base, cis, paired, config, tuple(items), correction)


def coverage(report: QAReport) -> dict[str, dict[str, int]]:
    """Per system: samples, missing predictions, failed (null) predictions, unusable judgments."""
    return {
        name: {"n": len(r.ids), "missing": r.missing, "failed": r.failed, "semantic_errors": r.semantic_errors}
        for name, r in report.scored().items()
    }


def metrics_document(report: QAReport) -> dict[str, Any]:
    """metrics.json: the spec's ``metrics`` block first, then the harness's sections."""
    doc: dict[str, Any] = {"metrics": {name: res.summary() for name, res in report.systems.items()}}
    doc["confidence_intervals"] = report.confidence_intervals
    if report.baseline is not None:
        doc["paired_tests"] = {
            "baseline": report.baseline.name,
            "correction": report.correction,
            "family": "per metric, across the systems compared with the baseline",
            "systems": report.paired_tests,
        }
    doc["coverage"] = coverage(report)
    doc["config"] = report.config
    return json_safe(doc)


def per_sample_rows(report: QAReport) -> list[dict[str, Any]]:
    """One row per (system, sample) with every per-sample value, for error analysis."""
    rows: list[dict[str, Any]] = []
    for name, r in report.systems.items():
        for i, qid in enumerate(r.ids):
            row: dict[str, Any] = {"system": name, "id": qid, "lang": r.langs[i], "prediction": r.predictions[i]}
            row.update({key: float(values[i]) for key, values in r.metrics().items()})
            rows.append(json_safe(row))
    return rows


def json_safe(obj: Any) -> Any:
    """JSON has no NaN: an undefined number (e.g. an all-unjudged resample) is written as null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    return obj
