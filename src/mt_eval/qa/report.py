"""Console summary and metrics.json for QA runs, in the spec's formats.

The spec's block (80 ``=``, a title, one ``name | EM=… | F1=… | …`` line per system) is printed
verbatim; the harness's additions — bootstrap CIs and paired tests — follow it as separate
blocks so the spec's lines stay exactly as specified and machine-greppable. ``metrics.json``
keeps the spec's ``{"metrics": {system: {...}}}`` block untouched and adds sibling sections.
Plain strings, not rich tables: rich would wrap the long spec lines on a narrow terminal.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mt_eval.qa.evaluate import SystemResult

RULE = "=" * 80
TITLE = "Experiment Results Summary"
NAME_WIDTH = 8  # the spec's example pads "direct" to 8 columns


@dataclass
class QAReport:
    """Everything one ``qa score`` / ``qa compare`` run produced."""

    systems: dict[str, SystemResult]  # reported systems, in command-line order
    baseline: SystemResult | None
    confidence_intervals: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    paired_tests: dict[str, dict[str, dict[str, float | bool]]] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)


def _name(name: str, width: int) -> str:
    return f"{name:<{width}}"


def summary_line(name: str, s: Mapping[str, float], width: int = NAME_WIDTH) -> str:
    """One spec line; CNBE and Sem are left out when they were not computed for this run."""
    parts = [
        _name(name, width),
        f"EM={s['em']:.3f}±{s['em_std']:.3f}",
        f"F1={s['f1']:.3f}±{s['f1_std']:.3f}",
        f"RLC={s['rlc']:.3f}±{s['rlc_std']:.3f}",
        f"Cost={s['cost']:.1f}±{s['cost_std']:.1f}",
    ]
    if "cnbe" in s:
        parts.append(f"CNBE={s['cnbe']:.5f}±{s['cnbe_std']:.5f}")
    if "semantic_score" in s:
        parts.append(f"Sem={s['semantic_score']:.3f}±{s['semantic_score_std']:.3f}")
    return " | ".join(parts)


def format_summary(report: QAReport) -> str:
    """The spec's console block."""
    width = max([NAME_WIDTH, *(len(n) for n in report.systems)])
    lines = [RULE, TITLE, RULE]
    lines += [summary_line(name, res.summary(), width) for name, res in report.systems.items()]
    lines.append(RULE)
    return "\n".join(lines)


_LABELS = {"em": "EM", "f1": "F1", "rlc": "RLC", "semantic_score": "Sem"}


def format_statistics(report: QAReport) -> str:
    """Bootstrap CIs per system and, when there is a baseline, paired tests against it."""
    cfg = report.config.get("bootstrap", {})
    level = round(100 * (1 - float(cfg.get("alpha", 0.05))))
    width = max([NAME_WIDTH, *(len(n) for n in report.systems)])
    lines = [f"{level}% bootstrap CIs ({cfg.get('n_resamples')} resamples, seed {cfg.get('seed')})"]
    for name, cis in report.confidence_intervals.items():
        cells = [f"{_LABELS[m]} [{c['ci_lower']:.3f}, {c['ci_upper']:.3f}]" for m, c in cis.items()]
        lines.append(" | ".join([_name(name, width), *cells]))
    if report.paired_tests and report.baseline is not None:
        lines.append(f"Paired bootstrap vs {report.baseline.name} (delta [{level}% CI] p; * significant)")
        for name, tests in report.paired_tests.items():
            cells = [
                f"{_LABELS[m]} {t['delta']:+.3f} [{t['ci_lower']:+.3f}, {t['ci_upper']:+.3f}] "
                f"p={t['p_value']:.3f}{' *' if t['significant'] else ''}"
                for m, t in tests.items()
            ]
            lines.append(" | ".join([_name(name, width), *cells]))
    return "\n".join(lines)


def coverage(report: QAReport) -> dict[str, dict[str, int]]:
    """Per system: samples, missing predictions, failed (null) predictions, unusable judgments."""
    systems = dict(report.systems)
    if report.baseline is not None:
        systems.setdefault(report.baseline.name, report.baseline)
    return {
        name: {"n": len(r.ids), "missing": r.missing, "failed": r.failed, "semantic_errors": r.semantic_errors}
        for name, r in systems.items()
    }


def warnings(report: QAReport) -> list[str]:
    """Lines for stderr: anything that makes the numbers mean less than they appear to."""
    out: list[str] = []
    for name, c in coverage(report).items():
        if c["missing"]:
            out.append(f"warning: {name}: {c['missing']} of {c['n']} questions have no prediction (scored as empty)")
        if c["failed"]:
            out.append(f"warning: {name}: {c['failed']} predictions are null (scored as empty)")
        if c["semantic_errors"]:
            out.append(
                f"warning: {name}: the judge's reply was unusable for {c['semantic_errors']} samples "
                "(left out of semantic_score; re-run to retry them)"
            )
    return out


def metrics_document(report: QAReport) -> dict[str, Any]:
    """metrics.json: the spec's ``metrics`` block first, then the harness's sections."""
    doc: dict[str, Any] = {"metrics": {name: res.summary() for name, res in report.systems.items()}}
    doc["confidence_intervals"] = report.confidence_intervals
    if report.baseline is not None:
        doc["paired_tests"] = {"baseline": report.baseline.name, "systems": report.paired_tests}
    doc["coverage"] = coverage(report)
    doc["config"] = report.config
    return _finite(doc)


def per_sample_rows(report: QAReport) -> list[dict[str, Any]]:
    """One row per (system, sample) with every per-sample value, for error analysis."""
    rows: list[dict[str, Any]] = []
    for name, r in report.systems.items():
        for i, qid in enumerate(r.ids):
            row: dict[str, Any] = {
                "system": name, "id": qid, "lang": r.langs[i], "prediction": r.predictions[i],
                "em": float(r.em[i]), "f1": float(r.f1[i]), "rlc": float(r.rlc[i]),
                "rlc_ok": float(r.rlc_ok[i]), "cost": float(r.cost[i]),
            }  # fmt: skip
            if r.cnbe is not None:
                row["cnbe"] = float(r.cnbe[i])
            if r.semantic is not None:
                row["semantic_score"] = float(r.semantic[i])
            rows.append(_finite(row))
    return rows


def _finite(obj: Any) -> Any:
    """JSON has no NaN: an undefined number (e.g. an all-unjudged resample) is written as null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj
