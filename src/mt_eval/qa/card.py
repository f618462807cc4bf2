"""A sealed, verifiable QA card: everything a QA run scored, its results, a fingerprint and a hash.

``qa score/compare --out metrics.json`` writes the spec's metrics.json unchanged and this card
beside it. The card keeps what a run card keeps for MT: the evaluated questions (id, language,
question, gold answers), every system's answers with their per-sample values, the configuration,
the results (the whole metrics.json document), a fingerprint over the inputs and configuration,
and ``run_card_hash`` — both computed with ``runcard/seal.py``'s functions, so a QA card is sealed
exactly as a run card is.

:func:`verify_qa_card` recomputes, from the card alone, every per-sample value that is a function
of the text (EM, F1, RLC, RLC_OK; CNBE from F1 and cost), then every result (means, stds, CIs,
Holm-corrected paired tests, coverage) through the same code as the run, then the fingerprint and
the seal, and names each field that differs. The judge's scores cannot be recomputed without the
judge; like an LLM's output on a run card they are covered by the results and the seal.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np

from mt_eval.errors import UserError
from mt_eval.qa.data import GoldItem, Prediction
from mt_eval.qa.evaluate import FAILED, MISSING, SystemResult, apply_cnbe, score_system
from mt_eval.qa.measures import METRIC_KEYS
from mt_eval.qa.report import QAReport, build_report, json_safe, metrics_document
from mt_eval.runcard.seal import card_hash, fingerprint_hash, seal, sha256_text
from mt_eval.runcard.verify import _diff, _same
from mt_eval.stats.config import BootstrapConfig
from mt_eval.version import __version__

SCHEMA_VERSION = "qa-1.0"
KIND = "qa"


def build_card(report: QAReport) -> dict[str, Any]:
    """The sealed card of ``report`` (``report.config`` must come from ``run_qa``)."""
    config = report.config
    card: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "mt_eval_version": __version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "gold": config["gold"],
        "samples": [
            {"id": item.id, "lang": lang, "question": item.question, "answers": list(item.answers)}
            for item, lang in zip(report.items, _any(report).langs, strict=True)
        ],
        "systems": {name: _system(r, config["systems"][name]) for name, r in report.scored().items()},
        "baseline": report.baseline.name if report.baseline is not None else None,
        "reported": list(report.systems),
        "config": config,
        "results": metrics_document(report),
    }
    components = fingerprint_components(card)
    card["fingerprint"] = {"components": components, "hash": fingerprint_hash(components)}
    card["run_card_hash"] = ""
    return seal(card)


def _any(report: QAReport) -> SystemResult:
    return next(iter(report.scored().values()))


def _system(result: SystemResult, source: Mapping[str, Any]) -> dict[str, Any]:
    metrics = result.metrics()
    rows = [
        {"prediction": result.predictions[i], "status": result.status[i],
         **{key: float(values[i]) for key, values in metrics.items()}}
        for i in range(len(result.ids))
    ]  # fmt: skip
    return {"path": source["path"], "sha256": source["sha256"], "samples": json_safe(rows)}


def fingerprint_components(card: Mapping[str, Any]) -> dict[str, Any]:
    """What makes two QA runs the same experiment: the inputs (by hash) and the configuration."""
    config = card["config"]
    ids = ",".join(str(s["id"]) for s in card["samples"])
    return {
        "gold_sha256": card["gold"]["sha256"],
        "sample_ids_sha256": sha256_text(ids),
        "predictions_sha256": {name: s["sha256"] for name, s in card["systems"].items()},
        "baseline": card["baseline"],
        "lang": config["lang"],
        "rlc_threshold": config["rlc_threshold"],
        "only_predicted": config["only_predicted"],
        "bootstrap": config["bootstrap"],
        "correction": config["correction"],
        "judge": config["judge"],
    }


def is_qa_card(card: Mapping[str, Any]) -> bool:
    return card.get("kind") == KIND


def verify_qa_card(card: dict[str, Any]) -> list[str]:
    """Problems found, most specific first; an empty list means the card verifies."""
    if card.get("schema_version") != SCHEMA_VERSION:
        return [f"schema_version: {card.get('schema_version')!r} is not {SCHEMA_VERSION!r}"]
    try:
        items, results = _rescored(card)
        problems = list(_sample_problems(card, results))
        report = build_report(
            items, results, baseline=card["baseline"], shown=card["reported"],
            bootstrap=BootstrapConfig(**card["config"]["bootstrap"]),
            correction=card["config"]["correction"], config=card["config"],
        )  # fmt: skip
        problems += _diff("results", card["results"], metrics_document(report))
        fp = card["fingerprint"]
        problems += _diff("fingerprint.components", fp["components"], fingerprint_components(card))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, UserError) as exc:
        return [f"card: cannot be rescored ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"]
    if fingerprint_hash(fp["components"]) != fp["hash"]:
        problems.append("fingerprint.hash: does not match fingerprint.components")
    if card_hash(card) != card.get("run_card_hash"):
        problems.append("run_card_hash: does not match the card's contents (changed after sealing)")
    return problems


def _rescored(card: Mapping[str, Any]) -> tuple[list[GoldItem], dict[str, SystemResult]]:
    """Every system re-scored from the card's texts, with the card's judge scores and CNBE rule."""
    items = [GoldItem(s["id"], s["question"], tuple(s["answers"]), s["lang"]) for s in card["samples"]]
    threshold = float(card["config"]["rlc_threshold"])
    results: dict[str, SystemResult] = {}
    for name, system in card["systems"].items():
        rows = system["samples"]
        if len(rows) != len(items):
            raise ValueError(f"systems.{name}.samples has {len(rows)} rows for {len(items)} samples")
        preds = {
            item.id: Prediction(item.id, None if row["status"] == FAILED else row["prediction"], float(row["cost"]))
            for item, row in zip(items, rows, strict=True)
            if row["status"] != MISSING
        }
        result = score_system(name, items, preds, lang=None, rlc_threshold=threshold)
        if any("semantic_score" in row for row in rows):
            result.semantic = np.array([_nan(row.get("semantic_score")) for row in rows], dtype=np.float64)
        results[name] = result
    base = results.get(card["baseline"]) if card["baseline"] is not None else None
    for name, result in results.items():
        if base is not None:
            apply_cnbe(result, base)
        elif any("cnbe" in row for row in card["systems"][name]["samples"]):
            result.cnbe = np.zeros_like(result.cost)
    return items, results


def _nan(value: Any) -> float:
    return float("nan") if value is None else float(value)


def _sample_problems(card: Mapping[str, Any], results: Mapping[str, SystemResult]) -> Iterator[str]:
    """Each stored per-sample value against its recomputation, named by system, row and id."""
    for name, result in results.items():
        fresh = result.metrics()
        for i, row in enumerate(card["systems"][name]["samples"]):
            for key in METRIC_KEYS:
                if key == "semantic_score" or (key not in row and key not in fresh):
                    continue
                recomputed = float(fresh[key][i]) if key in fresh else None
                if key not in row or not _same(row[key], recomputed):
                    where = f"systems.{name}.samples[{i}].{key} (id {result.ids[i]})"
                    yield f"{where}: card says {row.get(key)!r}, recomputed {recomputed!r}"
